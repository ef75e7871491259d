//! Per-partner AI qualification and custom categories: the partner's configuration
//! (prompt and categories, in SQLite), the background assessor that computes and stores
//! the per-grant results, and the partner's own results for the grant views.
//!
//! ## Versions and keys
//! Every change of a partner's prompt or categories (CLI) bumps the partner's
//! configuration `version` and, in the same transaction, clears the results that the
//! change makes stale (the qualification for a prompt change, the categories for a
//! category change): the API shows `null`/`[]` until they are re-assessed, never a
//! decision for an old prompt. Each stored result carries a key: SHA-256 of the method
//! version, the model, the prompt (or the categories) and the grant's record. A pass
//! re-assesses exactly the grants in the partner's scope whose key differs: after a
//! configuration change all of them, after a catalogue import only new or changed
//! grants, after a restart none.
//!
//! ## The assessor
//! [`spawn_assessor`] polls the configuration versions every few seconds (so changes
//! made by the CLI while the server runs are noticed), waits for the embedding model,
//! and assesses partners whose version it has not completed yet, in batches run on the
//! blocking pool through [`crate::store::Store::assess`] (the API stays responsive). A batch is written in one transaction
//! that first checks the version is still the one the pass started from; a concurrent
//! change abandons the pass and the next poll starts over.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use grantmatch_engine::qualify::{self, CustomCategory, QualificationPrompt, QualificationRules};
use grantmatch_engine::{Engine, Idx, ResolvedScope, Scope};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::db::{Db, Partner};
use crate::error::ServerError;
use crate::store::qualification as store;
pub use crate::store::qualification::{
    add_category, categories, clear_prompt, config, remove_category, set_prompt, versions,
};
use crate::store::sql::Value as SqlValue;
use crate::views::{self as api, Annotations};
use crate::AppState;

/// Grants assessed per `spawn_blocking` batch.
pub const BATCH: usize = 32;
/// How often the assessor looks for changed configurations.
pub const POLL_INTERVAL: Duration = Duration::from_secs(3);

/// A partner's qualification prompt and categories.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartnerConfig {
    pub version: i64,
    pub prompt: Option<String>,
    pub prompt_updated_at: Option<String>,
    /// The partner's corrections to the prompt's reading (`--rules-file`).
    pub rules: Option<QualificationRules>,
    pub categories: Vec<CustomCategory>,
}

impl PartnerConfig {
    /// The prompt as assessed: read, with the partner's rules applied. Rules that no
    /// longer fit the catalogue (a region gone after a re-import) are reported and left
    /// out rather than stopping the assessment.
    pub fn read_prompt(&self, engine: &Engine) -> Option<QualificationPrompt> {
        let text = self.prompt.as_deref()?;
        let cat = &engine.catalogue;
        Some(
            QualificationPrompt::read(cat, text, self.rules.as_ref()).unwrap_or_else(|e| {
                tracing::warn!("qualification rules ignored: {e}");
                QualificationPrompt::parse(cat, text)
            }),
        )
    }

    /// What the qualification results depend on: the prompt and the rules.
    fn qualification_bytes(&self) -> Option<Vec<u8>> {
        let mut b = self.prompt.as_ref()?.as_bytes().to_vec();
        if let Some(r) = &self.rules {
            b.push(0);
            b.extend(serde_json::to_vec(r).unwrap_or_default());
        }
        Some(b)
    }
}

/// A category to add.
#[derive(Debug, Clone, Default)]
pub struct NewCategory {
    pub name: String,
    pub name_en: String,
    pub description: Option<String>,
    pub keywords: Vec<String>,
}

// ---------------------------------------------------------------------------------
// Annotations shown to the partner
// ---------------------------------------------------------------------------------

/// One partner's stored result for one grant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GrantResult {
    pub ai_qualified: Option<bool>,
    pub reasoning: Option<String>,
    pub category_ids: Vec<Uuid>,
}

/// The calling partner's results for some grants plus its categories: what the grant
/// views show in `ai_qualified`, `ai_qualification_reasoning` and `custom_categories`.
/// Empty (the default) means null/[] everywhere.
#[derive(Debug, Clone, Default)]
pub struct PartnerAnnotations {
    pub(crate) results: HashMap<Uuid, GrantResult>,
    pub(crate) categories: HashMap<Uuid, (String, String)>,
}

