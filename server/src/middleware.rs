//! Per-request bookkeeping around every `/api/v1` route: authentication (best effort,
//! the handler still decides), rate limits with their headers, and the usage ledger.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::authenticate;
use crate::error::ApiError;
use crate::ledger::{endpoint_label, LedgerRow};
use crate::routes::matching::OrganizationId;
use crate::usage::MATCHING_ENDPOINT;
use crate::AppState;

pub async fn track(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let at = state.clock.now();
    let label = endpoint_label(req.method().as_str(), req.uri().path());
    let is_matching = label == MATCHING_ENDPOINT;
    let caller = authenticate(&state, req.headers()).ok();
    if let Some(c) = &caller {
        req.extensions_mut().insert(c.clone());
    }
    let limit = caller.as_ref().and_then(|c| {
        state
            .limiters
            .check(c.token_id, c.partner.partner.id, is_matching)
    });
    let mut resp = match limit.and_then(|l| l.retry_after) {
        Some(retry) => {
            let mut e = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_exceeded",
                format!("rate limit exceeded: retry in {retry} s"),
            );
            e.retry_after = Some(retry);
            e.into_response()
        }
        None => next.run(req).await,
    };
    if let Some(l) = limit {
        l.apply(resp.headers_mut());
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
        let ledger = state.ledger.clone();
        match tokio::task::spawn_blocking(move || ledger.record_now(row)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "cannot write the ledger row of a matching request")
            }
            Err(e) => tracing::error!(error = %e, "ledger task failed"),
        }
    } else {
        state.ledger.record(row);
    }
    resp
}
