//! GET /grants and GET /grants/:id.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;
use grantmatch_engine::model::GrantType;
use grantmatch_engine::{GrantFilter, Page, PageRequest};

use super::PathId;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::params::{clip, Params};
use crate::qualification::PartnerAnnotations;
use crate::views::{self, GrantDetailResponse, GrantListResponse, PageMeta};
use crate::AppState;

pub const MAX_PER_PAGE: usize = 100;

pub async fn list(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<GrantListResponse>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let types = GrantType::ALL.map(GrantType::as_str);
    let grant_type = p.one_of("grant_type", GrantType::parse, &types)?;
    let filter = GrantFilter {
        region_ids: p.uuids("region_ids")?,
        grant_area_ids: p.uuids("grant_area_ids")?,
        grant_provider_id: p.uuid("grant_provider_id")?,
        grant_type,
        q: p.q()?,
    };
    let page = p.page(MAX_PER_PAGE)?;
    // Filters on the caller's own qualification results (README: API notes).
    let ai_qualified = match p.single("ai_qualified")? {
        None => None,
        Some(_) => Some(p.flag("ai_qualified")?),
    };
    let category_ids = p.uuids("custom_category_ids")?;
    let engine = state.engine.clone();
    let db = state.db.clone();
    // A page of search results takes tens of microseconds: run it on the async worker
    // (a hand-off to the blocking pool cost more than the work). Filtering on the
    // partner's qualification reads all its results from SQLite: off the async threads.
    let light = ai_qualified.is_none() && category_ids.is_empty();
    let run = move || {
        let cat = &engine.catalogue;
        let partner = caller.partner.partner.id;
        let (page, ann) = if ai_qualified.is_none() && category_ids.is_empty() {
            let page = engine.list_grants(caller.scope(), &filter, page)?;
            let ids: Vec<uuid::Uuid> = page.items.iter().map(|&g| cat.grant(g).id).collect();
            (page, PartnerAnnotations::load(&db, partner, Some(&ids))?)
        } else {
            let ann = PartnerAnnotations::load(&db, partner, None)?;
            if let Some(unknown) = category_ids.iter().find(|c| !ann.has_category(**c)) {
                return Err(ApiError::bad_request(format!(
                    "custom_category_ids: {unknown} is not one of the partner's categories"
                )));
            }
            let all = PageRequest {
                page: 1,
                per_page: usize::MAX,
            };
            let items: Vec<_> = engine
                .list_grants(caller.scope(), &filter, all)?
                .items
                .into_iter()
                .filter(|&g| {
                    let id = cat.grant(g).id;
                    ai_qualified.is_none_or(|q| ann.qualified(id) == Some(q))
                        && (category_ids.is_empty()
                            || ann.category_ids(id).any(|c| category_ids.contains(&c)))
                })
                .collect();
            let start = (page.page - 1).saturating_mul(page.per_page);
            let page = Page {
                total: items.len(),
                items: items.into_iter().skip(start).take(page.per_page).collect(),
                page: page.page,
                per_page: page.per_page,
            };
            (page, ann)
        };
        Ok::<_, ApiError>(GrantListResponse {
            grants: page
                .items
                .iter()
                .map(|&g| views::grant_item(cat, g, &ann))
                .collect(),
            meta: PageMeta::of(&page),
        })
    };
    let result = if light {
        run()?
    } else {
        tokio::task::spawn_blocking(run)
            .await
            .map_err(|_| ApiError::internal())??
    };
    Ok(Json(result))
}

pub async fn detail(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<GrantDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let engine = &state.engine;
    let g = engine
        .find_grant(&id)
        .filter(|&g| caller.scope().is_visible(g))
        .ok_or_else(|| ApiError::not_found(format!("no grant `{}`", clip(&id))))?;
    let ann = PartnerAnnotations::load(
        &state.db,
        caller.partner.partner.id,
        Some(&[engine.catalogue.grant(g).id]),
    )?;
    Ok(Json(GrantDetailResponse {
        grant: views::grant_detail(&engine.catalogue, g, &ann),
    }))
}
