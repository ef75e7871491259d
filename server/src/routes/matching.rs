//! POST /matching, GET /matching/:id, GET /matching/:id/results.
//!
//! The synchronous form (default) answers 200 with the results and the quota block.
//! The asynchronous form is chosen with the header `Prefer: respond-async` and answers
//! 202 with `status_url` and `results_url`. Either way the request is stored (the
//! billing record) before the response is sent. Reading a stored request needs the
//! scope `matching:use` and the same partner; anything else is 404.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use grantmatch_engine::MatchInput;
use serde_json::Value;
use uuid::Uuid;

use super::PathId;
use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ApiJson;
use crate::ledger::RequestLedger;
use crate::matcher::{complete_pending, compute_blocking};
use crate::matching_store::{Billed, MatchingRecord};
use crate::openapi::schemas::MatchingRequest;
use crate::params::clip;
use crate::store::MatchingBill;
use crate::views::{
    matching_urls, MatchingAcceptedResponse, MatchingCompletedResponse, MatchingResultsResponse,
    MatchingStatus, MatchingStatusResponse,
};
use crate::AppState;

fn wants_async(headers: &HeaderMap) -> bool {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim().eq_ignore_ascii_case("respond-async"))
}

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
pub async fn create(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    request_ledger: Option<Extension<RequestLedger>>,
    headers: HeaderMap,
    body: Result<ApiJson<Value>, ApiError>,
) -> Result<Response, ApiError> {
    let request_ledger = request_ledger.map(|Extension(l)| l);
    caller.require("matching:use")?;
    let ApiJson(value) = body?;
    let input = MatchInput::from_value(value.clone())?;
    let profile = input.resolve(&caller.engine().catalogue)?;
    let embedder = state.matcher.embedder()?;
    if caller.engine().vectors().is_none() {
        return Err(ApiError::service_unavailable(
            "matching is unavailable: the catalogue was imported without embeddings",
        ));
    }
    let permit = state.matcher.slot()?;
    let id = Uuid::new_v4();
    let partner = &caller.partner.partner;
    let mut record = MatchingRecord {
        id,
        partner_id: partner.id,
        token_id: caller.token_id,
        organization_id: profile.organization_id.clone(),
        request: value,
        status: MatchingStatus::Pending,
        results: None,
        results_count: None,
        error: None,
        created_at: state.clock.now(),
        completed_at: None,
    };

    if wants_async(&headers) {
        let bill = billing(&state, &caller, request_ledger, StatusCode::ACCEPTED);
        let (stored, billed) = state.store.bill_matching(record, bill).await?;
        warnings_queued(&state, &caller, &billed);
        record = stored;
        tokio::spawn(complete_pending(state.clone(), id, Some(permit)));
        let (status_url, results_url) = matching_urls(id);
        let mut resp = (
            StatusCode::ACCEPTED,
            [(header::LOCATION, status_url.clone())],
            Json(MatchingAcceptedResponse {
                matching_request_id: id,
                status: MatchingStatus::Pending,
                status_url,
                results_url,
                message: "The matching is being processed. Poll status_url until status is completed, then read results_url.".into(),
            }),
        )
            .into_response();
        resp.extensions_mut()
            .insert(OrganizationId(record.organization_id));
        return Ok(resp);
    }

    // Ranking and storing in one task on the blocking pool: one hop for the request,
    // and the billing — request, results, quota counter, warning e-mail, ledger row —
    // is one transaction, durable before the response is built.
    let (st, ctx) = (state.clone(), caller.partner.clone());
    let bill = billing(&state, &caller, request_ledger, StatusCode::OK);
    let (mut record, billed) = state
        .store
        .complete_and_bill(record, bill, move || {
            let results = compute_blocking(&st, &embedder, &ctx, &input);
            drop(permit);
            results
        })
        .await?;
    warnings_queued(&state, &caller, &billed);
    let results = record.results.take().unwrap_or_default();
    let mut resp = Json(MatchingCompletedResponse {
        matching: MatchingResultsResponse {
            matching_request_id: id,
            organization_id: record.organization_id.clone(),
            status: MatchingStatus::Completed,
            results_count: results.len() as u64,
            results,
        },
        quota: billed.quota.matching_block(),
    })
    .into_response();
    resp.extensions_mut()
        .insert(OrganizationId(record.organization_id));
    Ok(resp)
}

/// The organisation of an accepted matching request, for the usage ledger.
#[derive(Debug, Clone)]
pub struct OrganizationId(pub String);

/// What billing an accepted matching request needs ([`crate::store::Store::bill_matching`]:
/// the request, its quota counter, the 90 % warning e-mail when a limit is reached (once
/// per quarter and limit) and the request's usage-ledger row, answered with `status` —
/// then the middleware writes no second row — in one transaction).
fn billing(
    state: &AppState,
    caller: &Caller,
    request_ledger: Option<RequestLedger>,
    status: StatusCode,
) -> MatchingBill {
    MatchingBill {
        partner: caller.partner.clone(),
        request_ledger,
        status: status.as_u16(),
        policy: state.quota_policy,
        clock: state.clock.clone(),
    }
}

/// Wakes the mailer for the warning e-mails a billing queued (or says why they stay).
fn warnings_queued(state: &AppState, caller: &Caller, billed: &Billed) {
    if billed.warnings_queued > 0 {
        if state.mailer_configured {
            state.mail_wakeup.notify_one();
        } else {
            tracing::warn!(partner = %caller.partner.partner.name, quarter = %billed.quota.quarter, "quota warning e-mail queued in the outbox; SMTP is not configured, so it stays there");
        }
    }
}

async fn load(
    state: &Arc<AppState>,
    caller: &Caller,
    id: &str,
) -> Result<MatchingRecord, ApiError> {
    caller.require("matching:use")?;
    let not_found = || ApiError::not_found(format!("no matching request `{}`", clip(id)));
    let uuid = Uuid::parse_str(id).map_err(|_| not_found())?;
    state
        .store
        .matching(uuid)
        .await?
        .filter(|r| r.partner_id == caller.partner.partner.id)
        .ok_or_else(not_found)
}

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
pub async fn status(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<MatchingStatusResponse>, ApiError> {
    let r = load(&state, &caller, &id).await?;
    let (status_url, results_url) = matching_urls(r.id);
    let completed = r.status == MatchingStatus::Completed;
    Ok(Json(MatchingStatusResponse {
        matching_request_id: r.id,
        organization_id: r.organization_id,
        status: r.status,
        created_at: r.created_at,
        completed_at: r.completed_at,
        status_url,
        results_url,
        results_count: completed.then(|| r.results_count.unwrap_or(0).max(0) as u64),
        results: completed.then(|| r.results.unwrap_or_default()),
        error: r.error,
    }))
}

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
pub async fn results(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<MatchingResultsResponse>, ApiError> {
    let r = load(&state, &caller, &id).await?;
    Ok(Json(MatchingResultsResponse {
        matching_request_id: r.id,
        organization_id: r.organization_id,
        status: r.status,
        results_count: r.results_count.unwrap_or(0).max(0) as u64,
        results: r.results.unwrap_or_default(),
    }))
}
