//! JSON representations of catalogue records with the API's field names, shared by the
//! server and the Python module so that both give the same answer.
//!
//! `name` is the German name (the canonical language of the data); `name_de` and
//! `name_en` are both given where the record has them. Counts are always taken within
//! the caller's scope. Grant views carry `ai_qualified`, `ai_qualification_reasoning`
//! and `custom_categories` as null/empty; the server fills in the calling partner's own.

use crate::catalogue::{Catalogue, Idx};
use crate::model::{provider_type_label, Grant, GrantProvider};
use crate::query::Page;
use crate::scope::ResolvedScope;
use crate::Engine;
use serde_json::{json, Map, Value};

fn region_ref(cat: &Catalogue, r: Idx) -> Value {
    let region = &cat.regions[r as usize];
    json!({ "id": region.id, "name": region.name_de })
}

fn area_ref(cat: &Catalogue, a: Idx) -> Value {
    let area = &cat.grant_areas[a as usize];
    json!({ "id": area.id, "name": area.name_de })
}

/// Fields shared by the list item and the detail of a grant.
fn grant_common(cat: &Catalogue, g: Idx) -> Map<String, Value> {
    let grant: &Grant = &cat.grants[g as usize];
    let provider = cat.grant_provider(g).map(|p| {
        let p = &cat.grant_providers[p as usize];
        json!({ "id": p.id, "name": p.name, "slug": p.slug })
    });
    let target_groups: Vec<Value> = cat
        .grant_target_groups(g)
        .iter()
        .map(|&t| {
            let tg = &cat.target_groups[t as usize];
            json!({ "id": tg.id, "name": tg.name_de })
        })
        .collect();
    // Nested values are put in place after the object is built: `json!` would copy them
    // (it serialises every expression), and this view is built 25 times per list page.
    let mut v = json!({
        "id": grant.id,
        "slug": grant.slug,
        "title": grant.title,
        "short_description": grant.short_description,
        "grant_type": grant.grant_type.as_str(),
        "grant_provider": Value::Null,
        "end_date": grant.end_date,
        "ongoing_grant": grant.ongoing_grant,
        "funding_amount": grant.funding_amount,
        "max_funding_amount": grant.max_funding_amount,
        "regions": [],
        "grant_areas": [],
        "target_groups": [],
        "updated_at": grant.updated_at,
        "ai_qualified": Value::Null,
        "ai_qualification_reasoning": Value::Null,
        "custom_categories": [],
    });
    v["grant_provider"] = provider.unwrap_or(Value::Null);
    v["regions"] = cat
        .grant_regions(g)
        .iter()
        .map(|&r| region_ref(cat, r))
        .collect();
    v["grant_areas"] = cat
        .grant_areas(g)
        .iter()
        .map(|&a| area_ref(cat, a))
        .collect();
    v["target_groups"] = Value::Array(target_groups);
    match v {
        Value::Object(m) => m,
        _ => unreachable!("json! object"),
    }
}

pub fn grant_item(cat: &Catalogue, g: Idx) -> Value {
    Value::Object(grant_common(cat, g))
}

/// The grant facts with source and evidence (`facts` of the grant detail).
pub fn facts_view(cat: &Catalogue, g: Idx) -> Value {
    let f = cat.facts(g);
    json!({
        "applicant_types": f.applicants,
        "programme_kind": f.kind,
        "sme_only": f.sme_only,
        "non_profit_only": f.non_profit_only,
        "labels": { "source": f.labels, "evidence": f.label_evidence },
    })
}

pub fn grant_detail(cat: &Catalogue, g: Idx) -> Value {
    let grant = &cat.grants[g as usize];
    let mut m = grant_common(cat, g);
    let provider = cat.grant_provider(g).map(|p| {
        let p = &cat.grant_providers[p as usize];
        json!({
            "id": p.id,
            "name": p.name,
            "slug": p.slug,
            "grant_provider_type": p.provider_type,
            "website": p.website,
            "email": p.email,
            "phone": p.phone,
            "address": p.address.as_ref().map(|a| json!({
                "street_and_number": a.street_and_number,
                "postal_code": a.postal_code,
                "city": a.city,
                "state": a.state,
                "country": a.country,
            })),
        })
    });
    let regions: Vec<Value> = cat
        .grant_regions(g)
        .iter()
        .map(|&r| {
            let region = &cat.regions[r as usize];
            json!({ "id": region.id, "name": region.name_de, "region_type": region.region_type.as_str() })
        })
        .collect();
    let areas: Vec<Value> = cat
        .grant_areas(g)
        .iter()
        .map(|&a| {
            let area = &cat.grant_areas[a as usize];
            json!({ "id": area.id, "name": area.name_de, "parent_id": area.parent_id })
        })
        .collect();
    let entities: Vec<Value> = cat
        .grant_entities(g)
        .iter()
        .map(|&e| {
            let entity = &cat.eligible_entities[e as usize];
            json!({ "id": entity.id, "name": entity.name_de })
        })
        .collect();
    let extra = json!({
        "description": grant.description,
        "grant_provider": provider,
        "contact_point": grant.contact_point,
        "start_date": grant.start_date,
        "end_date_description": grant.end_date_description,
        "earliest_project_start": grant.earliest_project_start,
        "project_duration": grant.project_duration,
        "funding_rate": grant.funding_rate,
        "funding_goal": grant.funding_goal,
        "eligibility_requirements": grant.eligibility_requirements,
        "target_group_description": grant.target_group_description,
        "non_profit_only": grant.non_profit_only.unwrap_or(false),
        "company_size": grant.company_size,
        "eligible_entities": entities,
        "eligible_expenditures": grant.eligible_expenditures,
        "non_eligible_expenditures": grant.non_eligible_expenditures,
        "eligible_expenditure_categories": grant.eligible_expenditure_categories,
        "evaluation_criteria": grant.evaluation_criteria,
        "documents_needed": grant.documents_needed,
        "application_level": grant.application_level,
        "application_links": grant.application_links,
        "guideline_links": grant.guideline_links,
        "reporting_and_claims_links": grant.reporting_and_claims_links,
        "regions": regions,
        "grant_areas": areas,
        "created_at": grant.created_at,
        "attribution": grant.attribution,
        "facts": facts_view(cat, g),
    });
    if let Value::Object(extra) = extra {
        m.extend(extra);
    }
    Value::Object(m)
}

