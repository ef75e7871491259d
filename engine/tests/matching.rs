//! Integration tests of matching in the engine (no server):
//!
//! - filter semantics as properties: the results on the synthetic `tiny` catalogue are
//!   exactly the candidates an independent reading of the rules gives, and adding a
//!   filter never adds a result — with random vectors (many cases) and with the real
//!   embedding model; the candidate sets of the real catalogue likewise;
//! - the calibration bands of `matching::category` and their use in results;
//! - match reasons in German and English are built only from true facts.
//!
//! Tests that need the embedding model load it once per binary from
//! `GRANTMATCH_MODEL_DIR` (default `~/.cache/grantmatch/model`) and FAIL with a clear
//! message when it is missing: `make test` builds it first.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use chrono::NaiveDate;
use grantmatch_engine::catalogue::{Catalogue, Idx};
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::matching::{
    self, category, Check, Match, MatchOptions, MatchWeights, RankRequest,
};
use grantmatch_engine::model::{GrantType, RegionType};
use grantmatch_engine::profile::{Locale, MatchInput, ResolvedProfile};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::text::{analyze, fold_name};
use grantmatch_engine::{Engine, GrantVectors, ResolvedScope, Scope};
use proptest::prelude::*;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("engine crate lives in the workspace")
        .to_path_buf()
}

fn load_engine(rel: &str) -> Engine {
    let dir = repo().join(rel);
    let records =
        CatalogueRecords::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    Engine::from_records(records).expect("engine builds")
}

/// The tiny catalogue without vectors (filters, reference data).
fn tiny() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| load_engine("fixtures/test-catalogues/tiny"))
}

/// The real catalogue without vectors (candidate sets only).
fn real() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| load_engine("fixtures/catalogue"))
}

/// The embedding model of the environment, loaded once per test binary. Fails (never
/// skips) when the assets are missing, with the engine's message on how to build them.
fn embedder() -> Arc<Embedder> {
    static E: OnceLock<Arc<Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        Arc::new(
            Embedder::load(&ModelConfig::from_vars(std::env::var_os)).expect("the embedding model"),
        )
    })
    .clone()
}

/// The tiny catalogue with real embeddings computed in memory.
fn tiny_embedded() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        let embedder = embedder();
        let engine = load_engine("fixtures/test-catalogues/tiny");
        let (vectors, embedded) =
            GrantVectors::build(&engine.catalogue, &embedder, None, &|_, _| {})
                .expect("embedding the tiny catalogue");
        assert_eq!(embedded, engine.catalogue.grants.len());
        engine.with_vectors(vectors).expect("vectors fit")
    })
}

fn date(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

/// Days at which the tiny catalogue's deadlines differ: before and after the end of
/// testprogramm-2 (2025-06-30), now-ish, and after the end of testprogramm-1 (2030).
const DAYS: [&str; 4] = ["2025-06-01", "2025-07-01", "2026-11-22", "2031-01-01"];

/// Partner scopes of the tiny catalogue: unrestricted, Bayern, the sub-area KI.
fn scope(engine: &Engine, which: usize) -> ResolvedScope {
    let cat = &engine.catalogue;
    let region = |slug: &str| cat.regions.iter().find(|r| r.slug == slug).unwrap().id;
    let area = |slug: &str| cat.grant_areas.iter().find(|a| a.slug == slug).unwrap().id;
    let scope = match which % 3 {
        0 => Scope::unrestricted(),
        1 => Scope {
            region_ids: vec![region("bayern")],
            grant_area_ids: vec![],
        },
        _ => Scope {
            region_ids: vec![],
            grant_area_ids: vec![area("digitalisierung-ki")],
        },
    };
    engine.resolve_scope(&scope)
}

// ---------------------------------------------------------------------------------
// Random profiles
// ---------------------------------------------------------------------------------

/// Filters of a profile as (record index, spelling) pairs; indices are taken modulo
/// the vocabulary size, the spelling picks UUID, slug, German or English name, code.
#[derive(Debug, Clone, Default)]
struct Filters {
    regions: Vec<(usize, usize)>,
    areas: Vec<(usize, usize)>,
    entities: Vec<(usize, usize)>,
    non_profit: Option<bool>,
}

fn filters() -> impl Strategy<Value = Filters> {
    let list = || prop::collection::vec((0usize..1000, 0usize..6), 0..3);
    (list(), list(), list(), prop::option::of(any::<bool>())).prop_map(
        |(regions, areas, entities, non_profit)| Filters {
            regions,
            areas,
            entities,
            non_profit,
        },
    )
}

/// `base` with more filters: every empty filter of `base` takes the one of `extra`,
/// every non-empty list keeps a non-empty subset of its values (values of one field
/// are alternatives, so fewer values restrict), and an unknown `is_non_profit` may
/// become known.
fn restrict(base: &Filters, extra: &Filters, keep: u32) -> Filters {
    let sub = |b: &Vec<(usize, usize)>, e: &Vec<(usize, usize)>, shift: u32| {
        if b.is_empty() {
            return e.clone();
        }
        let kept: Vec<(usize, usize)> = b
            .iter()
            .enumerate()
            .filter(|(i, _)| keep >> (shift + *i as u32) & 1 == 1)
            .map(|(_, v)| *v)
            .collect();
        if kept.is_empty() {
            vec![b[0]]
        } else {
            kept
        }
    };
    Filters {
        regions: sub(&base.regions, &extra.regions, 0),
        areas: sub(&base.areas, &extra.areas, 4),
        entities: sub(&base.entities, &extra.entities, 8),
        non_profit: base.non_profit.or(extra.non_profit),
    }
}

fn region_spelling(cat: &Catalogue, (i, s): (usize, usize)) -> String {
    let r = &cat.regions[i % cat.regions.len()];
    match s % 5 {
        0 => r.id.to_string(),
        1 => r.slug.clone(),
        2 => r.name_de.clone(),
        3 => r.name_en.to_uppercase(),
        _ => r.code.clone(),
    }
}

fn area_spelling(cat: &Catalogue, (i, s): (usize, usize)) -> String {
    let a = &cat.grant_areas[i % cat.grant_areas.len()];
    match s % 4 {
        0 => a.id.to_string(),
        1 => a.slug.clone(),
        2 => a.name_de.clone(),
        _ => a.name_en.clone(),
    }
}

fn entity_spelling(cat: &Catalogue, (i, s): (usize, usize)) -> String {
    let e = &cat.eligible_entities[i % cat.eligible_entities.len()];
    match s % 5 {
        0 => e.id.to_string(),
        1 => e.slug.clone(),
        2 => e.name_de.clone(),
        3 => e.name_en.clone(),
        _ => e.aliases.first().unwrap_or(&e.name_plural_de).clone(),
    }
}

fn profile_json(cat: &Catalogue, f: &Filters, description: &str, locale: &str) -> Value {
    profile_json_spelled(cat, f, description, locale, true)
}

/// `names = false` spells filter values only as UUIDs and slugs, areas only as UUIDs:
/// in the real catalogue sub-areas share names with other areas, and a top-level slug
/// equals the folded name of such a sub-area (see
/// `area_names_and_slugs_shared_with_sub_areas_resolve_to_the_top_level_area`).
fn profile_json_spelled(
    cat: &Catalogue,
    f: &Filters,
    description: &str,
    locale: &str,
    names: bool,
) -> Value {
    let f = &if names {
        f.clone()
    } else {
        let ids_or_slugs = |v: &Vec<(usize, usize)>| v.iter().map(|&(i, s)| (i, s % 2)).collect();
        Filters {
            regions: ids_or_slugs(&f.regions),
            areas: f.areas.iter().map(|&(i, _)| (i, 0)).collect(),
            entities: ids_or_slugs(&f.entities),
            non_profit: f.non_profit,
        }
    };
    let mut p = json!({
        "description": description,
        "regions": f.regions.iter().map(|&x| region_spelling(cat, x)).collect::<Vec<_>>(),
        "grant_areas": f.areas.iter().map(|&x| area_spelling(cat, x)).collect::<Vec<_>>(),
        "eligible_entities": f.entities.iter().map(|&x| entity_spelling(cat, x)).collect::<Vec<_>>(),
        "locale": locale,
    });
    if let Some(np) = f.non_profit {
        p["is_non_profit"] = json!(np);
    }
    json!({"organization_id": "org-prop", "organization_profile": p})
}

fn resolve(cat: &Catalogue, f: &Filters, description: &str) -> ResolvedProfile {
    resolve_spelled(cat, f, description, true)
}

fn resolve_spelled(
    cat: &Catalogue,
    f: &Filters,
    description: &str,
    names: bool,
) -> ResolvedProfile {
    let body = profile_json_spelled(cat, f, description, "de", names);
    let input = MatchInput::from_value(body.clone()).expect("well-typed body");
    let p = input.resolve(cat).unwrap_or_else(|e| panic!("{body}: {e}"));
    // Every spelling resolves to the record it was made from.
    let want = |v: &Vec<(usize, usize)>, n: usize| {
        let mut out: Vec<Idx> = Vec::new();
        for &(i, _) in v {
            let i = (i % n) as Idx;
            if !out.contains(&i) {
                out.push(i);
            }
        }
        out
    };
    assert_eq!(p.regions, want(&f.regions, cat.regions.len()), "{body}");
    assert_eq!(
        p.grant_areas,
        want(&f.areas, cat.grant_areas.len()),
        "{body}"
    );
    // A gGmbH is also a GmbH (it may apply where a GmbH may): GmbH follows it.
    let code = |e: Idx| cat.eligible_entities[e as usize].code.as_str();
    let mut entities: Vec<Idx> = Vec::new();
    for e in want(&f.entities, cat.eligible_entities.len()) {
        let implied = (code(e) == "ggmbh").then(|| cat.find_entity("gmbh").unwrap());
        for e in std::iter::once(e).chain(implied) {
            if !entities.contains(&e) {
                entities.push(e);
            }
        }
    }
    assert_eq!(p.eligible_entities, entities, "{body}");
    p
}

/// The candidates by an independent reading of the rules: visible, open on `today`
/// (end date not passed, or ongoing), not non-profit-only for a for-profit, a region
/// equal to / inside / containing a profile region, likewise a grant area, and an
/// eligible entity of the profile unless the grant lists none or its eligibility was
/// derived (`classification: "derived"`) rather than stated by the source.
fn expected(
    cat: &Catalogue,
    s: &ResolvedScope,
    p: &ResolvedProfile,
    today: NaiveDate,
) -> BTreeSet<Idx> {
    let related_region = |r: Idx| {
        p.regions.iter().any(|&o| {
            cat.region_ancestors(r).contains(&o) || cat.region_ancestors(o).contains(&r) || r == o
        })
    };
    let related_area = |a: Idx| {
        p.grant_areas
            .iter()
            .any(|&o| a == o || cat.area_parent(a) == Some(o) || cat.area_parent(o) == Some(a))
    };
    (0..cat.grants.len() as Idx)
        .filter(|&g| {
            let grant = &cat.grants[g as usize];
            s.is_visible(g)
                && (grant.ongoing_grant || grant.end_date.is_none_or(|d| d >= today))
                && !(p.is_non_profit == Some(false) && grant.non_profit_only == Some(true))
                && (p.regions.is_empty() || cat.grant_regions(g).iter().any(|&r| related_region(r)))
                && (p.grant_areas.is_empty() || cat.grant_areas(g).iter().any(|&a| related_area(a)))
                && (p.eligible_entities.is_empty()
                    || cat.grant_entities(g).is_empty()
                    || grant.classification.as_deref() == Some("derived")
                    || cat
                        .grant_entities(g)
                        .iter()
                        .any(|e| p.eligible_entities.contains(e)))
        })
        .collect()
}

/// The spec's bands: 90–100 excellent, 70–89 good, 50–69 moderate, below 50 low.
fn band(score: u8) -> &'static str {
    if score >= 90 {
        "very_suitable"
    } else if score >= 70 {
        "partially_suitable"
    } else if score >= 50 {
        "conditionally_suitable"
    } else {
        "not_suitable"
    }
}

/// Shape of a ranked list: at most 25, ranks 1.., sorted by score, scores 0–100,
/// categories by band, no grant twice.
#[track_caller]
fn check_shape(cat: &Catalogue, matches: &[Match]) {
    assert!(matches.len() <= 25, "{} results", matches.len());
    let mut seen = BTreeSet::new();
    for (i, m) in matches.iter().enumerate() {
        assert_eq!(m.rank, i + 1);
        assert!(m.relevance_score <= 100, "score {}", m.relevance_score);
        assert_eq!(m.match_category.as_str(), band(m.relevance_score));
        assert!(!m.match_reason.trim().is_empty());
        assert!(seen.insert(m.grant), "grant {} twice", m.grant);
        if i > 0 {
            let prev = &matches[i - 1];
            assert!(
                prev.relevance_score >= m.relevance_score,
                "not sorted: {} then {}",
                prev.relevance_score,
                m.relevance_score
            );
            if prev.relevance_score == m.relevance_score {
                // Ties: by the unclamped total, then cosine, then grant id.
                let (a, b) = (prev.components.cosine, m.components.cosine);
                assert!(
                    prev.total > m.total
                        || (prev.total == m.total
                            && (a > b
                                || (a == b
                                    && cat.grants[prev.grant as usize].id
                                        < cat.grants[m.grant as usize].id))),
                    "tie not broken deterministically at rank {}",
                    m.rank
                );
            }
        }
    }
}

