//! Catalogue load: opening an imported data directory (validated JSONL records, the
//! search index, the cached embeddings and their int8 form) — what the server does at
//! start. Throughput is in grants loaded.
//!
//! - `catalogue_load/real/1434`: the shipped catalogue (with embeddings of its size).
//! - `catalogue_load/synthetic/10000`: the start-up target (≤ 2 s for 10,000 grants
//!   with cached embeddings).
//! - `catalogue_import_unchanged/real/1434` (needs the model): re-importing the shipped
//!   catalogue when nothing changed — validation, snapshot, search index, all vectors
//!   reused (the model is loaded once, outside the measurement).

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use grantmatch_benches::{
    embedder, real_catalogue_dir, real_data_dir, real_records, seed, synthetic_records,
};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::store::SnapshotStore;
use grantmatch_engine::{synthetic, Engine, GrantVectors};

/// Installs `records` with pseudo-embeddings (same size as real ones) into `dir`.
fn install(dir: &Path, records: CatalogueRecords) {
    let vectors = synthetic::pseudo_vectors(&records.grants, &records.grant_areas, seed())
        .expect("pseudo vectors");
    SnapshotStore::new(dir)
        .install(records, |_, snap| vectors.save(snap))
        .expect("install");
}

fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("catalogue_load");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for (name, records) in [
        ("real", real_records()),
        ("synthetic", synthetic_records(10_000)),
    ] {
        let n = records.grants.len();
        let dir = tempfile::tempdir().expect("temp dir");
        install(dir.path(), records);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
            b.iter(|| {
                let e = Engine::open(black_box(dir.path())).expect("open");
                assert!(e.vectors().is_some());
                e
            })
        });
    }
    group.finish();

    let Some(embedder) = embedder() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SnapshotStore::new(dir.path());
    let import = |previous: Option<&GrantVectors>| {
        store
            .import(&real_catalogue_dir(), |cat, snap| {
                let (v, embedded) = GrantVectors::build(cat, &embedder, previous, &|_, _| {})?;
                assert!(previous.is_none() || embedded == 0, "nothing to embed");
                v.save(snap)
            })
            .expect("import")
    };
    // The vectors of the shipped catalogue (embedded once into target/bench-data).
    let data = real_data_dir(&embedder);
    let snapshot = SnapshotStore::new(&data)
        .current()
        .unwrap()
        .expect("imported");
    let previous = GrantVectors::load(&snapshot).unwrap().expect("embeddings");
    let first = import(Some(&previous));
    let mut group = c.benchmark_group("catalogue_import_unchanged");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(first.grants as u64));
    group.bench_with_input(BenchmarkId::new("real", first.grants), &(), |b, _| {
        b.iter(|| import(Some(&previous)))
    });
    group.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