/// A provider with every field of the spec; `address`, `geo_location` and
/// `social_media` only when set. `grant_provider_type` repeats `type` for clients of
/// the abbreviated list variant.
pub fn provider(engine: &Engine, scope: &ResolvedScope, p: Idx) -> Value {
    let cat = &engine.catalogue;
    let gp: &GrantProvider = &cat.grant_providers[p as usize];
    let count = engine.count_visible(scope, |g| cat.grant_provider(g) == Some(p));
    let mut v = json!({
        "id": gp.id,
        "name": gp.name,
        "slug": gp.slug,
        "type": gp.provider_type,
        "grant_provider_type": gp.provider_type,
        "type_label": provider_type_label(&gp.provider_type),
        "description": gp.description,
        "website": gp.website,
        "email": gp.email,
        "phone": gp.phone,
        "fax": gp.fax,
        "city": gp.city,
        "grants_count": count,
        "created_at": gp.created_at,
        "updated_at": gp.updated_at,
    });
    if let Some(a) = gp.address.as_ref().filter(|a| **a != Default::default()) {
        v["address"] = json!(a);
    }
    if let Some(g) = gp
        .geo_location
        .as_ref()
        .filter(|g| **g != Default::default())
    {
        v["geo_location"] = json!(g);
    }
    if let Some(s) = gp
        .social_media
        .as_ref()
        .filter(|s| **s != Default::default())
    {
        v["social_media"] = json!(s);
    }
    v
}

pub fn region_flat(cat: &Catalogue, r: Idx) -> Value {
    let region = &cat.regions[r as usize];
    let parent = cat.region_parent(r).map(|p| &cat.regions[p as usize]);
    json!({
        "id": region.id,
        "name": region.name_de,
        "name_de": region.name_de,
        "name_en": region.name_en,
        "region_type": region.region_type.as_str(),
        "parent_id": parent.map(|p| p.id),
        "parent_name": parent.map(|p| &p.name_de),
    })
}

pub fn area_flat(cat: &Catalogue, a: Idx) -> Value {
    let area = &cat.grant_areas[a as usize];
    let parent = cat.area_parent(a).map(|p| &cat.grant_areas[p as usize]);
    json!({
        "id": area.id,
        "name": area.name_de,
        "name_de": area.name_de,
        "name_en": area.name_en,
        "parent_id": parent.map(|p| p.id),
        "parent_name": parent.map(|p| &p.name_de),
        "is_parent": cat.area_parent(a).is_none(),
    })
}

pub fn entity_item(cat: &Catalogue, e: Idx) -> Value {
    let entity = &cat.eligible_entities[e as usize];
    json!({
        "id": entity.id,
        "name": entity.name_de,
        "name_de": entity.name_de,
        "name_en": entity.name_en,
        "description": entity.description_de,
        "description_de": entity.description_de,
        "description_en": entity.description_en,
    })
}

pub fn target_group_item(cat: &Catalogue, t: Idx) -> Value {
    let tg = &cat.target_groups[t as usize];
    json!({
        "id": tg.id,
        "name": tg.name_de,
        "name_de": tg.name_de,
        "name_en": tg.name_en,
    })
}

pub fn region_base(cat: &Catalogue, r: Idx) -> Value {
    let region = &cat.regions[r as usize];
    json!({
        "id": region.id,
        "name": region.name_de,
        "name_de": region.name_de,
        "name_en": region.name_en,
        "region_type": region.region_type.as_str(),
    })
}

pub fn area_base(cat: &Catalogue, a: Idx) -> Value {
    let area = &cat.grant_areas[a as usize];
    json!({
        "id": area.id,
        "name": area.name_de,
        "name_de": area.name_de,
        "name_en": area.name_en,
    })
}

/// The `meta` object of grant lists.
pub fn page_meta<T>(page: &Page<T>) -> Value {
    json!({
        "current_page": page.page,
        "per_page": page.per_page,
        "total_pages": page.total_pages(),
        "total_count": page.total,
    })
}
