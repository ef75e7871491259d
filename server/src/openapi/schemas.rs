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
use uuid::Uuid;

pub use grantmatch_engine::facts::{
    ApplicantType as ApplicantTypeValue, ProgrammeKind as ProgrammeKindValue, Source as FactSource,
};
pub use grantmatch_engine::model::{ContactPoint, GrantType, ProviderType, RegionType};
pub use grantmatch_engine::views::{
    GrantAreaRef, GrantDetailView, GrantFactsView, GrantProviderAddress, GrantProviderRef,
    GrantProviderSummary, GrantRegion, GrantView, LabelsFact, NamedRef,
};

pub use crate::views::{
    Annotations, CustomCategory, GrantDetail, GrantDetailResponse, GrantListItem,
    GrantListResponse, PageMeta,
};

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
// Shared pieces
// ---------------------------------------------------------------------------------

/// Paging metadata of the providers list: both shapes shown by the spec.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderPageMeta {
    #[schema(minimum = 1)]
    pub current_page: u64,
    /// Same as `current_page`.
    #[schema(minimum = 1)]
    pub page: u64,
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: u64,
    #[schema(minimum = 0)]
    pub total_pages: u64,
    #[schema(minimum = 0)]
    pub total_count: u64,
    /// Same as `total_count`.
    #[schema(minimum = 0)]
    pub total: u64,
}

// ---------------------------------------------------------------------------------
// Grants
// ---------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------
// Grant providers
// ---------------------------------------------------------------------------------

/// Postal address of a provider; only set fields are present.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    #[schema(nullable = false)]
    pub street_and_number: Option<String>,
    #[schema(nullable = false)]
    pub address_line_2: Option<String>,
    #[schema(nullable = false)]
    pub postal_code: Option<String>,
    #[schema(nullable = false)]
    pub city: Option<String>,
    #[schema(nullable = false)]
    pub state: Option<String>,
    #[schema(nullable = false)]
    pub country: Option<String>,
    #[schema(nullable = false)]
    pub complete_address: Option<String>,
}

/// Geocoded location of a provider; only set fields are present.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeoLocation {
    #[schema(nullable = false)]
    pub latitude: Option<f64>,
    #[schema(nullable = false)]
    pub longitude: Option<f64>,
    #[schema(nullable = false)]
    pub federal_state: Option<String>,
    /// ISO 3166-2:DE code.
    #[schema(nullable = false)]
    pub federal_state_code: Option<String>,
    #[schema(nullable = false)]
    pub county: Option<String>,
}

/// Social media URLs of a provider; only set fields are present.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocialMedia {
    #[schema(nullable = false)]
    pub linkedin: Option<String>,
    #[schema(nullable = false)]
    pub facebook: Option<String>,
    #[schema(nullable = false)]
    pub instagram: Option<String>,
    #[schema(nullable = false)]
    pub youtube: Option<String>,
}

/// A funding body. `address`, `geo_location` and `social_media` are present only when a value inside is set.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantProvider {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    #[serde(rename = "type")]
    pub provider_type: ProviderType,
    /// Same as `type` (the abbreviated list variant's name).
    pub grant_provider_type: ProviderType,
    /// German label of the type.
    pub type_label: String,
    #[schema(required = true)]
    pub description: Option<String>,
    #[schema(required = true)]
    pub website: Option<String>,
    #[schema(required = true)]
    pub email: Option<String>,
    #[schema(required = true)]
    pub phone: Option<String>,
    #[schema(required = true)]
    pub fax: Option<String>,
    #[schema(required = true)]
    pub city: Option<String>,
    /// Published grants of this provider visible to the caller.
    #[schema(minimum = 0)]
    pub grants_count: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[schema(nullable = false)]
    pub address: Option<Address>,
    #[schema(nullable = false)]
    pub geo_location: Option<GeoLocation>,
    #[schema(nullable = false)]
    pub social_media: Option<SocialMedia>,
}

/// `GET /grant_providers`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantProviderListResponse {
    pub grant_providers: Vec<GrantProvider>,
    pub meta: ProviderPageMeta,
}

/// `GET /grant_providers/{id}`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantProviderDetailResponse {
    pub grant_provider: GrantProvider,
}

// ---------------------------------------------------------------------------------
// Regions
// ---------------------------------------------------------------------------------

/// A region without hierarchy links (a state in the hierarchical list; a parent in the detail).
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionBase {
    pub id: Uuid,
    /// German name.
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
}

/// A country of the hierarchical list with its states.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionCountryNode {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
    pub states: Vec<RegionBase>,
}

