//! # grantmatch-server
//!
//! The HTTP API of grantmatch (axum). [`app`] builds the router over an [`AppState`]
//! (the loaded engine plus the SQLite database of partners and tokens); [`serve`] runs
//! it on a socket with graceful shutdown. The server alone maps errors to HTTP
//! ([`error::ApiError`]): every error has the spec's `{"error": {"code", "message"}}`,
//! its code is one [`error::ErrorCode`] (which fixes the status and is the OpenAPI
//! schema), and JSON bodies come through [`extract::ApiJson`], whose rejections are
//! such errors (413, 415, 400).
//!
//! Layout: handlers in `routes` (each documented with `#[utoipa::path]`), the typed
//! responses they return in [`views`] (the OpenAPI document, [`openapi`], is generated
//! from them), all persistence in [`store`] (SQLite or PostgreSQL: partners and
//! tokens, matching requests, the usage ledger, quotas and outbox, qualification,
//! dashboard accounts), rate limits and quota arithmetic in [`limits`], usage
//! figures and quota warnings in [`usage`], partner qualification in
//! [`qualification`], the partner dashboard in [`dashboard`].
//!
//! Outside `/api/v1` and without a token: `/health`, `/health/ready` and `/metrics`
//! ([`metrics`], or on its own address with [`serve`]'s `metrics_addr`).

pub mod auth;
pub mod catalogue;
pub mod clock;
pub mod dashboard;
pub mod error;
pub mod extract;
pub mod limits;
pub mod listen;
pub mod mailer;
pub mod matcher;
pub mod metrics;
mod middleware;
pub mod openapi;
pub mod params;
pub mod qualification;
mod routes;
pub mod store;
pub mod usage;
pub mod views;

pub use limits::{quota, ratelimit};
pub use store::{db, ledger, matching as matching_store};

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use grantmatch_engine::Engine;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderName, HeaderValue, Method};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::trace::TraceLayer;

use crate::auth::PartnerCache;
use crate::clock::Clock;
use crate::db::Db;
use crate::error::{ApiError, ErrorBody, ServerError};
use crate::mailer::SmtpConfig;
use crate::matcher::Matcher;
use crate::ratelimit::{Limiters, RateLimits};
use crate::store::Store;
use crate::usage::QuotaPolicy;
use crate::views::{
    DatabaseState, HealthCatalogue, HealthResponse, HealthStatus, Liveness, ModelState,
    ReadyResponse, ReadyStatus,
};
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::MatchOptions;

/// HTTP hardening settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// A request (handler included) that takes longer is answered 503 `timeout`.
    pub request_timeout: Duration,
    /// Larger request bodies are refused with 413 `payload_too_large`.
    pub max_body_bytes: usize,
    /// Origins allowed by CORS; empty = CORS off (no CORS headers at all).
    pub cors_origins: Vec<String>,
    /// A request head (request line and headers) must arrive within this time from the
    /// moment the server waits for it (connection opened, or previous response sent),
    /// else the connection is closed without a response.
    pub header_read_timeout: Duration,
    /// On shutdown, connections still open after this time are dropped.
    pub drain_timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(30),
            max_body_bytes: 64 * 1024,
            cors_origins: Vec::new(),
            header_read_timeout: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(40),
        }
    }
}

/// Shared state of all handlers.
pub struct AppState {
    pub http: HttpConfig,
    /// The catalogue snapshot served now; replaced when a new import is picked up
    /// ([`catalogue`]). Read it with [`AppState::engine`] once per request (a request
    /// with a [`auth::Caller`] uses the caller's engine, the one its scope was resolved
    /// against).
    engine: arc_swap::ArcSwap<Engine>,
    /// Where new snapshots are picked up from, and how often it is checked.
    pub(crate) catalogue_watch: Option<catalogue::Watch>,
    /// All persistence, behind its async API ([`store::Store`]).
    pub store: Store,
    pub matcher: Matcher,
    pub clock: Arc<Clock>,
    pub limiters: Limiters,
    pub quota_policy: QuotaPolicy,
    /// True when an SMTP sender runs; otherwise warning e-mails stay in the outbox.
    pub mailer_configured: bool,
    pub(crate) mail_wakeup: tokio::sync::Notify,
    pub(crate) partners: Arc<PartnerCache>,
    /// The partners' annotations of the grant views, valid per generation.
    pub(crate) annotations: qualification::AnnotationCache,
    pub metrics: metrics::Metrics,
    /// `/metrics` is served on its own address (`--metrics-addr`), not with the API.
    pub metrics_separate: bool,
}

