//! The ranking stage — candidate filtering + cosine scoring + top-k, the query vector
//! given — on synthetic catalogues with pseudo-embeddings (`GRANTMATCH_BENCH_SIZES`,
//! default 8,500 / 100,000 / 1,000,000 grants). Throughput is in grants scanned.
//!
//! - `top25_unfiltered/N`: every grant is a candidate (what the NumPy brute force of
//!   `benches/ranking_vs_numpy.py` computes).
//! - `top25_filtered/N`: a non-profit association in Bayern (region, legal form and
//!   non-profit rule, about a third of the grants pass).
//! - `shortlist200_filtered/N`: the 200 that `matching::rank` passes to the rule stage.
//! - `exact_f32_top25_unfiltered/N`: the same scan without the int8 stage.
//! - `previous_top25_unfiltered/N`: the implementation before the int8 scan (filter,
//!   sequential f32 dot product, collect, sort), for comparison.
//!
//! Setup notes on stderr: generation time, memory (peak RSS), and the overlap of the
//! int8 scan's top-25/top-200 with the exact f32 scan over 20 queries.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use grantmatch_benches::{
    filtered_profile, mb, memory, ranking_sizes, seed, today, unfiltered_profile, Synthetic,
};
use grantmatch_engine::catalogue::Idx;
use grantmatch_engine::matching::{passes_filters, semantic_top};
use grantmatch_engine::vectors::Scan;
use grantmatch_engine::{synthetic, ResolvedScope};
use rayon::prelude::*;

/// Share of the exact top-`k` found by the default scan, over 20 pseudo queries.
fn overlap(s: &Synthetic, k: usize) -> (usize, usize) {
    let cat = &s.catalogue;
    let mut hits = 0;
    let mut total = 0;
    for variant in 0..20u64 {
        let area = cat.grant_areas[(variant as usize * 7) % cat.grant_areas.len()].id;
        let q = synthetic::pseudo_query(&cat.grant_areas, seed(), Some(area), variant);
        let fast = s.vectors.top_k(&q, k, |_| true);
        let exact = s.vectors.top_k_with(Scan::Exact, &q, k, |_| true);
        hits += fast.iter().filter(|x| exact.contains(x)).count();
        total += exact.len();
    }
    (hits, total)
}

fn ranking(c: &mut Criterion) {
    for n in ranking_sizes() {
        let started = Instant::now();
        let s = Synthetic::new(n);
        let (peak, rss) = memory();
        let (h25, t25) = overlap(&s, 25);
        let (h200, t200) = overlap(&s, 200);
        eprintln!(
            "ranking setup {n} grants: generated in {:.1} s; vectors {} (f32 + int8); RSS {}, peak {}; \
             top-25 overlap with exact f32 {h25}/{t25}, top-200 {h200}/{t200}",
            started.elapsed().as_secs_f64(),
            mb(s.vectors.memory_bytes() as u64),
            mb(rss),
            mb(peak),
        );
        let cat = &s.catalogue;
        let vectors = &s.vectors;
        let scope = ResolvedScope::unrestricted(cat);
        let filtered = filtered_profile(cat);
        let unfiltered = unfiltered_profile(cat);
        let candidates = (0..n as Idx)
            .filter(|&g| passes_filters(cat, &filtered, g, today()))
            .count();
        eprintln!("  filtered profile: {candidates} of {n} grants are candidates");
        let q = &s.query;

        let mut group = c.benchmark_group("ranking_stage");
        group.throughput(Throughput::Elements(n as u64));
        if n >= 500_000 {
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(8));
        } else if n >= 50_000 {
            group.sample_size(30);
        }
        group.bench_with_input(BenchmarkId::new("top25_unfiltered", n), &n, |b, _| {
            b.iter(|| semantic_top(cat, vectors, &scope, &unfiltered, black_box(q), today(), 25))
        });
        group.bench_with_input(BenchmarkId::new("top25_filtered", n), &n, |b, _| {
            b.iter(|| semantic_top(cat, vectors, &scope, &filtered, black_box(q), today(), 25))
        });
        group.bench_with_input(BenchmarkId::new("shortlist200_filtered", n), &n, |b, _| {
            b.iter(|| semantic_top(cat, vectors, &scope, &filtered, black_box(q), today(), 200))
        });
        group.bench_with_input(
            BenchmarkId::new("exact_f32_top25_unfiltered", n),
            &n,
            |b, _| {
                b.iter(|| {
                    vectors.top_k_with(Scan::Exact, black_box(q), 25, |g| scope.is_visible(g))
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("previous_top25_unfiltered", n),
            &n,
            |b, _| {
                b.iter(|| {
                    // The semantic stage as it was before the int8 scan.
                    let q = black_box(q);
                    let mut scored: Vec<(Idx, f32)> = (0..n as Idx)
                        .into_par_iter()
                        .with_min_len(2048)
                        .filter(|&g| {
                            scope.is_visible(g) && passes_filters(cat, &unfiltered, g, today())
                        })
                        .map(|g| {
                            let row = vectors.row(g as usize);
                            (g, row.iter().zip(q).map(|(x, y)| x * y).sum::<f32>())
                        })
                        .collect();
                    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                    scored.truncate(25);
                    scored
                })
            },
        );
        group.finish();
        let (peak, _) = memory();
        eprintln!("  peak RSS after the {n}-grant benches: {}", mb(peak));
    }
}

criterion_group!(benches, ranking);
criterion_main!(benches);