fn grant_set(matches: &[Match]) -> BTreeSet<Idx> {
    matches.iter().map(|m| m.grant).collect()
}

// ---------------------------------------------------------------------------------
// Random vectors
// ---------------------------------------------------------------------------------

/// splitmix64: a tiny deterministic generator for vectors.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

/// Vectors around a common direction, so cosines fall in a narrow band like e5's.
fn random_vectors(n: usize, seed: u64) -> (GrantVectors, Vec<f32>) {
    const DIM: usize = 32;
    let mut rng = Rng(seed);
    let base: Vec<f32> = (0..DIM).map(|_| rng.unit()).collect();
    let mut around =
        |spread: f32| -> Vec<f32> { base.iter().map(|b| b + spread * rng.unit()).collect() };
    let rows: Vec<Vec<f32>> = (0..n).map(|i| around(0.2 + 0.1 * (i % 7) as f32)).collect();
    let query = around(0.3);
    (
        GrantVectors::from_rows("test/random", DIM, rows).unwrap(),
        grantmatch_engine::vectors::normalized(&query),
    )
}

fn random_lexical(n: usize, seed: u64) -> std::collections::HashMap<Idx, f32> {
    let mut rng = Rng(seed ^ 0xABCD);
    let mut out = std::collections::HashMap::new();
    for g in 0..n as Idx {
        if !rng.next().is_multiple_of(3) {
            out.insert(g, (rng.unit() + 1.0) * 10.0);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Adding a filter never adds a result, and the results are exactly the candidates
    /// (the tiny catalogue has fewer than 25), for random vectors, lexical scores,
    /// scopes, days and profiles.
    #[test]
    fn adding_a_filter_never_adds_results_random_vectors(
        base in filters(),
        extra in filters(),
        keep in any::<u32>(),
        seed in any::<u64>(),
        which_scope in 0usize..3,
        day in 0usize..4,
    ) {
        let engine = tiny();
        let cat = &engine.catalogue;
        let (vectors, query) = random_vectors(cat.grants.len(), seed);
        let lexical = random_lexical(cat.grants.len(), seed);
        let scope = scope(engine, which_scope);
        let today = date(DAYS[day]);
        let narrower = restrict(&base, &extra, keep);
        let options = MatchOptions::default();
        let mut sets = Vec::new();
        for f in [&base, &narrower] {
            let p = resolve(cat, f, "Ein Verein für Digitalisierung und Klimaschutz");
            let request = RankRequest { cat, vectors: &vectors, scope: &scope, profile: &p, query: &query, lexical: &lexical, options: &options, today };
            let matches = matching::rank(&request, 25);
            check_shape(cat, &matches);
            prop_assert_eq!(grant_set(&matches), expected(cat, &scope, &p, today), "{:?}", f);
            for m in &matches {
                prop_assert!(matching::passes_filters(cat, &p, m.grant, today));
            }
            sets.push(grant_set(&matches));
        }
        prop_assert!(
            sets[1].is_subset(&sets[0]),
            "adding filters added {:?}\nbase {:?}\nnarrower {:?}",
            sets[1].difference(&sets[0]).collect::<Vec<_>>(), base, narrower
        );
    }

    /// The same on the candidate sets of the real catalogue (1,434 programmes, 272
    /// regions): a filter can only remove candidates.
    #[test]
    fn adding_a_filter_never_adds_candidates_real_catalogue(
        base in filters(),
        extra in filters(),
        keep in any::<u32>(),
        day in 0usize..4,
    ) {
        let engine = real();
        let cat = &engine.catalogue;
        let today = date(DAYS[day]);
        let narrower = restrict(&base, &extra, keep);
        let unrestricted = engine.resolve_scope(&Scope::unrestricted());
        let candidates = |f: &Filters| -> BTreeSet<Idx> {
            let p = resolve_spelled(cat, f, "Verein", false);
            let got: BTreeSet<Idx> = (0..cat.grants.len() as Idx)
                .filter(|&g| matching::passes_filters(cat, &p, g, today))
                .collect();
            assert_eq!(got, expected(cat, &unrestricted, &p, today), "{f:?}");
            got
        };
        let wide = candidates(&base);
        let narrow = candidates(&narrower);
        prop_assert!(narrow.is_subset(&wide), "base {:?}\nnarrower {:?}", base, narrower);
    }
}

/// With the real model: the same property for a few realistic descriptions (their
/// query vectors are cached after the first case).
#[test]
fn adding_a_filter_never_adds_results_real_vectors() {
    let engine = tiny_embedded();
    let cat = &engine.catalogue;
    let embedder = embedder();
    let descriptions = [
        "Wir sind ein gemeinnütziger Sportverein in Sachsen und fördern Kinder und Jugendliche.",
        "KMU aus Bayern, das seine Produktion digitalisieren und KI einsetzen möchte.",
        "Kommune, die Breitbandausbau und Klimaschutz voranbringen will.",
        "Start-up in Berlin sucht Beteiligungskapital.",
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &(
                filters(),
                filters(),
                any::<u32>(),
                0usize..4,
                0usize..3,
                0usize..4,
            ),
            |(base, extra, keep, d, which_scope, day)| {
                let scope = scope(engine, which_scope);
                let today = date(DAYS[day]);
                let narrower = restrict(&base, &extra, keep);
                let mut sets = Vec::new();
                for f in [&base, &narrower] {
                    let input = MatchInput::from_value(profile_json(cat, f, descriptions[d], "de"))
                        .unwrap();
                    let (p, matches) = engine
                        .match_profile(&embedder, &scope, &input, &MatchOptions::default(), today)
                        .unwrap();
                    check_shape(cat, &matches);
                    prop_assert_eq!(grant_set(&matches), expected(cat, &scope, &p, today));
                    sets.push(grant_set(&matches));
                }
                prop_assert!(
                    sets[1].is_subset(&sets[0]),
                    "base {:?}\nnarrower {:?}",
                    base,
                    narrower
                );
                Ok(())
            },
        )
        .unwrap();
}

// ---------------------------------------------------------------------------------
// Calibration bands
// ---------------------------------------------------------------------------------

#[test]
fn category_bands() {
    for s in 0..=u8::MAX {
        assert_eq!(category(s).as_str(), band(s), "score {s}");
    }
    // The boundaries exactly.
    assert_eq!(category(100).as_str(), "very_suitable");
    assert_eq!(category(90).as_str(), "very_suitable");
    assert_eq!(category(89).as_str(), "partially_suitable");
    assert_eq!(category(70).as_str(), "partially_suitable");
    assert_eq!(category(69).as_str(), "conditionally_suitable");
    assert_eq!(category(50).as_str(), "conditionally_suitable");
    assert_eq!(category(49).as_str(), "not_suitable");
    assert_eq!(category(0).as_str(), "not_suitable");
}

/// The calibration is monotone: with only the semantic weight, a higher cosine never
/// scores lower, and scores span the bands (0 … 100 are reachable). The profile speaks
/// of broadband, the one sector a tiny programme's title restricts it to: otherwise that
/// programme would be a kind misfit, a rule outside the calibration.
#[test]
fn calibration_is_monotone_in_the_semantic_score() {
    let engine = tiny();
    let cat = &engine.catalogue;
    let options = MatchOptions {
        weights: MatchWeights {
            semantic: 1.0,
            keyword: 0.0,
            region: 0.0,
            target_group: 0.0,
            eligibility: 0.0,
            deadline: 0.0,
            budget: 0.0,
        },
        ..MatchOptions::default()
    };
    let p = resolve(cat, &Filters::default(), "egal, auch Breitband");
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let today = date("2026-11-22");
    let mut all_scores = BTreeSet::new();
    for seed in 0..200u64 {
        let (vectors, query) = random_vectors(cat.grants.len(), seed);
        let lexical = Default::default();
        let request = RankRequest {
            cat,
            vectors: &vectors,
            scope: &scope,
            profile: &p,
            query: &query,
            lexical: &lexical,
            options: &options,
            today,
        };
        let matches = matching::rank(&request, 25);
        check_shape(cat, &matches);
        for w in matches.windows(2) {
            assert!(
                w[0].components.cosine >= w[1].components.cosine,
                "seed {seed}: score {} (cosine {}) ranked above score {} (cosine {})",
                w[0].relevance_score,
                w[0].components.cosine,
                w[1].relevance_score,
                w[1].components.cosine
            );
        }
        all_scores.extend(matches.iter().map(|m| m.relevance_score));
    }
    // The semantic component alone reaches both ends of the scale.
    assert!(all_scores.contains(&0), "{all_scores:?}");
    assert!(all_scores.contains(&100), "{all_scores:?}");
    for b in [
        "very_suitable",
        "partially_suitable",
        "conditionally_suitable",
        "not_suitable",
    ] {
        assert!(
            all_scores.iter().any(|&s| band(s) == b),
            "no score in {b}: {all_scores:?}"
        );
    }
}

/// Real results: categories follow the bands, and a clearly fitting programme ranks
/// first with a better category than an unrelated one.
#[test]
fn real_scores_follow_the_bands_and_rank_the_fitting_programme_first() {
    let engine = tiny_embedded();
    let cat = &engine.catalogue;
    let input = MatchInput::from_value(json!({
        "organization_id": "kmu-1",
        "organization_profile": {
            "description": "Kleines Unternehmen (GmbH), das seine Prozesse digitalisieren und KI-Anwendungen einführen will.",
            "regions": ["Deutschland"],
            "eligible_entities": ["GmbH"],
            "keywords": ["Digitalisierung", "KI"],
            "is_non_profit": false
        }
    }))
    .unwrap();
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let (_, matches) = engine
        .match_profile(
            &embedder(),
            &scope,
            &input,
            &MatchOptions::default(),
            date("2026-11-22"),
        )
        .unwrap();
    check_shape(cat, &matches);
    let first = &cat.grants[matches[0].grant as usize];
    assert_eq!(first.slug, "testprogramm-1", "{:?}", titles(cat, &matches));
    let last = matches.last().unwrap();
    assert!(
        matches[0].relevance_score > last.relevance_score,
        "{:?}",
        titles(cat, &matches)
    );
}

fn titles(cat: &Catalogue, matches: &[Match]) -> Vec<(String, u8)> {
    matches
        .iter()
        .map(|m| (cat.grants[m.grant as usize].slug.clone(), m.relevance_score))
        .collect()
}

/// Identical input gives identical output, and an identical profile is embedded and
/// searched once.
#[test]
fn ranking_is_deterministic_and_queries_are_cached() {
    let engine = tiny_embedded();
    let embedder = embedder();
    let text =
        "Eingetragener Verein für Seniorenarbeit und Integration in Berlin (determinism test).";
    let input = MatchInput::from_value(json!({
        "organization_id": "v-1",
        "organization_profile": {"description": text, "regions": ["berlin"]}
    }))
    .unwrap();
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let today = date("2025-06-01");
    let (p, a) = engine
        .match_profile(&embedder, &scope, &input, &MatchOptions::default(), today)
        .unwrap();
    assert!(embedder.is_query_cached(&p.query_text));
    assert!(engine.is_lexically_cached(&p));
    let (_, b) = engine
        .match_profile(&embedder, &scope, &input, &MatchOptions::default(), today)
        .unwrap();
    assert_eq!(a, b);
    assert!(!a.is_empty());
    // The resolved profile is cached by the whole request: the same organisation with
    // another region is resolved anew, not served the cached Berlin profile.
    assert!(engine.is_profile_cached(&input));
    let mut moved = input.clone();
    moved.organization_profile.as_mut().unwrap().regions = vec!["bayern".into()];
    assert!(!engine.is_profile_cached(&moved));
    let (q, _) = engine
        .match_profile(&embedder, &scope, &moved, &MatchOptions::default(), today)
        .unwrap();
    assert_ne!(q.regions, p.regions);
    assert_eq!(
        engine.resolve_profile(&moved).unwrap(),
        moved.resolve(&engine.catalogue).unwrap()
    );
}

// ---------------------------------------------------------------------------------
// Reasons
// ---------------------------------------------------------------------------------

fn profiles_for_reasons() -> Vec<(Value, &'static str)> {
    vec![
        // A GmbH in Bayern: local (Bayern) and nationwide programmes, entities in common,
        // keywords found in programme texts.
        (
            json!({
                "organization_id": "r-1",
                "organization_profile": {
                    "description": "Mittelständische GmbH in Bayern, die in Digitalisierung und KI investiert.",
                    "regions": ["Bayern"],
                    "eligible_entities": ["GmbH"],
                    "keywords": ["Digitalisierung", "Breitband", "Darlehen"],
                    "is_non_profit": false
                },
                "project": {"title": "KI in der Fertigung", "budget": "40.000 EUR"}
            }),
            "2026-11-22",
        ),
        // A Verein without region: non-profit-only programmes, the EU programme, the
        // Austrian one; deadline of testprogramm-2 still open on this day.
        (
            json!({
                "organization_id": "r-2",
                "organization_profile": {
                    "description": "Gemeinnütziger Verein für Jugendbegegnungen, Integration und Seniorenarbeit.",
                    "eligible_entities": ["Verein"],
                    "is_non_profit": true
                }
            }),
            "2025-06-01",
        ),
        // A municipality in Sachsen with grant areas and no keywords: funding areas in
        // common, EU-wide (continental) programme.
        (
            json!({
                "organization_id": "r-3",
                "organization_profile": {
                    "description": "Gemeinde in Sachsen mit Projekten zu Klimaschutz, Naturschutz und Breitband.",
                    "regions": ["DE-SN"],
                    "grant_areas": ["Umwelt- & Naturschutz", "digitalisierung-breitband"],
                    "eligible_entities": ["Kommune"]
                }
            }),
            "2026-11-22",
        ),
        // A company that asks for grants and guarantees and rules out loans: the funding
        // type asked for and the one ruled out.
        (
            json!({
                "organization_id": "r-4",
                "organization_profile": {
                    "description": "Handwerksbetrieb in Bayern. Wir suchen Zuschüsse oder eine Bürgschaft für neue Maschinen, aber keine Kredite.",
                    "regions": ["Bayern"]
                }
            }),
            "2026-11-22",
        ),
        // A company that seeks no instrument but accepts three: each is one it is open to.
        (
            json!({
                "organization_id": "r-6",
                "organization_profile": {
                    "description": "Handwerksbetrieb in Bayern. Zuschüsse wären uns lieber, aber ein Darlehen oder eine Bürgschaft für neue Maschinen ist auch möglich.",
                    "regions": ["Bayern"]
                }
            }),
            "2026-11-22",
        ),
        // A bakery without `regions` whose description places it in Leipzig (Sachsen):
        // the Sachsen programme is local, the Bayern and Berlin ones are elsewhere.
        (
            json!({
                "organization_id": "r-5",
                "organization_profile": {
                    "description": "Familiengeführte Bäckerei in Leipzig. Wir suchen eine Bürgschaft, ein Darlehen oder eine Beteiligung für eine neue Filiale und Innovationen.",
                    "eligible_entities": ["GmbH"]
                }
            }),
            "2026-11-22",
        ),
    ]
}

/// The words before a programme's region in a reason.
fn wider_prefix(de: bool) -> &'static str {
    if de {
        "rogramm für "
    } else {
        "programme for "
    }
}

fn region_names(cat: &Catalogue, r: Idx, de: bool) -> String {
    let region = &cat.regions[r as usize];
    if de {
        region.name_de.clone()
    } else {
        region.name_en.clone()
    }
}

/// Checks every claim of a reason against the facts of the match; returns the claims
/// found (for coverage).
fn check_reason(
    cat: &Catalogue,
    p: &ResolvedProfile,
    m: &Match,
    today: NaiveDate,
) -> Vec<&'static str> {
    let de = p.locale == Locale::De;
    let r = &m.match_reason;
    let grant = &cat.grants[m.grant as usize];
    let ctx = format!(
        "reason of {} ({}): {r}",
        grant.slug,
        if de { "de" } else { "en" }
    );
    let mut claims = Vec::new();

    // Language: no sentence of the other language.
    let (own, other): (&[&str], &[&str]) = if de {
        (
            &["Übereinstimmung mit Ihrer Beschreibung"],
            &[
                "similarity",
                "Deadline",
                "programme",
                "eligible",
                "located",
                "known",
            ],
        )
    } else {
        (
            &["similarity to your description"],
            &[
                "Übereinstimmung",
                "Antragsfrist",
                "Programm ",
                "antragsberechtigt",
                "Standort",
                "bekannt",
            ],
        )
    };
    for w in own {
        assert!(r.contains(w), "missing `{w}` in {ctx}");
    }
    for w in other {
        assert!(!r.contains(w), "`{w}` of the other language in {ctx}");
    }

    // Topic strength follows the semantic component.
    let s = m.components.semantic;
    let strength = match (de, s) {
        (true, x) if x >= 0.85 => "Inhaltlich hohe",
        (true, x) if x >= 0.6 => "Inhaltlich gute",
        (true, _) => "Inhaltlich teilweise",
        (false, x) if x >= 0.85 => "High topical",
        (false, x) if x >= 0.6 => "Good topical",
        (false, _) => "Partial topical",
    };
    assert!(
        r.starts_with(strength),
        "semantic {s}: expected `{strength}` in {ctx}"
    );

    // Keywords found in the programme text: profile keywords, really in the text.
    let kw_marker = if de {
        "(Stichworte im Programmtext: "
    } else {
        "(keywords found in the programme text: "
    };
    if let Some(start) = r.find(kw_marker) {
        claims.push("keywords");
        let rest = &r[start + kw_marker.len()..];
        let list = &rest[..rest.find(')').expect("closing parenthesis")];
        let mut text = analyze(&grant.title);
        for part in [&grant.short_description, &grant.description]
            .into_iter()
            .flatten()
        {
            text.extend(analyze(part));
        }
        for k in list.split(", ") {
            assert!(
                p.keywords.iter().chain(&p.read_topics).any(|x| x == k),
                "`{k}` is not a keyword of the profile: {ctx}"
            );
            for t in analyze(k) {
                assert!(
                    text.contains(&t),
                    "keyword `{k}` (term {t}) is not in the programme text: {ctx}"
                );
            }
        }
    }

    // Funding areas in common.
    let area_marker = if de {
        " im Förderbereich "
    } else {
        " in the funding area "
    };
    if let Some(start) = r.find(area_marker) {
        claims.push("areas");
        let rest = &r[start + area_marker.len()..];
        let list = &rest[..rest.find(". ").unwrap_or(rest.len())];
        let grant_area_names: Vec<(Idx, String)> = cat
            .grant_areas(m.grant)
            .iter()
            .map(|&a| {
                let area = &cat.grant_areas[a as usize];
                (
                    a,
                    if de {
                        area.name_de.clone()
                    } else {
                        area.name_en.clone()
                    },
                )
            })
            .collect();
        // Names may contain ", " themselves only if a vocabulary does; match greedily.
        let mut remaining = list.to_string();
        while !remaining.is_empty() {
            let (a, name) = grant_area_names
                .iter()
                .find(|(_, n)| remaining.starts_with(n.as_str()))
                .unwrap_or_else(|| panic!("`{remaining}` is not an area of the programme: {ctx}"));
            assert!(
                p.grant_areas
                    .iter()
                    .any(|&o| cat.area_within(*a, o) || cat.area_within(o, *a)),
                "area `{name}` is not related to the profile's areas: {ctx}"
            );
            remaining = remaining[name.len()..].trim_start_matches(", ").to_string();
        }
    }

    // Region relation, to the profile's regions or, without any, to the Länder its
    // texts place it in.
    let own = if p.regions.is_empty() {
        &p.located_regions
    } else {
        &p.regions
    };
    let programme_region = |name: &str| {
        cat.grant_regions(m.grant)
            .iter()
            .copied()
            .find(|&x| region_names(cat, x, de) == name)
            .unwrap_or_else(|| panic!("`{name}` is not a region of the programme: {ctx}"))
    };
    let located_re = if de {
        (
            "Programm für ",
            ", wo Sie laut Ihrer Beschreibung ansässig sind",
        )
    } else {
        ("a programme for ", ", where your description places you")
    };
    if let Some(end) = r.find(located_re.1) {
        claims.push("located");
        assert!(p.regions.is_empty(), "located without regions only: {ctx}");
        let head = &r[..end];
        let start = head
            .to_lowercase()
            .rfind(&located_re.0.to_lowercase())
            .expect("region before the claim")
            + located_re.0.len();
        let r_idx = programme_region(&head[start..]);
        assert!(own.iter().any(|&o| cat.region_within(o, r_idx)), "{ctx}");
        assert_eq!(m.checks.region, Check::Pass, "{ctx}");
    }
    let elsewhere_re = if de {
        (", laut Ihrer Beschreibung sind Sie in ", " ansässig")
    } else {
        (", while your description places you in ", "")
    };
    if let Some(pos) = r.find(elsewhere_re.0) {
        claims.push("elsewhere");
        assert!(p.regions.is_empty(), "located without regions only: {ctx}");
        let start = r[..pos]
            .rfind(wider_prefix(de))
            .expect("region before the claim")
            + wider_prefix(de).len();
        let r_idx = programme_region(&r[start..pos]);
        let rest = &r[pos + elsewhere_re.0.len()..];
        let outer_end = if de {
            rest.find(elsewhere_re.1)
        } else {
            rest.find([';', '.'])
        };
        let outer = &rest[..outer_end.expect("the end of the region's name")];
        let o_idx = own
            .iter()
            .copied()
            .find(|&o| region_names(cat, o, de) == outer)
            .unwrap_or_else(|| {
                panic!("`{outer}` is not where the texts place the organisation: {ctx}")
            });
        assert!(
            !cat.region_within(o_idx, r_idx) && !cat.region_within(r_idx, o_idx),
            "{ctx}"
        );
        assert_eq!(m.checks.region, Check::Fail, "{ctx}");
        assert!(m.relevance_score <= 45, "{ctx}");
    }
    let local_re = if de {
        ("Programm für ", " und damit für Ihren Standort")
    } else {
        ("a programme for ", ", where you are located")
    };
    if let Some(end) = r.find(local_re.1) {
        claims.push("local");
        let head = &r[..end];
        let start = head
            .to_lowercase()
            .rfind(&local_re.0.to_lowercase())
            .unwrap_or_else(|| panic!("no region before the location claim: {ctx}"));
        let name = &head[start + local_re.0.len()..];
        let r_idx = cat
            .grant_regions(m.grant)
            .iter()
            .copied()
            .find(|&x| region_names(cat, x, de) == name)
            .unwrap_or_else(|| panic!("`{name}` is not a region of the programme: {ctx}"));
        // "where you are located": one of the profile's regions lies in that region.
        assert!(
            own.iter().any(|&o| cat.region_within(o, r_idx)),
            "`{name}` is not where the organisation is located (profile regions {:?}): {ctx}",
            p.regions
                .iter()
                .map(|&o| region_names(cat, o, de))
                .collect::<Vec<_>>()
        );
    }
    let nationwide = if de {
        "undesweites Programm ("
    } else {
        " nationwide programme ("
    };
    let wider = wider_prefix(de);
    if let Some(start) = r.find(nationwide) {
        claims.push("nationwide");
        let rest = &r[start + nationwide.len()..];
        let name = &rest[..rest.find(')').unwrap()];
        let r_idx = cat
            .grant_regions(m.grant)
            .iter()
            .copied()
            .find(|&x| region_names(cat, x, de) == name)
            .unwrap_or_else(|| panic!("`{name}` is not a region of the programme: {ctx}"));
        assert_eq!(
            cat.regions[r_idx as usize].region_type,
            RegionType::Country,
            "{ctx}"
        );
        assert!(
            own.iter().any(|&o| cat.region_within(o, r_idx)),
            "the profile's regions are not inside `{name}`: {ctx}"
        );
    } else if let Some(pos) = r.find(if de {
        " (innerhalb Ihrer Region "
    } else {
        " (within your region "
    }) {
        // A programme for a part of the profile's wider region: "… für X (innerhalb Ihrer Region Y)".
        claims.push("inside");
        let marker = if de {
            " (innerhalb Ihrer Region "
        } else {
            " (within your region "
        };
        let start = r[..pos].rfind(wider).unwrap() + wider.len();
        let name = &r[start..pos];
        let rest = &r[pos + marker.len()..];
        let outer = &rest[..rest.find(')').unwrap()];
        let r_idx = cat
            .grant_regions(m.grant)
            .iter()
            .copied()
            .find(|&x| region_names(cat, x, de) == name)
            .unwrap_or_else(|| panic!("`{name}` is not a region of the programme: {ctx}"));
        let o_idx = p
            .regions
            .iter()
            .copied()
            .find(|&o| region_names(cat, o, de) == outer)
            .unwrap_or_else(|| panic!("`{outer}` is not a region of the profile: {ctx}"));
        assert!(cat.region_within(r_idx, o_idx) && r_idx != o_idx, "{ctx}");
    } else if r.contains(wider)
        && !r.contains(local_re.1)
        && !r.contains(located_re.1)
        && !r.contains(elsewhere_re.0)
    {
        // A wider (continental) programme: its region contains a profile region.
        claims.push("wider");
        let marker = wider;
        let start = r.find(marker).unwrap() + marker.len();
        let rest = &r[start..];
        let name_end = rest.find([';', '.']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        let r_idx = cat
            .grant_regions(m.grant)
            .iter()
            .copied()
            .find(|&x| region_names(cat, x, de) == name)
            .unwrap_or_else(|| panic!("`{name}` is not a region of the programme: {ctx}"));
        assert!(
            own.iter().any(|&o| cat.region_within(o, r_idx)),
            "the profile's regions are not inside `{name}`: {ctx}"
        );
    }
    if own.is_empty() {
        assert!(!r.contains(local_re.1) && !r.contains(nationwide), "{ctx}");
    }

    // Who may apply: only facts stated by the record or read from the programme text,
    // exactly the programme's applicant types; a misfit names the profile's own types.
    let ent_marker = if de {
        "ntragsberechtigt sind "
    } else {
        "ligible applicants"
    };
    if let Some(start) = r.find(ent_marker) {
        claims.push("entities");
        let fact = cat
            .facts(m.grant)
            .applicants
            .as_ref()
            .unwrap_or_else(|| panic!("applicants claimed without a fact: {ctx}"));
        assert_ne!(
            fact.source,
            grantmatch_engine::facts::Source::Derived,
            "guessed applicants stated as fact: {ctx}"
        );
        let rest = &r[start + ent_marker.len()..];
        let sentence = &rest[..rest.find(['.', ';']).unwrap_or(rest.len())];
        let name = |t: &grantmatch_engine::facts::ApplicantType| {
            if de { t.plural_de() } else { t.label_en() }.to_string()
        };
        for t in fact.value.iter().take(4) {
            assert!(sentence.contains(&name(t)), "`{}` missing: {ctx}", name(t));
        }
        let misfit = sentence.contains(if de { ", nicht " } else { ", not " });
        let fits = p.applicant_types.iter().any(|t| fact.value.contains(t));
        assert_eq!(misfit, !fits, "{ctx}");
        assert_eq!(
            m.checks.applicant,
            if fits {
                matching::Check::Pass
            } else {
                matching::Check::Fail
            },
            "{ctx}"
        );
    }

    // Non-profit.
    let np = if de {
        "nur für gemeinnützige Organisationen"
    } else {
        "restricted to non-profit organisations"
    };
    if r.contains(np) {
        claims.push("non_profit");
        assert_eq!(grant.non_profit_only, Some(true), "{ctx}");
        assert_eq!(p.is_non_profit, Some(true), "{ctx}");
    }

    // Funding type: named only when the profile rules it out or asks for it.
    let (t_de, t_en) = (grant.grant_type.label_de(), grant.grant_type.label_en());
    let (ruled_out, asked_for, accepted) = if de {
        (
            format!("die Förderart ({t_de}) schließen Sie aus"),
            format!("Förderart {t_de}, wie von Ihnen gesucht"),
            format!("Förderart {t_de}, die für Sie infrage kommt"),
        )
    } else {
        (
            format!("you rule out its funding type ({t_en})"),
            format!("funding type {t_en}, as you are looking for"),
            format!("funding type {t_en}, which you are open to"),
        )
    };
    let excluded = p.excluded_grant_types.contains(&grant.grant_type);
    let wanted = p.wanted_grant_types.contains(&grant.grant_type);
    let only_accepted = p.accepted_grant_types.contains(&grant.grant_type);
    assert!(!only_accepted || wanted, "{ctx}");
    assert_eq!(r.contains(&ruled_out), excluded, "{ctx}");
    assert_eq!(r.contains(&asked_for), wanted && !only_accepted, "{ctx}");
    assert_eq!(r.contains(&accepted), only_accepted, "{ctx}");
    assert_eq!(
        m.checks.funding_type,
        if excluded {
            matching::Check::Fail
        } else if wanted || !p.excluded_grant_types.is_empty() {
            matching::Check::Pass
        } else {
            matching::Check::Unknown
        },
        "{ctx}"
    );
    if excluded {
        claims.push("funding_ruled_out");
    }
    if wanted && !only_accepted {
        claims.push("funding_asked_for");
    }
    if only_accepted {
        claims.push("funding_accepted");
    }

    // Deadline: exactly the programme's.
    let deadline = match (grant.end_date, grant.ongoing_grant, de) {
        (Some(d), _, true) if d >= today => format!("Antragsfrist: bis {}.", d.format("%d.%m.%Y")),
        (Some(d), _, false) if d >= today => format!("Deadline: {}.", d.format("%Y-%m-%d")),
        (None, true, true) => "Laufendes Programm ohne bekannte Antragsfrist.".into(),
        (None, true, false) => "Ongoing programme without a known deadline.".into(),
        (None, false, true) => "Keine Antragsfrist bekannt.".into(),
        (None, false, false) => "No deadline known.".into(),
        (Some(d), ..) => panic!("expired programme {} (end {d}) in the results", grant.slug),
    };
    assert!(
        r.ends_with(&deadline),
        "expected `{deadline}` at the end of {ctx}"
    );
    claims.push("deadline");
    // No date other than the deadline is claimed.
    let digits: String = r.chars().filter(|c| c.is_ascii_digit()).collect();
    let deadline_digits: String = deadline.chars().filter(|c| c.is_ascii_digit()).collect();
    assert_eq!(
        digits, deadline_digits,
        "numbers other than the deadline: {ctx}"
    );
    claims
}

#[test]
fn reasons_in_both_locales_state_only_true_facts() {
    let engine = tiny_embedded();
    let cat = &engine.catalogue;
    let embedder = embedder();
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let mut claims_seen = BTreeSet::new();
    for (body, day) in profiles_for_reasons() {
        let today = date(day);
        let mut by_locale = Vec::new();
        for locale in [None, Some("de"), Some("en"), Some("EN")] {
            let mut body = body.clone();
            if let Some(l) = locale {
                body["organization_profile"]["locale"] = json!(l);
            }
            let input = MatchInput::from_value(body.clone()).unwrap();
            let (p, matches) = engine
                .match_profile(&embedder, &scope, &input, &MatchOptions::default(), today)
                .unwrap();
            let want = if matches!(locale, Some("en") | Some("EN")) {
                Locale::En
            } else {
                Locale::De
            };
            assert_eq!(p.locale, want, "{body}");
            assert!(!matches.is_empty(), "{body}");
            check_shape(cat, &matches);
            for m in &matches {
                claims_seen.extend(check_reason(cat, &p, m, today));
            }
            by_locale.push(matches);
        }
        // The locale changes the words, nothing else; no locale means German.
        let key = |ms: &Vec<Match>| -> Vec<(Idx, u8)> {
            ms.iter().map(|m| (m.grant, m.relevance_score)).collect()
        };
        for ms in &by_locale[1..] {
            assert_eq!(key(ms), key(&by_locale[0]));
        }
        assert_eq!(by_locale[0], by_locale[1], "default locale is German");
        assert_eq!(by_locale[2], by_locale[3]);
        assert_ne!(by_locale[0][0].match_reason, by_locale[2][0].match_reason);
    }
    // The profiles exercise every kind of claim.
    for c in [
        "keywords",
        "areas",
        "local",
        "located",
        "elsewhere",
        "nationwide",
        "wider",
        "entities",
        "non_profit",
        "funding_ruled_out",
        "funding_asked_for",
        "funding_accepted",
        "deadline",
    ] {
        assert!(
            claims_seen.contains(c),
            "no reason claimed `{c}`; seen {claims_seen:?}"
        );
    }
}

/// An organisation whose region is a whole country is not "located" in every Land of
/// it: a Bayern programme for a profile with region Deutschland must not claim
/// "Programm für Bayern und damit für Ihren Standort".
#[test]
fn reason_does_not_claim_a_location_inside_a_wider_profile_region() {
    let engine = tiny_embedded();
    let cat = &engine.catalogue;
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let today = date("2026-11-22");
    for locale in ["de", "en"] {
        let input = MatchInput::from_value(json!({
            "organization_id": "r-de",
            "organization_profile": {
                "description": "Bundesweit tätiges Unternehmen für Innovation und Naturschutz.",
                "regions": ["Deutschland"],
                "locale": locale
            }
        }))
        .unwrap();
        let (p, matches) = engine
            .match_profile(&embedder(), &scope, &input, &MatchOptions::default(), today)
            .unwrap();
        // Bayern programmes (testprogramm-3, -7) are candidates.
        assert!(matches
            .iter()
            .any(|m| cat.grants[m.grant as usize].slug == "testprogramm-3"));
        for m in &matches {
            check_reason(cat, &p, m, today);
        }
    }
}

/// Region names differ between the locales (Bayern/Bavaria): a reason names a region
/// in its own locale, whatever spelling the profile used.
#[test]
fn reasons_name_regions_in_their_locale() {
    let engine = tiny_embedded();
    let cat = &engine.catalogue;
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let today = date("2026-11-22");
    for (locale, want, not) in [("de", "Bayern", "Bavaria"), ("en", "Bavaria", "Bayern")] {
        let input = MatchInput::from_value(json!({
            "organization_id": "r-by",
            "organization_profile": {
                "description": "Unternehmen in Bayern sucht ein Darlehen für Innovationen.",
                "regions": ["bavaria"],
                "locale": locale
            }
        }))
        .unwrap();
        let (_, matches) = engine
            .match_profile(&embedder(), &scope, &input, &MatchOptions::default(), today)
            .unwrap();
        let m = matches
            .iter()
            .find(|m| cat.grants[m.grant as usize].slug == "testprogramm-3")
            .expect("the Bayern programme is a candidate");
        assert!(
            m.match_reason.contains(want),
            "{locale}: {}",
            m.match_reason
        );
        assert!(
            !m.match_reason.contains(not),
            "{locale}: {}",
            m.match_reason
        );
        assert!(
            fold_name(&m.match_reason).contains(&fold_name(want)),
            "{}",
            m.match_reason
        );
    }
}

/// Region specificity: with the same text similarity and lexical fit, a programme of
/// the organisation's own Land scores above a national one (testprogramm-3, Bayern, vs
/// testprogramm-11, Deutschland: both ongoing, for GmbHs and companies, no budget), and
/// a national one above an EU-wide one (testprogramm-10).
fn land_national_eu(cosine: f32) -> [(u8, usize); 3] {
    let engine = tiny();
    let cat = &engine.catalogue;
    let idx = |slug: &str| cat.grant_by_slug(slug).unwrap();
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let bayern = cat.regions.iter().position(|r| r.slug == "bayern").unwrap();
    let p = resolve(
        cat,
        &Filters {
            regions: vec![(bayern, 1)],
            ..Filters::default()
        },
        "Unternehmen in Bayern",
    );
    // Two dimensions: every programme has the same vector; the query's angle sets the
    // cosine.
    let rows = vec![vec![1.0, 0.0]; cat.grants.len()];
    let vectors = GrantVectors::from_rows("test/2d", 2, rows).unwrap();
    let query = [cosine, (1.0 - cosine * cosine).sqrt()];
    let lexical = (0..cat.grants.len() as Idx).map(|g| (g, 3.0)).collect();
    // Equal topic fit: no floor for programmes open to any topic (both are loans).
    let options = MatchOptions {
        topic_open_semantic: 0.0,
        topic_open_wanted_semantic: 0.0,
        ..MatchOptions::default()
    };
    let request = RankRequest {
        cat,
        vectors: &vectors,
        scope: &scope,
        profile: &p,
        query: &query,
        lexical: &lexical,
        options: &options,
        today: date("2026-11-22"),
    };
    let matches = matching::rank(&request, 25);
    check_shape(cat, &matches);
    ["testprogramm-3", "testprogramm-11", "testprogramm-10"].map(|s| {
        matches
            .iter()
            .find(|m| m.grant == idx(s))
            .map(|m| (m.relevance_score, m.rank))
            .unwrap()
    })
}

#[test]
fn a_land_programme_beats_an_equal_national_one() {
    let mut separated = false;
    for cosine in [0.70, 0.80, 0.83] {
        let [l, n, e] = land_national_eu(cosine);
        // Scores may tie at the ends of the scale (0, or the cap of a moderate topic fit);
        // the order always holds.
        assert!(
            l.0 >= n.0 && n.0 >= e.0,
            "cosine {cosine}: land {l:?}, national {n:?}, eu {e:?}"
        );
        separated |= l.0 > n.0 && n.0 > e.0;
        assert!(l.1 < n.1 && n.1 < e.1, "cosine {cosine}: {l:?} {n:?} {e:?}");
    }
    assert!(
        separated,
        "at some cosine the scores themselves are ordered"
    );
}

/// The same when the topic fits so well that scores reach the top of the scale.
#[test]
fn a_land_programme_beats_an_equal_national_one_at_the_top_of_the_scale() {
    for cosine in [0.90, 0.95] {
        let [l, n, e] = land_national_eu(cosine);
        assert!(
            l.1 < n.1 && n.1 < e.1,
            "cosine {cosine}: land {l:?}, national {n:?}, eu {e:?}"
        );
    }
}

/// Names "at any hierarchy level": in the real catalogue the top-level areas
/// "Umwelt- & Naturschutz", "Gesundheit & Soziales", "Energieeffizienz & erneuerbare
/// Energien", "Existenzgründung & -festigung", "Messen & Ausstellungen" and
/// "Städtebau & Stadterneuerung" share their names with sub-areas of other areas
/// (e.g. `beratung-umwelt-naturschutz`). A profile naming the top-level area means the
/// top-level area (with all its sub-areas), not a sub-area of "Beratung" — and a slug
/// is an exact identifier, never matched against other areas' names.
#[test]
fn area_names_and_slugs_shared_with_sub_areas_resolve_to_the_top_level_area() {
    let cat = &real().catalogue;
    for (name, slug) in [
        ("umwelt-naturschutz", "umwelt-naturschutz"),
        ("gesundheit-soziales", "gesundheit-soziales"),
        (
            "energieeffizienz-erneuerbare-energien",
            "energieeffizienz-erneuerbare-energien",
        ),
        ("Umwelt- & Naturschutz", "umwelt-naturschutz"),
        ("Environmental & nature conservation", "umwelt-naturschutz"),
        ("Gesundheit & Soziales", "gesundheit-soziales"),
        (
            "Energieeffizienz & erneuerbare Energien",
            "energieeffizienz-erneuerbare-energien",
        ),
        (
            "Existenzgründung & -festigung",
            "existenzgruendung-festigung",
        ),
        ("Messen & Ausstellungen", "messen-ausstellungen"),
        ("Städtebau & Stadterneuerung", "staedtebau-stadterneuerung"),
    ] {
        let input = MatchInput::from_value(json!({
            "organization_id": "o",
            "organization_profile": {"description": "x", "grant_areas": [name]}
        }))
        .unwrap();
        let p = input.resolve(cat).unwrap();
        let got: Vec<&str> = p
            .grant_areas
            .iter()
            .map(|&a| cat.grant_areas[a as usize].slug.as_str())
            .collect();
        assert_eq!(got, vec![slug], "`{name}`");
    }
}

/// Names that resolve unambiguously, at every level, in both languages.
#[test]
fn real_catalogue_names_resolve_at_every_level() {
    let cat = &real().catalogue;
    let cases = [
        ("regions", "Europa", "europe"),
        ("regions", "Germany", "germany"),
        ("regions", "Deutschland", "germany"),
        ("regions", "Sachsen", "sachsen"),
        ("regions", "Saxony", "sachsen"),
        ("regions", "Baden-Württemberg", "baden-wuerttemberg"),
        ("grant_areas", "Digitalisierung", "digitalisierung"),
        ("grant_areas", "Aus- & Weiterbildung", "aus-weiterbildung"),
    ];
    for (field, name, slug) in cases {
        let input = MatchInput::from_value(json!({
            "organization_id": "o",
            "organization_profile": {"description": "x", field: [name]}
        }))
        .unwrap();
        let p = input
            .resolve(cat)
            .unwrap_or_else(|e| panic!("{field} `{name}`: {e}"));
        let got = if field == "regions" {
            cat.regions[p.regions[0] as usize].slug.as_str()
        } else {
            cat.grant_areas[p.grant_areas[0] as usize].slug.as_str()
        };
        assert_eq!(got, slug, "{field} `{name}`");
    }
}

/// Eligibility derived by the classifier (`classification: "derived"`) is a guess: the
/// filter does not trust it (see `Candidates::accepts`), so a reason must not state it
/// as a fact either ("antragsberechtigt sind u. a. GmbH").
#[test]
fn reasons_do_not_state_derived_eligibility_as_fact() {
    let engine = tiny_embedded();
    let cat = &engine.catalogue;
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let mut derived_seen = 0;
    for (body, day) in profiles_for_reasons() {
        for locale in ["de", "en"] {
            let mut body = body.clone();
            body["organization_profile"]["locale"] = json!(locale);
            let input = MatchInput::from_value(body).unwrap();
            let (_, matches) = engine
                .match_profile(
                    &embedder(),
                    &scope,
                    &input,
                    &MatchOptions::default(),
                    date(day),
                )
                .unwrap();
            for m in &matches {
                let grant = &cat.grants[m.grant as usize];
                // Applicants read from the programme's own text are a fact and say so.
                let from_text = cat
                    .facts(m.grant)
                    .applicants
                    .as_ref()
                    .is_some_and(|a| a.source == grantmatch_engine::facts::Source::Text);
                if from_text {
                    for (marker, source) in [
                        ("ntragsberechtigt sind", "laut Programmtext"),
                        ("ligible applicants", "according to the programme text"),
                    ] {
                        if m.match_reason.contains(marker) {
                            assert!(m.match_reason.contains(source), "{}", m.match_reason);
                        }
                    }
                } else if grant.classification.as_deref() == Some("derived") {
                    derived_seen += 1;
                    for marker in ["ntragsberechtigt", "ligible applicants"] {
                        assert!(
                            !m.match_reason.contains(marker),
                            "{} (derived eligibility): {}",
                            grant.slug,
                            m.match_reason
                        );
                    }
                }
            }
        }
    }
    assert!(derived_seen > 0);
}

// ---------------------------------------------------------------------------------
// Applicant resolution and the eligibility check
// ---------------------------------------------------------------------------------

fn resolve_body(
    cat: &Catalogue,
    name: &str,
    entities: Value,
) -> grantmatch_engine::Result<ResolvedProfile> {
    MatchInput::from_value(json!({
        "organization_id": "org",
        "organization_profile": {
            "name": name,
            "description": "Wir möchten ein neues Vorhaben umsetzen.",
            "eligible_entities": entities,
        }
    }))?
    .resolve(cat)
}

#[test]
fn partner_words_and_applicant_types_resolve() {
    use grantmatch_engine::facts::ApplicantType::*;
    let cat = &real().catalogue;
    for (word, t) in [
        ("Unternehmen", Company),
        ("KMU", Company),
        ("Existenzgründer/in", Founder),
        ("Start-up", Founder),
        ("Verband/Vereinigung", Association),
        ("Verein", Association),
        ("Kommune", Municipality),
        ("Kommunen", Municipality),
        ("Freiberufler", Company),
        ("Hochschule", University),
        ("Forschungseinrichtung", ResearchInstitution),
        ("Bildungseinrichtung", EducationInstitution),
        ("Öffentliche Einrichtung", PublicInstitution),
        ("Privatperson", PrivatePerson),
        ("company", Company),
        ("association", Association),
        ("GmbH", Company),
        ("e.V.", Association),
        ("gGmbH", Association),
    ] {
        let p = resolve_body(cat, "Organisation", json!([word]))
            .unwrap_or_else(|e| panic!("`{word}` refused: {e}"));
        assert!(
            p.applicant_types.contains(&t),
            "`{word}` → {:?}",
            p.applicant_types
        );
        assert!(!p.eligible_entities.is_empty(), "`{word}` has legal forms");
    }
    let e = resolve_body(cat, "Organisation", json!(["Raumschiff"])).unwrap_err();
    assert!(e.to_string().contains("`Raumschiff`"), "{e}");
    assert!(e.to_string().contains("known are"), "{e}");
}

/// Places partners send as `regions` resolve to the regions of the catalogue: a
/// district, a landscape across Länder, the whole country, the EU.
#[test]
fn places_in_regions_resolve_to_catalogue_regions() {
    let cat = &real().catalogue;
    for (value, codes) in [
        ("Landkreis Uelzen", &["DE-NI"][..]),
        ("Eifel", &["DE-RP", "DE-NW"]),
        ("NRW", &["DE-NW"]),
        ("bundesweit", &["DE"]),
        ("Europäische Union", &["continent:EU"]),
    ] {
        let p = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"description": "Wir planen ein Vorhaben.", "regions": [value]}
        }))
        .unwrap()
        .resolve(cat)
        .unwrap_or_else(|e| panic!("`{value}` refused: {e}"));
        let got: Vec<&str> = p
            .regions
            .iter()
            .map(|&r| cat.regions[r as usize].code.as_str())
            .collect();
        assert_eq!(got, codes, "{value}");
    }
    let e = MatchInput::from_value(json!({
        "organization_id": "org",
        "organization_profile": {"description": "Wir planen ein Vorhaben.", "regions": ["Atlantis"]}
    }))
    .unwrap()
    .resolve(cat)
    .unwrap_err();
    assert!(e.to_string().contains("`Atlantis`"), "{e}");
}

