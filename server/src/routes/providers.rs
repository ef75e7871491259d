//! GET /grant_providers and GET /grant_providers/:id.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;
use grantmatch_engine::model::ProviderType;
use serde_json::{json, Value};

use super::PathId;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::params::{clip, Params};
use crate::views;
use crate::AppState;

pub const MAX_PER_PAGE: usize = 100;

pub async fn list(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let provider_type = p.one_of(
        "grant_provider_type",
        |t| ProviderType::parse(t).map(ProviderType::as_str),
        &ProviderType::names(),
    )?;
    let q = p.q()?;
    let page = p.page(MAX_PER_PAGE)?;
    let engine = &state.engine;
    let page = engine.list_providers(q.as_deref(), provider_type, page);
    let items: Vec<Value> = page
        .items
        .iter()
        .map(|&i| views::provider(engine, caller.scope(), i))
        .collect();
    Ok(Json(json!({
        "grant_providers": items,
        "meta": {
            "current_page": page.page,
            "page": page.page,
            "per_page": page.per_page,
            "total_pages": page.total_pages(),
            "total_count": page.total,
            "total": page.total,
        }
    })))
}

pub async fn detail(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let engine = &state.engine;
    let p = engine
        .find_provider(&id)
        .ok_or_else(|| ApiError::not_found(format!("no grant provider `{}`", clip(&id))))?;
    Ok(Json(
        json!({ "grant_provider": views::provider(engine, caller.scope(), p) }),
    ))
}