impl PartnerAnnotations {
    /// Loads the partner's results for `grants` (all of its results when `None`).
    pub fn load(db: &Db, partner: Uuid, grants: Option<&[Uuid]>) -> Result<Self, ServerError> {
        store::load_annotations(&mut db.reader(), partner, grants)
    }

    /// All of the partner's annotations and their generation (see
    /// [`crate::db::TokenInfo::annotations_generation`]), read in one snapshot: the
    /// result is the database's state at that generation.
    pub fn load_current(db: &Db, partner: Uuid) -> Result<(i64, Self), ServerError> {
        store::load_current_annotations(db, partner)
    }

    /// `ai_qualified` of a grant (None = not assessed).
    pub fn qualified(&self, grant: Uuid) -> Option<bool> {
        self.results.get(&grant).and_then(|r| r.ai_qualified)
    }

    /// Ids of the (still existing) categories assigned to a grant.
    pub fn category_ids(&self, grant: Uuid) -> impl Iterator<Item = Uuid> + '_ {
        self.results
            .get(&grant)
            .into_iter()
            .flat_map(|r| r.category_ids.iter().copied())
            .filter(|id| self.categories.contains_key(id))
    }

    /// True when `id` is one of the partner's categories.
    pub fn has_category(&self, id: Uuid) -> bool {
        self.categories.contains_key(&id)
    }

    /// The three API fields of a grant.
    /// The partner's annotations of `grant` (null and empty where it has none).
    pub fn of(&self, grant: Uuid) -> Annotations {
        let r = self.results.get(&grant);
        let custom_categories = self
            .category_ids(grant)
            .map(|id| {
                let (name, name_en) = &self.categories[&id];
                api::CustomCategory {
                    id,
                    name: name.clone(),
                    name_en: name_en.clone(),
                }
            })
            .collect();
        Annotations {
            ai_qualified: r.and_then(|r| r.ai_qualified),
            ai_qualification_reasoning: r.and_then(|r| r.reasoning.clone()),
            custom_categories,
        }
    }
}

/// The partners' annotations in memory, each with the generation it was loaded at.
///
/// Valid across processes: the generation is bumped by triggers in the same transaction
/// as every change of a partner's results, categories or configuration (by the server's
/// assessor or by the CLI), and authentication reads it with the token on every request.
/// An entry is used only when its generation equals the one read at authentication, so
/// a grant view shows the database's state as of the request's authentication — what
/// reading the annotations in a second step showed, without the second hop. The token
/// lookup itself is cached for up to [`crate::store::token_cache::TOKEN_TTL`]: changes
/// made through this process drop the partner's cached tokens at once, changes by other
/// processes (the CLI, another replica) show within that second.
#[derive(Default)]
pub struct AnnotationCache {
    entries: std::sync::RwLock<HashMap<Uuid, (i64, Arc<PartnerAnnotations>)>>,
    refreshing: std::sync::Mutex<std::collections::HashSet<Uuid>>,
}

impl AnnotationCache {
    /// The partner's annotations if they were loaded at `generation`.
    pub fn get(&self, partner: Uuid, generation: i64) -> Option<Arc<PartnerAnnotations>> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        entries
            .get(&partner)
            .filter(|(g, _)| *g == generation)
            .map(|(_, a)| a.clone())
    }

    /// Keeps `ann` loaded at `generation` unless a newer generation is kept already.
    pub fn put(&self, partner: Uuid, generation: i64, ann: Arc<PartnerAnnotations>) {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        match entries.get(&partner) {
            Some((g, _)) if *g > generation => {}
            _ => {
                entries.insert(partner, (generation, ann));
            }
        }
    }

    /// Loads the partner's annotations into the cache in the background, unless a load
    /// of this partner is running already.
    fn refresh(&self, state: &Arc<AppState>, partner: Uuid) {
        let fresh = self
            .refreshing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(partner);
        if !fresh {
            return;
        }
        let st = state.clone();
        tokio::spawn(async move {
            match st.store.current_annotations(partner).await {
                Ok((generation, ann)) => st.annotations.put(partner, generation, Arc::new(ann)),
                Err(e) => tracing::warn!(%partner, error = %e, "cannot load annotations"),
            }
            st.annotations
                .refreshing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&partner);
        });
    }
}