/// A topic word sent as `grant_areas` stands for every area whose name has a word
/// starting with it; a word no area name has is 400.
#[test]
fn topic_words_in_grant_areas_resolve_to_the_areas_they_name() {
    let cat = &real().catalogue;
    let codes = |value: &str| -> Vec<String> {
        MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"description": "Wir planen ein Vorhaben.", "grant_areas": [value]}
        }))
        .unwrap()
        .resolve(cat)
        .map(|p| {
            p.grant_areas
                .iter()
                .map(|&a| cat.grant_areas[a as usize].code.clone())
                .collect()
        })
        .unwrap_or_default()
    };
    for (value, expected) in [
        ("Energie", "energieeffizienz_erneuerbare_energien"),
        ("energy", "energieeffizienz_erneuerbare_energien"),
        (
            "Medizin",
            "forschung_innovation_themenspezifisch/gesundheit_medizin",
        ),
        ("Messen", "aussenwirtschaft/messen_ausstellungen"),
        ("Digitalisierung", "digitalisierung"),
    ] {
        let got = codes(value);
        assert!(got.iter().any(|c| c == expected), "{value} → {got:?}");
        // Only areas whose names carry the word.
        assert!(got.len() < 12, "{value} → {got:?}");
    }
    assert!(codes("Quatsch").is_empty());
    assert!(codes("und").is_empty());
}