impl AppState {
    /// The state over `engine` and a store (a [`Store`], or an `Arc<Db>` / `Db` made one).
    pub fn new(engine: Arc<Engine>, store: impl Into<Store>) -> Self {
        AppState {
            http: HttpConfig::default(),
            engine: arc_swap::ArcSwap::new(engine),
            catalogue_watch: None,
            store: store.into(),
            matcher: Matcher::new(MatchOptions::default(), matcher::DEFAULT_QUEUE_CAPACITY),
            clock: Arc::new(Clock::default()),
            limiters: Limiters::new(RateLimits::default()),
            quota_policy: QuotaPolicy::default(),
            mailer_configured: false,
            mail_wakeup: tokio::sync::Notify::new(),
            partners: Arc::new(PartnerCache::default()),
            annotations: qualification::AnnotationCache::default(),
            metrics: metrics::Metrics::default(),
            metrics_separate: false,
        }
    }

    /// The catalogue snapshot served now (an in-flight request keeps the one it took).
    pub fn engine(&self) -> Arc<Engine> {
        self.engine.load_full()
    }

    /// Serves `engine` from now on; requests that took the old one finish on it. The
    /// partner scopes resolved against the old one are dropped.
    pub fn replace_engine(&self, engine: Arc<Engine>) -> Arc<Engine> {
        let old = self.engine.swap(engine);
        self.partners.clear();
        old
    }

    /// Picks up new catalogue snapshots of `data_dir` while serving: on SIGHUP, and every
    /// `poll` when given ([`catalogue`]).
    pub fn with_catalogue_watch(mut self, data_dir: &Path, poll: Option<Duration>) -> Self {
        let follow_database = matches!(self.store.location(), Some(db::Location::Postgres(_)));
        self.catalogue_watch = Some(catalogue::Watch {
            data_dir: data_dir.to_path_buf(),
            poll,
            follow_database,
        });
        self
    }

    /// Serves `/metrics` only on the address given to [`serve`], not with the API.
    pub fn with_separate_metrics(mut self) -> Self {
        self.metrics_separate = true;
        self
    }

    /// Replaces the HTTP hardening settings.
    pub fn with_http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }

    /// Replaces the rate limits.
    pub fn with_rate_limits(mut self, limits: RateLimits) -> Self {
        self.limiters = Limiters::new(limits);
        self
    }

    /// Replaces the quota policy.
    pub fn with_quota_policy(mut self, policy: QuotaPolicy) -> Self {
        self.quota_policy = policy;
        self
    }

    /// Replaces the matching service (options, queue capacity).
    pub fn with_matcher(mut self, matcher: Matcher) -> Self {
        self.matcher = matcher;
        self
    }

    /// Replaces the clock (tests).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Opens the imported catalogue and the database of a data directory.
    pub fn open(data_dir: &Path) -> Result<Self, ServerError> {
        Self::open_with(data_dir, &db::Location::parse(None, data_dir)?)
    }

    /// Opens the imported catalogue of a data directory and the database at
    /// `location` (`--database-url`).
    pub fn open_with(data_dir: &Path, location: &db::Location) -> Result<Self, ServerError> {
        let engine = Engine::open(data_dir)?;
        let db = Db::connect(location)?;
        Ok(Self::new(Arc::new(engine), Arc::new(db))
            .with_catalogue_watch(data_dir, Some(catalogue::DEFAULT_POLL)))
    }
}

