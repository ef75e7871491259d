"""grantmatch.evaluate and grantmatch.load_eval_set."""

from __future__ import annotations

import math

import pytest

import grantmatch
from conftest import EVAL_DIR


def ndcg(ranked, judged, k):
    dcg = sum((2 ** judged.get(s, 0) - 1) / math.log2(i + 2) for i, s in enumerate(ranked[:k]))
    ideal = sorted(judged.values(), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall(ranked, judged, k):
    relevant = [s for s, g in judged.items() if g >= 1]
    return sum(1 for s in ranked[:k] if judged.get(s, 0) >= 1) / len(relevant) if relevant else 0.0


def test_load_eval_set(eval_set):
    profiles, qrels = eval_set
    assert len(profiles) == 42
    assert all(set(p) >= {"id", "request"} for p in profiles)
    assert set(qrels) == {p["id"] for p in profiles}
    assert sum(len(v) for v in qrels.values()) == 694
    assert all(g in (1, 2, 3) for v in qrels.values() for g in v.values())


@pytest.mark.parametrize(
    "folder,ids,pairs",
    [
        ("fresh", [f"f0{i}" for i in range(1, 9)], 187),
        ("fresh2", [f"g{i:02}" for i in range(1, 11)], 242),
        ("fresh3", [f"h{i:02}" for i in range(1, 11)], 249),
        ("fresh4", [f"i{i:02}" for i in range(1, 11)], 302),
        ("fresh5", [f"j{i:02}" for i in range(1, 7)], 201),
        ("fresh6", [f"k{i:02}" for i in range(1, 7)], 135),
        ("fresh7", [f"m{i:02}" for i in range(1, 7)], 148),
        ("fresh8", [f"n{i:02}" for i in range(1, 7)], 154),
        ("fresh9", [f"o{i:02}" for i in range(1, 7)], 173),
        ("fresh10", [f"q{i:02}" for i in range(1, 7)], 167),
    ],
)
def test_the_fresh_held_out_sets_join_the_catalogue(engine, folder, ids, pairs):
    """fixtures/eval/fresh … fresh10: profiles judged by a reader who never ran the
    system, all marked held out; every judged slug is a grant."""
    profiles, qrels = grantmatch.load_eval_set(EVAL_DIR / folder)
    assert [p["id"] for p in profiles] == ids
    assert {p["split"] for p in profiles} == {"heldout"}
    assert sum(len(v) for v in qrels.values()) == pairs
    for judged in qrels.values():
        for slug in judged:
            assert engine.grant(slug)["slug"] == slug
    res = grantmatch.evaluate(engine, profiles[:2], qrels)
    assert [r["split"] for r in res["per_profile"]] == ["heldout", "heldout"]


def test_load_eval_set_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        grantmatch.load_eval_set(tmp_path)
    (tmp_path / "profiles.json").write_text('[{"id": "p1", "request": {}}]')
    (tmp_path / "qrels.tsv").write_text("profile_id\tgrant_slug\tgrade\np1\tsome-grant\n")
    with pytest.raises(grantmatch.InvalidInputError, match=r"qrels.tsv:2: expected 3"):
        grantmatch.load_eval_set(tmp_path)
    (tmp_path / "qrels.tsv").write_text("profile_id\tgrant_slug\tgrade\np1\tsome-grant\tgood\n")
    with pytest.raises(grantmatch.InvalidInputError, match="not an integer"):
        grantmatch.load_eval_set(tmp_path)
    (tmp_path / "profiles.json").write_text('{"p1": {}}')
    with pytest.raises(grantmatch.InvalidInputError, match="profiles.json"):
        grantmatch.load_eval_set(tmp_path)


def test_evaluate(engine, eval_set):
    profiles, qrels = eval_set
    res = grantmatch.evaluate(engine, profiles, qrels)
    assert set(res) == {"ndcg@10", "recall@25", "k", "profiles", "model", "options", "per_profile"}
    assert res["k"] == 10 and res["profiles"] == 42
    assert res["model"] == "multilingual-e5-small/fp32"
    assert res["options"]["weights"] == grantmatch.MatchWeights().to_dict()
    assert res["options"]["calibration"] == grantmatch.Calibration().to_dict()
    rows = res["per_profile"]
    assert [r["profile"] for r in rows] == [p["id"] for p in profiles]
    assert [r["split"] for r in rows] == [p["split"] for p in profiles]
    assert {r["split"] for r in rows} == {"tune", "heldout"}
    for r, p in zip(rows, profiles):
        judged = qrels[p["id"]]
        assert r["judged"] == len(judged)
        assert r["ranked"] == [m["slug"] for m in engine.match(p["request"])]
        assert r["ndcg@10"] == pytest.approx(ndcg(r["ranked"], judged, 10))
        assert r["recall@25"] == pytest.approx(recall(r["ranked"], judged, 25))
    assert res["ndcg@10"] == pytest.approx(sum(r["ndcg@10"] for r in rows) / 42)
    assert res["recall@25"] == pytest.approx(sum(r["recall@25"] for r in rows) / 42)
    # the matching beats chance by far on its development set
    assert res["ndcg@10"] > 0.3 and res["recall@25"] > 0.3


def test_evaluate_options(engine, eval_set):
    profiles, qrels = eval_set
    subset = profiles[:5]
    base = grantmatch.evaluate(engine, subset, qrels)
    assert grantmatch.evaluate(engine, subset, qrels, weights=grantmatch.MatchWeights()) == base
    k5 = grantmatch.evaluate(engine, subset, qrels, k=5)
    assert "ndcg@5" in k5 and "ndcg@10" not in k5
    assert [r["ranked"] for r in k5["per_profile"]] == [r["ranked"] for r in base["per_profile"]]
    other = grantmatch.evaluate(engine, subset, qrels, weights={"semantic": 1.0, "keyword": 0.0})
    assert other["options"]["weights"]["keyword"] == 0.0
    assert [r["ranked"] for r in other["per_profile"]] != [r["ranked"] for r in base["per_profile"]]
    # profiles as a dict id -> request, qrels keyed by grant UUID
    by_id = {p["id"]: p["request"] for p in subset}
    ids = {g["slug"]: g["id"] for g in engine.grants()}
    uuid_qrels = {pid: {ids[s]: g for s, g in j.items() if s in ids} for pid, j in qrels.items()}
    assert grantmatch.evaluate(engine, by_id, uuid_qrels)["ndcg@10"] == pytest.approx(base["ndcg@10"])
    # a profile without judgements scores 0
    lone = grantmatch.evaluate(engine, subset[:1], {})
    assert lone["ndcg@10"] == 0.0 and lone["per_profile"][0]["judged"] == 0


def test_evaluate_errors(engine, eval_set):
    profiles, qrels = eval_set
    with pytest.raises(grantmatch.InvalidInputError, match="k: must be at least 1"):
        grantmatch.evaluate(engine, profiles, qrels, k=0)
    bad = [{"id": "broken", "request": {"organization_id": "x", "organization_profile": {}}}]
    with pytest.raises(grantmatch.InvalidInputError, match="profile `broken`.*description is required"):
        grantmatch.evaluate(engine, bad, qrels)
    with pytest.raises(grantmatch.InvalidInputError, match="`request` is missing"):
        grantmatch.evaluate(engine, [{"id": "x"}], qrels)
    with pytest.raises(TypeError):
        grantmatch.evaluate(engine, profiles, [("p01", "slug", 3)])
    with pytest.raises(grantmatch.InvalidInputError, match="grade"):
        grantmatch.evaluate(engine, profiles, {"p01": {"slug": "high"}})
    with pytest.raises(grantmatch.InvalidInputError, match="weights"):
        grantmatch.evaluate(engine, profiles, qrels, weights={"nope": 1})
    no_model = grantmatch.Engine.open(engine.data_dir, load_model=False)
    with pytest.raises(grantmatch.ModelError):
        grantmatch.evaluate(no_model, profiles, qrels)
    assert EVAL_DIR.is_dir()


def test_evaluate_accepts_matching_bodies(engine, eval_set):
    profiles, qrels = eval_set
    wrapped = profiles[:2]
    bare = [{**p["request"], "id": p["id"]} for p in wrapped]
    a = grantmatch.evaluate(engine, wrapped, qrels)
    b = grantmatch.evaluate(engine, bare, qrels)
    assert [r["ranked"] for r in a["per_profile"]] == [r["ranked"] for r in b["per_profile"]]
    assert a["ndcg@10"] == b["ndcg@10"]


def test_evaluate_takes_every_option_as_one_dict(engine, eval_set):
    """`options=` is the CLI's `--options` format: the English-profile options change the
    ranking of English profiles only; unknown keys are refused by name."""
    profiles, qrels = eval_set
    english = [p for p in profiles if " the " in p["request"]["organization_profile"]["description"]][:3]
    german = [p for p in profiles if p not in english][:2]
    assert english and german
    base = grantmatch.evaluate(engine, english + german, qrels)
    assert base["options"]["glossary_weight"] == 1.0
    assert base["options"]["keyword_factor_en"] == 1.0
    off = grantmatch.evaluate(
        engine, english + german, qrels, options={"glossary_weight": 0.0, "keyword_factor_en": 0.0}
    )
    assert off["options"]["glossary_weight"] == 0.0
    ranked = lambda res: [r["ranked"] for r in res["per_profile"]]
    assert ranked(off)[3:] == ranked(base)[3:], "German profiles do not use the glossary"
    assert ranked(off)[:3] != ranked(base)[:3], "English profiles do"
    # `weights=` replaces the weights of `options`.
    both = grantmatch.evaluate(
        engine, german, qrels, options={"weights": {"keyword": 0.0}}, weights={"keyword": 0.2}
    )
    assert both["options"]["weights"]["keyword"] == 0.2
    first = english[0]["request"]
    assert [m["slug"] for m in engine.match(first, options={"glossary_weight": 0.0, "keyword_factor_en": 0.0})] == off["per_profile"][0]["ranked"]
    with pytest.raises(grantmatch.InvalidInputError, match="glossary"):
        grantmatch.evaluate(engine, german, qrels, options={"glossary": 1.0})
