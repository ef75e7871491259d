//! Scratch probe: min-of-N timings of the scans (robust to a busy machine).
use std::time::Instant;
use grantmatch_benches::Synthetic;
use grantmatch_engine::vectors::Scan;
fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(8500);
    let s = Synthetic::new(n);
    for (name, scan, k) in [("exact25", Scan::Exact, 25), ("compact25", Scan::Compact, 25), ("compact200", Scan::Compact, 200), ("exact200", Scan::Exact, 200)] {
        let mut best = f64::MAX;
        let mut times = Vec::new();
        for _ in 0..(if n > 200_000 { 30 } else { 300 }) {
            let t = Instant::now();
            let r = s.vectors.top_k_with(scan, &s.query, k, |_| true);
            std::hint::black_box(r);
            let e = t.elapsed().as_secs_f64() * 1e6;
            best = best.min(e);
            times.push(e);
        }
        times.sort_by(f64::total_cmp);
        println!("{name:12} n={n} min {best:.0} µs  median {:.0} µs", times[times.len() / 2]);
    }
}