/// A kind of institution whose legal form the word does not tell is accepted: it neither
/// filters nor sets the applicant type, which the name then gives.
#[test]
fn institution_kinds_are_accepted_and_the_name_gives_the_type() {
    use grantmatch_engine::facts::ApplicantType::*;
    let cat = &real().catalogue;
    for (word, name, t) in [
        (
            "Krankenhaus",
            "Klinikum Nordfriesland gGmbH",
            Some(Association),
        ),
        ("hospital", "Kreiskrankenhaus Musterstadt", None),
        (
            "Pflegeeinrichtung",
            "Seniorenresidenz Am Park GmbH",
            Some(Company),
        ),
        ("care home", "Haus Sonnenschein e.V.", Some(Association)),
        ("Museum", "Stadt Musterstadt", Some(Municipality)),
        ("Theater", "Theater am Markt", None),
        (
            "Einrichtung der Behindertenhilfe",
            "Lebenshilfe Musterkreis e.V.",
            Some(Association),
        ),
    ] {
        let p = resolve_body(cat, name, json!([word]))
            .unwrap_or_else(|e| panic!("`{word}` refused: {e}"));
        assert!(p.eligible_entities.is_empty(), "`{word}` filters nothing");
        match t {
            Some(t) => assert!(
                p.applicant_types.contains(&t),
                "`{word}` with {name}: {:?}",
                p.applicant_types
            ),
            None => assert!(
                p.applicant_types.is_empty(),
                "`{word}`: {:?}",
                p.applicant_types
            ),
        }
    }
    // Next to a legal form, the legal form decides.
    let p = resolve_body(cat, "Klinik Nord", json!(["Krankenhaus", "GmbH"])).unwrap();
    assert_eq!(p.applicant_types, vec![Company]);
    assert!(!p.eligible_entities.is_empty());
}

