//! The matching service of the server: the embedding model (loaded in the background
//! at start), a bounded work queue, and the worker that completes asynchronous and
//! interrupted requests.

use std::sync::{Arc, Mutex, OnceLock};

use grantmatch_engine::embed::Embedder;
use grantmatch_engine::{MatchInput, MatchOptions};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use uuid::Uuid;

use crate::auth::PartnerCtx;
use crate::error::{ApiError, ServerError};
use crate::views::{MatchResult, ModelState};
use crate::AppState;

/// Why matching cannot take a request now (the API answers 503 with this message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("matching is starting: the embedding model is being loaded, retry in a few seconds")]
    ModelLoading,
    #[error(
        "matching is unavailable: the embedding model could not be loaded (see the server log)"
    )]
    ModelFailed,
    #[error("matching is busy: too many requests in progress, retry shortly")]
    Busy,
}

/// Matching requests computed or waiting at once; more are refused with 503.
pub const DEFAULT_QUEUE_CAPACITY: usize = 64;

pub struct Matcher {
    embedder: OnceLock<Arc<Embedder>>,
    load_error: Mutex<Option<String>>,
    pub options: MatchOptions,
    queue: Arc<Semaphore>,
    capacity: usize,
}

impl Matcher {
    pub fn new(options: MatchOptions, queue_capacity: usize) -> Self {
        Matcher {
            embedder: OnceLock::new(),
            load_error: Mutex::new(None),
            options,
            queue: Arc::new(Semaphore::new(queue_capacity.max(1))),
            capacity: queue_capacity.max(1),
        }
    }

    pub fn set_embedder(&self, e: Arc<Embedder>) {
        let _ = self.embedder.set(e);
    }

    pub fn set_load_error(&self, e: String) {
        *self.load_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }

    /// `loaded`, `loading` or `failed`: the state of the embedding model.
    pub fn model_state(&self) -> ModelState {
        if self.embedder.get().is_some() {
            ModelState::Loaded
        } else if self
            .load_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
        {
            ModelState::Failed
        } else {
            ModelState::Loading
        }
    }

    /// The loaded model, or why matching is unavailable.
    pub fn embedder(&self) -> Result<Arc<Embedder>, Unavailable> {
        if let Some(e) = self.embedder.get() {
            return Ok(e.clone());
        }
        let failed = self
            .load_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        Err(if failed {
            Unavailable::ModelFailed
        } else {
            Unavailable::ModelLoading
        })
    }

    /// Matching requests holding a place in the work queue now.
    pub fn in_progress(&self) -> usize {
        self.capacity - self.queue.available_permits()
    }

    /// A place in the work queue, or [`Unavailable::Busy`] when it is full.
    pub fn slot(&self) -> Result<OwnedSemaphorePermit, Unavailable> {
        self.queue
            .clone()
            .try_acquire_owned()
            .map_err(|_| Unavailable::Busy)
    }
}

/// Runs a matching on the blocking pool, on the partner context's catalogue snapshot.
pub async fn compute(
    state: &Arc<AppState>,
    embedder: Arc<Embedder>,
    ctx: Arc<PartnerCtx>,
    input: MatchInput,
) -> Result<Vec<MatchResult>, ServerError> {
    let st = state.clone();
    tokio::task::spawn_blocking(move || compute_blocking(&st, &embedder, &ctx, &input))
        .await
        .map_err(|e| ServerError::Task(format!("matching: {e}")))?
}

/// Matches `input` on the calling thread (a blocking-pool thread: the model and the
/// ranking take milliseconds), in the partner's scope on the snapshot it was resolved
/// against.
pub fn compute_blocking(
    state: &AppState,
    embedder: &Embedder,
    ctx: &PartnerCtx,
    input: &MatchInput,
) -> Result<Vec<MatchResult>, ServerError> {
    let (engine, options) = (&ctx.engine, &state.matcher.options);
    let (_, matches) =
        engine.match_profile(embedder, &ctx.scope, input, options, state.clock.today())?;
    let cat = &engine.catalogue;
    Ok(matches.iter().map(|m| MatchResult::new(cat, m)).collect())
}

/// Completes a stored pending request (asynchronous form, or after a restart).
pub async fn complete_pending(
    state: Arc<AppState>,
    id: Uuid,
    permit: Option<OwnedSemaphorePermit>,
) {
    let _permit = permit;
    let outcome = async {
        let (record, partner) = state
            .store
            .matching_with_partner(id, state.engine(), state.partners.clone())
            .await?
            .ok_or_else(|| ServerError::Task(format!("matching request {id} vanished")))?;
        let partner = partner.ok_or_else(|| {
            ServerError::Task(format!("partner of matching request {id} vanished"))
        })?;
        let input = MatchInput::from_value(record.request.clone())?;
        let embedder = state.matcher.embedder()?;
        compute(&state, embedder, partner, input).await
    }
    .await;
    // What the partner reads: the API's message (internal details only in the log).
    let outcome = outcome.map_err(|e| ApiError::from(e).message);
    if let Err(e) = state.store.finish_matching(id, outcome).await {
        tracing::error!(%id, error = %e, "cannot store matching outcome");
    }
}

/// Completes every request left pending by an earlier run.
pub async fn resume_pending(state: Arc<AppState>) {
    let pending = match state.store.pending_matchings().await {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(error = %e, "cannot read pending matching requests");
            return;
        }
    };
    if !pending.is_empty() {
        tracing::info!(
            count = pending.len(),
            "completing matching requests interrupted by a restart"
        );
    }
    for r in pending {
        complete_pending(state.clone(), r.id, None).await;
    }
}
