"""Engine.embed and Engine.grant_embeddings."""

from __future__ import annotations

import numpy as np
import pytest

import grantmatch


def test_embed_shapes_and_norms(engine):
    texts = ["Förderung für Sportvereine in Sachsen", "Digitalisierung im Mittelstand", "Kita"]
    m = engine.embed(texts)
    assert isinstance(m, np.ndarray)
    assert m.dtype == np.float32 and m.shape == (3, grantmatch.DIM)
    assert m.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, rtol=1e-5)
    one = engine.embed("Kita")
    assert one.shape == (1, 384)
    np.testing.assert_allclose(one[0], m[2], atol=1e-5)
    assert engine.embed([]).shape == (0, 384)
    assert engine.embed(("a", "b")).shape == (2, 384)


def test_embed_kinds_differ_and_are_deterministic(engine):
    q = engine.embed(["Jugendsport"], kind="query")
    p = engine.embed(["Jugendsport"], kind="passage")
    assert not np.allclose(q, p)
    np.testing.assert_allclose(engine.embed(["Jugendsport"]), q, atol=1e-6)


def test_embed_semantics(engine):
    a, b, c = engine.embed(
        ["Sportverein für Kinder", "Fußballclub mit Jugendabteilung", "Kredit für Windkraftanlagen"]
    )
    assert a @ b > a @ c


def test_embed_errors(engine):
    with pytest.raises(grantmatch.InvalidInputError, match="kind: `document`"):
        engine.embed(["x"], kind="document")
    with pytest.raises(TypeError):
        engine.embed([1, 2])
    with pytest.raises(TypeError):
        engine.embed(5)


def test_grant_embeddings(engine):
    matrix, ids = engine.grant_embeddings()
    assert matrix.dtype == np.float32 and matrix.shape == (len(engine), 384)
    assert matrix.flags["C_CONTIGUOUS"]
    assert len(ids) == len(engine) == len(set(ids))
    assert set(ids) == {g["id"] for g in engine.grants()}
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-4)
    # a fresh copy each call: writing to one does not touch the engine
    matrix[0, :] = 0
    again, ids2 = engine.grant_embeddings()
    assert ids2 == ids and np.linalg.norm(again[0]) > 0.99


def test_grant_rows_are_the_grants_passages(engine):
    """A grant's title and teaser embedded as a passage find that grant's row first."""
    matrix, ids = engine.grant_embeddings()
    row = {gid: i for i, gid in enumerate(ids)}
    grants = [g for g in engine.grants() if g["short_description"]][:30]
    texts = [g["title"] + "\n" + g["short_description"] for g in grants]
    scores = engine.embed(texts, kind="passage") @ matrix.T
    hits = sum(row[g["id"]] == int(np.argmax(s)) for g, s in zip(grants, scores))
    assert hits >= 27, hits
