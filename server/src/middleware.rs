//! Per-request bookkeeping around every `/api/v1` route: authentication (best effort,
//! the handler still decides), rate limits with their headers, and the usage ledger.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{OriginalUri, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::authenticate;
use crate::error::{ApiError, ErrorCode};
use crate::ledger::{endpoint_label, LedgerRow, RequestLedger};
use crate::routes::matching::OrganizationId;
use crate::usage::MATCHING_ENDPOINT;
use crate::AppState;

/// Sets standard security headers on every response.
pub async fn harden(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    resp
}

/// Runs `fut`, or answers 503 `timeout` with the error body when it takes longer than
/// `limit` (the future is dropped, so its work is cancelled).
async fn bounded(
    limit: std::time::Duration,
    fut: impl std::future::Future<Output = Response>,
) -> Response {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r,
        Err(_) => {
            tracing::warn!("request timed out");
            ApiError::new(
                ErrorCode::Timeout,
                "the request took too long and was aborted; retry later",
            )
            .into_response()
        }
    }
}

/// Authenticates, rate-limits, bounds the time of the request (503 `timeout` with the
/// error body, never a hung connection) and records it in the usage ledger — also when
/// it timed out or its handler panicked.
pub async fn track(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let at = state.clock.now();
    // Inside `nest("/api/v1")` the request URI has the prefix stripped; label the
    // original path.
    let path = req
        .extensions()
        .get::<OriginalUri>()
        .map(|u| u.0.path().to_string())
        .unwrap_or_else(|| req.uri().path().to_string());
    let label = endpoint_label(req.method().as_str(), &path);
    let is_matching = label == MATCHING_ENDPOINT;
    // A token store that cannot be read is the server's failure: answered (and
    // recorded) as such, never taken for a missing token.
    let (caller, store_failure) = match authenticate(&state, req.headers()).await {
        Ok(c) => (Some(c), None),
        Err(e) if e.status().is_server_error() => {
            tracing::error!(error = %e.message, "authentication failed");
            (None, Some(e))
        }
        Err(_) => (None, None),
    };
    if let Some(c) = &caller {
        req.extensions_mut().insert(c.clone());
    }
    let request_ledger = RequestLedger::new(started, at);
    req.extensions_mut().insert(request_ledger.clone());
    let limit = caller.as_ref().and_then(|c| {
        state
            .limiters
            .check(c.token_id, c.partner.partner.id, is_matching)
    });
    let mut resp = match (store_failure, limit.and_then(|l| l.retry_after)) {
        (Some(e), _) => e.into_response(),
        (None, Some(retry)) => {
            let mut e = ApiError::new(
                ErrorCode::RateLimitExceeded,
                format!("rate limit exceeded: retry in {retry} s"),
            );
            e.retry_after = Some(retry);
            e.into_response()
        }
        (None, None) => bounded(state.http.request_timeout, next.run(req)).await,
    };
    if let Some(l) = limit {
        l.apply(resp.headers_mut());
    }
    state.metrics.observe_request(
        &label,
        resp.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    if request_ledger.is_written() {
        // A billed matching: its row was committed with the matching request (also
        // when the response became a 503 `timeout` after that commit).
        return resp;
    }
    let row = LedgerRow {
        partner_id: caller.as_ref().map(|c| c.partner.partner.id),
        token_id: caller.as_ref().map(|c| c.token_id),
        method: label.split(' ').next().unwrap_or("").to_string(),
        endpoint: label,
        status: resp.status().as_u16(),
        latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        organization_id: resp
            .extensions()
            .get::<OrganizationId>()
            .map(|o| o.0.clone()),
        created_at: at,
    };
    if is_matching {
        // Billing data: durable before the response leaves.
        if let Err(e) = state.store.record_now(row).await {
            tracing::error!(error = %e, "cannot write the ledger row of a matching request")
        }
    } else {
        state.store.ledger().record(row);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[tokio::test(start_paused = true)]
    async fn a_stalled_handler_gets_a_timeout_error_body() {
        let resp = bounded(
            std::time::Duration::from_secs(30),
            std::future::pending::<Response>(),
        )
        .await;
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = axum::body::to_bytes(resp.into_body(), 1024).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], "timeout");
    }

    #[tokio::test]
    async fn a_quick_handler_is_not_affected() {
        let resp = bounded(std::time::Duration::from_secs(30), async {
            StatusCode::NO_CONTENT.into_response()
        })
        .await;
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    }
}
