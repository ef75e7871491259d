//! How far the int8 scan departs from the exact f32 scan on the real catalogue with
//! its real embeddings: for each evaluation profile (fixtures/eval), the semantic
//! stage's top-25 and top-200 (with the profile's filters) by both scans.
//!
//! `cargo run --release -p grantmatch-benches --example overlap` (needs the model;
//! uses `GRANTMATCH_BENCH_DATA_DIR` or target/bench-data/real, imported when missing).

use grantmatch_benches::{embedder, eval_profiles, real_data_dir, today};
use grantmatch_engine::vectors::{normalized, Scan};
use grantmatch_engine::{matching, Engine, ResolvedScope};

fn main() {
    let embedder = embedder().expect("the model is needed");
    let engine = Engine::open(&real_data_dir(&embedder)).expect("real data dir");
    let cat = &engine.catalogue;
    let vectors = engine.vectors().expect("embeddings");
    let scope = ResolvedScope::unrestricted(cat);
    let mut totals = [(0usize, 0usize); 2];
    for (i, input) in eval_profiles().iter().enumerate() {
        let p = input.resolve(cat).expect("valid profile");
        let mut q = embedder.embed_query(&p.query_text).unwrap().to_vec();
        if !p.keywords.is_empty() {
            let t = embedder.embed_query(&p.keywords.join(", ")).unwrap();
            q.iter_mut().zip(t.iter()).for_each(|(a, b)| *a += b);
        }
        let q = normalized(&q);
        let keep = |g| scope.is_visible(g) && matching::passes_filters(cat, &p, g, today());
        let mut line = format!("p{:02}", i + 1);
        for (j, k) in [25, 200].into_iter().enumerate() {
            let exact = vectors.top_k_with(Scan::Exact, &q, k, keep);
            let fast = vectors.top_k_with(Scan::Compact, &q, k, keep);
            let same = fast.iter().filter(|x| exact.contains(x)).count();
            totals[j].0 += same;
            totals[j].1 += exact.len();
            line.push_str(&format!("  top-{k}: {same}/{}", exact.len()));
        }
        println!("{line}");
    }
    println!(
        "total  top-25: {}/{}  top-200: {}/{}",
        totals[0].0, totals[0].1, totals[1].0, totals[1].1
    );
}
