#!/usr/bin/env python3
"""The ranking stage side by side with what a data scientist would write: NumPy
brute-force cosine over the same embedding matrix plus argsort, in the same session.

For each size the Rust side (``examples/ranking_latency``, one process per size)
generates the synthetic catalogue with pseudo-embeddings, times the ranking stage
(top-25, query vector given) per call and exports the very matrix it ranked; then
NumPy times, per call, on that matrix:

- ``argsort``: ``s = M @ q; top = np.argsort(-s)[:25]`` (the textbook version);
- ``argpartition``: ``s = M @ q; i = np.argpartition(-s, 25)[:25]`` then sorting
  those 25 (the careful version).

Reports p50/p99 per call and our time / theirs, plus the criterion medians of
``ranking_stage/top25_unfiltered/N`` when ``cargo bench --bench ranking`` ran
before. Run it through ``benches/ranking_vs_numpy.sh`` (which provides NumPy).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DIM = 384


def percentiles(times_ms):
    t = sorted(times_ms)
    pick = lambda p: t[round((len(t) - 1) * p)]
    return {"p50_ms": pick(0.5), "p99_ms": pick(0.99), "min_ms": t[0], "calls": len(t)}


def time_calls(fn, calls):
    for _ in range(3):
        fn()
    out = []
    for _ in range(calls):
        s = time.perf_counter()
        fn()
        out.append((time.perf_counter() - s) * 1e3)
    return percentiles(out)


def criterion_median_ms(n):
    est = ROOT / "target/criterion/ranking_stage/top25_unfiltered" / str(n) / "new/estimates.json"
    try:
        return json.loads(est.read_text())["median"]["point_estimate"] / 1e6
    except (OSError, KeyError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="8500,100000,1000000")
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--export-dir", default=str(ROOT / "target/bench-fixtures/ranking"))
    ap.add_argument("--out", default=str(ROOT / "target/bench-results/ranking_vs_numpy.json"))
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    sizes = [int(s.replace("_", "")) for s in a.sizes.split(",") if s.strip()]
    example = ROOT / "target/release/examples/ranking_latency"
    if not a.no_build:
        subprocess.run(
            ["cargo", "build", "--release", "--locked", "-p", "grantmatch-benches",
             "--example", "ranking_latency"],
            cwd=ROOT, check=True,
        )
    rows = []
    for n in sizes:
        calls = min(a.calls, 60) if n >= 500_000 else a.calls
        rust = json.loads(subprocess.run(
            [str(example), "--sizes", str(n), "--calls", str(calls), "--export-dir", a.export_dir],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout.strip().splitlines()[-1])
        d = Path(a.export_dir) / str(n)
        m = np.fromfile(d / "embeddings.f32", dtype="<f4").reshape(n, DIM)
        q = np.fromfile(d / "query.f32", dtype="<f4")
        # Drop the exported files: a million rows are 1.5 GB.
        for f in ("embeddings.f32", "query.f32"):
            (d / f).unlink()

        def by_argsort():
            s = m @ q
            return np.argsort(-s, kind="stable")[:25]

        def by_argpartition():
            s = m @ q
            i = np.argpartition(-s, 25)[:25]
            return i[np.argsort(-s[i], kind="stable")]

        np_top = by_argsort()
        overlap = len(set(np_top.tolist()) & set(rust["top25_rows_no_filter"]))
        arg = time_calls(by_argsort, calls)
        part = time_calls(by_argpartition, calls)
        peak_py = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
        del m
        ours = rust["top25_unfiltered"]
        row = {
            "n": n,
            "rust_top25_unfiltered": ours,
            "rust_top25_filtered": rust["top25_filtered"],
            "rust_exact_f32": rust["exact_f32_top25_unfiltered"],
            "rust_peak_rss_mb": rust["peak_rss_mb"],
            "rust_vectors_mb": rust["vectors_mb"],
            "numpy_argsort": arg,
            "numpy_argpartition": part,
            "numpy_peak_rss_mb": peak_py,
            "top25_overlap_with_numpy": overlap,
            "ratio_ours_over_argsort": ours["p50_ms"] / arg["p50_ms"],
            "ratio_ours_over_argpartition": ours["p50_ms"] / part["p50_ms"],
            "criterion_median_ms": criterion_median_ms(n),
        }
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "numpy": np.__version__,
        "blas": np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {}).get("name"),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print(f"\nranking stage, top-25, query vector given (p50 / p99 per call, ms); {meta}")
    print("| grants | grantmatch | grantmatch filtered | NumPy argsort | NumPy argpartition "
          "| ours ÷ argsort | ours ÷ argpartition | criterion median | top-25 = NumPy's |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    f = lambda t: f"{t['p50_ms']:.3g} / {t['p99_ms']:.3g}"
    for r in rows:
        cm = r["criterion_median_ms"]
        print(f"| {r['n']:,} | {f(r['rust_top25_unfiltered'])} | {f(r['rust_top25_filtered'])} "
              f"| {f(r['numpy_argsort'])} | {f(r['numpy_argpartition'])} "
              f"| {r['ratio_ours_over_argsort']:.2f} | {r['ratio_ours_over_argpartition']:.2f} "
              f"| {'%.3g' % cm if cm else '–'} | {r['top25_overlap_with_numpy']}/25 |")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
