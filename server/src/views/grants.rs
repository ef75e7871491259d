//! Grants as the API shows them: the engine's record views plus the calling partner's
//! own annotations (qualification result and custom categories), which only the server
//! knows.

use grantmatch_engine::views::{GrantDetailView, GrantView};
use grantmatch_engine::{Catalogue, Idx, Page};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::qualification::PartnerAnnotations;

/// A partner-specific category (empty list until configured).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomCategory {
    pub id: Uuid,
    /// German, canonical.
    pub name: String,
    pub name_en: String,
}

/// The calling partner's own view of a grant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Annotations {
    /// true: fits the partner's qualification criteria; false: does not; null: not assessed (or no prompt configured).
    #[schema(required = true)]
    pub ai_qualified: Option<bool>,
    /// Two to three sentences, or null when not assessed.
    #[schema(required = true)]
    pub ai_qualification_reasoning: Option<String>,
    pub custom_categories: Vec<CustomCategory>,
}

/// A grant as an element of `GET /grants`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantListItem {
    #[serde(flatten)]
    pub grant: GrantView,
    #[serde(flatten)]
    pub annotations: Annotations,
}

/// The full record of a grant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantDetail {
    #[serde(flatten)]
    pub grant: GrantDetailView,
    #[serde(flatten)]
    pub annotations: Annotations,
}

/// Paging metadata of the grants list (and of the providers list, which adds two
/// aliases).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PageMeta {
    #[schema(minimum = 1)]
    pub current_page: u64,
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: u64,
    #[schema(minimum = 0)]
    pub total_pages: u64,
    #[schema(minimum = 0)]
    pub total_count: u64,
}

impl PageMeta {
    pub fn of<T>(page: &Page<T>) -> Self {
        PageMeta {
            current_page: page.page as u64,
            per_page: page.per_page as u64,
            total_pages: page.total_pages() as u64,
            total_count: page.total as u64,
        }
    }
}

/// `GET /grants`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantListResponse {
    pub grants: Vec<GrantListItem>,
    pub meta: PageMeta,
}

/// `GET /grants/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantDetailResponse {
    pub grant: GrantDetail,
}

pub fn grant_item(cat: &Catalogue, g: Idx, ann: &PartnerAnnotations) -> GrantListItem {
    GrantListItem {
        grant: GrantView::new(cat, g),
        annotations: ann.of(cat.grant(g).id),
    }
}

pub fn grant_detail(cat: &Catalogue, g: Idx, ann: &PartnerAnnotations) -> GrantDetail {
    GrantDetail {
        grant: GrantDetailView::new(cat, g),
        annotations: ann.of(cat.grant(g).id),
    }
}
