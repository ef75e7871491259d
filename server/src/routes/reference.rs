//! Reference lists: regions, grant areas, eligible entities, target groups.
//!
//! Reference records are the same for every partner; only the `grants_count` values
//! are taken within the caller's scope. Detail paths accept a UUID or a slug.

use axum::extract::RawQuery;
use axum::Json;
use grantmatch_engine::model::RegionType;
use grantmatch_engine::views::{
    EligibleEntityView, GrantAreaBase, GrantAreaFlat, RegionBase, RegionFlat, TargetGroupView,
};
use grantmatch_engine::{Catalogue, Idx};
use uuid::Uuid;

use super::PathId;
use crate::auth::Caller;
use crate::error::{ApiError, ErrorBody};
use crate::params::{clip, Params};
use crate::views::*;

/// Finds a record by UUID or slug; 404 naming `what` when there is none.
fn find(
    id: &str,
    by_id: impl Fn(&Uuid) -> Option<Idx>,
    slugs: impl Iterator<Item = String>,
    what: &str,
) -> Result<Idx, ApiError> {
    match Uuid::parse_str(id) {
        Ok(u) => by_id(&u),
        Err(_) => slugs.into_iter().position(|s| s == id).map(|i| i as Idx),
    }
    .ok_or_else(|| ApiError::not_found(format!("no {what} `{}`", clip(id))))
}

fn children_of(cat: &Catalogue, r: Idx) -> Vec<Idx> {
    cat.region_children(r).to_vec()
}

