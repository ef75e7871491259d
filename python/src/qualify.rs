//! `Engine.qualify`, `Engine.categorize` and `Engine.qualification_rules`: the server's
//! per-partner AI qualification and custom categories, for tuning prompts and categories
//! from Python. The decisions come from the same engine functions the server's
//! background assessor stores (`grantmatch_engine::qualify`).

use grantmatch_engine::qualify::{self, CustomCategory, QualificationPrompt};
use grantmatch_engine::{Engine, Idx};
use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::errors::invalid;
use pyo3::prelude::*;

/// Namespace of the ids given to categories passed without an `id`: UUIDv5 of the name,
/// so the same category gets the same id in every call.
const CATEGORY_NAMESPACE: Uuid = Uuid::from_u128(0x6a1f_4f5e_8c1d_4b7a_9e3c_2d5b_7f80_1c42);

/// The category dicts (`name`, `name_en`, optional `id`, `description`, `keywords`),
/// normalised as the server stores them.
pub fn parse_categories(v: Value) -> PyResult<Vec<CustomCategory>> {
    let Value::Array(items) = v else {
        return Err(invalid("categories: expected a list of dicts"));
    };
    let mut out: Vec<CustomCategory> = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let what = format!("categories[{i}]");
        let Value::Object(map) = item else {
            return Err(invalid(format!("{what}: expected a dict")));
        };
        out.push(parse_category(&what, &map)?);
    }
    for (i, c) in out.iter().enumerate() {
        if out[..i].iter().any(|o| o.name == c.name || o.id == c.id) {
            return Err(invalid(format!(
                "categories[{i}]: a category with the name `{}` or id {} comes earlier",
                c.name, c.id
            )));
        }
    }
    Ok(out)
}

fn parse_category(what: &str, map: &Map<String, Value>) -> PyResult<CustomCategory> {
    const FIELDS: [&str; 5] = ["id", "name", "name_en", "description", "keywords"];
    if let Some(k) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(invalid(format!(
            "{what}.{k}: unknown field (expected {})",
            FIELDS.join(", ")
        )));
    }
    let text = |field: &str| -> PyResult<Option<&str>> {
        match map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(format!("{what}.{field}: expected a str"))),
        }
    };
    let name = text("name")?.ok_or_else(|| invalid(format!("{what}.name: required")))?;
    let name_en = text("name_en")?.ok_or_else(|| invalid(format!("{what}.name_en: required")))?;
    let keywords: Vec<String> = match map.get("keywords") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(ks)) => ks
            .iter()
            .map(|k| {
                k.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| invalid(format!("{what}.keywords: expected a list of str")))
            })
            .collect::<PyResult<_>>()?,
        Some(_) => return Err(invalid(format!("{what}.keywords: expected a list of str"))),
    };
    let id = match text("id")? {
        Some(s) => Uuid::parse_str(s.trim())
            .map_err(|_| invalid(format!("{what}.id: `{s}` is not a UUID")))?,
        None => Uuid::new_v5(&CATEGORY_NAMESPACE, name.trim().as_bytes()),
    };
    CustomCategory::new(id, name, name_en, text("description")?, &keywords)
        .map_err(|e| invalid(format!("{what}: {e}")))
}

fn grant_head(engine: &Engine, g: Idx) -> Map<String, Value> {
    let grant = engine.catalogue.grant(g);
    let mut m = Map::new();
    m.insert("grant_id".into(), json!(grant.id));
    m.insert("slug".into(), json!(grant.slug));
    m
}

/// One dict per grant: `grant_id`, `slug`, `ai_qualified`, `ai_qualification_reasoning`.
pub fn qualification_values(
    engine: &Engine,
    out: Vec<(Idx, qualify::Qualification)>,
) -> Vec<Value> {
    out.into_iter()
        .map(|(g, q)| {
            let mut m = grant_head(engine, g);
            m.insert("ai_qualified".into(), json!(q.qualified));
            m.insert("ai_qualification_reasoning".into(), json!(q.reasoning));
            Value::Object(m)
        })
        .collect()
}

/// One dict per grant: `grant_id`, `slug`, `custom_categories` (`id`, `name`, `name_en`,
/// in the order of the categories given — as the API shows them).
pub fn category_values(
    engine: &Engine,
    categories: &[CustomCategory],
    out: Vec<(Idx, Vec<Uuid>)>,
) -> Vec<Value> {
    out.into_iter()
        .map(|(g, ids)| {
            let mut m = grant_head(engine, g);
            let cats: Vec<Value> = categories
                .iter()
                .filter(|c| ids.contains(&c.id))
                .map(|c| json!({ "id": c.id, "name": c.name, "name_en": c.name_en }))
                .collect();
            m.insert("custom_categories".into(), Value::Array(cats));
            Value::Object(m)
        })
        .collect()
}

/// The rules and topic a prompt was read into.
pub fn rules_value(engine: &Engine, p: &QualificationPrompt) -> Value {
    let cat = &engine.catalogue;
    json!({
        "region_ids": p.regions.iter().map(|&r| cat.regions[r as usize].id).collect::<Vec<_>>(),
        "eligible_entity_ids": p.entities.iter().map(|&e| cat.eligible_entities[e as usize].id).collect::<Vec<_>>(),
        "only_grant_types": p.only_types.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        "excluded_grant_types": p.excluded_types.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        "non_profit": p.non_profit,
        "applicant_types": p.applicant_types,
        "excluded_applicant_types": p.excluded_applicant_types,
        "excluded_programme_kinds": p.excluded_kinds,
        "excluded_programme_levels": p.excluded_levels,
        "topic": p.topic,
        "topic_items": p.topic_items,
        "excluded_topics": p.excluded_topics,
        "description": qualify::describe(cat, p),
        "rules": qualify::QualificationRules::of_reading(cat, p),
    })
}
