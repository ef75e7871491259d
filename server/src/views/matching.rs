//! Matching responses: the engine's match view with the id of the stored result, the
//! quota block, and the envelopes of the synchronous, asynchronous and stored forms.

use chrono::{DateTime, Utc};
use grantmatch_engine::views::MatchView;
use grantmatch_engine::{Catalogue, Match};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

pub use crate::matching_store::MatchingStatus;

/// One ranked match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchResult {
    /// Id of this match result.
    pub id: Uuid,
    #[serde(flatten)]
    pub result: MatchView,
}

impl MatchResult {
    /// Match `m` with a new result id.
    pub fn new(cat: &Catalogue, m: &Match) -> Self {
        MatchResult {
            id: Uuid::new_v4(),
            result: MatchView::new(cat, m),
        }
    }
}

/// The partner's matching quota after this request (current quarter).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchingQuota {
    pub matching_requests_used: u64,
    pub matching_requests_limit: u64,
    pub usage_percentage: f64,
}

/// `POST /matching`, synchronous form (default): 200 with the results (`status` is
/// always `completed`) and the quota.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MatchingCompletedResponse {
    #[serde(flatten)]
    pub matching: MatchingResultsResponse,
    pub quota: MatchingQuota,
}

/// `POST /matching` with `Prefer: respond-async`: 202, poll `status_url`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchingAcceptedResponse {
    pub matching_request_id: Uuid,
    /// Always `pending`.
    pub status: MatchingStatus,
    /// Path of `GET /matching/{id}`.
    pub status_url: String,
    /// Path of `GET /matching/{id}/results`.
    pub results_url: String,
    pub message: String,
}

/// `GET /matching/{id}`: the stored request; `results_count` and `results` once completed, `error` when failed.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchingStatusResponse {
    pub matching_request_id: Uuid,
    pub organization_id: String,
    pub status: MatchingStatus,
    pub created_at: DateTime<Utc>,
    #[schema(required = true)]
    pub completed_at: Option<DateTime<Utc>>,
    pub status_url: String,
    pub results_url: String,
    /// Only when completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 25)]
    pub results_count: Option<u64>,
    /// Only when completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_items = 25)]
    pub results: Option<Vec<MatchResult>>,
    /// Only when failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error: Option<String>,
}

/// `GET /matching/{id}/results`: results (empty while pending).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchingResultsResponse {
    pub matching_request_id: Uuid,
    pub organization_id: String,
    pub status: MatchingStatus,
    #[schema(minimum = 0, maximum = 25)]
    pub results_count: u64,
    /// At most 25, by score descending.
    #[schema(max_items = 25)]
    pub results: Vec<MatchResult>,
}

/// Path of the stored request and of its results.
pub fn matching_urls(id: Uuid) -> (String, String) {
    let status = format!("/api/v1/matching/{id}");
    let results = format!("{status}/results");
    (status, results)
}