/// A continent of the hierarchical list with its countries.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionContinentNode {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
    pub countries: Vec<RegionCountryNode>,
}

/// Counts of the hierarchical regions list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionTreeMeta {
    pub total_continents: u64,
    pub total_countries: u64,
    pub total_states: u64,
}

/// `GET /regions` (default): continents → countries → states.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionTreeResponse {
    pub regions: Vec<RegionContinentNode>,
    pub meta: RegionTreeMeta,
}

/// A region of a flat list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionFlat {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
    /// null for a continent.
    #[schema(required = true)]
    pub parent_id: Option<Uuid>,
    #[schema(required = true)]
    pub parent_name: Option<String>,
}

/// Counts by region type.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionCountsByType {
    pub continent: u64,
    pub country: u64,
    pub state: u64,
}

/// Counts of the flat regions list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionFlatMeta {
    pub total_count: u64,
    pub by_type: RegionCountsByType,
}

/// `GET /regions?flat=true` (also with `type` or `country_id`).
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionFlatResponse {
    pub regions: Vec<RegionFlat>,
    pub meta: RegionFlatMeta,
}

/// `GET /regions`: hierarchical by default, flat with `flat=true`, `type` or `country_id`.
#[derive(ToSchema, Deserialize)]
#[serde(untagged)]
pub enum RegionsResponse {
    Tree(RegionTreeResponse),
    Flat(RegionFlatResponse),
}

/// A region with its parent and its direct subregions.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionDetail {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
    #[schema(required = true)]
    pub parent_id: Option<Uuid>,
    #[schema(required = true)]
    pub parent_name: Option<String>,
    /// null for a continent.
    #[schema(required = true)]
    pub parent: Option<RegionBase>,
    /// Countries of a continent, states of a country, empty for a state.
    pub subregions: Vec<RegionFlat>,
}

/// `GET /regions/{id}`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionDetailResponse {
    pub region: RegionDetail,
}

// ---------------------------------------------------------------------------------
// Grant areas
// ---------------------------------------------------------------------------------

/// A grant area of a flat list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaFlat {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    /// null for a parent area.
    #[schema(required = true)]
    pub parent_id: Option<Uuid>,
    #[schema(required = true)]
    pub parent_name: Option<String>,
    pub is_parent: bool,
}

/// A parent area of the hierarchical list with its sub-areas.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaNode {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    #[schema(required = true)]
    pub parent_id: Option<Uuid>,
    #[schema(required = true)]
    pub parent_name: Option<String>,
    pub is_parent: bool,
    pub subareas: Vec<GrantAreaFlat>,
}

/// Counts of the hierarchical grant areas list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaTreeMeta {
    pub total_parent_areas: u64,
    pub total_subareas: u64,
}

/// `GET /grant_areas` (default): parent areas with their sub-areas.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaTreeResponse {
    pub grant_areas: Vec<GrantAreaNode>,
    pub meta: GrantAreaTreeMeta,
}

/// Counts of the flat grant areas list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaFlatMeta {
    pub total_count: u64,
    /// Listed areas with at least one grant visible to the caller.
    pub filterable_count: u64,
}

/// `GET /grant_areas?flat=true`: sub-areas (plus parents with `include_parent=true`, plus parents without sub-areas).
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaFlatResponse {
    pub grant_areas: Vec<GrantAreaFlat>,
    pub meta: GrantAreaFlatMeta,
}

/// `GET /grant_areas`: hierarchical by default, flat with `flat=true`.
#[derive(ToSchema, Deserialize)]
#[serde(untagged)]
pub enum GrantAreasResponse {
    Tree(GrantAreaTreeResponse),
    Flat(GrantAreaFlatResponse),
}

/// The parent of a sub-area.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaBase {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
}

/// A grant area: a sub-area has `parent`, a parent area has `subareas`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaDetail {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    #[schema(required = true)]
    pub parent_id: Option<Uuid>,
    #[schema(required = true)]
    pub parent_name: Option<String>,
    pub is_parent: bool,
    /// Only on a sub-area.
    #[schema(nullable = false)]
    pub parent: Option<GrantAreaBase>,
    /// Only on a parent area.
    #[schema(nullable = false)]
    pub subareas: Option<Vec<GrantAreaFlat>>,
}

/// `GET /grant_areas/{id}`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaDetailResponse {
    pub grant_area: GrantAreaDetail,
}

// ---------------------------------------------------------------------------------
// Eligible entities and target groups
// ---------------------------------------------------------------------------------