/// List regions
///
/// Hierarchical by default (continents → countries → states); flat with `flat=true`.
/// `type` or `country_id` imply the flat form.
#[utoipa::path(
    get,
    path = "/api/v1/regions",
    operation_id = "listRegions",
    tag = "Reference lists",
    params(
        ("flat" = Option<bool>, Query, description = "`true` (or `1`) for the flat list; `false`/`0` for the hierarchy."),
        ("type" = Option<RegionType>, Query, description = "Only regions of this level (flat form)."),
        ("country_id" = Option<Uuid>, Query, description = "Only the states of this country (flat form); must be a country (else 400)."),
    ),
    responses((status = 200, description = "The regions.", body = RegionsResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub async fn regions(
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<RegionsResponse>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let flat = p.flag("flat")?;
    let region_type = p.one_of(
        "type",
        RegionType::parse,
        &["continent", "country", "state"],
    )?;
    let country_id = p.uuid("country_id")?;
    let cat = &caller.engine().catalogue;
    let country = match country_id {
        None => None,
        Some(id) => {
            let c = cat
                .region_idx(&id)
                .filter(|&c| cat.regions[c as usize].region_type == RegionType::Country)
                .ok_or_else(|| {
                    ApiError::bad_request(format!("country_id: {id} is not a country"))
                })?;
            Some(c)
        }
    };
    if flat || region_type.is_some() || country.is_some() {
        let items: Vec<Idx> = (0..cat.regions.len() as Idx)
            .filter(|&r| region_type.is_none_or(|t| cat.regions[r as usize].region_type == t))
            .filter(|&r| country.is_none_or(|c| cat.region_parent(r) == Some(c)))
            .collect();
        let count = |t: RegionType| {
            items
                .iter()
                .filter(|&&r| cat.regions[r as usize].region_type == t)
                .count() as u64
        };
        return Ok(Json(RegionsResponse::Flat(RegionFlatResponse {
            meta: RegionFlatMeta {
                total_count: items.len() as u64,
                by_type: RegionCountsByType {
                    continent: count(RegionType::Continent),
                    country: count(RegionType::Country),
                    state: count(RegionType::State),
                },
            },
            regions: items.iter().map(|&r| RegionFlat::new(cat, r)).collect(),
        })));
    }
    let continents: Vec<Idx> = (0..cat.regions.len() as Idx)
        .filter(|&r| cat.regions[r as usize].region_type == RegionType::Continent)
        .collect();
    let country_node = |k: Idx| RegionCountryNode {
        region: RegionBase::new(cat, k),
        states: children_of(cat, k)
            .into_iter()
            .map(|s| RegionBase::new(cat, s))
            .collect(),
    };
    let tree: Vec<RegionContinentNode> = continents
        .iter()
        .map(|&c| RegionContinentNode {
            region: RegionBase::new(cat, c),
            countries: children_of(cat, c).into_iter().map(country_node).collect(),
        })
        .collect();
    let countries = tree.iter().flat_map(|c| &c.countries);
    let meta = RegionTreeMeta {
        total_continents: tree.len() as u64,
        total_countries: countries.clone().count() as u64,
        total_states: countries.map(|k| k.states.len() as u64).sum(),
    };
    Ok(Json(RegionsResponse::Tree(RegionTreeResponse {
        regions: tree,
        meta,
    })))
}

/// Get a region
#[utoipa::path(
    get,
    path = "/api/v1/regions/{id}",
    operation_id = "getRegion",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Region UUID or slug.")),
    responses(
        (status = 200, description = "The region with its parent and subregions.", body = RegionDetailResponse),
        (status = 404, description = "No such region.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub async fn region(
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<RegionDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let cat = &caller.engine().catalogue;
    let r = find(
        &id,
        |u| cat.region_idx(u),
        cat.regions.iter().map(|r| r.slug.clone()),
        "region",
    )?;
    Ok(Json(RegionDetailResponse {
        region: RegionDetail {
            region: RegionFlat::new(cat, r),
            parent: cat.region_parent(r).map(|p| RegionBase::new(cat, p)),
            subregions: children_of(cat, r)
                .into_iter()
                .map(|s| RegionFlat::new(cat, s))
                .collect(),
        },
    }))
}

/// List grant areas
///
/// Hierarchical by default (parent areas with sub-areas); flat with `flat=true`: the
/// sub-areas, plus the parents with `include_parent=true`, plus parent areas without
/// sub-areas (they are leaves and filterable).
#[utoipa::path(
    get,
    path = "/api/v1/grant_areas",
    operation_id = "listGrantAreas",
    tag = "Reference lists",
    params(
        ("flat" = Option<bool>, Query, description = "`true` (or `1`) for the flat list."),
        ("include_parent" = Option<bool>, Query, description = "Flat list: include the parent areas."),
    ),
    responses((status = 200, description = "The grant areas.", body = GrantAreasResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub async fn grant_areas(
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<GrantAreasResponse>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let flat = p.flag("flat")?;
    let include_parent = p.flag("include_parent")?;
    let engine = caller.engine();
    let cat = &engine.catalogue;
    let parents: Vec<Idx> = (0..cat.grant_areas.len() as Idx)
        .filter(|&a| cat.area_parent(a).is_none())
        .collect();
    let subareas = |a: Idx| -> Vec<GrantAreaFlat> {
        cat.area_children(a)
            .iter()
            .map(|&s| GrantAreaFlat::new(cat, s))
            .collect()
    };
    if flat {
        // Sub-areas, plus parents when asked, plus parents without sub-areas (which
        // are leaves and would otherwise be missing from the filter list).
        let items: Vec<Idx> = (0..cat.grant_areas.len() as Idx)
            .filter(|&a| {
                cat.area_parent(a).is_some() || include_parent || cat.area_children(a).is_empty()
            })
            .collect();
        let filterable = items
            .iter()
            .filter(|&&a| {
                engine.count_visible(caller.scope(), |g| {
                    cat.grant_areas(g).iter().any(|&x| cat.area_within(x, a))
                }) > 0
            })
            .count();
        return Ok(Json(GrantAreasResponse::Flat(GrantAreaFlatResponse {
            meta: GrantAreaFlatMeta {
                total_count: items.len() as u64,
                filterable_count: filterable as u64,
            },
            grant_areas: items.iter().map(|&a| GrantAreaFlat::new(cat, a)).collect(),
        })));
    }
    let tree: Vec<GrantAreaNode> = parents
        .iter()
        .map(|&a| GrantAreaNode {
            area: GrantAreaFlat::new(cat, a),
            subareas: subareas(a),
        })
        .collect();
    let meta = GrantAreaTreeMeta {
        total_parent_areas: tree.len() as u64,
        total_subareas: tree.iter().map(|n| n.subareas.len() as u64).sum(),
    };
    Ok(Json(GrantAreasResponse::Tree(GrantAreaTreeResponse {
        grant_areas: tree,
        meta,
    })))
}

/// Get a grant area
#[utoipa::path(
    get,
    path = "/api/v1/grant_areas/{id}",
    operation_id = "getGrantArea",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Grant area UUID or slug.")),
    responses(
        (status = 200, description = "The grant area.", body = GrantAreaDetailResponse),
        (status = 404, description = "No such grant area.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub async fn grant_area(
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<GrantAreaDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let cat = &caller.engine().catalogue;
    let a = find(
        &id,
        |u| cat.area_idx(u),
        cat.grant_areas.iter().map(|a| a.slug.clone()),
        "grant area",
    )?;
    let parent = cat.area_parent(a);
    let subareas = cat
        .area_children(a)
        .iter()
        .map(|&s| GrantAreaFlat::new(cat, s));
    Ok(Json(GrantAreaDetailResponse {
        grant_area: GrantAreaDetail {
            area: GrantAreaFlat::new(cat, a),
            parent: parent.map(|p| GrantAreaBase::new(cat, p)),
            subareas: parent.is_none().then(|| subareas.collect()),
        },
    }))
}

/// List eligible entities (legal forms)
#[utoipa::path(
    get,
    path = "/api/v1/eligible_entities",
    operation_id = "listEligibleEntities",
    tag = "Reference lists",
    responses((status = 200, description = "All legal forms.", body = EligibleEntityListResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub async fn eligible_entities(
    caller: Caller,
) -> Result<Json<EligibleEntityListResponse>, ApiError> {
    caller.require("grants:read")?;
    let cat = &caller.engine().catalogue;
    let items: Vec<EligibleEntityView> = (0..cat.eligible_entities.len() as Idx)
        .map(|e| EligibleEntityView::new(cat, e))
        .collect();
    Ok(Json(EligibleEntityListResponse {
        meta: CountMeta {
            total_count: items.len() as u64,
        },
        eligible_entities: items,
    }))
}

/// Get an eligible entity
#[utoipa::path(
    get,
    path = "/api/v1/eligible_entities/{id}",
    operation_id = "getEligibleEntity",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Eligible entity UUID or slug.")),
    responses(
        (status = 200, description = "The legal form with the number of visible grants open to it.", body = EligibleEntityDetailResponse),
        (status = 404, description = "No such eligible entity.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub async fn eligible_entity(
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<EligibleEntityDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let engine = caller.engine();
    let cat = &engine.catalogue;
    let e = find(
        &id,
        |u| cat.entity_idx(u),
        cat.eligible_entities.iter().map(|e| e.slug.clone()),
        "eligible entity",
    )?;
    let entity = &cat.eligible_entities[e as usize];
    let count = engine.count_visible(caller.scope(), |g| cat.grant_entities(g).contains(&e));
    Ok(Json(EligibleEntityDetailResponse {
        eligible_entity: EligibleEntityDetail {
            entity: EligibleEntityView::new(cat, e),
            name_plural: entity.name_plural_de.clone(),
            name_plural_de: entity.name_plural_de.clone(),
            name_plural_en: entity.name_plural_en.clone(),
            grants_count: count as u64,
        },
    }))
}

/// List target groups
#[utoipa::path(
    get,
    path = "/api/v1/target_groups",
    operation_id = "listTargetGroups",
    tag = "Reference lists",
    responses((status = 200, description = "All target groups.", body = TargetGroupListResponse)),
    security(("bearer" = ["grants:read"]))
)]
pub async fn target_groups(caller: Caller) -> Result<Json<TargetGroupListResponse>, ApiError> {
    caller.require("grants:read")?;
    let cat = &caller.engine().catalogue;
    let items: Vec<TargetGroupView> = (0..cat.target_groups.len() as Idx)
        .map(|t| TargetGroupView::new(cat, t))
        .collect();
    Ok(Json(TargetGroupListResponse {
        meta: CountMeta {
            total_count: items.len() as u64,
        },
        target_groups: items,
    }))
}

/// Get a target group
#[utoipa::path(
    get,
    path = "/api/v1/target_groups/{id}",
    operation_id = "getTargetGroup",
    tag = "Reference lists",
    params(("id" = String, Path, description = "Target group UUID or slug.")),
    responses(
        (status = 200, description = "The target group with the number of visible grants assigned to it.", body = TargetGroupDetailResponse),
        (status = 404, description = "No such target group.", body = ErrorBody),
    ),
    security(("bearer" = ["grants:read"]))
)]
pub async fn target_group(
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<TargetGroupDetailResponse>, ApiError> {
    caller.require("grants:read")?;
    let engine = caller.engine();
    let cat = &engine.catalogue;
    let t = find(
        &id,
        |u| cat.group_idx(u),
        cat.target_groups.iter().map(|t| t.slug.clone()),
        "target group",
    )?;
    let count = engine.count_visible(caller.scope(), |g| cat.grant_target_groups(g).contains(&t));
    Ok(Json(TargetGroupDetailResponse {
        target_group: TargetGroupDetail {
            target_group: TargetGroupView::new(cat, t),
            grants_count: count as u64,
        },
    }))
}
