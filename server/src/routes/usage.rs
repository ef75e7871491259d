//! GET /usage/stats and GET /usage/quota (scope `usage:read`): only the calling
//! partner's traffic, across all its tokens.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::params::Params;
use crate::usage::{parse_period, period_start, tier_of};
use crate::views::{PartnerInfo, Period, QuotaResponse, UsageStatsResponse};
use crate::AppState;

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
pub async fn get_stats(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<UsageStatsResponse>, ApiError> {
    caller.require("usage:read")?;
    let p = Params::parse(query.as_deref());
    let period = parse_period(p.single("period")?)?;
    let since = period_start(period, state.clock.now()).ok_or_else(ApiError::internal)?;
    let partner = caller.partner.partner.clone();
    let stats = state.store.usage_stats(partner.id, since).await?;
    let partner = &caller.partner.partner;
    Ok(Json(UsageStatsResponse {
        stats,
        period,
        period_start: since,
        partner: PartnerInfo {
            name: partner.name.clone(),
            tier: tier_of(&partner.tier)?,
        },
    }))
}

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
pub async fn get_quota(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<QuotaResponse>, ApiError> {
    caller.require("usage:read")?;
    let q = state
        .store
        .quota(
            caller.partner.clone(),
            state.clock.now(),
            state.quota_policy,
        )
        .await?;
    Ok(Json(QuotaResponse { quota: q.view()? }))
}