/// Health check
///
/// Liveness and state: 200 with `status` `ok` whenever the process answers. `state` is
/// `ok` when matching can answer and the database is reachable, `starting` while the
/// embedding model loads, `degraded` when the model failed, the catalogue has no
/// embeddings or the database is unreachable.
#[utoipa::path(
    get,
    path = "/health",
    operation_id = "health",
    tag = "Service",
    responses((status = 200, description = "The service answers; its state.", body = HealthResponse,
        example = json!({"status": "ok", "state": "ok", "model": "loaded", "database": "ok",
            "catalogue": {"snapshot": "snap-20261124T162259.636778-13668",
                "fingerprint": "5f1c0a4e9b7d2c3e8a6f4b1d0c9e7a5b3f2d1e0c8b7a6f5e4d3c2b1a0f9e8d7c",
                "grants": 1434, "embeddings": true}}))),
    security(())
)]
async fn health(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    let database_ok = state.store.ping().await;
    let model = state.matcher.model_state();
    let engine = state.engine();
    let embeddings = engine.vectors().is_some();
    let service_state = match (model, embeddings && database_ok) {
        (ModelState::Loaded, true) => HealthStatus::Ok,
        (ModelState::Loading, true) => HealthStatus::Starting,
        _ => HealthStatus::Degraded,
    };
    Json(HealthResponse {
        status: Liveness::Ok,
        state: service_state,
        model,
        database: if database_ok {
            DatabaseState::Ok
        } else {
            DatabaseState::Unreachable
        },
        catalogue: HealthCatalogue {
            snapshot: catalogue::snapshot_name(&engine),
            fingerprint: engine.snapshot_fingerprint().map(str::to_string),
            grants: engine.catalogue.grants.len() as u64,
            embeddings,
        },
    })
}

/// Readiness
///
/// 200 once matching can answer (the model is loaded and the catalogue has embeddings);
/// 503 with `Retry-After` before, e.g. while the model loads after a start.
#[utoipa::path(
    get,
    path = "/health/ready",
    operation_id = "ready",
    tag = "Service",
    responses(
        (status = 200, description = "Matching can answer.", body = ReadyResponse,
            example = json!({"status": "ready"})),
        (status = 503, description = "Matching cannot answer yet (`service_unavailable`); see `Retry-After`.", body = ErrorBody),
    ),
    security(())
)]
async fn ready(State(state): State<Arc<AppState>>) -> Result<Json<ReadyResponse>, ApiError> {
    state.matcher.embedder()?;
    if state.engine().vectors().is_none() {
        return Err(ApiError::service_unavailable(
            "matching is unavailable: the catalogue has no embeddings (import it with the model available)",
        ));
    }
    Ok(Json(ReadyResponse {
        status: ReadyStatus::Ready,
    }))
}

/// Prometheus metrics
///
/// The OpenMetrics text format: `grantmatch_http_requests_total` and
/// `grantmatch_http_request_duration_seconds` by `endpoint` label (method and route
/// template, never an id) and status, `grantmatch_rate_limit_refusals_total`,
/// `grantmatch_matching_in_progress` (the matching queue's depth),
/// `grantmatch_model_state`, `grantmatch_ledger_backlog_rows` and
/// `grantmatch_ledger_flush_lag_seconds`. Served here unless the server runs with
/// `--metrics-addr`, which moves it to that address (404 here).
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "Service",
    responses(
        (status = 200, description = "The metrics.", content_type = "application/openmetrics-text", body = String),
        (status = 404, description = "Served on the `--metrics-addr` address instead (`not_found`).", body = ErrorBody),
    ),
    security(())
)]
async fn metrics_text(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        state.metrics.render(&state),
    )
}

/// The router of `--metrics-addr`: `/metrics` only.
pub fn metrics_app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .fallback(not_found)
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> axum::response::Response {
    tracing::error!("a handler panicked");
    ApiError::internal().into_response()
}

/// The API router.
pub fn app(state: Arc<AppState>) -> Router {
    use routes::{grants, matching, providers, reference, usage};
    let api = Router::new()
        .route("/grants", get(grants::list))
        .route("/grants/{id}", get(grants::detail))
        .route("/grant_providers", get(providers::list))
        .route("/grant_providers/{id}", get(providers::detail))
        .route("/regions", get(reference::regions))
        .route("/regions/{id}", get(reference::region))
        .route("/grant_areas", get(reference::grant_areas))
        .route("/grant_areas/{id}", get(reference::grant_area))
        .route("/eligible_entities", get(reference::eligible_entities))
        .route("/eligible_entities/{id}", get(reference::eligible_entity))
        .route("/target_groups", get(reference::target_groups))
        .route("/target_groups/{id}", get(reference::target_group))
        .route("/matching", post(matching::create))
        .route("/matching/{id}", get(matching::status))
        .route("/matching/{id}/results", get(matching::results))
        .route("/usage/stats", get(usage::get_stats))
        .route("/usage/quota", get(usage::get_quota))
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .fallback(not_found)
        // Inside the ledger layer, so that a panic is recorded as a 500.
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::track,
        ))
        .layer(DefaultBodyLimit::max(state.http.max_body_bytes));
    let mut router = Router::new()
        .route("/health", get(health))
        .route("/health/ready", get(ready));
    if !state.metrics_separate {
        router = router.route("/metrics", get(metrics_text));
    }
    let router = router
        // OpenAPI document and Swagger UI: public, outside the authenticated /api/v1 layer.
        .merge(openapi::router())
        .nest("/api/v1", api)
        .nest("/dashboard", dashboard::router())
        .fallback(not_found)
        .layer(axum::middleware::from_fn(middleware::harden))
        .with_state(state.clone())
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(TraceLayer::new_for_http());
    match cors(&state.http.cors_origins) {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

/// CORS for the configured origins; `None` (off) when there are none.
fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let origins: Vec<HeaderValue> = origins.iter().filter_map(|o| o.parse().ok()).collect();
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_static("prefer"),
            ])
            .expose_headers([
                HeaderName::from_static("x-ratelimit-limit"),
                HeaderName::from_static("x-ratelimit-remaining"),
                HeaderName::from_static("x-ratelimit-reset"),
                header::RETRY_AFTER,
            ]),
    )
}

