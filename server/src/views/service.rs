//! Service responses: liveness and state (`GET /health`), readiness.

use serde::Serialize;
use utoipa::ToSchema;

/// State of the service (`GET /health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Matching can answer and the database is reachable.
    Ok,
    /// The embedding model is loading; everything else answers.
    Starting,
    /// The model could not be loaded, the catalogue has no embeddings, or the database
    /// is unreachable.
    Degraded,
}

/// State of the embedding model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    Loading,
    Loaded,
    Failed,
}

impl ModelState {
    pub const ALL: [ModelState; 3] = [Self::Loading, Self::Loaded, Self::Failed];

    /// The name in `/health` and in the `grantmatch_model_state` metric.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loading => "loading",
            Self::Loaded => "loaded",
            Self::Failed => "failed",
        }
    }
}

/// Reachability of the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatabaseState {
    Ok,
    Unreachable,
}

/// Liveness: always `ok` while the process answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Liveness {
    Ok,
}

/// The catalogue snapshot the server serves.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthCatalogue {
    /// Name of the snapshot directory (null for a catalogue built in memory).
    #[schema(nullable)]
    pub snapshot: Option<String>,
    /// SHA-256 over the snapshot's data files (records and embeddings): replicas serve
    /// the same catalogue exactly when their fingerprints are equal (null for a
    /// catalogue built in memory).
    #[schema(nullable)]
    pub fingerprint: Option<String>,
    pub grants: u64,
    /// True when the catalogue carries grant embeddings (matching needs them).
    pub embeddings: bool,
}

/// `GET /health`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthResponse {
    /// Always `ok`: the process answers (liveness).
    pub status: Liveness,
    /// What the service can do.
    pub state: HealthStatus,
    pub model: ModelState,
    pub database: DatabaseState,
    pub catalogue: HealthCatalogue,
}

/// Readiness (`GET /health/ready`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadyStatus {
    Ready,
}

/// `GET /health/ready` when matching can answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyResponse {
    pub status: ReadyStatus,
}
