//! Reference lists: regions, grant areas, eligible entities, target groups.
//!
//! Reference records are the same for every partner; only the `grants_count` values
//! are taken within the caller's scope. Detail paths accept a UUID or a slug.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::Json;
use grantmatch_engine::model::RegionType;
use grantmatch_engine::{Catalogue, Idx};
use serde_json::{json, Value};
use uuid::Uuid;

use super::PathId;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::params::{clip, Params};
use crate::views;
use crate::AppState;

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

/// A flat reference list: `{key: items, "meta": {"total_count": n}}`.
fn flat_list(key: &str, items: Vec<Value>) -> Json<Value> {
    let meta = json!({ "total_count": items.len() });
    let mut body = serde_json::Map::new();
    body.insert(key.to_string(), Value::Array(items));
    body.insert("meta".to_string(), meta);
    Json(Value::Object(body))
}

fn children_of(cat: &Catalogue, r: Idx) -> Vec<Idx> {
    cat.region_children(r).to_vec()
}

pub async fn regions(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let flat = p.flag("flat")?;
    let region_type = p.one_of(
        "type",
        RegionType::parse,
        &["continent", "country", "state"],
    )?;
    let country_id = p.uuid("country_id")?;
    let cat = &state.engine.catalogue;
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
                .count()
        };
        return Ok(Json(json!({
            "regions": items.iter().map(|&r| views::region_flat(cat, r)).collect::<Vec<_>>(),
            "meta": {
                "total_count": items.len(),
                "by_type": {
                    "continent": count(RegionType::Continent),
                    "country": count(RegionType::Country),
                    "state": count(RegionType::State),
                }
            }
        })));
    }
    let continents: Vec<Idx> = (0..cat.regions.len() as Idx)
        .filter(|&r| cat.regions[r as usize].region_type == RegionType::Continent)
        .collect();
    let mut n_countries = 0;
    let mut n_states = 0;
    let tree: Vec<Value> = continents
        .iter()
        .map(|&c| {
            let mut v = views::region_base(cat, c);
            let countries: Vec<Value> = children_of(cat, c)
                .into_iter()
                .map(|k| {
                    n_countries += 1;
                    let mut cv = views::region_base(cat, k);
                    let states: Vec<Value> = children_of(cat, k)
                        .into_iter()
                        .map(|s| {
                            n_states += 1;
                            views::region_base(cat, s)
                        })
                        .collect();
                    cv["states"] = json!(states);
                    cv
                })
                .collect();
            v["countries"] = json!(countries);
            v
        })
        .collect();
    Ok(Json(json!({
        "regions": tree,
        "meta": {
            "total_continents": continents.len(),
            "total_countries": n_countries,
            "total_states": n_states,
        }
    })))
}

pub async fn region(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let cat = &state.engine.catalogue;
    let r = find(
        &id,
        |u| cat.region_idx(u),
        cat.regions.iter().map(|r| r.slug.clone()),
        "region",
    )?;
    let mut v = views::region_flat(cat, r);
    v["parent"] = match cat.region_parent(r) {
        Some(p) => views::region_base(cat, p),
        None => Value::Null,
    };
    v["subregions"] = json!(children_of(cat, r)
        .into_iter()
        .map(|s| views::region_flat(cat, s))
        .collect::<Vec<_>>());
    Ok(Json(json!({ "region": v })))
}

pub async fn grant_areas(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let p = Params::parse(query.as_deref());
    let flat = p.flag("flat")?;
    let include_parent = p.flag("include_parent")?;
    let engine = &state.engine;
    let cat = &engine.catalogue;
    let parents: Vec<Idx> = (0..cat.grant_areas.len() as Idx)
        .filter(|&a| cat.area_parent(a).is_none())
        .collect();
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
        return Ok(Json(json!({
            "grant_areas": items.iter().map(|&a| views::area_flat(cat, a)).collect::<Vec<_>>(),
            "meta": { "total_count": items.len(), "filterable_count": filterable }
        })));
    }
    let mut n_sub = 0;
    let tree: Vec<Value> = parents
        .iter()
        .map(|&a| {
            let mut v = views::area_flat(cat, a);
            let subs: Vec<Value> = cat
                .area_children(a)
                .iter()
                .map(|&s| {
                    n_sub += 1;
                    views::area_flat(cat, s)
                })
                .collect();
            v["subareas"] = json!(subs);
            v
        })
        .collect();
    Ok(Json(json!({
        "grant_areas": tree,
        "meta": { "total_parent_areas": parents.len(), "total_subareas": n_sub }
    })))
}

pub async fn grant_area(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let cat = &state.engine.catalogue;
    let a = find(
        &id,
        |u| cat.area_idx(u),
        cat.grant_areas.iter().map(|a| a.slug.clone()),
        "grant area",
    )?;
    let mut v = views::area_flat(cat, a);
    match cat.area_parent(a) {
        Some(p) => v["parent"] = views::area_base(cat, p),
        None => {
            v["subareas"] = json!(cat
                .area_children(a)
                .iter()
                .map(|&s| views::area_flat(cat, s))
                .collect::<Vec<_>>())
        }
    }
    Ok(Json(json!({ "grant_area": v })))
}

pub async fn eligible_entities(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let cat = &state.engine.catalogue;
    let items: Vec<Value> = (0..cat.eligible_entities.len() as Idx)
        .map(|e| views::entity_item(cat, e))
        .collect();
    Ok(flat_list("eligible_entities", items))
}

pub async fn eligible_entity(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let engine = &state.engine;
    let cat = &engine.catalogue;
    let e = find(
        &id,
        |u| cat.entity_idx(u),
        cat.eligible_entities.iter().map(|e| e.slug.clone()),
        "eligible entity",
    )?;
    let entity = &cat.eligible_entities[e as usize];
    let mut v = views::entity_item(cat, e);
    v["name_plural"] = json!(entity.name_plural_de);
    v["name_plural_de"] = json!(entity.name_plural_de);
    v["name_plural_en"] = json!(entity.name_plural_en);
    v["grants_count"] =
        json!(engine.count_visible(caller.scope(), |g| cat.grant_entities(g).contains(&e)));
    Ok(Json(json!({ "eligible_entity": v })))
}

pub async fn target_groups(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let cat = &state.engine.catalogue;
    let items: Vec<Value> = (0..cat.target_groups.len() as Idx)
        .map(|t| views::target_group_item(cat, t))
        .collect();
    Ok(flat_list("target_groups", items))
}

pub async fn target_group(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    PathId(id): PathId,
) -> Result<Json<Value>, ApiError> {
    caller.require("grants:read")?;
    let engine = &state.engine;
    let cat = &engine.catalogue;
    let t = find(
        &id,
        |u| cat.group_idx(u),
        cat.target_groups.iter().map(|t| t.slug.clone()),
        "target group",
    )?;
    let mut v = views::target_group_item(cat, t);
    v["grants_count"] =
        json!(engine.count_visible(caller.scope(), |g| cat.grant_target_groups(g).contains(&t)));
    Ok(Json(json!({ "target_group": v })))
}
