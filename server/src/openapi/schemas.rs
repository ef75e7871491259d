//! The schemas of every response and request body of the API.
//!
//! The grant responses (`GET /grants`, `GET /grants/{id}`) are the types the handlers
//! serialise, re-exported here from `crate::views` and the engine's views. The other
//! structs below still only describe JSON that the handlers build with
//! `serde_json::json!` (never serialised; `Deserialize` is derived so that `#[serde]`
//! attributes shape the schema). `tests/api/openapi.rs` validates the real responses
//! of every endpoint against the schemas, so a drift between a handler and its
//! documentation fails the tests.
//!
//! Conventions: `#[serde(deny_unknown_fields)]` makes a response object closed
//! (`additionalProperties: false`), so an undocumented field is a test failure too.
//! A field that is always present but may be null is `Option<T>` with
//! `#[schema(required = true)]`; a field that may be absent is a plain `Option<T>`.

#![allow(dead_code)]

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;
use utoipa::ToSchema;

pub use grantmatch_engine::facts::{
    ApplicantType as ApplicantTypeValue, ProgrammeKind as ProgrammeKindValue, Source as FactSource,
};
pub use grantmatch_engine::matching::{
    Check as CheckOutcome, Checks as MatchChecks, MatchCategory,
};
pub use grantmatch_engine::model::{
    Address, ContactPoint, GeoLocation, GrantType, ProviderType, RegionType, SocialMedia,
};
pub use grantmatch_engine::views::*;

pub use crate::views::*;

// ---------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------

pub use crate::error::ErrorCode;

/// The `error` object of every error response.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    /// Human-readable explanation; names the offending parameter or field. Never echoes a token.
    #[schema(example = "page: `0` is not a positive integer")]
    pub message: String,
    /// Only on 429: seconds to wait before retrying (also sent as the `Retry-After` header).
    #[schema(minimum = 0, nullable = false)]
    pub retry_after: Option<u64>,
}

/// The body of every error response (4xx and 5xx).
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

// ---------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------

/// The organisation to match. Unknown fields are ignored. Texts up to 20,000 characters, lists up to 100 values.
#[derive(ToSchema, Deserialize)]
pub struct OrganizationProfile {
    /// Detailed description of the organisation (required, not blank); longer and more specific descriptions give better matches.
    #[schema(max_length = 20000)]
    pub description: String,
    #[schema(max_length = 20000, nullable = false)]
    pub name: Option<String>,
    /// Filter: German or English names, slugs, codes or UUIDs at any level; an unknown value is 400.
    #[schema(max_items = 100, nullable = false)]
    pub regions: Option<Vec<String>>,
    /// Filter: names, slugs, codes or UUIDs of parent areas or sub-areas; an unknown value is 400.
    #[schema(max_items = 100, nullable = false)]
    pub grant_areas: Option<Vec<String>>,
    /// Filter: names, slugs, codes or UUIDs of legal forms; an unknown value is 400.
    #[schema(max_items = 100, nullable = false)]
    pub eligible_entities: Option<Vec<String>>,
    pub is_non_profit: Option<bool>,
    #[schema(max_length = 20000, nullable = false)]
    pub mission: Option<String>,
    /// Target group names; names outside the vocabulary are used as keywords.
    #[schema(max_items = 100, nullable = false)]
    pub target_groups: Option<Vec<String>>,
    #[schema(max_items = 100, nullable = false)]
    pub keywords: Option<Vec<String>>,
    pub annual_budget: Option<String>,
    pub number_of_employees: Option<String>,
    /// Language of the match reasons: `de` (default) or `en`.
    #[schema(
        nullable = false,
        pattern = "^\\s*([dD][eE]|[eE][nN])(-[a-zA-Z]{2})?\\s*$"
    )]
    pub locale: Option<String>,
}

/// The project to fund (all optional).
#[derive(ToSchema, Deserialize)]
pub struct Project {
    #[schema(max_length = 20000)]
    pub title: Option<String>,
    #[schema(max_length = 20000)]
    pub description: Option<String>,
    /// Free-text amount, e.g. "50.000 EUR", "1,5 Mio. €", "200k".
    pub budget: Option<String>,
    pub duration: Option<String>,
}