/// The partner's annotations as of `generation` (read at the request's authentication):
/// from memory when they are current, else the annotations of `grants` read from the
/// database now (one hop to the blocking pool, as before the cache) while the cache is
/// refreshed in the background.
pub async fn annotations_of(
    state: &Arc<AppState>,
    partner: Uuid,
    generation: i64,
    grants: Vec<Uuid>,
) -> Result<Arc<PartnerAnnotations>, ServerError> {
    if let Some(ann) = state.annotations.get(partner, generation) {
        return Ok(ann);
    }
    state.annotations.refresh(state, partner);
    let ann = state.store.annotations(partner, Some(grants)).await?;
    Ok(Arc::new(ann))
}

// ---------------------------------------------------------------------------------
// Planning and assessing
// ---------------------------------------------------------------------------------

/// SHA-256 of each grant's record (changes whenever the grant changes in an import).
pub fn grant_fingerprints(engine: &Engine) -> Vec<[u8; 32]> {
    engine
        .catalogue
        .grants
        .iter()
        .map(|g| Sha256::digest(serde_json::to_vec(g).unwrap_or_default()).into())
        .collect()
}

fn model_id(engine: &Engine) -> &str {
    engine.vectors().map(|v| v.model_id.as_str()).unwrap_or("")
}

fn key(kind: &str, engine: &Engine, config: &[u8], fingerprint: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update(qualify::METHOD_VERSION.to_le_bytes());
    h.update(model_id(engine).as_bytes());
    h.update([0]);
    h.update(Sha256::digest(config));
    h.update(fingerprint);
    hex::encode(&h.finalize()[..16])
}

/// What a pass has to do for one partner.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub config: PartnerConfig,
    /// Grants in the partner's scope.
    pub total: usize,
    /// Grants whose qualification is missing or stale, with their new key.
    pub qualification: Vec<(Idx, String)>,
    /// Grants whose categories are missing or stale, with their new key.
    pub categories: Vec<(Idx, String)>,
}

fn categories_config(categories: &[CustomCategory]) -> Vec<u8> {
    serde_json::to_vec(categories).unwrap_or_default()
}

/// Plans the assessment of a partner: which grants of its scope need which work.
pub fn plan(
    engine: &Engine,
    db: &Db,
    partner: Uuid,
    scope: &ResolvedScope,
    fingerprints: &[[u8; 32]],
) -> Result<Plan, ServerError> {
    let config = config(db, partner)?;
    let mut stored: HashMap<String, (Option<String>, Option<String>)> = HashMap::new();
    for (g, q, c) in store::stored_keys(db, partner)? {
        stored.insert(g, (q, c));
    }
    let cat_cfg = categories_config(&config.categories);
    let q_cfg = config.qualification_bytes();
    let mut plan = Plan {
        total: scope.visible_count(),
        ..Default::default()
    };
    for g in scope.visible_grants() {
        let gid = engine.catalogue.grant(g).id.to_string();
        let (q_old, c_old) = stored.get(&gid).cloned().unwrap_or((None, None));
        let fp = &fingerprints[g as usize];
        if let Some(q_cfg) = &q_cfg {
            let k = key("qualification", engine, q_cfg, fp);
            if q_old.as_deref() != Some(k.as_str()) {
                plan.qualification.push((g, k));
            }
        }
        if !config.categories.is_empty() {
            let k = key("categories", engine, &cat_cfg, fp);
            if c_old.as_deref() != Some(k.as_str()) {
                plan.categories.push((g, k));
            }
        }
    }
    plan.config = config;
    Ok(plan)
}

/// Progress of a partner's assessment (`grantmatch partner status`).
pub fn status(engine: &Engine, db: &Db, partner: &Partner) -> Result<Value, ServerError> {
    let scope = engine.resolve_scope(&Scope {
        region_ids: partner.region_ids.clone(),
        grant_area_ids: partner.grant_area_ids.clone(),
    });
    let plan = plan(engine, db, partner.id, &scope, &grant_fingerprints(engine))?;
    let part = |configured: bool, pending: usize| {
        if configured {
            json!({ "assessed": plan.total - pending, "total": plan.total, "pending": pending })
        } else {
            Value::Null
        }
    };
    let qualified = store::qualified_count(db, partner.id)?;
    let reading = plan.config.read_prompt(engine);
    Ok(json!({
        "partner": { "id": partner.id, "name": partner.name },
        "version": plan.config.version,
        "prompt": plan.config.prompt,
        "prompt_updated_at": plan.config.prompt_updated_at,
        "rules": plan.config.rules,
        "reading": reading.as_ref().map(|p| QualificationRules::of_reading(&engine.catalogue, p)),
        "reading_description": reading.as_ref().map(|p| qualify::describe(&engine.catalogue, p)),
        "categories": plan.config.categories.len(),
        "grants_in_scope": plan.total,
        "qualification": part(plan.config.prompt.is_some(), plan.qualification.len()),
        "qualified": if plan.config.prompt.is_some() { json!(qualified) } else { Value::Null },
        "categorization": part(!plan.config.categories.is_empty(), plan.categories.len()),
        "pending": plan.qualification.len() + plan.categories.len(),
    }))
}