/// English words partners send for a natural person and for a company a municipality
/// owns stand for a private person and for a company.
#[test]
fn a_natural_person_and_a_municipal_company_are_understood() {
    use grantmatch_engine::facts::ApplicantType::*;
    let cat = &real().catalogue;
    for (word, t) in [
        ("natural person", PrivatePerson),
        ("natürliche Person", PrivatePerson),
        ("municipal company", Company),
        ("kommunales Unternehmen", Company),
    ] {
        let p = resolve_body(cat, "Muster", json!([word]))
            .unwrap_or_else(|e| panic!("`{word}` refused: {e}"));
        assert_eq!(p.applicant_types, vec![t], "`{word}`");
        assert!(
            !p.eligible_entities.is_empty(),
            "`{word}` filters by legal form"
        );
    }
}

#[test]
fn legal_forms_in_names_give_the_applicant_type() {
    use grantmatch_engine::facts::ApplicantType::*;
    let cat = &real().catalogue;
    for (name, t) in [
        ("Huber Präzisionstechnik GmbH", Company),
        ("SV Chemnitz-Nord Jugend e.V.", Association),
        ("Gemeinde Obere Kyll", Municipality),
        ("Klinikum Nordfriesland gGmbH", Association),
        ("Wohnungsgenossenschaft Eberswalde eG", Company),
        ("Technische Universität Dresden", University),
    ] {
        let p = resolve_body(cat, name, json!([])).unwrap();
        assert!(
            p.applicant_types.contains(&t),
            "{name} → {:?}",
            p.applicant_types
        );
    }
}

/// The real catalogue with random vectors (seeded): rule and lexical behaviour without the
/// model.
fn real_with_random_vectors(seed: u64) -> Engine {
    let records = CatalogueRecords::read_dir(&repo().join("fixtures/catalogue")).unwrap();
    let (vectors, _) = random_vectors(records.grants.len(), seed);
    Engine::from_records(records)
        .unwrap()
        .with_vectors(vectors)
        .unwrap()
}

/// Ranks for `profile` with grant `g`'s own vector as the query, on 2026-01-01.
fn rank_near(engine: &Engine, profile: &ResolvedProfile, g: Idx) -> Vec<Match> {
    let query = engine.vectors().unwrap().row(g as usize).to_vec();
    let scope = engine.resolve_scope(&Scope::unrestricted());
    engine
        .rank(
            &scope,
            profile,
            &query,
            &MatchOptions::default(),
            date("2026-01-01"),
        )
        .unwrap()
}

/// Matched for a Verein with the vector of a programme for Kommunen only as the query:
/// every result whose stated applicants exclude Vereine stays below 50, and the reason
/// says why.
#[test]
fn a_failed_applicant_check_caps_the_score() {
    use grantmatch_engine::facts::{ApplicantType, Source};
    let engine = real_with_random_vectors(7);
    let n = engine.catalogue.grants.len();
    let cat = &engine.catalogue;
    let g = (0..n as Idx)
        .find(|&g| {
            cat.facts(g).applicants.as_ref().is_some_and(|a| {
                a.source == Source::Text && a.value == vec![ApplicantType::Municipality]
            })
        })
        .expect("a programme for Kommunen only");
    let input = MatchInput::from_value(json!({
        "organization_id": "org",
        "organization_profile": {
            "name": "Heimatverein Musterdorf e.V.",
            "description": "Wir sind ein gemeinnütziger Verein.",
            "is_non_profit": true,
        }
    }))
    .unwrap();
    let profile = input.resolve(cat).unwrap();
    let matches = rank_near(&engine, &profile, g);
    let failed: Vec<&Match> = matches
        .iter()
        .filter(|m| m.checks.applicant == matching::Check::Fail)
        .collect();
    assert!(!failed.is_empty(), "some programme excludes Vereine");
    // Pushed down hard: half the calibrated score, at most 45.
    assert_eq!(matching::excluded_score(100), 45);
    assert_eq!(matching::excluded_score(80), 40);
    assert_eq!(matching::excluded_score(30), 15);
    for m in failed {
        assert!(m.relevance_score < 50, "score {}", m.relevance_score);
        assert_eq!(m.match_category.as_str(), "not_suitable");
        assert!(
            m.match_reason.contains("nicht Vereine"),
            "{}",
            m.match_reason
        );
    }
}