/// The body of `POST /matching`. Unknown fields are ignored (forward compatibility).
#[derive(ToSchema, Deserialize)]
pub struct MatchingRequest {
    /// Id of the organisation in the partner's own system (not blank, at most 200 characters); use the same id consistently.
    #[schema(min_length = 1, max_length = 200)]
    pub organization_id: String,
    pub organization_profile: OrganizationProfile,
    pub project: Option<Project>,
}

// ---------------------------------------------------------------------------------
// Usage
// ---------------------------------------------------------------------------------

/// Reporting period (UTC; weeks start on Monday).
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

/// Partner tier.
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Starter,
    Standard,
    Enterprise,
}

/// Traffic of one day.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageDay {
    pub date: NaiveDate,
    pub requests: u64,
    pub matching_requests: u64,
}

/// Request statistics of the partner (all its tokens) since the start of the period.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageStats {
    pub total_requests: u64,
    /// 2xx responses.
    pub successful_requests: u64,
    /// 4xx and 5xx responses.
    pub failed_requests: u64,
    /// Answered (2xx) matching requests.
    pub matching_requests: u64,
    /// `GET /grants` and `GET /grants/{id}`.
    pub grants_requests: u64,
    /// Distinct organisations with an answered matching request.
    pub active_organizations: u64,
    pub average_response_time_ms: u64,
    /// Endpoint label (`GET /api/v1/grants/{id}`) → request count.
    pub by_endpoint: BTreeMap<String, u64>,
    /// Only days with traffic, ascending.
    pub by_day: Vec<UsageDay>,
}

/// Name and tier of the calling partner.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartnerInfo {
    pub name: String,
    pub tier: Tier,
}

/// `GET /usage/stats`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageStatsResponse {
    pub stats: UsageStats,
    pub period: Period,
    /// First instant of the period (UTC).
    pub period_start: DateTime<Utc>,
    pub partner: PartnerInfo,
}

/// Usage of one limit.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaCounter {
    pub current: u64,
    pub limit: u64,
    pub percentage: f64,
}

/// `ok` below 90 %, `warning` from 90 % to 100 %, `exceeded` above 100 %.
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaStatus {
    Ok,
    Warning,
    Exceeded,
}

/// The fair-use quota of the current quarter. Quotas never block requests.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// `YYYY-Qn`.
    #[schema(pattern = "^[0-9]{4}-Q[1-4]$")]
    pub quarter: String,
    pub tier: Tier,
    pub active_organizations: QuotaCounter,
    pub matching_requests: QuotaCounter,
    pub status: QuotaStatus,
    /// true at 90 % or more of a limit.
    pub warning: bool,
    /// true when a limit is exceeded.
    pub exceeded: bool,
}

/// `GET /usage/quota`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaResponse {
    pub quota: Quota,
}

// ---------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------

/// State of the service (`GET /health`).
#[derive(ToSchema, Deserialize)]
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
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    Loading,
    Loaded,
    Failed,
}

/// Reachability of the database.
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatabaseState {
    Ok,
    Unreachable,
}

/// The catalogue snapshot the server serves.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthCatalogue {
    /// Name of the snapshot directory (null for a catalogue built in memory).
    #[schema(nullable)]
    pub snapshot: Option<String>,
    pub grants: u64,
    /// True when the catalogue carries grant embeddings (matching needs them).
    pub embeddings: bool,
}

/// `GET /health`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthResponse {
    /// Always `ok`: the process answers (liveness).
    pub status: String,
    /// What the service can do.
    pub state: HealthStatus,
    pub model: ModelState,
    pub database: DatabaseState,
    pub catalogue: HealthCatalogue,
}

/// Readiness (`GET /health/ready`).
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadyStatus {
    Ready,
}

/// `GET /health/ready` when matching can answer.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadyResponse {
    pub status: ReadyStatus,
}
