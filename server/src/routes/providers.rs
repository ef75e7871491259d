//! GET /grant_providers and GET /grant_providers/:id.

use axum::extract::RawQuery;
use axum::Json;
use grantmatch_engine::model::ProviderType;
use grantmatch_engine::views::GrantProviderView;

use super::PathId;
use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::params::{clip, Params};
use crate::views::{GrantProviderDetailResponse, GrantProviderListResponse, PageMeta};

pub const MAX_PER_PAGE: usize = 100;

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
pub async fn list(
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<GrantProviderListResponse>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let provider_type = p.one_of(
        "grant_provider_type",
        |t| ProviderType::parse(t).map(ProviderType::as_str),
        &ProviderType::names(),
    )?;
    let q = p.q()?;
    let page = p.page(MAX_PER_PAGE)?;
    let engine = caller.engine();
    let page = engine.list_providers(q.as_deref(), provider_type, page);
    Ok(Json(GrantProviderListResponse {
        grant_providers: page
            .items
            .iter()
            .map(|&i| GrantProviderView::new(engine, caller.scope(), i))
            .collect(),
        meta: PageMeta::of(&page).into(),
    }))
}

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
pub async fn detail(
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<GrantProviderDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let engine = caller.engine();
    let p = engine
        .find_provider(&id)
        .ok_or_else(|| ApiError::not_found(format!("no grant provider `{}`", clip(&id))))?;
    Ok(Json(GrantProviderDetailResponse {
        grant_provider: GrantProviderView::new(engine, caller.scope(), p),
    }))
}
