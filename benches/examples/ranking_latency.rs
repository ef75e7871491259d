//! Per-call latency of the ranking stage (p50, p99, min) on a synthetic catalogue, as
//! one JSON line per size — the Rust side of `benches/ranking_vs_numpy.py`, which runs
//! it one size per process (so that the peak memory is that size's alone) and times
//! NumPy on the very matrix exported here.
//!
//! ```text
//! cargo run --release -p grantmatch-benches --example ranking_latency -- \
//!     --sizes 8500,100000 --calls 200 [--export-dir DIR]
//! ```
//! `--export-dir DIR` writes `DIR/<n>/embeddings.f32` (row-major little-endian f32,
//! the normalised rows ranked here) and `DIR/<n>/query.f32`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use grantmatch_benches::{filtered_profile, memory, seed, today, unfiltered_profile, Synthetic};
use grantmatch_engine::matching::semantic_top;
use grantmatch_engine::vectors::Scan;
use grantmatch_engine::ResolvedScope;
use serde_json::json;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// p50, p99 and min of `calls` timed calls, in milliseconds (after 3 warm-up calls).
fn time<R>(calls: usize, mut f: impl FnMut() -> R) -> serde_json::Value {
    for _ in 0..3 {
        black_box(f());
    }
    let mut t: Vec<f64> = (0..calls)
        .map(|_| {
            let s = Instant::now();
            black_box(f());
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    let q = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
    json!({ "p50_ms": q(0.5), "p99_ms": q(0.99), "min_ms": t[0], "calls": calls })
}

fn write_f32(path: &PathBuf, values: &[f32]) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for x in values {
        w.write_all(&x.to_le_bytes()).expect("write");
    }
    w.flush().expect("flush");
}

fn main() {
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| "8500,100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().replace('_', "").parse().ok())
        .collect();
    let calls: usize = arg("--calls").and_then(|c| c.parse().ok()).unwrap_or(100);
    let export = arg("--export-dir").map(PathBuf::from);
    for n in sizes {
        let started = Instant::now();
        let s = Synthetic::new(n);
        let setup_s = started.elapsed().as_secs_f64();
        if let Some(dir) = &export {
            let dir = dir.join(n.to_string());
            std::fs::create_dir_all(&dir).expect("export dir");
            write_f32(&dir.join("embeddings.f32"), s.vectors.as_slice());
            write_f32(&dir.join("query.f32"), &s.query);
        }
        let cat = &s.catalogue;
        let scope = ResolvedScope::unrestricted(cat);
        let unfiltered = unfiltered_profile(cat);
        let filtered = filtered_profile(cat);
        let q = &s.query;
        let calls = if n >= 500_000 { calls.min(60) } else { calls };
        // Every row a candidate (no deadline check either), as in the NumPy brute force.
        let top25 = s.vectors.top_k(q, 25, |_| true);
        let unf = time(calls, || {
            semantic_top(cat, &s.vectors, &scope, &unfiltered, q, today(), 25)
        });
        let fil = time(calls, || {
            semantic_top(cat, &s.vectors, &scope, &filtered, q, today(), 25)
        });
        let exact = time(calls.min(30), || {
            s.vectors.top_k_with(Scan::Exact, q, 25, |_| true)
        });
        let (peak, rss) = memory();
        println!(
            "{}",
            json!({
                "n": n,
                "seed": seed(),
                "setup_s": setup_s,
                "threads": rayon::current_num_threads(),
                "top25_unfiltered": unf,
                "top25_filtered": fil,
                "exact_f32_top25_unfiltered": exact,
                "top25_rows_no_filter": top25.iter().map(|x| x.0).collect::<Vec<_>>(),
                "vectors_mb": s.vectors.memory_bytes() as f64 / 1e6,
                "rss_mb": rss as f64 / 1e6,
                "peak_rss_mb": peak as f64 / 1e6,
            })
        );
    }
}
