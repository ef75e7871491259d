//! Reference list responses: regions, grant areas, eligible entities, target groups,
//! with their hierarchy and the counts taken within the caller's scope.

use grantmatch_engine::views::{
    EligibleEntityView, GrantAreaBase, GrantAreaFlat, RegionBase, RegionFlat, TargetGroupView,
};
use serde::Serialize;
use utoipa::ToSchema;

/// A country of the hierarchical list with its states.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegionCountryNode {
    #[serde(flatten)]
    pub region: RegionBase,
    pub states: Vec<RegionBase>,
}

/// A continent of the hierarchical list with its countries.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegionContinentNode {
    #[serde(flatten)]
    pub region: RegionBase,
    pub countries: Vec<RegionCountryNode>,
}

/// Counts of the hierarchical regions list.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionTreeMeta {
    pub total_continents: u64,
    pub total_countries: u64,
    pub total_states: u64,
}

/// `GET /regions` (default): continents → countries → states.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionTreeResponse {
    pub regions: Vec<RegionContinentNode>,
    pub meta: RegionTreeMeta,
}

/// Counts by region type.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionCountsByType {
    pub continent: u64,
    pub country: u64,
    pub state: u64,
}

/// Counts of the flat regions list.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionFlatMeta {
    pub total_count: u64,
    pub by_type: RegionCountsByType,
}

/// `GET /regions?flat=true` (also with `type` or `country_id`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionFlatResponse {
    pub regions: Vec<RegionFlat>,
    pub meta: RegionFlatMeta,
}

/// `GET /regions`: hierarchical by default, flat with `flat=true`, `type` or `country_id`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum RegionsResponse {
    Tree(RegionTreeResponse),
    Flat(RegionFlatResponse),
}

/// A region with its parent and its direct subregions.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegionDetail {
    #[serde(flatten)]
    pub region: RegionFlat,
    /// null for a continent.
    #[schema(required = true)]
    pub parent: Option<RegionBase>,
    /// Countries of a continent, states of a country, empty for a state.
    pub subregions: Vec<RegionFlat>,
}

/// `GET /regions/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionDetailResponse {
    pub region: RegionDetail,
}

/// A parent area of the hierarchical list with its sub-areas.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantAreaNode {
    #[serde(flatten)]
    pub area: GrantAreaFlat,
    pub subareas: Vec<GrantAreaFlat>,
}

/// Counts of the hierarchical grant areas list.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaTreeMeta {
    pub total_parent_areas: u64,
    pub total_subareas: u64,
}

/// `GET /grant_areas` (default): parent areas with their sub-areas.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaTreeResponse {
    pub grant_areas: Vec<GrantAreaNode>,
    pub meta: GrantAreaTreeMeta,
}

/// Counts of the flat grant areas list.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaFlatMeta {
    pub total_count: u64,
    /// Listed areas with at least one grant visible to the caller.
    pub filterable_count: u64,
}

/// `GET /grant_areas?flat=true`: sub-areas (plus parents with `include_parent=true`, plus parents without sub-areas).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaFlatResponse {
    pub grant_areas: Vec<GrantAreaFlat>,
    pub meta: GrantAreaFlatMeta,
}

/// `GET /grant_areas`: hierarchical by default, flat with `flat=true`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum GrantAreasResponse {
    Tree(GrantAreaTreeResponse),
    Flat(GrantAreaFlatResponse),
}

/// A grant area: a sub-area has `parent`, a parent area has `subareas`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantAreaDetail {
    #[serde(flatten)]
    pub area: GrantAreaFlat,
    /// Only on a sub-area.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub parent: Option<GrantAreaBase>,
    /// Only on a parent area.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub subareas: Option<Vec<GrantAreaFlat>>,
}

/// `GET /grant_areas/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantAreaDetailResponse {
    pub grant_area: GrantAreaDetail,
}

/// Count of a reference list.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CountMeta {
    pub total_count: u64,
}

/// `GET /eligible_entities`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntityListResponse {
    pub eligible_entities: Vec<EligibleEntityView>,
    pub meta: CountMeta,
}

/// A legal form with its plural names and the number of visible grants open to it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EligibleEntityDetail {
    #[serde(flatten)]
    pub entity: EligibleEntityView,
    pub name_plural: String,
    pub name_plural_de: String,
    pub name_plural_en: String,
    pub grants_count: u64,
}

/// `GET /eligible_entities/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntityDetailResponse {
    pub eligible_entity: EligibleEntityDetail,
}

/// `GET /target_groups`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetGroupListResponse {
    pub target_groups: Vec<TargetGroupView>,
    pub meta: CountMeta,
}

/// A target group with the number of visible grants assigned to it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TargetGroupDetail {
    #[serde(flatten)]
    pub target_group: TargetGroupView,
    pub grants_count: u64,
}

/// `GET /target_groups/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetGroupDetailResponse {
    pub target_group: TargetGroupDetail,
}
