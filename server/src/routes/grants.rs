//! GET /grants and GET /grants/:id.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;
use grantmatch_engine::model::GrantType;
use grantmatch_engine::GrantFilter;
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
    let grant_type = p
        .single("grant_type")?
        .map(|t| {
            GrantType::parse(t).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "grant_type: `{}` is not one of subsidy, loan, guarantee, equity",
                    clip(t)
                ))
            })
        })
        .transpose()?;
    let filter = GrantFilter {
        region_ids: p.uuids("region_ids")?,
        grant_area_ids: p.uuids("grant_area_ids")?,
        grant_provider_id: p.uuid("grant_provider_id")?,
        grant_type,
        q: p.q()?,
    };
    let page = p.page(MAX_PER_PAGE)?;
    let engine = state.engine.clone();
    let result = tokio::task::spawn_blocking(move || {
        let page = engine.list_grants(caller.scope(), &filter, page)??;
        let cat = &engine.catalogue;
        let grants: Vec<Value> = page
            .items
            .iter()
            .map(|&g| views::grant_item(cat, g))
            .collect();
        Ok::<_, ApiError>(json!({ "grants": grants, "meta": views::page_meta(&page) }))
    })
    .await
    .map_err(|_| ApiError::internal())??;
    Ok(Json(result))
}

pub async fn detail(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let engine = &state.engine;
    let g = engine
        .find_grant(&id)
        .filter(|&g| caller.scope().is_visible(g))
        .ok_or_else(|| ApiError::not_found(format!("no grant `{}`", clip(&id))))?;
    Ok(Json(
        json!({ "grant": views::grant_detail(&engine.catalogue, g) }),
    ))
}
