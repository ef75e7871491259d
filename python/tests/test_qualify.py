"""`Engine.qualify`, `Engine.categorize` and `Engine.qualification_rules` on the real
catalogue (their equality with the server is in test_http.py)."""

from __future__ import annotations

import uuid

import pytest

import grantmatch

PROMPT = "Programme, die gemeinnützige Vereine in Sachsen für Jugendarbeit nutzen können; keine Kredite"


def test_rules_of_a_prompt(engine):
    rules = engine.qualification_rules(PROMPT)
    sachsen = [r["id"] for r in engine.regions() if r["name_de"] == "Sachsen"]
    assert rules["region_ids"] == sachsen
    assert rules["excluded_grant_types"] == ["loan"]
    assert rules["only_grant_types"] == []
    assert rules["non_profit"] is True
    assert rules["topic"] == "Jugendarbeit"
    assert any("Sachsen" in d for d in rules["description"])


def test_rules_correct_the_reading(engine):
    reading = engine.qualification_rules(PROMPT)["rules"]
    assert reading["regions"] == ["Sachsen"]
    assert reading["excluded_funding_types"] == ["loan"]
    # The reading passed back changes nothing.
    assert engine.qualification_rules(PROMPT, reading)["rules"] == reading
    corrected = engine.qualification_rules(PROMPT, {"regions": ["Bayern"], "excluded_funding_types": []})
    bayern = [r["id"] for r in engine.regions() if r["name_de"] == "Bayern"]
    assert corrected["region_ids"] == bayern
    assert corrected["excluded_grant_types"] == []
    assert corrected["topic"] == "Jugendarbeit"
    # A Bavarian programme that the prompt alone rules out by region qualifies by region
    # once the rules say Bayern: its reasoning no longer names the region as the reason.
    grants = engine.grants(limit=10_000)
    bavarian = [g["slug"] for g in grants if g["regions"] and all(r["name"] == "Bayern" for r in g["regions"])]
    alone = engine.qualify(PROMPT, bavarian)
    assert not any(o["ai_qualified"] for o in alone)
    with_rules = engine.qualify(PROMPT, bavarian, rules={"regions": ["Bayern"]})
    assert sum("Sachsen" in o["ai_qualification_reasoning"] for o in with_rules) == 0
    with pytest.raises(grantmatch.InvalidInputError, match="Atlantis"):
        engine.qualification_rules(PROMPT, {"regions": ["Atlantis"]})
    with pytest.raises(grantmatch.InvalidInputError, match="region"):
        engine.qualify(PROMPT, bavarian[:1], rules={"region": ["Bayern"]})


def test_programme_levels_are_read_and_corrected(engine):
    prompt = "Qualifiziert sind nur Bundesprogramme für Digitalisierung; Landesprogramme zählen nicht."
    rules = engine.qualification_rules(prompt)
    assert rules["excluded_programme_levels"] == ["eu", "state"]
    assert rules["rules"]["excluded_levels"] == ["eu", "state"]
    assert rules["excluded_topics"] == []
    corrected = engine.qualification_rules(prompt, {"excluded_levels": ["state"]})
    assert corrected["excluded_programme_levels"] == ["state"]
    with pytest.raises(grantmatch.InvalidInputError, match="county"):
        engine.qualification_rules(prompt, {"excluded_levels": ["county"]})


def test_qualify_decides_by_rules_and_topic(engine):
    grants = engine.grants(limit=10_000)
    other_land = next(
        g for g in grants
        if g["regions"] and all(r["name"] == "Bayern" for r in g["regions"])
    )
    loan = next(g for g in grants if g["grant_type"] == "loan")
    slugs = [other_land["slug"], loan["id"]]
    out = engine.qualify(PROMPT, slugs)
    assert [o["slug"] for o in out] == [other_land["slug"], loan["slug"]]
    assert [o["ai_qualified"] for o in out] == [False, False]
    assert "Sachsen" in out[0]["ai_qualification_reasoning"]
    assert "Kredit" in out[1]["ai_qualification_reasoning"] or "Darlehen" in out[1]["ai_qualification_reasoning"]
    # A single id as a str; every grant by default.
    assert engine.qualify(PROMPT, other_land["id"]) == out[:1]
    everything = engine.qualify(PROMPT)
    assert len(everything) == len(engine)
    assert 0 < sum(o["ai_qualified"] for o in everything) < len(engine) // 4


