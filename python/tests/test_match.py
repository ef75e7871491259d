"""Engine.match: profile forms, options, explain, errors."""

from __future__ import annotations

import datetime as dt

import pytest

import grantmatch

SPORT = {
    "name": "SV Beispiel e.V.",
    "description": "Gemeinnütziger Sportverein in Leipzig mit 300 Mitgliedern, vor allem Kinder "
    "und Jugendliche. Wir bieten Fußball und Turnen an und wollen unser Vereinsheim "
    "barrierefrei sanieren.",
    "regions": ["Sachsen"],
    "is_non_profit": True,
    "keywords": ["Sportverein", "Vereinsheim", "Barrierefreiheit"],
}
KEYS = {"rank", "grant_id", "slug", "title", "relevance_score", "match_category", "match_reason", "checks", "matched_need", "planned_measure"}
COMPONENTS = {"cosine", "semantic", "keyword", "region", "target_group", "eligibility", "deadline", "budget"}
CATEGORIES = {"very_suitable", "partially_suitable", "conditionally_suitable", "not_suitable"}


def category(score):
    return (
        "very_suitable" if score >= 90
        else "partially_suitable" if score >= 70
        else "conditionally_suitable" if score >= 50
        else "not_suitable"
    )


def test_match_shape(engine):
    results = engine.match(SPORT)
    assert 0 < len(results) <= 25
    assert [r["rank"] for r in results] == list(range(1, len(results) + 1))
    scores = [r["relevance_score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    for r in results:
        assert set(r) == KEYS
        assert 0 <= r["relevance_score"] <= 100
        assert r["match_category"] == category(r["relevance_score"])
        assert r["match_reason"]
    grant = engine.grant(results[0]["slug"])
    assert grant["id"] == results[0]["grant_id"]
    assert grant["title"] == results[0]["title"]


def test_profile_forms_are_equivalent(engine):
    base = engine.match(SPORT)
    body = {"organization_id": "org-1", "organization_profile": SPORT}
    assert engine.match(body) == base
    desc_only = engine.match(SPORT["description"])
    assert desc_only == engine.match({"description": SPORT["description"]})
    project = {"title": "Barrierefreies Vereinsheim", "description": "Umbau mit Rampe und Sanitäranlagen"}
    with_project = engine.match(SPORT, project)
    assert with_project == engine.match({**body, "project": project})
    assert with_project != base
    assert engine.match(SPORT, "Umbau mit Rampe") == engine.match(
        SPORT, {"description": "Umbau mit Rampe"}
    )
    with pytest.raises(grantmatch.InvalidInputError, match="project: given both"):
        engine.match({**body, "project": project}, project)


def test_limit_and_determinism(engine):
    full = engine.match(SPORT)
    assert engine.match(SPORT, limit=5) == full[:5]
    assert engine.match(SPORT, limit=1) == full[:1]
    assert engine.match(SPORT) == full
    for bad in (0, 26):
        with pytest.raises(grantmatch.InvalidInputError, match="limit"):
            engine.match(SPORT, limit=bad)


def test_the_whole_rule_stage_ranking(engine):
    """limit=None: every programme that reached the rule stage, in the API's order, for
    offline re-ranking; its first 25 are the API's results."""
    top = engine.match(SPORT, explain=True)
    every = engine.match(SPORT, limit=None, explain=True)
    assert len(every) > 100
    assert every[:25] == top
    assert [r["rank"] for r in every] == list(range(1, len(every) + 1))
    scores = [r["relevance_score"] for r in every]
    assert scores == sorted(scores, reverse=True)
    assert all(set(r["components"]) == COMPONENTS for r in every)


def test_locale(engine):
    de = engine.match(SPORT, limit=3)
    en = engine.match(SPORT, limit=3, locale="en")
    assert [r["grant_id"] for r in de] == [r["grant_id"] for r in en]
    assert "Übereinstimmung" in de[0]["match_reason"]
    assert "similarity" in en[0]["match_reason"]
    assert engine.match({**SPORT, "locale": "en"}, limit=3) == en
    assert engine.match({**SPORT, "locale": "en"}, limit=3, locale="de") == de
    with pytest.raises(grantmatch.InvalidInputError, match="locale: `fr`"):
        engine.match(SPORT, locale="fr")


def test_explain(engine):
    plain = engine.match(SPORT)
    explained = engine.match(SPORT, explain=True)
    assert [{k: r[k] for k in KEYS} for r in explained] == plain
    for r in explained:
        assert set(r["components"]) == COMPONENTS
        for name, v in r["components"].items():
            if name != "cosine":
                assert 0.0 <= v <= 1.0, (name, v)
        assert -1.0 <= r["components"]["cosine"] <= 1.0
        assert isinstance(r["matched_keywords"], list)
    assert any(r["matched_keywords"] for r in explained)
    # Sachsen programmes are local (1.0), national ones wider (< 1)
    regions = {r["components"]["region"] for r in explained}
    assert 1.0 in regions


def test_weights(engine):
    default = engine.match(SPORT, explain=True)
    assert engine.match(SPORT, explain=True, weights=grantmatch.MatchWeights()) == default
    assert engine.match(SPORT, explain=True, weights={}) == default
    w = grantmatch.MatchWeights(region=0.5)
    assert w.region == 0.5 and w.semantic == grantmatch.MatchWeights().semantic
    as_dict = engine.match(SPORT, explain=True, weights={"region": 0.5})
    assert engine.match(SPORT, explain=True, weights=w) == as_dict
    assert as_dict != default
    # semantic alone: the order follows the semantic component — times 0.85 for a
    # programme kind that does not suit the profile (a residential programme for a
    # sports club) — except that a failed applicant, region, non-profit or funding-type
    # check caps the score below 50
    sem = engine.match(
        SPORT, explain=True,
        weights=grantmatch.MatchWeights(semantic=1, keyword=0, region=0, target_group=0,
                                        eligibility=0, deadline=0, budget=0),
    )
    excluding = ("region", "applicant", "non_profit", "funding_type")
    passed = [r for r in sem if all(r["checks"][c] != "fail" for c in excluding)]
    assert len(passed) >= 10
    for r in passed:
        sem_r = r["components"]["semantic"]
        assert any(abs(r["total"] - f * sem_r) < 1e-5 for f in (1.0, 0.85)), r
    totals = [r["total"] for r in passed]
    assert totals == sorted(totals, reverse=True)
    assert all(r["relevance_score"] < 50 for r in sem if r not in passed)
    # only ratios matter
    doubled = {k: 2 * v for k, v in grantmatch.MatchWeights().to_dict().items()}
    assert [r["grant_id"] for r in engine.match(SPORT, weights=doubled)] == [
        r["grant_id"] for r in default
    ]


def test_weights_type(engine):
    w = grantmatch.MatchWeights(keyword=0.3)
    assert w == grantmatch.MatchWeights.from_dict({"keyword": 0.3})
    assert w.replace(keyword=0.1) == grantmatch.MatchWeights(keyword=0.1)
    assert w.keyword == 0.3
    w.keyword = 0.2
    assert w.to_dict()["keyword"] == 0.2
    assert "keyword=0.2" in repr(w)
    with pytest.raises(TypeError):
        grantmatch.MatchWeights(0.5)
    with pytest.raises(grantmatch.InvalidInputError, match="unknown field `colour`"):
        w.replace(colour=1.0)
    with pytest.raises(grantmatch.InvalidInputError, match="unknown field `colour`"):
        grantmatch.MatchWeights.from_dict({"colour": 1.0})


def test_option_errors(engine):
    with pytest.raises(grantmatch.InvalidInputError, match="unknown field `colour`"):
        engine.match(SPORT, weights={"colour": 1.0})
    with pytest.raises(grantmatch.InvalidInputError, match="weights.region"):
        engine.match(SPORT, weights={"region": -1})
    with pytest.raises(grantmatch.InvalidInputError, match="at least one weight"):
        engine.match(SPORT, weights={k: 0 for k in grantmatch.MatchWeights().to_dict()})
    with pytest.raises(grantmatch.InvalidInputError, match="weights"):
        engine.match(SPORT, weights=[1, 2])
    with pytest.raises(grantmatch.InvalidInputError, match="weights"):
        engine.match(SPORT, weights={"region": "high"})
    with pytest.raises(grantmatch.InvalidInputError, match="calibration"):
        engine.match(SPORT, calibration={"cosine_low": 0.9, "cosine_high": 0.8})
    with pytest.raises(grantmatch.InvalidInputError, match="calibration"):
        engine.match(SPORT, calibration=grantmatch.Calibration(cosine_high=0.1))


def test_calibration(engine):
    c = grantmatch.Calibration()
    assert c.cosine_high > c.cosine_low
    assert engine.match(SPORT, calibration=c) == engine.match(SPORT)
    assert engine.match(SPORT, calibration={"cosine_low": c.cosine_low}) == engine.match(SPORT)
    wide = engine.match(SPORT, explain=True, calibration={"cosine_low": 0.5, "cosine_high": 1.0})
    assert wide != engine.match(SPORT, explain=True)
    assert c.to_dict() == {"cosine_low": c.cosine_low, "cosine_high": c.cosine_high}
    assert "Calibration(" in repr(c)


def test_today(engine, tiny_engine):
    now = engine.match(SPORT)
    assert engine.match(SPORT, today=dt.datetime.now(dt.timezone.utc).date()) == now
    assert engine.match(SPORT, today=dt.datetime.now(dt.timezone.utc)) == now
    assert engine.match(SPORT, today=dt.datetime.now(dt.timezone.utc).date().isoformat()) == now
    # the tiny catalogue has deadlines: testprogramm-2 ends 2025-06-30, -1 on 2030-12-31
    def slugs(day):
        return {r["slug"]: r for r in tiny_engine.match("Testprogramm", today=day, explain=True)}

    before, after = slugs("2025-06-30"), slugs(dt.date(2025, 7, 1))
    assert "testprogramm-2" in before and "testprogramm-2" not in after
    assert before["testprogramm-1"]["components"]["deadline"] == 1.0
    assert slugs("2030-12-15")["testprogramm-1"]["components"]["deadline"] < 1.0
    with pytest.raises(grantmatch.InvalidInputError, match="today"):
        engine.match(SPORT, today="next week")
    with pytest.raises(TypeError):
        engine.match(SPORT, today=20250101)


def test_input_errors_name_the_field(engine):
    cases = [
        ({"name": "x"}, "organization_profile.description is required"),
        ({"description": "   "}, "organization_profile.description is required"),
        ({**SPORT, "regions": "Sachsen"}, "organization_profile.regions"),
        ({**SPORT, "regions": ["Atlantis"]}, "organization_profile.regions: unknown value `Atlantis`"),
        ({**SPORT, "eligible_entities": ["Drache"]}, "organization_profile.eligible_entities"),
        ({**SPORT, "is_non_profit": "ja"}, "organization_profile.is_non_profit"),
        ({"organization_profile": SPORT}, "organization_id is required"),
        ({"organization_id": "x"}, "organization_profile is required"),
        ({**SPORT, "locale": "fr"}, "organization_profile.locale"),
    ]
    for profile, message in cases:
        with pytest.raises(grantmatch.InvalidInputError) as e:
            engine.match(profile)
        assert message in str(e.value), (profile, str(e.value))
    with pytest.raises(TypeError):
        engine.match(42)
    with pytest.raises(TypeError):
        engine.match(SPORT, 42)
    with pytest.raises(TypeError):
        engine.match({**SPORT, "keywords": {1, 2}})


def test_filters_restrict_results(engine):
    regions = engine.regions()
    by_id = {r["id"]: r for r in regions}

    def chain(region_id):
        out = []
        while region_id:
            out.append(region_id)
            region_id = by_id[region_id]["parent_id"]
        return out

    bayern = next(r["id"] for r in regions if r["name"] == "Bayern")
    results = engine.match({**SPORT, "regions": ["Bayern"]})
    assert results and results != engine.match(SPORT)
    for r in results:
        related = [
            reg["id"] for reg in engine.grant(r["grant_id"])["regions"]
            if reg["id"] in chain(bayern) or bayern in chain(reg["id"])
        ]
        assert related, r["title"]


def test_a_programme_for_those_who_support_companies_funds_no_companys_own_project(engine):
    """A teaser that names companies as those its applicants support ("Wenn Sie kleine oder
    mittlere Unternehmen … beraten und unterstützen, können Sie …") is the grant fact
    ``beneficiaries``; for a company it is a kind misfit (never ``very_suitable``) and the
    reason says why, for a chamber that supports companies it is not."""
    slug = "passgenaue-besetzung-willkommenslotsen"
    fact = engine.grant(slug)["facts"]["beneficiaries"]
    assert fact["value"] == ["company"] and fact["source"] == "text"
    assert fact["evidence"].startswith("Wenn Sie kleine oder mittlere Unternehmen (KMU)")
    assert engine.grant(engine.match(SPORT)[0]["slug"])["facts"]["beneficiaries"] is None
    company = {
        "name": "Elektro Richter GmbH",
        "description": "Wir sind ein Elektrobetrieb in Leipzig mit 30 Beschäftigten. Wir wollen "
        "mehr Ausbildungsplätze besetzen und ausländische Fachkräfte gewinnen und integrieren.",
        "regions": ["Sachsen"],
    }
    chamber = {
        "name": "Handwerkskammer zu Leipzig",
        "description": "Die Handwerkskammer berät kleine und mittlere Betriebe bei der Besetzung "
        "von Ausbildungsplätzen und bei der Integration ausländischer Fachkräfte.",
        "regions": ["Sachsen"],
    }
    said = "laut programmtext fördert es, wer unternehmen unterstützt"
    for_company = {r["slug"]: r for r in engine.match(company, limit=None)}
    assert slug in for_company
    assert for_company[slug]["relevance_score"] <= 89
    assert said in for_company[slug]["match_reason"].lower()
    for_chamber = {r["slug"]: r for r in engine.match(chamber, limit=None)}
    assert slug in for_chamber
    assert said not in for_chamber[slug]["match_reason"].lower()


def test_a_founding_programme_is_a_misfit_for_an_established_company(engine):
    """A programme for founding or taking over a business is the grant fact ``founding``
    (evidence: its title or the teaser's condition); for an established company that
    speaks of neither it is never ``very_suitable`` and the reason says why, for a
    founder it is not marked."""
    slug = "erp-gruender-startgeld-bund"
    fact = engine.grant(slug)["facts"]["founding"]
    assert fact["value"] is True and fact["source"] == "text"
    assert fact["evidence"] == "ERP-Gründerkredit – StartGeld"
    assert engine.grant("foerderkredit-grosser-mittelstand")["facts"]["founding"] is None
    established = {
        "name": "Neckar Formtechnik GmbH",
        "description": "Wir sind ein familiengeführter Aluminium-Druckgießer mit 260 "
        "Beschäftigten und suchen zinsgünstige Kredite für eine neue Gießzelle.",
        "regions": ["Baden-Württemberg"],
    }
    founder = {
        "name": "Kaffeerösterei Bohne (in Gründung)",
        "description": "Ich möchte mich mit einer Kaffeerösterei selbstständig machen und "
        "suche einen zinsgünstigen Kredit für die Röstmaschine.",
        "regions": ["Baden-Württemberg"],
    }
    said = "für gründungen, übernahmen oder junge unternehmen"
    for_established = {r["slug"]: r for r in engine.match(established, limit=None)}
    assert slug in for_established
    assert for_established[slug]["relevance_score"] <= 89
    assert said in for_established[slug]["match_reason"].lower()
    for_founder = {r["slug"]: r for r in engine.match(founder, limit=None)}
    assert slug in for_founder
    assert said not in for_founder[slug]["match_reason"].lower()


def test_a_programme_for_larger_companies_fails_a_small_company(engine):
    """A title that restricts a programme to companies beyond the SMEs is the grant fact
    ``large_companies_only`` (evidence: the title); a company that states 40 employees
    fails its applicant check with a reason that says so, one with 600 does not."""
    slug = "foerderkredit-grosser-mittelstand"
    fact = engine.grant(slug)["facts"]["large_companies_only"]
    assert fact["value"] is True and fact["source"] == "text"
    assert fact["evidence"] == "KfW-Förderkredit großer Mittelstand"
    assert engine.grant("erp-gruender-startgeld-bund")["facts"]["large_companies_only"] is None
    profile = {
        "name": "Muster Maschinenbau GmbH",
        "description": "Wir bauen Sondermaschinen und suchen zinsgünstige Kredite für eine "
        "neue Montagehalle.",
        "regions": ["Baden-Württemberg"],
    }
    said = "nur für größere unternehmen jenseits der kmu-schwellen"
    small = {r["slug"]: r for r in engine.match({**profile, "number_of_employees": "40"}, limit=None, explain=True)}
    assert slug in small
    assert small[slug]["checks"]["applicant"] == "fail"
    assert small[slug]["relevance_score"] < 50
    assert said in small[slug]["match_reason"].lower()
    large = {r["slug"]: r for r in engine.match({**profile, "number_of_employees": "600"}, limit=None, explain=True)}
    assert slug in large
    assert large[slug]["checks"]["applicant"] != "fail"
    assert said not in large[slug]["match_reason"].lower()


def test_an_applicant_list_is_read_item_by_item(engine):
    """A full text that names its applicants as a list ("Antragsberechtigt sind" and then
    "* Hochschulen und" "* außeruniversitäre Forschungseinrichtungen.") is read from the
    text, item by item: a university institute passes the applicant check, a company fails
    it and is told who may apply."""
    slug = "grundlagenfragen-quantentechnologien-photonik"
    fact = engine.grant(slug)["facts"]["applicant_types"]
    assert fact["source"] == "text"
    assert fact["value"] == ["university", "research_institution"]
    assert fact["evidence"] == (
        "Antragsberechtigt sind Hochschulen und außeruniversitäre Forschungseinrichtungen."
    )
    topic = "an Grundlagenfragen der Quantentechnologien und Photonik in Jena."
    institute = {
        "name": "Institut für Angewandte Physik, Friedrich-Schiller-Universität Jena",
        "description": "Wir sind ein Universitätsinstitut und forschen " + topic,
        "regions": ["Thüringen"],
    }
    company = {
        "name": "Photonik Labor GmbH",
        "description": "Wir sind ein Unternehmen und entwickeln Bauteile und forschen " + topic,
        "regions": ["Thüringen"],
    }
    for_institute = {r["slug"]: r for r in engine.match(institute, limit=None, explain=True)}
    assert for_institute[slug]["checks"]["applicant"] == "pass"
    for_company = {r["slug"]: r for r in engine.match(company, limit=None, explain=True)}
    assert for_company[slug]["checks"]["applicant"] == "fail"
    assert "nicht unternehmen" in for_company[slug]["match_reason"].lower()


def test_a_programme_for_pig_farming_fails_a_dairy_farm(engine):
    """The teaser of "Förderung des Umbaus der Tierhaltung" is for farms "in der
    Schweinehaltung": a dairy farm fails the applicant check and is told why, a pig farm
    does not fail it, and a farm that names no animals is not told it does not fit."""
    slug = "umbau-tierhaltung-investive-vorhaben"
    fact = engine.grant(slug)["facts"]["livestock"]
    assert fact["value"] == ["pigs"]
    assert "Schweinehaltung" in fact["evidence"]
    assert engine.grant("thueringer-tierwohlfoerderrichtlinie")["facts"]["livestock"][
        "value"
    ] == ["pigs", "cattle"]

    def farm(animals):
        return {
            "name": "Hof Brandt GbR",
            "description": "Wir sind ein landwirtschaftlicher Betrieb in Niedersachsen"
            + animals
            + " und wollen unseren Stall tierwohlgerecht umbauen.",
            "regions": ["Niedersachsen"],
        }

    def result(profile):
        found = {r["slug"]: r for r in engine.match(profile, limit=None, explain=True)}
        return found[slug]

    dairy = result(farm(" mit 120 Milchkühen"))
    assert dairy["checks"]["applicant"] == "fail"
    assert dairy["match_category"] == "not_suitable"
    assert "nur für die Schweinehaltung" in dairy["match_reason"]
    assert "Rinderhaltung" in dairy["match_reason"]
    assert result(farm(" mit 800 Mastschweinen"))["checks"]["applicant"] != "fail"
    assert result(farm(""))["checks"]["applicant"] != "fail"


def test_a_programme_for_farms_is_a_misfit_for_a_butcher(engine):
    """"Wenn Sie als landwirtschaftliches Unternehmen Investitionen … planen" addresses
    farms: a butcher's shop that buys its meat from farmers is told so and ranks it lower
    than a farm with the same plans does; the farm is not told it is no farm."""
    slug = "agrarinvestitionsfoerderung"
    fact = engine.grant(slug)["facts"]["farms_only"]
    assert fact["value"] is True
    assert fact["evidence"].startswith("Wenn Sie als landwirtschaftliches Unternehmen")
    assert engine.grant("kinofoerderung")["facts"]["farms_only"] is None
    plans = " Wir wollen in neue Kühltechnik und eine Photovoltaikanlage investieren."

    def result(name, description):
        profile = {"name": name, "description": description + plans, "regions": ["Saarland"]}
        found = {r["slug"]: r for r in engine.match(profile, limit=None, explain=True)}
        return found[slug]

    butcher = result(
        "Landmetzgerei Keller GmbH",
        "Wir sind eine Landmetzgerei mit eigener Schlachtung; das Fleisch kommt von Landwirten aus der Region.",
    )
    farm = result(
        "Hof Keller GbR",
        "Wir sind ein landwirtschaftlicher Betrieb mit 90 Hektar Ackerland und eigener Direktvermarktung.",
    )
    assert "laut Programmtext für landwirtschaftliche Betriebe" in butcher["match_reason"]
    assert "landwirtschaftliche Betriebe" not in farm["match_reason"]
    assert butcher["relevance_score"] < farm["relevance_score"]
    assert butcher["match_category"] != "very_suitable"


def test_a_programme_for_municipal_enterprises_is_a_misfit_for_a_private_workshop(engine):
    """"Partnerprogramm „Kommunale und kommunalnahe Unternehmen“" is for enterprises of
    municipalities: a private car workshop is told so and ranks it lower than the town's
    utility with the same plans does; the utility is not told it is none."""
    slug = "sikb-partnerprogramm-kommunale-unternehmen"
    fact = engine.grant(slug)["facts"]["social_enterprises_only"]
    assert fact["value"] is True
    assert fact["evidence"].startswith("Partnerprogramm „Kommunale und kommunalnahe Unternehmen“")
    assert engine.grant("kinofoerderung")["facts"]["social_enterprises_only"] is None
    plans = (
        " Wir wollen ein neues Betriebsgebäude bauen und Elektrofahrzeuge anschaffen"
        " und suchen dafür ein zinsgünstiges Darlehen."
    )

    def result(name, description):
        profile = {"name": name, "description": description + plans, "regions": ["Saarland"]}
        found = {r["slug"]: r for r in engine.match(profile, limit=None, explain=True)}
        return found[slug]

    workshop = result(
        "Kfz-Technik Becker GmbH",
        "Wir sind eine freie Kfz-Werkstatt in Homburg mit zwölf Beschäftigten.",
    )
    utility = result(
        "Stadtwerke Bliestal GmbH",
        "Die Stadtwerke Bliestal versorgen die Stadt mit Strom, Wasser und Wärme.",
    )
    told = "laut Titel für kommunale und soziale Unternehmen"
    assert told in workshop["match_reason"]
    assert told not in utility["match_reason"]
    assert workshop["relevance_score"] < utility["relevance_score"]
