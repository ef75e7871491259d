//! GET /grants and GET /grants/:id.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;
use grantmatch_engine::model::GrantType;
use grantmatch_engine::{Catalogue, GrantFilter, Idx, Page};

use super::PathId;
use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::params::{clip, Params};
use crate::qualification::{annotations_of, PartnerAnnotations};
use crate::views::{self, GrantDetailResponse, GrantListResponse, PageMeta};
use crate::AppState;

pub const MAX_PER_PAGE: usize = 100;

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
    let engine = caller.engine().clone();
    let partner = caller.partner.partner.id;
    let generation = caller.annotations_generation;
    // A page of search results takes tens of microseconds: run it on the async worker
    // (a hand-off to the blocking pool cost more than the work); the partner's
    // annotations of the page come from memory when current (else from SQLite, on the
    // blocking pool). Filtering on the partner's qualification uses all its results
    // and filters on the blocking pool.
    let result = if ai_qualified.is_none() && category_ids.is_empty() {
        let page = engine.list_grants(caller.scope(), &filter, page)?;
        let cat = &engine.catalogue;
        let ids: Vec<uuid::Uuid> = page.items.iter().map(|&g| cat.grant(g).id).collect();
        let ann = annotations_of(&state, partner, generation, ids).await?;
        list_response(cat, &page, &ann)
    } else {
        let cached = state.annotations.get(partner, generation);
        let filter_page = move |ann: Arc<PartnerAnnotations>| {
            let cat = &engine.catalogue;
            if let Some(unknown) = category_ids.iter().find(|c| !ann.has_category(**c)) {
                return Err(ApiError::bad_request(format!(
                    "custom_category_ids: {unknown} is not one of the partner's categories"
                )));
            }
            let page = engine.list_grants_where(caller.scope(), &filter, page, |g| {
                let id = cat.grant(g).id;
                ai_qualified.is_none_or(|q| ann.qualified(id) == Some(q))
                    && (category_ids.is_empty()
                        || ann.category_ids(id).any(|c| category_ids.contains(&c)))
            })?;
            Ok::<_, ApiError>(list_response(cat, &page, &ann))
        };
        state
            .store
            .with_annotations(partner, cached, filter_page)
            .await?
    };
    Ok(Json(result))
}

/// A page of grants with the partner's annotations.
fn list_response(cat: &Catalogue, page: &Page<Idx>, ann: &PartnerAnnotations) -> GrantListResponse {
    GrantListResponse {
        grants: page
            .items
            .iter()
            .map(|&g| views::grant_item(cat, g, ann))
            .collect(),
        meta: PageMeta::of(page),
    }
}

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
pub async fn detail(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<GrantDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let engine = caller.engine();
    let g = engine
        .find_grant(&id)
        .filter(|&g| caller.scope().is_visible(g))
        .ok_or_else(|| ApiError::not_found(format!("no grant `{}`", clip(&id))))?;
    let (partner, grant) = (caller.partner.partner.id, engine.catalogue.grant(g).id);
    let ann = annotations_of(&state, partner, caller.annotations_generation, vec![grant]).await?;
    Ok(Json(GrantDetailResponse {
        grant: views::grant_detail(&engine.catalogue, g, &ann),
    }))
}
