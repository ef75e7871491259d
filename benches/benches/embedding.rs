//! Query embedding with the real model (skipped with a note when the model assets are
//! missing): the bare model time that the matching target is relative to. Throughput
//! is in bytes of text.
//!
//! - `query_embedding/short`: a one-line profile ("Sportverein sucht Förderung für
//!   Jugendarbeit"), new text each time (the cache never answers).
//! - `query_embedding/long_100_words`: the query text of a realistic 97-word profile
//!   (fixtures/eval p01: name, description, mission, project), new each time.
//! - `query_embedding/long_cached`: the same long text again (query cache hit).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use grantmatch_benches::{embedder, long_profile, real_records, short_profile};
use grantmatch_engine::catalogue::Catalogue;
use grantmatch_engine::embed::TextKind;

fn embedding(c: &mut Criterion) {
    let Some(embedder) = embedder() else { return };
    let cat = Catalogue::new(real_records());
    let short = short_profile().resolve(&cat).unwrap().query_text;
    let long = long_profile().resolve(&cat).unwrap().query_text;
    eprintln!(
        "embedding setup: {} ({} words short, {} words long)",
        embedder.model_id(),
        short.split_whitespace().count(),
        long.split_whitespace().count()
    );
    let counter = AtomicU64::new(0);
    let mut group = c.benchmark_group("query_embedding");
    group.sample_size(20);
    for (name, text) in [("short", &short), ("long_100_words", &long)] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), text, |b, t| {
            b.iter(|| {
                // A new text each time: " (Nr. i)" adds two or three tokens.
                let i = counter.fetch_add(1, Ordering::Relaxed);
                let t = format!("{t} (Nr. {i})");
                embedder.embed(&[black_box(&t)], TextKind::Query).unwrap()
            })
        });
    }
    embedder.embed_query(&long).unwrap();
    group.throughput(Throughput::Bytes(long.len() as u64));
    group.bench_with_input(BenchmarkId::from_parameter("long_cached"), &long, |b, t| {
        b.iter(|| embedder.embed_query(black_box(t)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, embedding);
criterion_main!(benches);