/// A profile written in English gets German glossary terms, and its English keyword counts
/// as found when its German term is in the programme text. A German profile gets no
/// glossary terms.
#[test]
fn english_profiles_speak_to_german_texts_through_the_glossary() {
    let engine = real_with_random_vectors(11);
    let n = engine.catalogue.grants.len();
    let cat = &engine.catalogue;
    let input = MatchInput::from_value(json!({
        "organization_id": "org",
        "organization_profile": {
            "name": "Village of Northwood",
            "description": "We are a rural municipality and want to bring fast internet to every household.",
            "keywords": ["broadband"],
        }
    }))
    .unwrap();
    let profile = input.resolve(cat).unwrap();
    assert!(
        profile.german_terms.iter().any(|t| t == "Breitband"),
        "{:?}",
        profile.german_terms
    );
    let g = (0..n as Idx)
        .find(|&g| {
            cat.grant_text_terms(g).contains("breitband")
                && matching::passes_filters(cat, &profile, g, date("2026-01-01"))
        })
        .expect("an open programme that names broadband");
    let matches = rank_near(&engine, &profile, g);
    let hit = matches
        .iter()
        .find(|m| m.grant == g)
        .expect("the programme is among the results");
    // Named with the German term the text holds.
    assert_eq!(
        hit.matched_keywords,
        vec!["broadband = Breitband".to_string()]
    );
    assert!(hit.components.keyword > 0.5, "{:?}", hit.components);

    let german = resolve_body(cat, "Familie Huber", json!([])).unwrap();
    assert!(german.german_terms.is_empty());
}

/// Ranks `profile` over a [`two_directions`] catalogue (query vector on the first axis).
fn rank_two(engine: &Engine, profile: &ResolvedProfile) -> Vec<Match> {
    engine
        .rank(
            &engine.resolve_scope(&Scope::unrestricted()),
            profile,
            &[1.0, 0.0],
            &MatchOptions::default(),
            date("2026-01-01"),
        )
        .unwrap()
}

/// A company ("Muster GmbH") described by `description`, resolved against `cat`.
fn resolve_company(cat: &Catalogue, description: &str) -> ResolvedProfile {
    MatchInput::from_value(json!({
        "organization_id": "org",
        "organization_profile": {"name": "Muster GmbH", "description": description}
    }))
    .unwrap()
    .resolve(cat)
    .unwrap()
}

/// What a profile says it does not want is cut out of the texts its topic is read from:
/// the query, the needs, research and sectors; the funding-type rules still read the
/// whole text.
#[test]
fn a_profile_s_exclusions_are_no_topic() {
    let cat = &tiny().catalogue;
    let profile = resolve_company(
        cat,
        "Wir sind ein Zimmereibetrieb und wollen eine neue Abbundanlage kaufen. \
         Außerdem wollen wir unsere Mitarbeiter im Holzbau weiterbilden. Wir suchen keine Förderung für Forschung oder Landwirtschaft, sondern einen Zuschuss. \
         Eine Kooperation mit einer Hochschule ist nicht geplant. Kredite möchten wir nicht aufnehmen.",
    );
    assert_eq!(
        profile.exclusions,
        [
            "keine Förderung für Forschung oder Landwirtschaft",
            "Eine Kooperation mit einer Hochschule ist nicht geplant",
        ]
    );
    for cut in ["Forschung", "Landwirtschaft", "Hochschule"] {
        assert!(!profile.query_text.contains(cut), "{}", profile.query_text);
        assert!(
            profile.needs.iter().all(|n| !n.contains(cut)),
            "{:?}",
            profile.needs
        );
    }
    assert!(profile.query_text.contains("Abbundanlage"));
    assert!(profile.needs.iter().any(|n| n.contains("Abbundanlage")));
    assert!(!profile.research_oriented);
    assert!(profile.sectors.is_empty(), "{:?}", profile.sectors);
    // The refused loans are the funding-type rules' reading, from the whole text.
    assert_eq!(profile.excluded_grant_types, [GrantType::Loan]);
}

/// Who applies is read from the name, else the first sentence, else the keywords: an
/// English GP practice is a business (a freelancer), as the German "Hausarztpraxis" is.
#[test]
fn an_english_gp_practice_is_a_business() {
    use grantmatch_engine::facts::ApplicantType;
    let cat = &tiny().catalogue;
    let resolve = |org: serde_json::Value| {
        MatchInput::from_value(json!({"organization_id": "org", "organization_profile": org}))
            .unwrap()
            .resolve(cat)
            .unwrap()
    };
    let gp = resolve(json!({
        "name": "Dr. med. Aylin Demir – GP practice (takeover)",
        "description": "I am a specialist in general medicine and will take over a single-handed practice.",
    }));
    assert_eq!(gp.applicant_types, [ApplicantType::Company]);
    let by_keyword = resolve(json!({
        "name": "Aylin Demir",
        "description": "I will open a studio for interior design in Kassel.",
        "keywords": ["interior design", "freelancer"],
    }));
    assert_eq!(by_keyword.applicant_types, [ApplicantType::Company]);
}

/// A landscape the texts name is where the organisation is, not what it does: "Wald" in
/// "Thüringer Wald" makes no glassworks a forestry business, and "Black Forest" gives an
/// English profile no German "Wald"; a forest estate that speaks of its forest and a
/// company in the Lausitz (a coal region, a place by definition) keep their sectors.
#[test]
fn a_landscape_is_no_topic() {
    use grantmatch_engine::facts::sector::Sector;
    let cat = &tiny().catalogue;
    let glassworks = resolve_company(
        cat,
        "Wir sind eine Glasbläserei in Lauscha im Thüringer Wald und wollen unsere Gasöfen \
         durch elektrische Schmelzöfen ersetzen.",
    );
    // Its melting furnaces are production, its landscape no forestry.
    assert_eq!(glassworks.sectors, [Sector::Production]);
    let estate = resolve_company(
        cat,
        "Wir bewirtschaften 400 Hektar Wald im Bayerischen Wald und wollen Mischwald pflanzen.",
    );
    assert_eq!(estate.sectors, [Sector::Agriculture, Sector::Forestry]);
    let lusatia = resolve_company(
        cat,
        "Wir sind ein Metallbaubetrieb in der Lausitz und wollen eine neue Halle bauen.",
    );
    assert!(
        lusatia.sectors.contains(&Sector::CoalRegions),
        "{:?}",
        lusatia.sectors
    );
    let sawmill = resolve_company(
        cat,
        "We run a sawmill in the Black Forest and want to install a solar power system on the roof.",
    );
    assert_eq!(sawmill.text_language, Locale::En);
    assert!(
        !sawmill.german_terms.iter().any(|t| t == "Wald"),
        "{:?}",
        sawmill.german_terms
    );
    assert!(
        sawmill.german_terms.iter().any(|t| t == "Photovoltaik"),
        "{:?}",
        sawmill.german_terms
    );
}

/// `m`'s total is `factor` times the default weighted mean of its components.
fn assert_total_weighs(cat: &Catalogue, m: &Match, factor: f32, what: &str) {
    let weighted = MatchWeights::default().mean(&m.components);
    assert!(
        (m.total - factor * weighted).abs() < 1e-5,
        "{what}: {} total {} weighted {weighted}",
        cat.grants[m.grant as usize].slug,
        m.total,
    );
}

/// The real catalogue with two-dimensional vectors: the programmes `near` picks point
/// one way, every other programme the other; rank with the query `[1, 0]` to put the
/// picked ones first on topic.
fn two_directions(near: impl Fn(&Catalogue, Idx) -> bool) -> Engine {
    let records = CatalogueRecords::read_dir(&repo().join("fixtures/catalogue")).unwrap();
    let plain = Engine::from_records(records.clone()).unwrap();
    let rows = (0..records.grants.len() as Idx)
        .map(|g| {
            if near(&plain.catalogue, g) {
                vec![1.0, 0.0]
            } else {
                vec![0.0, 1.0]
            }
        })
        .collect();
    let vectors = GrantVectors::from_rows("test/2d", 2, rows).unwrap();
    Engine::from_records(records)
        .unwrap()
        .with_vectors(vectors)
        .unwrap()
}

/// A research call ranked for a bakery that does no research weighs `KIND_MISFIT_FACTOR`
/// of its components' weighted mean; for an organisation that researches, and for every
/// programme of another kind, the total is the weighted mean itself.
#[test]
fn a_research_call_weighs_less_for_an_organisation_that_does_no_research() {
    use grantmatch_engine::facts::ProgrammeKind;
    let engine = two_directions(|cat, g| cat.facts(g).kind.value == ProgrammeKind::ResearchCall);
    let cat = &engine.catalogue;
    let is_call = |g: Idx| cat.facts(g).kind.value == ProgrammeKind::ResearchCall;
    let w = MatchWeights::default();
    let weighted = |m: &Match| w.mean(&m.components);
    for (description, researcher) in [
        (
            "Wir sind eine Bäckerei mit sieben Filialen und wollen eine Wärmepumpe einbauen.",
            false,
        ),
        (
            "Wir sind ein Forschungslabor und entwickeln neue Sensoren in Forschungsprojekten.",
            true,
        ),
        // Research the profile rules out is no research it does.
        (
            "Wir sind eine Bäckerei und wollen eine Wärmepumpe einbauen. Forschungsprojekte planen wir nicht.",
            false,
        ),
    ] {
        let profile = resolve_company(cat, description);
        assert_eq!(profile.research_oriented, researcher, "{description}");
        let matches = rank_two(&engine, &profile);
        // Only a profile that rules research out is told so.
        let told = |m: &Match| m.match_reason.contains("Forschung schließen Sie laut Ihren Angaben aus");
        assert_eq!(
            matches.iter().any(told),
            !profile.exclusions.is_empty(),
            "{description}"
        );
        assert!(matches.iter().filter(|m| told(m)).all(|m| is_call(m.grant)));
        // Both branches are exercised: research calls are among the results.
        assert!(
            matches.iter().any(|m| is_call(m.grant)),
            "{description}: no research call among the results"
        );
        for m in &matches {
            // A programme restricted to a sector the profile does not speak of is a
            // kind misfit too (`a_sector_programme_…`), and so is one for founding
            // (`a_founding_programme_…`).
            let sector_misfit = grantmatch_engine::facts::sector::misfit(
                &cat.facts(m.grant).sectors,
                &profile.sectors,
            ) || cat.facts(m.grant).founding_misfit(profile.founding);
            let factor = if (is_call(m.grant) && !researcher) || sector_misfit {
                matching::KIND_MISFIT_FACTOR
            } else {
                1.0
            };
            assert_total_weighs(cat, m, factor, description);
            if is_call(m.grant) && !researcher {
                assert!(m.relevance_score <= matching::NOT_EXCELLENT_CAP);
                // Lowered, not only capped.
                assert!(m.total < weighted(m) - 1e-4, "{}", m.total);
            }
        }
    }
}

/// A programme whose title restricts it to a sector ("Exportinitiative
/// Gesundheitswirtschaft") is a kind misfit for an organisation whose texts never speak of
/// that sector — a pump manufacturer: its total weighs `KIND_MISFIT_FACTOR` of the weighted
/// mean, its score stays below `very_suitable` and the reason names the sector; for a
/// clinic the total is the weighted mean itself.
#[test]
fn a_sector_programme_weighs_less_for_an_organisation_outside_its_sector() {
    use grantmatch_engine::facts::sector::Sector;
    use grantmatch_engine::facts::ProgrammeKind;
    let health_only = |cat: &Catalogue, g: Idx| {
        cat.facts(g).sectors == [Sector::Health]
            && cat.facts(g).kind.value != ProgrammeKind::ResearchCall
    };
    let engine = two_directions(health_only);
    let cat = &engine.catalogue;
    for (description, outside) in [
        (
            "Wir sind ein Hersteller von Industriepumpen mit 180 Beschäftigten und wollen unseren Export ausbauen.",
            true,
        ),
        (
            "Wir betreiben eine Rehabilitationsklinik mit 120 Betten und wollen unseren Export ausbauen.",
            false,
        ),
    ] {
        let profile = resolve_company(cat, description);
        let matches = rank_two(&engine, &profile);
        let picked: Vec<&Match> = matches.iter().filter(|m| health_only(cat, m.grant)).collect();
        assert!(!picked.is_empty(), "{description}: no health programme");
        for m in picked {
            let factor = if outside {
                matching::KIND_MISFIT_FACTOR
            } else {
                1.0
            };
            assert_total_weighs(cat, m, factor, description);
            assert_eq!(
                m.match_reason.contains("Gesundheit und Pflege"),
                outside,
                "{}",
                m.match_reason
            );
            if outside {
                assert!(m.relevance_score <= matching::NOT_EXCELLENT_CAP);
            }
        }
    }
}