/// A legal form of applicants.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntity {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub description: String,
    pub description_de: String,
    pub description_en: String,
}

/// Count of a reference list.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountMeta {
    pub total_count: u64,
}

/// `GET /eligible_entities`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntityListResponse {
    pub eligible_entities: Vec<EligibleEntity>,
    pub meta: CountMeta,
}

/// A legal form with its plural names and the number of visible grants open to it.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntityDetail {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub description: String,
    pub description_de: String,
    pub description_en: String,
    pub name_plural: String,
    pub name_plural_de: String,
    pub name_plural_en: String,
    pub grants_count: u64,
}

/// `GET /eligible_entities/{id}`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntityDetailResponse {
    pub eligible_entity: EligibleEntityDetail,
}

/// A target group.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetGroup {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
}

/// `GET /target_groups`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetGroupListResponse {
    pub target_groups: Vec<TargetGroup>,
    pub meta: CountMeta,
}

/// A target group with the number of visible grants assigned to it.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetGroupDetail {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub grants_count: u64,
}

/// `GET /target_groups/{id}`.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetGroupDetailResponse {
    pub target_group: TargetGroupDetail,
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

/// Band of `relevance_score` (the spec's bands): ≥ 90 very_suitable, 70–89 partially_suitable, 50–69 conditionally_suitable, below 50 not_suitable.
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchCategory {
    VerySuitable,
    PartiallySuitable,
    ConditionallySuitable,
    NotSuitable,
}

/// One ranked match.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchResult {
    /// Id of this match result.
    pub id: Uuid,
    /// 1 is the best match.
    #[schema(minimum = 1, maximum = 25)]
    pub rank: u64,
    pub grant_id: Uuid,
    pub title: String,
    #[schema(minimum = 0, maximum = 100)]
    pub relevance_score: u64,
    pub match_category: MatchCategory,
    /// Two or three sentences in the profile's locale, built from facts of the match.
    pub match_reason: String,
    /// Per-criterion checks (extra field).
    pub checks: MatchChecks,
    /// The need of the profile this programme serves best (extra field): one of its
    /// `keywords` (or unknown target groups, project title), or, when it names none, a
    /// sentence of its description, mission or project; null when the profile has no
    /// need of its own (a single sentence and no keywords) or the server runs with
    /// `need_weight` 0 in `--match-options`.
    #[schema(nullable)]
    pub matched_need: Option<String>,
}

/// The partner's matching quota after this request (current quarter).
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchingQuota {
    pub matching_requests_used: u64,
    pub matching_requests_limit: u64,
    pub usage_percentage: f64,
}

/// Status of a stored matching request.
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchingStatus {
    Pending,
    Completed,
    Failed,
}

/// `POST /matching`, synchronous form (default): 200 with the results.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchingCompletedResponse {
    pub matching_request_id: Uuid,
    pub organization_id: String,
    /// Always `completed`.
    pub status: MatchingStatus,
    #[schema(minimum = 0, maximum = 25)]
    pub results_count: u64,
    /// At most 25, by score descending.
    #[schema(max_items = 25)]
    pub results: Vec<MatchResult>,
    pub quota: MatchingQuota,
}

/// `POST /matching` with `Prefer: respond-async`: 202, poll `status_url`.
#[derive(ToSchema, Deserialize)]
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
#[derive(ToSchema, Deserialize)]
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
    #[schema(minimum = 0, maximum = 25)]
    pub results_count: Option<u64>,
    /// Only when completed.
    #[schema(nullable = false, max_items = 25)]
    pub results: Option<Vec<MatchResult>>,
    /// Only when failed.
    #[schema(nullable = false)]
    pub error: Option<String>,
}

/// `GET /matching/{id}/results`: results (empty while pending).
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchingResultsResponse {
    pub matching_request_id: Uuid,
    pub organization_id: String,
    pub status: MatchingStatus,
    #[schema(minimum = 0, maximum = 25)]
    pub results_count: u64,
    #[schema(max_items = 25)]
    pub results: Vec<MatchResult>,
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

/// Outcome of one criterion of a match.
#[derive(ToSchema, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    Pass,
    Fail,
    Unknown,
}

/// Per-criterion checks of a match (extra field): `pass`/`fail` only on facts stated
/// by the record or read from the programme text.
#[derive(ToSchema, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchChecks {
    pub region: CheckOutcome,
    pub applicant: CheckOutcome,
    pub non_profit: CheckOutcome,
    pub funding_type: CheckOutcome,
    pub deadline: CheckOutcome,
    pub budget: CheckOutcome,
}
