//! Shared setup of the grantmatch benches (`benches/benches/*.rs`, see BENCHMARKS.md):
//! the real catalogue and its evaluation profiles, synthetic catalogues with
//! pseudo-embeddings, an imported data directory with real embeddings, the model.
//!
//! Environment (all optional):
//! - `GRANTMATCH_BENCH_SEED` — seed of the synthetic catalogues (default 42).
//! - `GRANTMATCH_BENCH_SIZES` — sizes of the ranking benches (default
//!   `8500,100000,1000000`).
//! - `GRANTMATCH_BENCH_DATA_DIR` — a data directory with the real catalogue imported
//!   with embeddings; default `target/bench-data/real`, imported (embedded once with
//!   the model, about two minutes on two cores) when missing.
//! - `GRANTMATCH_MODEL_DIR`, `GRANTMATCH_MODEL_VARIANT` — as for the CLI; the benches
//!   that need the model are skipped, with a note, when it is not there.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use grantmatch_engine::catalogue::Catalogue;
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::store::SnapshotStore;
use grantmatch_engine::{synthetic, Engine, GrantVectors, MatchInput, ResolvedProfile};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ is inside the repository")
        .to_path_buf()
}

/// The shipped real catalogue.
pub fn real_catalogue_dir() -> PathBuf {
    repo_root().join("fixtures").join("catalogue")
}

/// The real catalogue's records (validated).
pub fn real_records() -> CatalogueRecords {
    CatalogueRecords::read_dir(&real_catalogue_dir()).expect("fixtures/catalogue is valid")
}

/// The day the benches match on (fixed, so that deadlines filter the same way).
pub fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, 12).expect("valid date")
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// Seed of the synthetic catalogues.
pub fn seed() -> u64 {
    env_u64("GRANTMATCH_BENCH_SEED", 42)
}

/// Catalogue sizes of the ranking benches.
pub fn ranking_sizes() -> Vec<usize> {
    std::env::var("GRANTMATCH_BENCH_SIZES")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|s| s.trim().replace('_', "").parse().ok())
                .collect()
        })
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![8_500, 100_000, 1_000_000])
}

/// A synthetic catalogue of `count` grants on the real vocabularies.
pub fn synthetic_records(count: usize) -> CatalogueRecords {
    synthetic::generate(&real_records(), count, seed()).expect("synthetic catalogue")
}

/// A synthetic catalogue with its pseudo-embeddings (no search index: the ranking
/// stage does not need one, and building it for a million grants takes minutes).
pub struct Synthetic {
    pub catalogue: Catalogue,
    pub vectors: GrantVectors,
    /// The benchmark query ([`synthetic::bench_query`]).
    pub query: Vec<f32>,
}

impl Synthetic {
    pub fn new(count: usize) -> Self {
        let records = synthetic_records(count);
        let vectors = synthetic::pseudo_vectors(&records.grants, &records.grant_areas, seed())
            .expect("pseudo vectors");
        let query = synthetic::bench_query(&records.grant_areas, seed());
        Synthetic {
            catalogue: Catalogue::new(records),
            vectors,
            query,
        }
    }
}

/// A synthetic engine (catalogue, search index, pseudo-embeddings).
pub fn synthetic_engine(count: usize) -> Engine {
    let records = synthetic_records(count);
    let vectors = synthetic::pseudo_vectors(&records.grants, &records.grant_areas, seed())
        .expect("pseudo vectors");
    Engine::from_records(records)
        .and_then(|e| e.with_vectors(vectors))
        .expect("synthetic engine")
}

/// The real catalogue in memory (no vectors).
pub fn real_engine() -> Engine {
    Engine::from_records(real_records()).expect("real engine")
}

/// The model configuration, or `None` (with a note on stderr) when the assets are
/// missing.
pub fn model_config() -> Option<ModelConfig> {
    let cfg = ModelConfig::from_vars(std::env::var_os);
    match cfg.check() {
        Ok(()) => Some(cfg),
        Err(e) => {
            eprintln!("note: skipping the benches that need the model: {e}");
            None
        }
    }
}

/// The loaded model, or `None` when the assets are missing.
pub fn embedder() -> Option<Embedder> {
    let cfg = model_config()?;
    Some(Embedder::load(&cfg).expect("the model loads"))
}