/// How a pass ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything of this configuration version is assessed.
    Done { version: i64, assessed: usize },
    /// The configuration changed during the pass; start over.
    Superseded,
    /// The embedding model is not loaded (yet).
    ModelNotReady,
}

enum Work {
    Qualification(Vec<(Idx, String)>),
    Categories(Vec<(Idx, String)>),
}

/// One batch of an assessment pass, assessed and written by [`crate::store::Store::assess`].
pub struct Batch {
    engine: Arc<Engine>,
    embedder: Arc<grantmatch_engine::embed::Embedder>,
    partner: Uuid,
    version: i64,
    prompt: Option<Arc<QualificationPrompt>>,
    categories: Arc<Vec<CustomCategory>>,
    work: Work,
}

impl Batch {
    /// Assesses the batch and writes it in one transaction (a blocking-pool thread);
    /// false when the configuration changed meanwhile.
    pub(crate) fn run(&self, db: &Db) -> Result<bool, ServerError> {
        run_batch(
            &self.engine,
            db,
            &self.embedder,
            self.partner,
            self.version,
            self.prompt.as_deref(),
            &self.categories,
            &self.work,
        )
    }
}

/// Assesses one batch and writes it, unless the configuration version moved on.
#[allow(clippy::too_many_arguments)]
fn run_batch(
    engine: &Engine,
    db: &Db,
    embedder: &grantmatch_engine::embed::Embedder,
    partner: Uuid,
    version: i64,
    prompt: Option<&QualificationPrompt>,
    categories: &[CustomCategory],
    work: &Work,
) -> Result<bool, ServerError> {
    let grant_id = |g: Idx| SqlValue::from(engine.catalogue.grant(g).id.to_string());
    // Each row: the decision's columns, then its key (partner, grant, version and time are
    // added by `write_batch`).
    let (sql, rows): (&str, Vec<(Idx, Vec<SqlValue>)>) = match work {
        Work::Qualification(items) => {
            let prompt = prompt.expect("qualification work has a prompt");
            let ids: Vec<Idx> = items.iter().map(|(g, _)| *g).collect();
            let out = qualify::qualify(engine, embedder, prompt, &ids)?;
            (
                store::QUALIFICATION_UPSERT,
                out.into_iter()
                    .zip(items)
                    .map(|((g, q), (_, k))| {
                        (
                            g,
                            vec![q.qualified.into(), q.reasoning.into(), k.clone().into()],
                        )
                    })
                    .collect(),
            )
        }
        Work::Categories(items) => {
            let ids: Vec<Idx> = items.iter().map(|(g, _)| *g).collect();
            let out = qualify::categorize(engine, embedder, categories, &ids)?;
            (
                store::CATEGORIES_UPSERT,
                out.into_iter()
                    .zip(items)
                    .map(|((g, cats), (_, k))| {
                        let cats = serde_json::to_string(&cats).unwrap_or_else(|_| "[]".into());
                        (g, vec![cats.into(), k.clone().into()])
                    })
                    .collect(),
            )
        }
    };
    let at = Utc::now().to_rfc3339();
    let rows = rows.into_iter().map(|(g, decision)| {
        let mut row = vec![SqlValue::from(partner.to_string()), grant_id(g)];
        row.extend(decision);
        row.extend([SqlValue::from(version), SqlValue::from(at.clone())]);
        row
    });
    store::write_batch(db, partner, version, sql, rows)
}

