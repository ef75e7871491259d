"""Several Python threads matching at once get the sequential answers."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import grantmatch


def test_concurrent_match_equals_sequential(engine, eval_requests):
    requests = list(eval_requests.values())[:8]
    weights = [None, {"keyword": 0.5}]
    jobs = [(r, w) for r in requests for w in weights]
    sequential = [engine.match(r, weights=w, explain=True) for r, w in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda job: engine.match(job[0], weights=job[1], explain=True), jobs * 2))
    assert concurrent == sequential * 2


def test_gil_is_released_during_heavy_calls(engine):
    """A pure-Python thread keeps running while another thread embeds and matches."""
    stop = threading.Event()
    ticks = []

    def spin():
        while not stop.is_set():
            ticks.append(1)

    texts = [f"Förderprogramm Nummer {i} für Vereine und Kommunen" for i in range(48)]
    t = threading.Thread(target=spin)
    t.start()
    try:
        before = len(ticks)
        m = engine.embed(texts, kind="passage")
        during = len(ticks) - before
    finally:
        stop.set()
        t.join()
    assert m.shape == (48, 384)
    assert during > 1000, during


def test_concurrent_embed_and_evaluate(engine, eval_set):
    profiles, qrels = eval_set
    expected_embed = engine.embed(["Sportverein", "Kommune"])
    expected_eval = grantmatch.evaluate(engine, profiles[:4], qrels)

    def work(i):
        if i % 2:
            return engine.embed(["Sportverein", "Kommune"])
        return grantmatch.evaluate(engine, profiles[:4], qrels)

    with ThreadPoolExecutor(max_workers=4) as pool:
        out = list(pool.map(work, range(8)))
    for i, o in enumerate(out):
        if i % 2:
            np.testing.assert_allclose(o, expected_embed, atol=1e-6)
        else:
            assert o == expected_eval