/// A programme for founding or taking over a business ("ERP-Gründerkredit – StartGeld",
/// "Startfinanzierung 80") is a kind misfit for an established company whose texts speak
/// of neither — a die-caster with 260 employees: its total weighs `KIND_MISFIT_FACTOR` of
/// the weighted mean, its score stays below `very_suitable` and the reason says why; for
/// a founder and for a company planning its succession the total is the weighted mean.
#[test]
fn a_founding_programme_weighs_less_for_an_established_company() {
    let founding = |cat: &Catalogue, g: Idx| {
        cat.facts(g).founding.is_some()
            && cat.facts(g).sectors.is_empty()
            && cat.facts(g).supported.is_none()
            && cat.facts(g).kind.value != grantmatch_engine::facts::ProgrammeKind::ResearchCall
    };
    let engine = two_directions(founding);
    let cat = &engine.catalogue;
    for (description, established) in [
        (
            "Wir sind ein familiengeführter Aluminium-Druckgießer mit 260 Beschäftigten und wollen eine neue Halle finanzieren.",
            true,
        ),
        // A research partner makes no founding team of an established company.
        (
            "Wir sind ein Druckgießer mit 260 Beschäftigten und wollen mit einem Forschungsinstitut \
             der Universität Stuttgart leichtere Gussteile entwickeln.",
            true,
        ),
        (
            "Ich möchte mich mit einer Kaffeerösterei selbstständig machen und brauche einen Kredit.",
            false,
        ),
        (
            "Wir sind eine Zimmerei mit 14 Beschäftigten; die Nachfolge durch einen Gesellen wollen wir finanzieren.",
            false,
        ),
    ] {
        let profile = resolve_company(cat, description);
        assert_eq!(profile.founding, !established, "{description}");
        let matches = rank_two(&engine, &profile);
        let picked: Vec<&Match> = matches.iter().filter(|m| founding(cat, m.grant)).collect();
        assert!(!picked.is_empty(), "{description}: no founding programme");
        for m in picked {
            let factor = if established {
                matching::KIND_MISFIT_FACTOR
            } else {
                1.0
            };
            assert_total_weighs(cat, m, factor, description);
            assert_eq!(
                m.match_reason.contains("für Gründungen, Übernahmen oder junge Unternehmen"),
                established,
                "{}",
                m.match_reason
            );
            if established {
                assert!(m.relevance_score <= matching::NOT_EXCELLENT_CAP);
            }
        }
    }
}

/// Words of legal form and non-profit status are no keywords: a profile that says only
/// what it is ("gemeinnützige gGmbH, eingetragen") finds no programme lexically
/// (the word "gemeinnützigen" in a title gave a sports club a research programme first),
/// while a topic word does.
#[test]
fn status_words_are_not_matched_lexically() {
    let engine = two_directions(|cat, g| cat.grants[g as usize].title.contains("gemeinnützig"));
    let cat = &engine.catalogue;
    assert!(cat
        .grants
        .iter()
        .any(|g| g.title.contains("gemeinnützigen")));
    let keyword_sum = |description: &str| -> f32 {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"description": description}
        }))
        .unwrap();
        let profile = input.resolve(cat).unwrap();
        rank_two(&engine, &profile)
            .iter()
            .map(|m| m.components.keyword)
            .sum()
    };
    assert_eq!(keyword_sum("Gemeinnützige gGmbH, eingetragen."), 0.0);
    assert!(keyword_sum("Gemeinnütziger Verein für Industrieforschung.") > 0.0);
}

/// A programme for residential buildings or housing ("Wohngebäude", "Mietwohnraum") is a
/// misfit for an organisation that is not about housing — a Verein renovating its
/// clubhouse: its total weighs `KIND_MISFIT_FACTOR` of the weighted mean and its score
/// stays below `very_suitable`; for a housing cooperative it is the weighted mean itself.
#[test]
fn a_residential_programme_weighs_less_for_an_organisation_not_about_housing() {
    use grantmatch_engine::facts::sector::Sector;
    let engine = two_directions(|cat, g| cat.facts(g).sectors == [Sector::Housing]);
    let cat = &engine.catalogue;
    let residential = |g: Idx| cat.facts(g).sectors == [Sector::Housing];
    assert!(cat
        .grants
        .iter()
        .any(|g| g.title.contains("Nichtwohngebäude")));
    for (g, grant) in cat.grants.iter().enumerate() {
        if grant.title.contains("Nichtwohngebäude") {
            assert!(!residential(g as Idx), "{}", grant.title);
        }
    }
    for (description, housing) in [
        (
            "Sportverein mit 600 Mitgliedern; wir wollen unser Vereinsheim energetisch sanieren.",
            false,
        ),
        (
            "Wohnungsgenossenschaft mit 800 Mietwohnungen; wir wollen unsere Wohngebäude energetisch sanieren.",
            true,
        ),
    ] {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"description": description}
        }))
        .unwrap();
        let profile = input.resolve(cat).unwrap();
        assert_eq!(
            profile.sectors.contains(&Sector::Housing),
            housing,
            "{description}"
        );
        let matches = rank_two(&engine, &profile);
        assert!(
            matches.iter().any(|m| residential(m.grant)),
            "{description}: no residential programme among the results"
        );
        for m in &matches {
            if !residential(m.grant) || cat.facts(m.grant).kind.value
                == grantmatch_engine::facts::ProgrammeKind::ResearchCall
            {
                continue;
            }
            let factor = if housing {
                1.0
            } else {
                matching::KIND_MISFIT_FACTOR
            };
            assert_total_weighs(cat, m, factor, description);
            if !housing {
                assert!(m.relevance_score <= matching::NOT_EXCELLENT_CAP);
            }
        }
    }
}

/// An academic founding team (a spin-off at a university) is no applicant of a programme
/// through which universities apply for their founding teams (EXIST-Gründungsstipendium),
/// but the programme is for it: the applicant check is `unknown`, not `fail`, and the
/// reason says who applies. A founding team with no academic tie fails the check.
#[test]
fn an_academic_founding_team_is_served_by_programmes_its_university_applies_for() {
    use grantmatch_engine::facts::{ApplicantType, Source};
    let for_teams = |cat: &Catalogue, g: Idx| {
        let f = cat.facts(g);
        f.founding_teams_via_institution
            && f.applicants.as_ref().is_some_and(|a| {
                a.source != Source::Derived && !a.value.contains(&ApplicantType::Founder)
            })
    };
    let engine = two_directions(for_teams);
    let cat = &engine.catalogue;
    let exist = (0..cat.grants.len() as Idx)
        .find(|&g| cat.grants[g as usize].slug == "exist-gruendungsstipendium")
        .expect("EXIST-Gründungsstipendium in the catalogue");
    assert!(for_teams(cat, exist));
    for (description, academic) in [
        (
            "Wir sind ein Gründungsteam aus zwei Doktoranden der TU Dresden und planen die \
             Ausgründung einer GmbH für Batteriediagnostik.",
            true,
        ),
        (
            "Wir sind ein Gründungsteam aus zwei Kfz-Meistern und planen die Gründung einer \
             GmbH für Batteriediagnostik.",
            false,
        ),
    ] {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"description": description, "eligible_entities": ["Start-up"]}
        }))
        .unwrap();
        let profile = input.resolve(cat).unwrap();
        assert_eq!(profile.academic, academic, "{description}");
        assert!(profile.applicant_types.contains(&ApplicantType::Founder));
        let matches = rank_two(&engine, &profile);
        let m = matches
            .iter()
            .find(|m| for_teams(cat, m.grant))
            .expect("a programme for founding teams among the results");
        if academic {
            assert_eq!(m.checks.applicant, Check::Unknown);
            assert!(
                m.match_reason
                    .contains("stellt die Hochschule oder Forschungseinrichtung den Antrag"),
                "{}",
                m.match_reason
            );
        } else {
            assert_eq!(m.checks.applicant, Check::Fail);
            assert!(m.relevance_score <= matching::FAILED_CHECK_CAP);
        }
    }
}

/// A Kommune that runs its own enterprise ("mit unserem Eigenbetrieb Kreisverkehr") may
/// also apply as a company; one that speaks of the companies in its area does not.
#[test]
fn a_kommune_with_its_own_enterprise_is_also_a_company() {
    use grantmatch_engine::facts::ApplicantType::{Company, Municipality};
    let cat = &real().catalogue;
    for (description, company) in [
        (
            "Wir betreiben den Busverkehr mit unserem Eigenbetrieb Kreisverkehr selbst.",
            true,
        ),
        ("Unsere Stadtwerke wollen Ladepunkte bauen.", true),
        (
            "Wir wollen unsere Unternehmen im Gewerbegebiet bei der Digitalisierung unterstützen.",
            false,
        ),
    ] {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"name": "Landkreis Musterland", "description": description}
        }))
        .unwrap();
        let types = input.resolve(cat).unwrap().applicant_types;
        assert!(types.contains(&Municipality), "{description}: {types:?}");
        assert_eq!(
            types.contains(&Company),
            company,
            "{description}: {types:?}"
        );
    }
}

/// The institutions an organisation runs give it their applicant type beside its legal
/// form: a Verein with a school or in adult education is an educational institution, a
/// Kommune that speaks of its schools is their Schulträger, and a university is a
/// research institution. A company that sells to schools is none of them.
#[test]
fn an_organisation_may_apply_as_the_institution_it_runs() {
    use grantmatch_engine::facts::ApplicantType::{
        Association, Company, EducationInstitution, Municipality, ResearchInstitution, University,
    };
    let cat = &real().catalogue;
    let cases: &[(&str, &str, &[&str], &[grantmatch_engine::facts::ApplicantType])] = &[
        (
            "Spree Learning Centre e.V.",
            "We are a non-profit adult education association and run a state-recognised school for nursing assistants.",
            &["association"],
            &[Association, EducationInstitution],
        ),
        (
            "Tischlerverband Muster e.V.",
            "Wir sind ein Verband des Handwerks und betreiben in Ulm eine überbetriebliche Bildungsstätte.",
            &[],
            &[Association, EducationInstitution],
        ),
        (
            "Gemeinde Musterdorf",
            "Unsere Grundschule braucht WLAN, und die Kita soll um zwei Gruppen wachsen.",
            &[],
            &[Municipality, EducationInstitution],
        ),
        (
            "Musterstadt University of Applied Sciences",
            "We are a state university of applied sciences with 7,500 students.",
            &[],
            &[University, ResearchInstitution],
        ),
        (
            "Schulmöbel Muster GmbH",
            "Wir stellen Möbel für Schulen und Kitas her.",
            &[],
            &[Company],
        ),
    ];
    for (name, description, entities, expected) in cases {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {
                "name": name,
                "description": description,
                "eligible_entities": entities,
            }
        }))
        .unwrap();
        let mut types = input.resolve(cat).unwrap().applicant_types;
        types.sort();
        let mut expected = expected.to_vec();
        expected.sort();
        assert_eq!(types, expected, "{name}");
    }
}

/// A gGmbH is a GmbH: `eligible_entities: ["gGmbH"]` keeps the programmes whose stated
/// legal forms include GmbH (the Förderdatenbank never lists gGmbH), and still drops those
/// for Kommunen only.
#[test]
fn a_ggmbh_may_apply_where_a_gmbh_may() {
    let cat = &real().catalogue;
    let input = MatchInput::from_value(json!({
        "organization_id": "org",
        "organization_profile": {"description": "Sozialer Träger.", "eligible_entities": ["gGmbH"]}
    }))
    .unwrap();
    let profile = input.resolve(cat).unwrap();
    let gmbh = cat.find_entity("GmbH").unwrap();
    let labelled = |g: Idx| cat.grants[g as usize].classification.as_deref() == Some("labelled");
    let with = |code: &str, g: Idx| {
        cat.grant_entities(g)
            .iter()
            .any(|&e| cat.eligible_entities[e as usize].code == code)
    };
    let today = date("2026-01-01");
    let open_to_gmbh = (0..cat.grants.len() as Idx)
        .filter(|&g| labelled(g) && with("gmbh", g) && !with("ggmbh", g))
        .collect::<Vec<_>>();
    assert!(open_to_gmbh.len() > 100);
    assert!(cat.grant_entities(open_to_gmbh[0]).contains(&gmbh));
    for &g in &open_to_gmbh {
        let grant = &cat.grants[g as usize];
        if grant.end_date.is_none_or(|d| d >= today) || grant.ongoing_grant {
            assert!(
                matching::passes_filters(cat, &profile, g, today),
                "{}",
                grant.slug
            );
        }
    }
    let kommune_only = (0..cat.grants.len() as Idx)
        .find(|&g| {
            let es = cat.grant_entities(g);
            labelled(g)
                && es.len() == 1
                && with("kommune", g)
                && cat.grants[g as usize].ongoing_grant
        })
        .expect("a programme for Kommunen only");
    assert!(!matching::passes_filters(
        cat,
        &profile,
        kommune_only,
        today
    ));
    // "gemeinnützige GmbH" is the gGmbH; a gUG is a non-profit UG.
    for (value, want) in [
        ("gUG", &["ggmbh", "gmbh", "ug"][..]),
        ("gemeinnützige GmbH", &["ggmbh", "gmbh"][..]),
    ] {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {"description": "Sozialer Träger.", "eligible_entities": [value]}
        }))
        .unwrap();
        let p = input.resolve(cat).unwrap();
        let codes: Vec<&str> = p
            .eligible_entities
            .iter()
            .map(|&e| cat.eligible_entities[e as usize].code.as_str())
            .collect();
        assert_eq!(codes, want, "{value}");
    }
}

