//! JSON representations for the API. The record views are shared with the Python module
//! (`grantmatch_engine::views`); the server adds the calling partner's own qualification
//! and custom categories to grant views.

use grantmatch_engine::{views, Catalogue, Idx};
use serde_json::Value;

use crate::qualification::PartnerAnnotations;

pub use grantmatch_engine::views::{
    area_base, area_flat, entity_item, page_meta, provider, region_base, region_flat,
    target_group_item,
};

/// Overwrites the null/empty annotation fields with the partner's own (keys keep their
/// position in the object).
fn annotate(mut v: Value, cat: &Catalogue, g: Idx, ann: &PartnerAnnotations) -> Value {
    if let Value::Object(m) = &mut v {
        for (k, val) in ann.fields(cat.grant(g).id) {
            m.insert(k.to_string(), val);
        }
    }
    v
}

pub fn grant_item(cat: &Catalogue, g: Idx, ann: &PartnerAnnotations) -> Value {
    annotate(views::grant_item(cat, g), cat, g, ann)
}

pub fn grant_detail(cat: &Catalogue, g: Idx, ann: &PartnerAnnotations) -> Value {
    annotate(views::grant_detail(cat, g), cat, g, ann)
}
