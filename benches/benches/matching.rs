//! End-to-end matching in the engine (`Engine::match_profile`: resolve the profile,
//! embed it, BM25, semantic stage, rule stage, reasons) on the real catalogue with its
//! real embeddings (skipped with a note when the model assets are missing), and the
//! part that is not the model on a synthetic catalogue of 100,000 grants. Throughput
//! is in grants in the catalogue.
//!
//! - `match_end_to_end/unseen_100_words/1434`: a realistic 97-word profile (fixtures/eval
//!   p01, with region, legal form, keywords and a project) made new each time.
//! - `match_end_to_end/repeated/1434`: the same profile again (query vectors cached).
//! - `match_end_to_end/model_only/1434`: the two model calls `match_profile` makes for
//!   that profile (query text, then keywords), uncached — the bare model time.
//! - `match_end_to_end/unseen_texts_only/1434`: the same profile without keywords and
//!   project title, as partners that send only texts do (matched need by need, the needs
//!   being the clauses of its sentences), made new in every sentence;
//!   `model_only_texts_only/1434`: one model call for its text — its bare model time.
//! - `match_rank_only/real/1434` and `match_rank_only/synthetic/100000`: everything
//!   after the embedding (BM25, semantic stage, rules, reasons), query vector given; the
//!   profile's text changes every time, so the engine's cache of lexical queries does
//!   not spare the BM25 query.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use grantmatch_benches::{
    embedder, long_profile, real_data_dir, seed, today, uncached_variants, unseen,
    unseen_texts_only,
};
use grantmatch_engine::embed::TextKind;
use grantmatch_engine::{synthetic, Engine, MatchOptions, ResolvedScope};

fn matching(c: &mut Criterion) {
    let options = MatchOptions::default();
    let profile = long_profile();

    // Synthetic, 100,000 grants: everything but the model.
    {
        let engine = grantmatch_benches::synthetic_engine(100_000);
        let cat = &engine.catalogue;
        let n = cat.grants.len();
        let scope = ResolvedScope::unrestricted(cat);
        let variants = uncached_variants(&profile, cat);
        let mut turn = variants.iter().cycle();
        let q = synthetic::bench_query(&cat.grant_areas, seed());
        let mut group = c.benchmark_group("match_rank_only");
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(20);
        group.bench_with_input(BenchmarkId::new("synthetic", n), &(), |b, _| {
            b.iter(|| {
                let resolved = turn.next().unwrap();
                engine
                    .rank(&scope, resolved, black_box(&q), &options, today())
                    .unwrap()
            })
        });
        group.finish();
    }

    let Some(embedder) = embedder() else { return };
    let engine = Engine::open(&real_data_dir(&embedder)).expect("real data dir");
    let cat = &engine.catalogue;
    let n = cat.grants.len();
    let scope = ResolvedScope::unrestricted(cat);
    let resolved = profile.resolve(cat).unwrap();
    let counter = AtomicU64::new(0);

    let mut group = c.benchmark_group("match_end_to_end");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(20);
    group.bench_with_input(BenchmarkId::new("unseen_100_words", n), &(), |b, _| {
        b.iter(|| {
            let input = unseen(&profile, counter.fetch_add(1, Ordering::Relaxed));
            engine
                .match_profile(&embedder, &scope, black_box(&input), &options, today())
                .unwrap()
        })
    });
    group.bench_with_input(BenchmarkId::new("model_only", n), &(), |b, _| {
        b.iter(|| {
            let input = unseen(&profile, counter.fetch_add(1, Ordering::Relaxed));
            let p = input.resolve(cat).unwrap();
            let q = embedder.embed(&[&p.query_text], TextKind::Query).unwrap();
            let k = embedder
                .embed(&[&p.keywords.join(", ")], TextKind::Query)
                .unwrap();
            (q, k)
        })
    });
    // The same profile sent with its texts only: its needs are its clauses.
    group.bench_with_input(BenchmarkId::new("unseen_texts_only", n), &(), |b, _| {
        b.iter(|| {
            let input = unseen_texts_only(&profile, counter.fetch_add(1, Ordering::Relaxed));
            engine
                .match_profile(&embedder, &scope, black_box(&input), &options, today())
                .unwrap()
        })
    });
    group.bench_with_input(BenchmarkId::new("model_only_texts_only", n), &(), |b, _| {
        b.iter(|| {
            let input = unseen_texts_only(&profile, counter.fetch_add(1, Ordering::Relaxed));
            let p = input.resolve(cat).unwrap();
            embedder.embed(&[&p.query_text], TextKind::Query).unwrap()
        })
    });
    engine
        .match_profile(&embedder, &scope, &profile, &options, today())
        .unwrap();
    group.bench_with_input(BenchmarkId::new("repeated", n), &(), |b, _| {
        b.iter(|| {
            engine
                .match_profile(&embedder, &scope, black_box(&profile), &options, today())
                .unwrap()
        })
    });
    group.finish();

    let mut q = embedder.embed_query(&resolved.query_text).unwrap().to_vec();
    let topics = embedder.embed_query(&resolved.keywords.join(", ")).unwrap();
    q.iter_mut().zip(topics.iter()).for_each(|(a, b)| *a += b);
    let mut group = c.benchmark_group("match_rank_only");
    group.throughput(Throughput::Elements(n as u64));
    let variants = uncached_variants(&profile, cat);
    let mut turn = variants.iter().cycle();
    group.bench_with_input(BenchmarkId::new("real", n), &(), |b, _| {
        b.iter(|| {
            let resolved = turn.next().unwrap();
            engine
                .rank(&scope, resolved, black_box(&q), &options, today())
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, matching);
criterion_main!(benches);