/// A company of 1,300 employees fails the applicant check of a programme for SMEs only,
/// with a reason that says so; the same company with 40 employees does not.
#[test]
fn a_large_organisation_fails_a_programme_for_smes_only() {
    use grantmatch_engine::facts::{ApplicantType, Source};
    let for_smes = |cat: &Catalogue, g: Idx| {
        let f = cat.facts(g);
        f.sme_only.as_ref().is_some_and(|s| s.value)
            && f.applicants.as_ref().is_some_and(|a| {
                a.source == Source::Text && a.value == vec![ApplicantType::Company]
            })
            && cat.grants[g as usize].ongoing_grant
            && cat.grants[g as usize].end_date.is_none()
    };
    let engine = two_directions(for_smes);
    let cat = &engine.catalogue;
    let g = (0..cat.grants.len() as Idx)
        .find(|&g| for_smes(cat, g))
        .expect("an open programme for SMEs only");
    for (employees, large) in [("1.300", true), ("40", false)] {
        let input = MatchInput::from_value(json!({
            "organization_id": "org",
            "organization_profile": {
                "name": "Muster Maschinenbau GmbH",
                "description": "Wir bauen Maschinen.",
                "number_of_employees": employees,
            }
        }))
        .unwrap();
        let profile = input.resolve(cat).unwrap();
        assert!(profile.applicant_types.contains(&ApplicantType::Company));
        assert_eq!(matching::too_large_for(cat, &profile, g), large);
        let matches = rank_two(&engine, &profile);
        let for_smes_only: Vec<&Match> =
            matches.iter().filter(|m| for_smes(cat, m.grant)).collect();
        assert!(
            !for_smes_only.is_empty(),
            "programmes for SMEs only are ranked"
        );
        for m in for_smes_only {
            let said = m
                .match_reason
                .to_lowercase()
                .contains("nur für kleine und mittlere unternehmen (kmu)");
            if large {
                assert_eq!(m.checks.applicant, matching::Check::Fail);
                assert!(m.relevance_score < 50, "score {}", m.relevance_score);
                assert!(
                    said && m.match_reason.contains("Sie haben 1300 Beschäftigte"),
                    "{}",
                    m.match_reason
                );
            } else {
                assert_eq!(m.checks.applicant, matching::Check::Pass);
                assert!(!said, "{}", m.match_reason);
            }
        }
    }
}

/// A company of 40 employees fails the applicant check of a programme whose title is for
/// companies beyond the SMEs ("KfW-Förderkredit großer Mittelstand"), with a reason that
/// says so; with 1,300 employees it passes, and without a head count nothing is assumed.
#[test]
fn a_small_company_fails_a_programme_for_larger_companies() {
    let large_only =
        |cat: &Catalogue, g: Idx| cat.facts(g).large_only.as_ref().is_some_and(|f| f.value);
    let engine = two_directions(large_only);
    let cat = &engine.catalogue;
    let slugs: Vec<&str> = (0..cat.grants.len() as Idx)
        .filter(|&g| large_only(cat, g))
        .map(|g| cat.grants[g as usize].slug.as_str())
        .collect();
    assert!(
        slugs.contains(&"foerderkredit-grosser-mittelstand"),
        "{slugs:?}"
    );
    for (employees, small) in [(Some("40"), true), (Some("1.300"), false), (None, false)] {
        let mut org = json!({
            "name": "Muster Maschinenbau GmbH",
            "description": "Wir bauen Maschinen und wollen in eine neue Halle investieren.",
        });
        if let Some(n) = employees {
            org["number_of_employees"] = json!(n);
        }
        let profile =
            MatchInput::from_value(json!({"organization_id": "org", "organization_profile": org}))
                .unwrap()
                .resolve(cat)
                .unwrap();
        let matches = rank_two(&engine, &profile);
        let picked: Vec<&Match> = matches
            .iter()
            .filter(|m| large_only(cat, m.grant))
            .collect();
        assert!(
            !picked.is_empty(),
            "{employees:?}: no programme for larger companies ranked"
        );
        for m in picked {
            assert_eq!(matching::too_small_for(cat, &profile, m.grant), small);
            let said = m
                .match_reason
                .contains("nur für größere Unternehmen jenseits der KMU-Schwellen");
            assert_eq!(said, small, "{}", m.match_reason);
            if small {
                assert_eq!(m.checks.applicant, matching::Check::Fail);
                assert!(m.relevance_score < 50, "score {}", m.relevance_score);
                assert!(
                    m.match_reason.contains("Sie haben 40 Beschäftigte"),
                    "{}",
                    m.match_reason
                );
            } else {
                assert_ne!(
                    m.checks.applicant,
                    matching::Check::Fail,
                    "{}",
                    m.match_reason
                );
            }
        }
    }
}

/// The shipped catalogue with every programme at the same 2-d vector: a query's cosine
/// is the same to all, so only the rule stage's floors separate them.
fn equidistant() -> Engine {
    let records = CatalogueRecords::read_dir(&repo().join("fixtures/catalogue")).unwrap();
    let cat_len = Engine::from_records(records.clone())
        .unwrap()
        .catalogue
        .grants
        .len();
    let vectors = GrantVectors::from_rows("test/2d", 2, vec![vec![1.0, 0.0]; cat_len]).unwrap();
    Engine::from_records(records)
        .unwrap()
        .with_vectors(vectors)
        .unwrap()
}

/// Resolves `organization_profile` against the equidistant catalogue and ranks it with
/// the default options and a query whose cosine to every programme (0.70) is below the
/// calibration, so that without a floor every semantic component is 0.
fn rank_equidistant(engine: &Engine, organization_profile: Value) -> (ResolvedProfile, Vec<Match>) {
    let scope = engine.resolve_scope(&Scope::unrestricted());
    let profile = MatchInput::from_value(json!({
        "organization_id": "floor-test",
        "organization_profile": organization_profile
    }))
    .unwrap()
    .resolve(&engine.catalogue)
    .unwrap();
    let query = [0.70, (1.0f32 - 0.49).sqrt()];
    let matches = engine
        .rank(
            &scope,
            &profile,
            &query,
            &MatchOptions::default(),
            date("2026-11-22"),
        )
        .unwrap();
    (profile, matches)
}

/// A profile that asks for loans gets the programmes open to any topic that lend to it
/// with the higher floor of the semantic component (`topic_open_wanted_semantic`); the
/// same profile without the request, and subsidies for it, keep `topic_open_semantic`.
/// Every programme has the same vector and the query's cosine (0.70) is below the
/// calibration, so without a floor the semantic component is 0.
#[test]
fn a_requested_instrument_raises_the_floor_of_topic_open_programmes() {
    let engine = equidistant();
    let cat = &engine.catalogue;
    let options = MatchOptions::default();
    assert!(options.topic_open_wanted_semantic > options.topic_open_semantic);
    let base = "Die Schreinerei Huber GmbH ist ein Handwerksbetrieb mit 12 Beschäftigten. \
                Wir wollen eine neue CNC-Maschine anschaffen.";
    let run = |text: &str| {
        rank_equidistant(
            &engine,
            json!({"description": text, "eligible_entities": ["KMU"]}),
        )
        .1
    };
    let loan = |m: &Match| cat.facts(m.grant).grant_type.value == GrantType::Loan;
    let open = |m: &Match| cat.facts(m.grant).topic_open;
    let seeking = run(&format!("{base} Wir suchen zinsgünstige Kredite."));
    let lending: Vec<&Match> = seeking.iter().filter(|m| open(m) && loan(m)).collect();
    assert!(!lending.is_empty(), "topic-open loans are found");
    for m in &lending {
        assert_eq!(m.checks.funding_type, Check::Pass);
        assert!(
            m.components.semantic >= options.topic_open_wanted_semantic - 1e-6,
            "{m:?}"
        );
    }
    for m in seeking.iter().filter(|m| open(m) && !loan(m)) {
        assert!(
            m.components.semantic <= options.topic_open_semantic + 1e-6,
            "{m:?}"
        );
    }
    let not_seeking = run(base);
    let open_results: Vec<&Match> = not_seeking.iter().filter(|m| open(m)).collect();
    assert!(!open_results.is_empty());
    for m in open_results {
        assert!(
            m.components.semantic <= options.topic_open_semantic + 1e-6,
            "{m:?}"
        );
    }
}

/// A company that plans a photovoltaic system gets the programmes that fund one with the
/// floor `measure_semantic`, named in the reason, and never 90+; every programme is
/// equally far from the profile, so only the floor lifts one.
#[test]
fn a_programme_for_a_planned_measure_gets_its_floor_and_names_the_measure() {
    use grantmatch_engine::facts::measure::Measure;
    let engine = equidistant();
    let cat = &engine.catalogue;
    let options = MatchOptions::default();
    let base =
        "Die Schreinerei Huber GmbH ist ein Handwerksbetrieb mit 12 Beschäftigten in Bayern.";
    let run = |text: &str, locale: &str| {
        rank_equidistant(
            &engine,
            json!({"description": text, "eligible_entities": ["KMU"], "locale": locale}),
        )
    };
    let (profile, planning) = run(
        &format!("{base} Wir wollen eine Photovoltaikanlage auf das Hallendach bauen."),
        "de",
    );
    assert_eq!(profile.measures, vec![Measure::SolarPower]);
    let floored: Vec<&Match> = planning
        .iter()
        .filter(|m| m.planned_measure.is_some())
        .collect();
    assert!(!floored.is_empty(), "a photovoltaic programme is found");
    for m in &floored {
        assert_eq!(m.planned_measure, Some(Measure::SolarPower));
        assert!(cat.facts(m.grant).measures.contains(&Measure::SolarPower));
        assert!(
            m.components.semantic >= options.measure_semantic - 1e-6,
            "{m:?}"
        );
        assert!(
            m.match_reason.contains("eine Photovoltaikanlage"),
            "{}",
            m.match_reason
        );
        assert!(m.relevance_score <= matching::NOT_EXCELLENT_CAP, "{m:?}");
    }
    // A programme for another measure only is not lifted.
    for m in planning
        .iter()
        .filter(|m| !cat.facts(m.grant).measures.contains(&Measure::SolarPower))
    {
        assert_eq!(m.planned_measure, None, "{m:?}");
    }
    // The same company without the plan gets no such floor; the English one with it does.
    let (_, plain) = run(base, "de");
    assert!(plain.iter().all(|m| m.planned_measure.is_none()));
    let (_, english) = run(
        "Huber Joinery GmbH, a carpentry business with 12 employees in Bavaria, wants to put solar panels on its workshop roof.",
        "en",
    );
    let named: Vec<&Match> = english
        .iter()
        .filter(|m| m.planned_measure.is_some())
        .collect();
    assert!(!named.is_empty());
    assert!(
        named.iter().all(|m| m
            .match_reason
            .contains("Funds what you plan: a photovoltaic system")),
        "{:?}",
        named.iter().map(|m| &m.match_reason).collect::<Vec<_>>()
    );
}

/// A company whose texts name its research and development gets the research calls open
/// to any topic (ZIM) with the higher floor of the semantic component
/// (`topic_open_wanted_semantic`); the same company without R&D, a founding team that
/// does R&D, and a university keep `topic_open_semantic`. Every programme has the same
/// vector, so only the floors separate them.
#[test]
fn a_company_that_does_r_and_d_gets_topic_open_research_calls_at_the_higher_floor() {
    use grantmatch_engine::facts::ProgrammeKind;
    let engine = equidistant();
    let cat = &engine.catalogue;
    let options = MatchOptions::default();
    let run = |text: &str, entity: &str| {
        rank_equidistant(
            &engine,
            json!({"description": text, "eligible_entities": [entity]}),
        )
    };
    let open_call = |m: &Match| {
        cat.facts(m.grant).topic_open
            && cat.facts(m.grant).kind.value == ProgrammeKind::ResearchCall
    };
    let (company, rd) = run(
        "Die Sensortechnik Huber GmbH entwickelt Gassensoren. In einem Forschungsprojekt mit einer Hochschule wollen wir einen neuen Sensor entwickeln.",
        "KMU",
    );
    assert!(company.does_rd);
    let calls: Vec<&Match> = rd.iter().filter(|m| open_call(m)).collect();
    assert!(!calls.is_empty(), "topic-open research calls are found");
    for m in &calls {
        assert!(
            m.components.semantic >= options.topic_open_wanted_semantic - 1e-6,
            "{m:?}"
        );
    }
    for (text, entity) in [
        (
            "Die Schreinerei Huber GmbH ist ein Handwerksbetrieb. Wir wollen eine neue CNC-Maschine anschaffen.",
            "KMU",
        ),
        (
            "Wir sind ein Gründungsteam und wollen ein Start-up gründen; in einem Forschungsprojekt entwickeln wir einen Sensor.",
            "Start-up",
        ),
        (
            "Der Lehrstuhl für Sensorik der Universität forscht an neuen Gassensoren.",
            "Hochschule",
        ),
    ] {
        let (_, matches) = run(text, entity);
        for m in matches.iter().filter(|m| open_call(m)) {
            assert!(
                m.components.semantic <= options.topic_open_semantic + 1e-6,
                "{text}: {m:?}"
            );
        }
    }
}
