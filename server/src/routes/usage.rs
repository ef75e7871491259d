//! GET /usage/stats and GET /usage/quota (scope `usage:read`): only the calling
//! partner's traffic, across all its tokens.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;
use serde_json::{json, Value};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::params::Params;
use crate::usage::{parse_period, period_start, stats, QuotaView};
use crate::AppState;

pub async fn get_stats(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    caller.require("usage:read")?;
    let p = Params::parse(query.as_deref());
    let period = parse_period(p.single("period")?)?.to_string();
    let since = period_start(&period, state.clock.now()).ok_or_else(ApiError::internal)?;
    let partner = caller.partner.partner.clone();
    let st = state.clone();
    let stats = tokio::task::spawn_blocking(move || {
        st.ledger.flush()?;
        stats(&st.db, partner.id, since)
    })
    .await
    .map_err(|_| ApiError::internal())??;
    let partner = &caller.partner.partner;
    Ok(Json(json!({
        "stats": stats,
        "period": period,
        "period_start": since,
        "partner": { "name": partner.name, "tier": partner.tier },
    })))
}

pub async fn get_quota(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require("usage:read")?;
    let q = QuotaView::compute(
        &state.db,
        &caller.partner.partner,
        state.clock.now(),
        &state.quota_policy,
    )?;
    Ok(Json(json!({ "quota": q.to_json() })))
}
