"""Engine.open and the catalogue accessors."""

from __future__ import annotations

from pathlib import Path

import pytest

import grantmatch
from conftest import TINY, first


def test_open_and_properties(engine, data_dir, model_dir):
    assert len(engine) == 1434
    assert engine.data_dir == data_dir
    assert Path(engine.snapshot_dir).parent == Path(data_dir) / "catalogue"
    assert engine.model_dir == model_dir
    assert engine.model_id == "multilingual-e5-small/fp32"
    assert engine.embeddings_model_id == engine.model_id
    assert "grants=1434" in repr(engine)


def test_open_uses_the_environment(monkeypatch, data_dir, model_dir):
    monkeypatch.setenv("GRANTMATCH_DATA_DIR", data_dir)
    monkeypatch.setenv("GRANTMATCH_MODEL_DIR", model_dir)
    monkeypatch.setenv("GRANTMATCH_MODEL_VARIANT", "int8")
    assert grantmatch.default_data_dir() == data_dir
    assert grantmatch.default_model_dir() == model_dir
    e = grantmatch.Engine.open()
    assert e.data_dir == data_dir
    assert e.model_id == "multilingual-e5-small/int8"


def test_defaults_without_environment(monkeypatch):
    for k in ("GRANTMATCH_DATA_DIR", "GRANTMATCH_MODEL_DIR", "GRANTMATCH_MODEL_VARIANT"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", "/home/someone")
    assert grantmatch.default_data_dir() == "./data"
    assert grantmatch.default_model_dir() == "/home/someone/.cache/grantmatch/model"


def test_open_without_model(data_dir):
    e = grantmatch.Engine.open(data_dir, load_model=False)
    assert e.model_id is None
    assert len(e.grants(limit=3)) == 3
    with pytest.raises(grantmatch.ModelError, match="load_model=False"):
        e.embed("x")
    with pytest.raises(grantmatch.ModelError):
        e.match("Ein Sportverein")
    # the catalogue's vectors are there even without the model
    matrix, ids = e.grant_embeddings()
    assert matrix.shape == (1434, 384)


def test_grants_all(engine):
    """Every grant, in the API's order (checked against the server in test_http), without
    a partner's own annotations: the Python module has no partner."""
    grants = engine.grants()
    assert len(grants) == len(engine)
    keys = {
        "id", "slug", "title", "short_description", "grant_type", "grant_provider",
        "end_date", "ongoing_grant", "funding_amount", "max_funding_amount", "regions",
        "grant_areas", "target_groups", "updated_at",
    }
    assert set(grants[0]) == keys
    assert len({g["id"] for g in grants}) == len(grants)


def test_grants_filters(engine):
    q = engine.grants("Sportverein")
    assert 0 < len(q) < 200
    assert engine.grants(q="Sportverein") == q
    assert len(engine.grants("Sportverein", limit=2)) == 2
    assert engine.grants(limit=0) == []

    sachsen = engine.grants(region_ids="Sachsen")
    by_slug = engine.grants(region_ids=["sachsen"])
    region = first(engine.regions(), name="Sachsen")
    by_id = engine.grants(region_ids=[region["id"]])
    assert sachsen == by_slug == by_id
    assert all(any(r["name"] == "Sachsen" for r in g["regions"]) for g in sachsen)
    both = engine.grants(region_ids=["Sachsen", "Bayern"])
    assert len(both) > len(sachsen)

    loans = engine.grants(grant_type="loan")
    assert loans and all(g["grant_type"] == "loan" for g in loans)

    area = next(a for a in engine.grant_areas() if a["is_parent"])
    in_area = engine.grants(grant_area_ids=area["id"])
    assert in_area
    # AND across filters
    combined = engine.grants(region_ids="Sachsen", grant_type="loan")
    assert {g["id"] for g in combined} == {g["id"] for g in sachsen} & {g["id"] for g in loans}

    provider = next(p for p in engine.providers() if p["grants_count"] > 0)
    by_provider = engine.grants(grant_provider_id=provider["slug"])
    assert len(by_provider) == provider["grants_count"]
    assert engine.grants(grant_provider_id=provider["id"]) == by_provider


def test_grants_filter_errors(engine):
    with pytest.raises(grantmatch.UnknownIdError, match="region_ids: unknown region `Atlantis`"):
        engine.grants(region_ids="Atlantis")
    with pytest.raises(grantmatch.UnknownIdError, match="grant_area_ids"):
        engine.grants(grant_area_ids=["00000000-0000-0000-0000-000000000000"])
    with pytest.raises(grantmatch.UnknownIdError, match="grant_provider_id"):
        engine.grants(grant_provider_id="no-such-provider")
    with pytest.raises(grantmatch.InvalidInputError, match="grant_type: `donation`"):
        engine.grants(grant_type="donation")
    with pytest.raises(TypeError):
        engine.grants(region_ids=[1, 2])


def test_grant_detail(engine):
    item = engine.grants(limit=1)[0]
    detail = engine.grant(item["slug"])
    assert engine.grant(item["id"]) == detail
    assert detail["id"] == item["id"]
    for k in ("description", "eligible_entities", "contact_point", "attribution", "created_at"):
        assert k in detail
    with pytest.raises(grantmatch.UnknownIdError, match="no grant `nope`"):
        engine.grant("nope")
    assert issubclass(grantmatch.UnknownIdError, grantmatch.GrantmatchError)


def test_vocabularies(engine):
    regions = engine.regions()
    assert len(regions) == 272
    assert set(regions[0]) == {"id", "name", "name_de", "name_en", "region_type", "parent_id", "parent_name"}
    assert first(regions, name="Bayern")["region_type"] == "state"
    areas = engine.grant_areas()
    assert len(areas) == 147
    assert any(a["is_parent"] for a in areas) and any(not a["is_parent"] for a in areas)
    entities = engine.eligible_entities()
    assert len(entities) == 23 and "description_en" in entities[0]
    groups = engine.target_groups()
    assert len(groups) == 38 and set(groups[0]) == {"id", "name", "name_de", "name_en"}


def test_providers(engine):
    providers = engine.providers()
    assert len(providers) == 137
    assert sum(p["grants_count"] for p in providers) <= len(engine)
    p = providers[0]
    assert engine.provider(p["slug"]) == p == engine.provider(p["id"])
    ministries = engine.providers(provider_type="federal_ministry")
    assert ministries and all(m["type"] == "federal_ministry" for m in ministries)
    some = engine.providers("bund")
    assert 0 < len(some) < len(providers)
    with pytest.raises(grantmatch.InvalidInputError, match="provider_type"):
        engine.providers(provider_type="bank")
    with pytest.raises(grantmatch.UnknownIdError):
        engine.provider("nobody")


def test_tiny_catalogue_without_embeddings(tiny_data_dir):
    e = grantmatch.Engine.open(tiny_data_dir, load_model=False)
    assert len(e) == 12
    assert e.embeddings_model_id is None
    with pytest.raises(grantmatch.ModelError, match="no embeddings"):
        e.grant_embeddings()
    slugs = {g["slug"] for g in e.grants()}
    assert "testprogramm-1" in slugs


def test_open_errors(tmp_path, data_dir):
    # The engine names what is missing; the Python front-end says how to get it.
    with pytest.raises(grantmatch.CatalogueError, match="no catalogue has been imported.*import_catalogue"):
        grantmatch.Engine.open(tmp_path, load_model=False)
    with pytest.raises(grantmatch.ModelError, match="missing .*model.onnx.*make model"):
        grantmatch.Engine.open(data_dir, tmp_path / "no-model")
    with pytest.raises(grantmatch.InvalidInputError, match="model_variant"):
        grantmatch.Engine.open(data_dir, model_variant="fp16")
    with pytest.raises(TypeError):
        grantmatch.Engine()


def test_import_catalogue(tmp_path, model_dir):
    d = tmp_path / "data"
    s = grantmatch.import_catalogue(TINY, d, model_dir, model_variant="int8")
    assert (s["grants"], s["embedded"], s["reused"]) == (12, 12, 0)
    assert s["regions"] == 6 and s["grant_providers"] == 3
    assert s["reclassified"] >= 0 and set(s) == {
        "snapshot", "fingerprint", "grants", "grant_providers", "regions", "grant_areas",
        "eligible_entities", "target_groups", "embedded", "reused", "reclassified",
        "previous_vectors_error",
    }
    assert s["previous_vectors_error"] is None
    again = grantmatch.import_catalogue(str(TINY), str(d), model_dir, model_variant="int8")
    assert (again["embedded"], again["reused"]) == (0, 12)
    # the same content: the same fingerprint (as the snapshot's FINGERPRINT file says)
    assert len(s["fingerprint"]) == 64 and again["fingerprint"] == s["fingerprint"]
    assert (Path(again["snapshot"]) / "FINGERPRINT").read_text().strip() == s["fingerprint"]
    # unreadable vectors of the current snapshot: everything is embedded again, and the
    # report says why (nothing is dropped silently)
    (Path(again["snapshot"]) / "embeddings.json").write_text("{not json")
    healed = grantmatch.import_catalogue(TINY, d, model_dir, model_variant="int8")
    assert (healed["embedded"], healed["reused"]) == (12, 0)
    assert "embeddings" in healed["previous_vectors_error"], healed
    e = grantmatch.Engine.open(d, model_dir, model_variant="int8")
    assert e.embeddings_model_id == "multilingual-e5-small/int8"
    assert e.match("Testprogramm für Vereine", limit=3)
    # the fp32 model does not fit int8 vectors
    e32 = grantmatch.Engine.open(d, model_dir, model_variant="fp32")
    with pytest.raises(grantmatch.ModelError, match="re-import"):
        e32.match("Testprogramm für Vereine")


def test_import_errors(tmp_path, model_dir):
    bad = TINY.parent / "bad-field"
    with pytest.raises(grantmatch.InvalidInputError, match=r"grants.jsonl:3"):
        grantmatch.import_catalogue(bad, tmp_path / "d", embeddings=False)
    with pytest.raises(grantmatch.InvalidInputError, match=r"grants.jsonl:5"):
        grantmatch.import_catalogue(TINY.parent / "bad-dangling", tmp_path / "d", embeddings=False)
    with pytest.raises(grantmatch.InvalidInputError, match="not a directory"):
        grantmatch.import_catalogue(tmp_path / "nothing", tmp_path / "d", embeddings=False)
    with pytest.raises(grantmatch.ModelError):
        grantmatch.import_catalogue(TINY, tmp_path / "d", tmp_path / "no-model")
    # nothing was installed by the failures
    with pytest.raises(grantmatch.CatalogueError):
        grantmatch.Engine.open(tmp_path / "d", load_model=False)