/// Assesses everything pending for one partner, in batches off the async threads.
/// `fingerprints` are those of `engine`'s grants ([`grant_fingerprints`]).
pub async fn assess_partner(
    state: &Arc<AppState>,
    engine: &Arc<Engine>,
    partner: Uuid,
    fingerprints: Arc<Vec<[u8; 32]>>,
) -> Result<Outcome, ServerError> {
    let Ok(embedder) = state.matcher.embedder() else {
        return Ok(Outcome::ModelNotReady);
    };
    let ctx = state
        .store
        .partner_ctx(engine.clone(), state.partners.clone(), partner)
        .await?;
    let Some(ctx) = ctx else {
        return Ok(Outcome::Done {
            version: 0,
            assessed: 0,
        });
    };
    let plan = state
        .store
        .qualification_plan(engine.clone(), ctx, fingerprints)
        .await?;
    let version = plan.config.version;
    let prompt = plan.config.read_prompt(engine).map(Arc::new);
    let categories = Arc::new(plan.config.categories.clone());
    let mut work: Vec<Work> = Vec::new();
    for chunk in plan.qualification.chunks(BATCH) {
        work.push(Work::Qualification(chunk.to_vec()));
    }
    for chunk in plan.categories.chunks(BATCH) {
        work.push(Work::Categories(chunk.to_vec()));
    }
    let mut assessed = 0;
    for w in work {
        let n = match &w {
            Work::Qualification(v) | Work::Categories(v) => v.len(),
        };
        let written = state
            .store
            .assess(Batch {
                engine: engine.clone(),
                embedder: embedder.clone(),
                partner,
                version,
                prompt: prompt.clone(),
                categories: categories.clone(),
                work: w,
            })
            .await?;
        if !written {
            return Ok(Outcome::Superseded);
        }
        assessed += n;
    }
    if assessed > 0 {
        tracing::info!(%partner, version, assessed, "qualification and categories assessed");
    }
    Ok(Outcome::Done { version, assessed })
}

/// The assessor's memory: the last configuration version completed per partner, on the
/// catalogue snapshot of `fingerprints` (a new snapshot starts over: the plan then
/// re-assesses only the grants whose records changed).
#[derive(Default)]
pub struct Assessor {
    done: HashMap<Uuid, i64>,
    fingerprints: Option<(Arc<Engine>, Fingerprints)>,
}

/// The grant fingerprints of one snapshot ([`grant_fingerprints`]).
type Fingerprints = Arc<Vec<[u8; 32]>>;

impl Assessor {
    /// One pass: assesses every partner whose configuration changed since its last
    /// completed pass (every configured partner on the first pass). Returns how many
    /// grant assessments were written; `None` while the model is not loaded.
    pub async fn pass(&mut self, state: &Arc<AppState>) -> Result<Option<usize>, ServerError> {
        if state.matcher.embedder().is_err() {
            return Ok(None);
        }
        let engine = state.engine();
        let fps = match &self.fingerprints {
            Some((on, f)) if Arc::ptr_eq(on, &engine) => f.clone(),
            _ => {
                let on = engine.clone();
                let f = Arc::new(
                    tokio::task::spawn_blocking(move || grant_fingerprints(&on))
                        .await
                        .map_err(|e| ServerError::Io(e.to_string()))?,
                );
                self.done.clear();
                self.fingerprints = Some((engine.clone(), f.clone()));
                f
            }
        };
        let current = state.store.qualification_versions().await?;
        let mut total = 0;
        for (partner, version) in current {
            if self.done.get(&partner) == Some(&version) {
                continue;
            }
            match assess_partner(state, &engine, partner, fps.clone()).await {
                Ok(Outcome::Done { version, assessed }) => {
                    self.done.insert(partner, version);
                    total += assessed;
                }
                Ok(Outcome::Superseded) => {}
                Ok(Outcome::ModelNotReady) => return Ok(None),
                Err(e) => {
                    // Not retried until the configuration changes (e.g. a catalogue
                    // without embeddings cannot be assessed by this process).
                    tracing::warn!(%partner, error = %e, "qualification assessment failed");
                    self.done.insert(partner, version);
                }
            }
        }
        Ok(Some(total))
    }
}

/// Runs the assessor in the background: a pass every [`POLL_INTERVAL`].
pub fn spawn_assessor(state: Arc<AppState>) -> tokio::task::JoinHandle<()> {
    spawn_assessor_every(state, POLL_INTERVAL)
}

/// [`spawn_assessor`] with another poll interval (tests).
pub fn spawn_assessor_every(state: Arc<AppState>, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut assessor = Assessor::default();
        loop {
            if let Err(e) = assessor.pass(&state).await {
                tracing::warn!(error = %e, "qualification assessor");
            }
            tokio::time::sleep(every).await;
        }
    })
}