def test_qualify_rejects_bad_input(engine):
    with pytest.raises(grantmatch.InvalidInputError):
        engine.qualify("   ")
    with pytest.raises(grantmatch.UnknownIdError):
        engine.qualify(PROMPT, ["no-such-grant"])


def test_categorize_assigns_stable_ids(engine):
    cats = [
        {"name": "Klimaschutz", "name_en": "Climate protection", "keywords": ["Klimaschutz"]},
        {"name": "Digitalisierung", "name_en": "Digitalisation", "id": str(uuid.uuid4())},
    ]
    out = engine.categorize(cats)
    assert len(out) == len(engine)
    ids = {c["id"] for o in out for c in o["custom_categories"]}
    assert cats[1]["id"] in ids
    klima = [o for o in out if any(c["name"] == "Klimaschutz" for c in o["custom_categories"])]
    assert klima and len(klima) < len(engine) // 3
    # Without an id: the same UUIDv5 of the name in every call.
    again = engine.categorize(cats[:1], [o["slug"] for o in klima[:3]])
    assert [o["custom_categories"] for o in again] == [
        [c for c in o["custom_categories"] if c["name"] == "Klimaschutz"] for o in klima[:3]
    ]
    assert engine.categorize([], [klima[0]["slug"]])[0]["custom_categories"] == []


def test_a_category_named_for_instruments_follows_the_grant_type(engine):
    """"Kredite & Bürgschaften" is about the instrument (the grant fact `grant_type`: the
    record's type, or a loan where the title names one the record calls a subsidy): every
    loan and guarantee gets it, and a subsidy only when its title or short description
    names one of them."""
    cats = [{"name": "Kredite & Bürgschaften", "name_en": "Loans & guarantees"}]
    grants = {g["slug"]: engine.grant(g["slug"]) for g in engine.grants(limit=10_000)}
    instrument = {s: g["facts"]["grant_type"]["value"] for s, g in grants.items()}
    # The six programmes filed as subsidies whose title names a loan are loans here.
    relabelled = {s for s, g in grants.items() if instrument[s] != g["grant_type"]}
    assert len(relabelled) == 6
    assert all(instrument[s] == "loan" for s in relabelled)
    out = engine.categorize(cats)
    assigned = {o["slug"] for o in out if o["custom_categories"]}
    repayable = {s for s in grants if instrument[s] in ("loan", "guarantee")}
    assert repayable and repayable <= assigned
    equity = {s for s in grants if instrument[s] == "equity"}
    assert not (equity & assigned)
    subsidies = assigned - repayable
    assert len(subsidies) < len(repayable)
    for s in subsidies:
        head = (grants[s]["title"] + " " + (grants[s]["short_description"] or "")).lower()
        assert any(w in head for w in ("kredit", "bürgschaft", "burgschaft")), s


def test_a_category_named_for_a_programme_kind_follows_the_kind(engine):
    """"Forschung & Entwicklung" is about the kind of programme: every research call gets
    it, and another programme only when its title or short description names research."""
    cats = [{"name": "Forschung & Entwicklung", "name_en": "Research & development"}]
    assigned = {o["slug"] for o in engine.categorize(cats) if o["custom_categories"]}
    grants = [engine.grant(g["slug"]) for g in engine.grants(limit=10_000)]
    research = {g["slug"] for g in grants if g["facts"]["programme_kind"]["value"] == "research_call"}
    assert research and research <= assigned
    for g in grants:
        if g["slug"] in assigned - research:
            head = (g["title"] + " " + (g["short_description"] or "")).lower()
            assert "forsch" in head or "entwick" in head, g["slug"]


@pytest.mark.parametrize(
    "bad",
    [
        [{"name": "X"}],
        [{"name": " ", "name_en": "X"}],
        [{"name": "X", "name_en": "X", "colour": "red"}],
        [{"name": "X", "name_en": "X", "id": "not-a-uuid"}],
        [{"name": "X", "name_en": "X", "keywords": "a,b"}],
        [{"name": "X", "name_en": "X"}, {"name": "X", "name_en": "Y"}],
        "X",
    ],
)
def test_categorize_rejects_malformed_categories(engine, bad):
    with pytest.raises(grantmatch.InvalidInputError):
        engine.categorize(bad, [])
