//! Grant lists: filters (region, grant area, type) and full-text search (`q`), one
//! page of 20, on the real catalogue and on synthetic ones of 10,000 and 100,000
//! grants. Throughput is in grants in the catalogue.
//!
//! - `grants_list/first_page/N`: no filter, title order.
//! - `grants_list/filters/N`: Bayern (with the national and EU programmes related to
//!   it) + Digitalisierung + subsidy.
//! - `grants_search/q_digitalisierung/N`: `q=Digitalisierung` (prefix matches
//!   included: "Digitalisierungsprämie").
//! - `grants_search/q_three_terms/N`: `q=Förderung Verein Jugend`.
//! - `grants_search/q_with_filters/N`: `q=Energie` within Bayern.
//! - `grant_detail/by_slug/N`: looking one grant up by slug.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use grantmatch_benches::{real_engine, synthetic_records};
use grantmatch_engine::model::GrantType;
use grantmatch_engine::{Engine, GrantFilter, PageRequest, ResolvedScope};

fn engines() -> Vec<(&'static str, Engine)> {
    let mut out = vec![("real", real_engine())];
    for n in [10_000, 100_000] {
        let started = std::time::Instant::now();
        let e = Engine::from_records(synthetic_records(n)).expect("synthetic engine");
        eprintln!(
            "grants setup: synthetic catalogue of {n} grants with its search index built in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        out.push(("synthetic", e));
    }
    out
}

fn lists(c: &mut Criterion) {
    let page = PageRequest {
        page: 1,
        per_page: 20,
    };
    for (_, engine) in engines() {
        let cat = &engine.catalogue;
        let n = cat.grants.len();
        let scope = ResolvedScope::unrestricted(cat);
        let bayern = cat.regions[cat.find_region("Bayern").unwrap() as usize].id;
        let digital = cat.grant_areas[cat.find_area("digitalisierung").unwrap() as usize].id;
        let filters = GrantFilter {
            region_ids: vec![bayern],
            grant_area_ids: vec![digital],
            grant_type: Some(GrantType::Subsidy),
            ..GrantFilter::default()
        };
        let q = |text: &str| GrantFilter {
            q: Some(text.into()),
            ..GrantFilter::default()
        };
        let cases = [
            ("grants_list", "first_page", GrantFilter::default()),
            ("grants_list", "filters", filters),
            ("grants_search", "q_digitalisierung", q("Digitalisierung")),
            (
                "grants_search",
                "q_three_terms",
                q("Förderung Verein Jugend"),
            ),
            (
                "grants_search",
                "q_with_filters",
                GrantFilter {
                    region_ids: vec![bayern],
                    ..q("Energie")
                },
            ),
        ];
        for (group_name, name, filter) in cases {
            let mut group = c.benchmark_group(group_name);
            group.throughput(Throughput::Elements(n as u64));
            let total = engine.list_grants(&scope, &filter, page).unwrap().total;
            eprintln!("  {group_name}/{name}/{n}: {total} results");
            group.bench_with_input(BenchmarkId::new(name, n), &filter, |b, f| {
                b.iter(|| engine.list_grants(&scope, black_box(f), page).unwrap())
            });
            group.finish();
        }
        let slug = cat.grants[n / 2].slug.clone();
        let mut group = c.benchmark_group("grant_detail");
        group.throughput(Throughput::Elements(1));
        group.bench_with_input(BenchmarkId::new("by_slug", n), &slug, |b, s| {
            b.iter(|| engine.find_grant(black_box(s)).unwrap())
        });
        group.finish();
    }
}

criterion_group!(benches, lists);
criterion_main!(benches);