/// A data directory with the real catalogue imported with embeddings of `embedder`'s
/// model: `GRANTMATCH_BENCH_DATA_DIR`, or `target/bench-data/real`, imported now when
/// it is missing or was embedded with another model (reusing unchanged vectors).
pub fn real_data_dir(embedder: &Embedder) -> PathBuf {
    if let Some(d) = std::env::var_os("GRANTMATCH_BENCH_DATA_DIR") {
        return PathBuf::from(d);
    }
    let dir = repo_root().join("target").join("bench-data").join("real");
    let store = SnapshotStore::new(&dir);
    let previous = store
        .current()
        .ok()
        .flatten()
        .and_then(|s| GrantVectors::load(&s).ok().flatten());
    if previous
        .as_ref()
        .is_some_and(|v| v.model_id == embedder.model_id())
    {
        return dir;
    }
    eprintln!(
        "importing fixtures/catalogue with embeddings into {} (once; about two minutes)",
        dir.display()
    );
    store
        .import(&real_catalogue_dir(), |cat, snap| {
            let (v, _) = GrantVectors::build(cat, embedder, previous.as_ref(), &|_, _| {})?;
            v.save(snap)
        })
        .expect("import of the real catalogue");
    dir
}

/// The evaluation profiles (`fixtures/eval/profiles.json`): realistic requests of
/// 75–120 words.
pub fn eval_profiles() -> Vec<MatchInput> {
    let path = repo_root().join("fixtures/eval/profiles.json");
    let text = std::fs::read_to_string(&path).expect("fixtures/eval/profiles.json");
    let raw: Vec<serde_json::Value> = serde_json::from_str(&text).expect("profiles JSON");
    raw.into_iter()
        .map(|p| MatchInput::from_value(p["request"].clone()).expect("valid profile"))
        .collect()
}

/// A realistic long profile (p01: a sports club, 97 words, with filters and keywords).
pub fn long_profile() -> MatchInput {
    eval_profiles().remove(0)
}

/// A one-line profile without filters.
pub fn short_profile() -> MatchInput {
    MatchInput::from_value(serde_json::json!({
        "organization_id": "bench-short",
        "organization_profile": {
            "description": "Sportverein sucht Förderung für Jugendarbeit"
        }
    }))
    .expect("valid profile")
}

/// `input` with a sentence appended to its description and a keyword added that make
/// its texts new (the query cache must not answer for the profile, its topic words or
/// the new need): "Anfrage Nr. `i`."
pub fn unseen(input: &MatchInput, i: u64) -> MatchInput {
    let mut out = input.clone();
    if let Some(p) = out.organization_profile.as_mut() {
        let d = p.description.get_or_insert_with(String::new);
        d.push_str(&format!(" Anfrage Nr. {i}."));
        p.keywords.push(format!("Anfrage {i}"));
    }
    out
}

/// `input` as a partner sends it with its texts only — no keywords, no project title —
/// so that it is matched need by need, its needs being the clauses of its sentences; made
/// new in every sentence (" (Anfrage `i`)" before each full stop), so that no need's
/// vector is cached either.
pub fn unseen_texts_only(input: &MatchInput, i: u64) -> MatchInput {
    let renew = |text: &mut String| {
        let mark = format!(" (Anfrage {i})");
        *text = text.replace(". ", &format!("{mark}. "));
        if text.ends_with('.') {
            text.pop();
            text.push_str(&mark);
            text.push('.');
        }
    };
    let mut out = input.clone();
    if let Some(p) = out.organization_profile.as_mut() {
        p.keywords.clear();
        if let Some(d) = p.description.as_mut() {
            renew(d);
        }
    }
    if let Some(project) = out.project.as_mut() {
        project.title = None;
        if let Some(d) = project.description.as_mut() {
            renew(d);
        }
    }
    out
}

/// `input` made new ([`unseen`]) more times than the engine caches lexical queries
/// ([`grantmatch_engine::LEXICAL_CACHE_MAX`]), resolved: ranking them in turn measures
/// the BM25 query of every request, as for a new profile.
pub fn uncached_variants(input: &MatchInput, cat: &Catalogue) -> Vec<ResolvedProfile> {
    (0..=grantmatch_engine::LEXICAL_CACHE_MAX as u64)
        .map(|i| {
            unseen(input, i)
                .resolve(cat)
                .expect("bench profile resolves")
        })
        .collect()
}

/// The profile of the filtered ranking benches: a non-profit association in Bayern.
pub fn filtered_profile(cat: &Catalogue) -> ResolvedProfile {
    MatchInput::from_value(serde_json::json!({
        "organization_id": "bench-filtered",
        "organization_profile": {
            "description": "Gemeinnütziger Verein in Bayern",
            "regions": ["Bayern"],
            "eligible_entities": ["e.V."],
            "is_non_profit": true
        }
    }))
    .expect("valid profile")
    .resolve(cat)
    .expect("the vocabularies know Bayern and e.V.")
}

/// A profile without filters (the ranking stage then scores every grant, like the
/// NumPy brute force it is compared with).
pub fn unfiltered_profile(cat: &Catalogue) -> ResolvedProfile {
    short_profile().resolve(cat).expect("valid profile")
}

/// Peak and current resident memory of this process in bytes (`VmHWM`, `VmRSS`).
pub fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Megabytes, for notes.
pub fn mb(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}
