//! `#[utoipa::path]` documentation of every route. The functions are never called:
//! the real handlers live in `crate::routes` (they build JSON with `json!`), these
//! only carry the annotations. Error responses common to many operations (401, 403,
//! 429, 500, 503 …) are added by `super::finish` from the operation's properties, so
//! they are listed here only where an operation says something specific about them.

#![allow(dead_code)]

use super::schemas::*;

// ---------------------------------------------------------------------------------
// Grants
// ---------------------------------------------------------------------------------

/// List grants
///
/// Grants visible in the partner's scope, filtered and paged. With `q`: by relevance
/// (BM25), ties in catalogue order; without: by title. Filters AND-combine, several
/// values of one filter OR-combine; `region_ids[]` matches grants in the region or
/// inside it, `grant_area_ids[]` the area or its sub-areas. Unknown parameters are
/// ignored; a single-valued parameter given twice is 400. List parameters also accept
/// `name=a` and comma-separated values.
#[utoipa::path(
    get,
    path = "/api/v1/grants",
    operation_id = "listGrants",
    tag = "Grants",
    params(
        ("region_ids[]" = Option<Vec<Uuid>>, Query, style = Form, explode = true, max_items = 100,
            description = "Regions (UUIDs); must be in or related to the partner scope (else 403 `out_of_scope`); unknown ids are 400."),
        ("grant_area_ids[]" = Option<Vec<Uuid>>, Query, style = Form, explode = true, max_items = 100,
            description = "Grant areas (UUIDs); must be in or related to the partner scope (else 403 `out_of_scope`); unknown ids are 400."),
        ("grant_provider_id" = Option<Uuid>, Query, description = "Only grants of this provider."),
        ("q" = Option<String>, Query, max_length = 500,
            description = "Full-text search in titles and descriptions (German stemming, every word must match, prefixes of compounds match)."),
        ("grant_type" = Option<GrantType>, Query, description = "Form of the funding."),
        ("page" = Option<u32>, Query, minimum = 1, maximum = 1000000, description = "Page, default 1; a page past the end is an empty list."),
        ("per_page" = Option<u32>, Query, minimum = 1, maximum = 100, description = "Page size, default 25."),
        ("ai_qualified" = Option<bool>, Query,
            description = "Only grants the caller's qualification judged fitting (`true`) or not fitting (`false`); grants not yet assessed match neither."),
        ("custom_category_ids[]" = Option<Vec<Uuid>>, Query, style = Form, explode = true, max_items = 100,
            description = "Only grants in any of these of the caller's custom categories; an id that is not one of them is 400."),
    ),
    responses(
        (status = 200, description = "A page of grants.", body = GrantListResponse),
        (status = 403, description = "The token lacks `grants:read` (`insufficient_scope`), or a filter value lies outside the partner scope (`out_of_scope`, naming the parameter).", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn list_grants() {}

/// Get a grant
///
/// The full record of a grant, by UUID or slug. A grant outside the partner scope is 404.
#[utoipa::path(
    get,
    path = "/api/v1/grants/{id}",
    operation_id = "getGrant",
    tag = "Grants",
    params(("id" = String, Path, description = "Grant UUID or slug.")),
    responses(
        (status = 200, description = "The grant.", body = GrantDetailResponse),
        (status = 404, description = "No such grant, or the grant is outside the partner scope.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn get_grant() {}

// ---------------------------------------------------------------------------------
// Grant providers
// ---------------------------------------------------------------------------------

/// List grant providers
///
/// All funding bodies (the same for every partner; `grants_count` is scoped), by name.
#[utoipa::path(
    get,
    path = "/api/v1/grant_providers",
    operation_id = "listGrantProviders",
    tag = "Grant providers",
    params(
        ("q" = Option<String>, Query, max_length = 500, description = "Search by name."),
        ("grant_provider_type" = Option<ProviderType>, Query, description = "Only providers of this type."),
        ("page" = Option<u32>, Query, minimum = 1, maximum = 1000000, description = "Page, default 1."),
        ("per_page" = Option<u32>, Query, minimum = 1, maximum = 100, description = "Page size, default 25."),
    ),
    responses((status = 200, description = "A page of providers.", body = GrantProviderListResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub fn list_grant_providers() {}

/// Get a grant provider
#[utoipa::path(
    get,
    path = "/api/v1/grant_providers/{id}",
    operation_id = "getGrantProvider",
    tag = "Grant providers",
    params(("id" = String, Path, description = "Provider UUID or slug.")),
    responses(
        (status = 200, description = "The provider.", body = GrantProviderDetailResponse),
        (status = 404, description = "No such provider.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn get_grant_provider() {}

// ---------------------------------------------------------------------------------
// Reference lists
// ---------------------------------------------------------------------------------

/// List regions
///
/// Hierarchical by default (continents → countries → states); flat with `flat=true`.
/// `type` or `country_id` imply the flat form.
#[utoipa::path(
    get,
    path = "/api/v1/regions",
    operation_id = "listRegions",
    tag = "Reference lists",
    params(
        ("flat" = Option<bool>, Query, description = "`true` (or `1`) for the flat list; `false`/`0` for the hierarchy."),
        ("type" = Option<RegionType>, Query, description = "Only regions of this level (flat form)."),
        ("country_id" = Option<Uuid>, Query, description = "Only the states of this country (flat form); must be a country (else 400)."),
    ),
    responses((status = 200, description = "The regions.", body = RegionsResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub fn list_regions() {}

/// Get a region
#[utoipa::path(
    get,
    path = "/api/v1/regions/{id}",
    operation_id = "getRegion",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Region UUID or slug.")),
    responses(
        (status = 200, description = "The region with its parent and subregions.", body = RegionDetailResponse),
        (status = 404, description = "No such region.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn get_region() {}

/// List grant areas
///
/// Hierarchical by default (parent areas with sub-areas); flat with `flat=true`: the
/// sub-areas, plus the parents with `include_parent=true`, plus parent areas without
/// sub-areas (they are leaves and filterable).
#[utoipa::path(
    get,
    path = "/api/v1/grant_areas",
    operation_id = "listGrantAreas",
    tag = "Reference lists",
    params(
        ("flat" = Option<bool>, Query, description = "`true` (or `1`) for the flat list."),
        ("include_parent" = Option<bool>, Query, description = "Flat list: include the parent areas."),
    ),
    responses((status = 200, description = "The grant areas.", body = GrantAreasResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub fn list_grant_areas() {}

/// Get a grant area
#[utoipa::path(
    get,
    path = "/api/v1/grant_areas/{id}",
    operation_id = "getGrantArea",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Grant area UUID or slug.")),
    responses(
        (status = 200, description = "The grant area.", body = GrantAreaDetailResponse),
        (status = 404, description = "No such grant area.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn get_grant_area() {}

/// List eligible entities (legal forms)
#[utoipa::path(
    get,
    path = "/api/v1/eligible_entities",
    operation_id = "listEligibleEntities",
    tag = "Reference lists",
    responses((status = 200, description = "All legal forms.", body = EligibleEntityListResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub fn list_eligible_entities() {}

/// Get an eligible entity
#[utoipa::path(
    get,
    path = "/api/v1/eligible_entities/{id}",
    operation_id = "getEligibleEntity",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Eligible entity UUID or slug.")),
    responses(
        (status = 200, description = "The legal form with the number of visible grants open to it.", body = EligibleEntityDetailResponse),
        (status = 404, description = "No such eligible entity.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn get_eligible_entity() {}

/// List target groups
#[utoipa::path(
    get,
    path = "/api/v1/target_groups",
    operation_id = "listTargetGroups",
    tag = "Reference lists",
    responses((status = 200, description = "All target groups.", body = TargetGroupListResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub fn list_target_groups() {}

/// Get a target group
#[utoipa::path(
    get,
    path = "/api/v1/target_groups/{id}",
    operation_id = "getTargetGroup",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Target group UUID or slug.")),
    responses(
        (status = 200, description = "The target group with the number of visible grants assigned to it.", body = TargetGroupDetailResponse),
        (status = 404, description = "No such target group.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub fn get_target_group() {}

// ---------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------

/// Start a matching
///
/// Ranks the grants in the partner's scope for an organisation profile (at most 25
/// results, by score). Every accepted request is stored and billed before the
/// response is sent. Synchronous by default (200 with the results); with the header
/// `Prefer: respond-async` the answer is 202 with `status_url` and `results_url`.
/// The filters `regions`, `grant_areas` and `eligible_entities` AND-combine. The
/// body must be JSON (`Content-Type: application/json`, else 415) of at most 64 KiB
/// by default (else 413).
#[utoipa::path(
    post,
    path = "/api/v1/matching",
    operation_id = "createMatching",
    tag = "Matching",
    params(
        ("Prefer" = Option<String>, Header, example = "respond-async",
            description = "`respond-async` selects the asynchronous form (202)."),
    ),
    request_body(content = MatchingRequest, content_type = "application/json",
        description = "The organisation profile and an optional project."),
    responses(
        (status = 200, description = "Synchronous form: the completed matching.", body = MatchingCompletedResponse),
        (status = 202, description = "Asynchronous form (`Prefer: respond-async`): accepted, poll `status_url`.", body = MatchingAcceptedResponse,
            headers(("Location" = String, description = "Path of the matching request (`status_url`)."))),
        (status = 400, description = "Malformed JSON, a wrong type, a missing required field (`organization_id`, `organization_profile`, `organization_profile.description`), a text or list over its limit, or an unknown filter value; the message names the field.", body = ErrorBody),
        (status = 503, description = "Matching is temporarily unavailable: the model is loading or could not be loaded, the catalogue has no embeddings, or the work queue is full (`service_unavailable`); or the request took too long (`timeout`).", body = ErrorBody),
    ),
    security(("bearer" = ["matching:use"]))
)]
pub fn create_matching() {}

/// Get a matching request
///
/// Status of a stored matching request of the calling partner; with the results once
/// completed.
#[utoipa::path(
    get,
    path = "/api/v1/matching/{id}",
    operation_id = "getMatching",
    tag = "Matching",
    params(("id" = String, Path, description = "`matching_request_id`.")),
    responses(
        (status = 200, description = "The matching request.", body = MatchingStatusResponse),
        (status = 404, description = "No such matching request of this partner.", body = ErrorBody),
    ),
    security(("bearer" = ["matching:use"]))
)]
pub fn get_matching() {}

/// Get the results of a matching request
#[utoipa::path(
    get,
    path = "/api/v1/matching/{id}/results",
    operation_id = "getMatchingResults",
    tag = "Matching",
    params(("id" = String, Path, description = "`matching_request_id`.")),
    responses(
        (status = 200, description = "The results (empty while pending).", body = MatchingResultsResponse),
        (status = 404, description = "No such matching request of this partner.", body = ErrorBody),
    ),
    security(("bearer" = ["matching:use"]))
)]
pub fn get_matching_results() {}

// ---------------------------------------------------------------------------------
// Usage
// ---------------------------------------------------------------------------------

/// Usage statistics
///
/// Traffic of the calling partner (all its tokens) since the start of the period.
#[utoipa::path(
    get,
    path = "/api/v1/usage/stats",
    operation_id = "getUsageStats",
    tag = "Usage",
    params(("period" = Option<Period>, Query, description = "Default `quarter`.")),
    responses((status = 200, description = "The statistics.", body = UsageStatsResponse)),
    security(("bearer" = ["usage:read"]))
)]
pub fn get_usage_stats() {}

/// Quota status
///
/// Fair-use quota of the current quarter. Quotas never block requests; an overage is billed afterwards.
#[utoipa::path(
    get,
    path = "/api/v1/usage/quota",
    operation_id = "getUsageQuota",
    tag = "Usage",
    responses((status = 200, description = "The quota.", body = QuotaResponse)),
    security(("bearer" = ["usage:read"]))
)]
pub fn get_usage_quota() {}

// ---------------------------------------------------------------------------------
// Service (no authentication)
// ---------------------------------------------------------------------------------

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
            "catalogue": {"snapshot": "snap-20261124T162259.636778-13668", "grants": 1434, "embeddings": true}}))),
    security(())
)]
pub fn health() {}

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
pub fn ready() {}

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
pub fn metrics() {}

/// This OpenAPI document
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    operation_id = "getOpenApi",
    tag = "Service",
    responses((status = 200, description = "The OpenAPI 3.1 description of the API.", content_type = "application/json",
        body = Object)),
    security(())
)]
pub fn openapi_json() {}

/// Interactive documentation
///
/// Redirects to `/api/v1/docs/`, the Swagger UI over this document; all assets are
/// bundled in the binary (no CDN).
#[utoipa::path(
    get,
    path = "/api/v1/docs",
    operation_id = "getDocs",
    tag = "Service",
    responses((status = 303, description = "Redirect to `/api/v1/docs/`.",
        headers(("Location" = String, description = "`/api/v1/docs/`")))),
    security(())
)]
pub fn docs() {}

/// Interactive documentation (page)
#[utoipa::path(
    get,
    path = "/api/v1/docs/",
    operation_id = "getDocsPage",
    tag = "Service",
    responses((status = 200, description = "The Swagger UI page.", content_type = "text/html", body = String)),
    security(())
)]
pub fn docs_page() {}
