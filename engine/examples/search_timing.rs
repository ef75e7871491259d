//! Times `GET /grants?q=` in the engine: `search_timing DATA_DIR [QUERY] [N]`.
use std::time::Instant;

use grantmatch_engine::{Engine, GrantFilter, PageRequest, ResolvedScope};

fn main() {
    let mut a = std::env::args().skip(1);
    let engine = Engine::open(std::path::Path::new(&a.next().expect("DATA_DIR"))).unwrap();
    let q = a.next().unwrap_or_else(|| "Digitalisierung".into());
    let n: usize = a.next().map(|s| s.parse().unwrap()).unwrap_or(2000);
    let scope = ResolvedScope::unrestricted(&engine.catalogue);
    let filter = GrantFilter {
        q: Some(q.clone()),
        ..Default::default()
    };
    let page = PageRequest {
        page: 1,
        per_page: 20,
    };
    let mut times = Vec::with_capacity(n);
    let mut total = 0;
    for _ in 0..n {
        let t = Instant::now();
        total = engine.list_grants(&scope, &filter, page).unwrap().total;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "q={q:?}: {total} hits, median {:.3} ms, p99 {:.3} ms",
        times[n / 2],
        times[n * 99 / 100]
    );
}