/// Loads the embedding model in the background (the API answers at once; matching
/// answers 503 until the model is ready), then completes interrupted requests.
pub fn load_model_in_background(state: Arc<AppState>, model: ModelConfig) {
    tokio::spawn(async move {
        let loaded = tokio::task::spawn_blocking(move || Embedder::load(&model)).await;
        match loaded {
            Ok(Ok(e)) => {
                tracing::info!(model = e.model_id(), "embedding model loaded");
                state.matcher.set_embedder(Arc::new(e));
                matcher::resume_pending(state).await;
            }
            Ok(Err(e)) => {
                let message = error::with_setup_hint(&e);
                tracing::error!(error = %message, "matching disabled");
                state.matcher.set_load_error(message);
            }
            Err(e) => {
                tracing::error!(error = %e, "model loading panicked; matching disabled");
                state.matcher.set_load_error(e.to_string());
            }
        }
    });
}

/// Runs the API on `addr` until SIGINT/SIGTERM, then drains in-flight requests and
/// flushes the usage ledger. With `smtp`, quota warnings are e-mailed from the outbox.
///
/// With `metrics_addr`, `/metrics` is served there (and the state must have been built
/// [`AppState::with_separate_metrics`] so that the API does not serve it too).
pub async fn serve(
    state: Arc<AppState>,
    addr: SocketAddr,
    smtp: Option<SmtpConfig>,
    metrics_addr: Option<SocketAddr>,
) -> Result<(), ServerError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| ServerError::Io(format!("cannot listen on {addr}: {e}")))?;
    if let Some(maddr) = metrics_addr {
        let ml = tokio::net::TcpListener::bind(maddr)
            .await
            .map_err(|e| ServerError::Io(format!("cannot listen on {maddr}: {e}")))?;
        tracing::info!(%maddr, "metrics listening");
        let app = metrics_app(state.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(ml, app).await {
                tracing::error!(error = %e, "the metrics listener stopped");
            }
        });
    }
    let local = listener
        .local_addr()
        .map_err(|e| ServerError::Io(e.to_string()))?;
    let database = state
        .store
        .location()
        .map_or_else(|| "in memory".to_string(), db::Location::describe);
    let engine = state.engine();
    tracing::info!(%local, grants = engine.catalogue.grants.len(),
        snapshot = catalogue::snapshot_name(&engine).unwrap_or_default(), %database, "grantmatch listening");
    drop(engine);
    catalogue::spawn_watch(state.clone());
    state.store.ledger().spawn_flusher();
    qualification::spawn_assessor(state.clone());
    match smtp {
        Some(cfg) => mailer::spawn(state.clone(), cfg),
        None => tracing::info!("SMTP is not configured: quota warning e-mails stay in the outbox"),
    }
    let limits = listen::ConnLimits {
        header_read_timeout: state.http.header_read_timeout,
        drain_timeout: state.http.drain_timeout,
    };
    listen::serve_connections(listener, app(state.clone()), limits, shutdown_signal()).await;
    let flushed = state.store.flush_ledger().await;
    match &flushed {
        Ok(n) => tracing::info!(rows = n, "usage ledger flushed"),
        Err(e) => tracing::error!(error = %e, "cannot flush the usage ledger"),
    }
    flushed?;
    tracing::info!("grantmatch stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown requested; draining in-flight requests");
}
