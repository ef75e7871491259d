//! Representations of catalogue records with the API's field names, shared by the
//! server and the Python module so that both give the same answer.
//!
//! With the `openapi` feature every view also describes itself (`utoipa::ToSchema`), so
//! the server's OpenAPI document is generated from the types it serialises. Views hold
//! only what the catalogue knows: the server adds the calling partner's own annotations
//! next to a grant, and the hierarchy and counts of its detail responses.
//!
//! `name` is the German name (the canonical language of the data); `name_de` and
//! `name_en` are both given where the record has them. Counts are always taken within
//! the caller's scope.

use crate::catalogue::{Catalogue, Idx};
use crate::facts::{ApplicantType, Fact, ProgrammeKind, Source};
use crate::matching::{Checks, Match, MatchCategory};
use crate::model::{
    Address, ContactPoint, GeoLocation, Grant, GrantProvider, GrantType, ProviderType, RegionType,
    SocialMedia,
};
use crate::scope::ResolvedScope;
use crate::Engine;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A referenced record: id and German name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NamedRef {
    pub id: Uuid,
    /// German name.
    pub name: String,
}

/// The provider of a grant in a list item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantProviderRef {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
}

/// The fields a grant shows both in a list and in its detail; the detail describes the
/// regions (`R`) and areas (`A`) more fully than the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantFields<R, A> {
    pub id: Uuid,
    /// URL-friendly identifier, usable in place of the id on the detail endpoint.
    pub slug: String,
    pub title: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub short_description: Option<String>,
    pub grant_type: GrantType,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub end_date: Option<NaiveDate>,
    pub ongoing_grant: bool,
    /// Free-text range with currency.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub funding_amount: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub max_funding_amount: Option<f64>,
    pub regions: Vec<R>,
    pub grant_areas: Vec<A>,
    pub target_groups: Vec<NamedRef>,
    pub updated_at: DateTime<Utc>,
}

/// A grant as an element of a list (the API adds the calling partner's own
/// annotations next to these fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantView {
    #[serde(flatten)]
    pub grant: GrantFields<NamedRef, NamedRef>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub grant_provider: Option<GrantProviderRef>,
}

/// Postal address of a provider inside a grant detail (every field present, may be null).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantProviderAddress {
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub street_and_number: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub postal_code: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub city: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub state: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub country: Option<String>,
}

/// The provider of a grant in the grant detail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantProviderSummary {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    pub grant_provider_type: ProviderType,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub website: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub email: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub phone: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub address: Option<GrantProviderAddress>,
}

/// A region of a grant detail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantRegion {
    pub id: Uuid,
    pub name: String,
    pub region_type: RegionType,
}

/// A grant area of a grant detail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantAreaRef {
    pub id: Uuid,
    pub name: String,
    /// The parent area; null for a parent area.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub parent_id: Option<Uuid>,
}

/// Source of the grant's areas and target groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LabelsFact {
    pub source: Source,
    pub evidence: Option<String>,
}

/// Facts the engine knows about a grant (extra field of the detail), each with source
/// and evidence; `null` where nothing says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantFactsView {
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub applicant_types: Option<Fact<Vec<ApplicantType>>>,
    pub programme_kind: Fact<ProgrammeKind>,
    /// The funding instrument: the record's `grant_type`, or `loan` with the title as
    /// evidence where the title names a loan the record calls a subsidy.
    pub grant_type: Fact<GrantType>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub sme_only: Option<Fact<bool>>,
    /// `true` when the title restricts the programme to companies beyond the SME
    /// thresholds ("KfW-Förderkredit großer Mittelstand"), with the title as evidence;
    /// matching fails the applicant check of an organisation with fewer than 250
    /// employees; `null` otherwise.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub large_companies_only: Option<Fact<bool>>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub non_profit_only: Option<Fact<bool>>,
    /// Companies and founders the programme's text names as those its applicants support
    /// ("Wenn Sie kleine und mittlere Unternehmen … unterstützen, können Sie …"): they
    /// benefit from others' projects, and matching and qualification count the programme
    /// as a misfit for an organisation of only these types; `null` when the text names none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub beneficiaries: Option<Fact<Vec<ApplicantType>>>,
    /// `true` when the programme is for founding or taking over a business or for its
    /// first years only, with the title or the teaser's condition as evidence; matching
    /// counts it as a misfit for an organisation that speaks of neither; `null` otherwise.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub founding: Option<Fact<bool>>,
    /// Sectors the title restricts the programme to (empty when it names none); a
    /// profile that speaks of none of them gets it as a kind misfit.
    pub sectors: Vec<crate::facts::sector::Sector>,
    /// Investment measures the title or the teaser's first sentence says the programme
    /// funds for whoever carries them out (empty when it names none): matching gives the
    /// programme a semantic floor for a profile that plans one of them and whose type may
    /// apply (see `planned_measure` of a match).
    pub measures: Vec<crate::facts::measure::Measure>,
    /// Farm animals the teaser's condition restricts the programme to ("… in der
    /// Schweinehaltung …"), with that sentence as evidence; matching counts it as a misfit
    /// for a farm whose profile names other animals only; `null` when it names none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub livestock: Option<Fact<Vec<crate::facts::livestock::Livestock>>>,
    /// `true` when the teaser's condition addresses farms ("Wenn Sie als
    /// landwirtschaftlicher Betrieb …"), with that sentence as evidence; matching counts it
    /// as a kind misfit for a profile whose texts do not say the organisation farms;
    /// `null` when it does not.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub farms_only: Option<Fact<bool>>,
    /// `true` when the title restricts the programme to municipal and social enterprises
    /// ("Investitionskredit für Kommunale und Soziale Unternehmen …"), with the title as
    /// evidence; matching counts it as a kind misfit for a profile that is neither
    /// non-profit, nor municipal, nor says it is a municipal or social enterprise;
    /// `null` when it does not.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub social_enterprises_only: Option<Fact<bool>>,
    pub labels: LabelsFact,
}

/// The full record of a grant (the API adds the calling partner's own annotations).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantDetailView {
    #[serde(flatten)]
    pub grant: GrantFields<GrantRegion, GrantAreaRef>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub grant_provider: Option<GrantProviderSummary>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub contact_point: Option<ContactPoint>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub start_date: Option<NaiveDate>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub end_date_description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub earliest_project_start: Option<NaiveDate>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub project_duration: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub funding_rate: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub funding_goal: Option<String>,
    pub eligibility_requirements: Vec<String>,
    /// Free text next to the structured `target_groups`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub target_group_description: Option<String>,
    /// false when the source does not say.
    pub non_profit_only: bool,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub company_size: Option<String>,
    pub eligible_entities: Vec<NamedRef>,
    pub eligible_expenditures: Vec<String>,
    pub non_eligible_expenditures: Vec<String>,
    pub eligible_expenditure_categories: Vec<String>,
    pub evaluation_criteria: Vec<String>,
    pub documents_needed: Vec<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub application_level: Option<String>,
    pub application_links: Vec<String>,
    pub guideline_links: Vec<String>,
    pub reporting_and_claims_links: Vec<String>,
    pub created_at: DateTime<Utc>,
    /// Source attribution (programme texts are CC BY-ND 4.0).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub attribution: Option<String>,
    /// Grant facts with source and evidence (extra field).
    pub facts: GrantFactsView,
}

fn named(id: Uuid, name: &str) -> NamedRef {
    NamedRef {
        id,
        name: name.to_string(),
    }
}

fn target_group_refs(cat: &Catalogue, g: Idx) -> Vec<NamedRef> {
    let groups = cat.grant_target_groups(g).iter();
    groups
        .map(|&t| {
            named(
                cat.target_groups[t as usize].id,
                &cat.target_groups[t as usize].name_de,
            )
        })
        .collect()
}

impl<R, A> GrantFields<R, A> {
    /// Grant `g`, with its regions and areas as `region` and `area` show them.
    fn build(cat: &Catalogue, g: Idx, region: impl Fn(Idx) -> R, area: impl Fn(Idx) -> A) -> Self {
        let grant: &Grant = cat.grant(g);
        GrantFields {
            id: grant.id,
            slug: grant.slug.clone(),
            title: grant.title.clone(),
            short_description: grant.short_description.clone(),
            grant_type: grant.grant_type,
            end_date: grant.end_date,
            ongoing_grant: grant.ongoing_grant,
            funding_amount: grant.funding_amount.clone(),
            max_funding_amount: grant.max_funding_amount,
            regions: cat.grant_regions(g).iter().map(|&r| region(r)).collect(),
            grant_areas: cat.grant_areas(g).iter().map(|&a| area(a)).collect(),
            target_groups: target_group_refs(cat, g),
            updated_at: grant.updated_at,
        }
    }
}

/// The provider record of grant `g`.
fn provider_of(cat: &Catalogue, g: Idx) -> Option<&GrantProvider> {
    cat.grant_provider(g)
        .map(|p| &cat.grant_providers[p as usize])
}

impl GrantView {
    pub fn new(cat: &Catalogue, g: Idx) -> Self {
        let provider = |p: &GrantProvider| GrantProviderRef {
            id: p.id,
            name: p.name.clone(),
            slug: p.slug.clone(),
        };
        let region = |r: Idx| named(cat.regions[r as usize].id, &cat.regions[r as usize].name_de);
        let area = |a: Idx| {
            let area = &cat.grant_areas[a as usize];
            named(area.id, &area.name_de)
        };
        GrantView {
            grant: GrantFields::build(cat, g, region, area),
            grant_provider: provider_of(cat, g).map(provider),
        }
    }
}

impl GrantFactsView {
    pub fn new(cat: &Catalogue, g: Idx) -> Self {
        let f = cat.facts(g);
        GrantFactsView {
            applicant_types: f.applicants.clone(),
            programme_kind: f.kind.clone(),
            grant_type: f.grant_type.clone(),
            sme_only: f.sme_only.clone(),
            large_companies_only: f.large_only.clone(),
            non_profit_only: f.non_profit_only.clone(),
            beneficiaries: f.supported.clone(),
            founding: f.founding.clone(),
            sectors: f.sectors.clone(),
            measures: f.measures.clone(),
            livestock: f.livestock.clone(),
            farms_only: f.farms_only.clone(),
            social_enterprises_only: f.social_only.clone(),
            labels: LabelsFact {
                source: f.labels,
                evidence: f.label_evidence.clone(),
            },
        }
    }
}

impl GrantProviderSummary {
    fn new(p: &GrantProvider) -> Self {
        GrantProviderSummary {
            id: p.id,
            name: p.name.clone(),
            slug: p.slug.clone(),
            grant_provider_type: ProviderType::of(&p.provider_type),
            website: p.website.clone(),
            email: p.email.clone(),
            phone: p.phone.clone(),
            address: p.address.as_ref().map(|a| GrantProviderAddress {
                street_and_number: a.street_and_number.clone(),
                postal_code: a.postal_code.clone(),
                city: a.city.clone(),
                state: a.state.clone(),
                country: a.country.clone(),
            }),
        }
    }
}

impl GrantDetailView {
    pub fn new(cat: &Catalogue, g: Idx) -> Self {
        let grant = cat.grant(g);
        let region = |r: Idx| {
            let region = &cat.regions[r as usize];
            GrantRegion {
                id: region.id,
                name: region.name_de.clone(),
                region_type: region.region_type,
            }
        };
        let area = |a: Idx| {
            let area = &cat.grant_areas[a as usize];
            GrantAreaRef {
                id: area.id,
                name: area.name_de.clone(),
                parent_id: area.parent_id,
            }
        };
        let entities = cat.grant_entities(g).iter().map(|&e| {
            let entity = &cat.eligible_entities[e as usize];
            named(entity.id, &entity.name_de)
        });
        GrantDetailView {
            grant: GrantFields::build(cat, g, region, area),
            grant_provider: provider_of(cat, g).map(GrantProviderSummary::new),
            description: grant.description.clone(),
            contact_point: grant.contact_point.clone(),
            start_date: grant.start_date,
            end_date_description: grant.end_date_description.clone(),
            earliest_project_start: grant.earliest_project_start,
            project_duration: grant.project_duration.clone(),
            funding_rate: grant.funding_rate.clone(),
            funding_goal: grant.funding_goal.clone(),
            eligibility_requirements: grant.eligibility_requirements.clone(),
            target_group_description: grant.target_group_description.clone(),
            non_profit_only: grant.non_profit_only.unwrap_or(false),
            company_size: grant.company_size.clone(),
            eligible_entities: entities.collect(),
            eligible_expenditures: grant.eligible_expenditures.clone(),
            non_eligible_expenditures: grant.non_eligible_expenditures.clone(),
            eligible_expenditure_categories: grant.eligible_expenditure_categories.clone(),
            evaluation_criteria: grant.evaluation_criteria.clone(),
            documents_needed: grant.documents_needed.clone(),
            application_level: grant.application_level.clone(),
            application_links: grant.application_links.clone(),
            guideline_links: grant.guideline_links.clone(),
            reporting_and_claims_links: grant.reporting_and_claims_links.clone(),
            created_at: grant.created_at,
            attribution: grant.attribution.clone(),
            facts: GrantFactsView::new(cat, g),
        }
    }
}

/// A funding body. `address`, `geo_location` and `social_media` are present only when
/// a value inside is set.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = GrantProvider))]
pub struct GrantProviderView {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    #[serde(rename = "type")]
    pub provider_type: ProviderType,
    /// Same as `type` (the abbreviated list variant's name).
    pub grant_provider_type: ProviderType,
    /// German label of the type.
    pub type_label: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub website: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub email: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub phone: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub fax: Option<String>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub city: Option<String>,
    /// Published grants of this provider visible to the caller.
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub grants_count: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub address: Option<Address>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub geo_location: Option<GeoLocation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub social_media: Option<SocialMedia>,
}

/// `Some` when at least one field of `v` is set.
fn set<T: Default + PartialEq + Clone>(v: &Option<T>) -> Option<T> {
    v.as_ref().filter(|v| **v != T::default()).cloned()
}

impl GrantProviderView {
    /// Provider `p`, counting its grants within `scope`.
    pub fn new(engine: &Engine, scope: &ResolvedScope, p: Idx) -> Self {
        let cat = &engine.catalogue;
        let gp: &GrantProvider = &cat.grant_providers[p as usize];
        let provider_type = ProviderType::of(&gp.provider_type);
        GrantProviderView {
            id: gp.id,
            name: gp.name.clone(),
            slug: gp.slug.clone(),
            provider_type,
            grant_provider_type: provider_type,
            type_label: provider_type.label_de().to_string(),
            description: gp.description.clone(),
            website: gp.website.clone(),
            email: gp.email.clone(),
            phone: gp.phone.clone(),
            fax: gp.fax.clone(),
            city: gp.city.clone(),
            grants_count: engine.count_visible(scope, |g| cat.grant_provider(g) == Some(p)) as u64,
            created_at: gp.created_at,
            updated_at: gp.updated_at,
            address: set(&gp.address),
            geo_location: set(&gp.geo_location),
            social_media: set(&gp.social_media),
        }
    }
}

/// A region without hierarchy links (a state in the hierarchical list; a parent in the
/// detail).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RegionBase {
    pub id: Uuid,
    /// German name.
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
}

impl RegionBase {
    pub fn new(cat: &Catalogue, r: Idx) -> Self {
        let region = &cat.regions[r as usize];
        RegionBase {
            id: region.id,
            name: region.name_de.clone(),
            name_de: region.name_de.clone(),
            name_en: region.name_en.clone(),
            region_type: region.region_type,
        }
    }
}

/// A region of a flat list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RegionFlat {
    #[serde(flatten)]
    pub region: RegionBase,
    /// null for a continent.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub parent_id: Option<Uuid>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub parent_name: Option<String>,
}

impl RegionFlat {
    pub fn new(cat: &Catalogue, r: Idx) -> Self {
        let parent = cat.region_parent(r).map(|p| &cat.regions[p as usize]);
        RegionFlat {
            region: RegionBase::new(cat, r),
            parent_id: parent.map(|p| p.id),
            parent_name: parent.map(|p| p.name_de.clone()),
        }
    }
}

/// The parent of a sub-area.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantAreaBase {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
}

impl GrantAreaBase {
    pub fn new(cat: &Catalogue, a: Idx) -> Self {
        let area = &cat.grant_areas[a as usize];
        GrantAreaBase {
            id: area.id,
            name: area.name_de.clone(),
            name_de: area.name_de.clone(),
            name_en: area.name_en.clone(),
        }
    }
}

/// A grant area of a flat list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantAreaFlat {
    #[serde(flatten)]
    pub area: GrantAreaBase,
    /// null for a parent area.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub parent_id: Option<Uuid>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub parent_name: Option<String>,
    pub is_parent: bool,
}

impl GrantAreaFlat {
    pub fn new(cat: &Catalogue, a: Idx) -> Self {
        let parent = cat.area_parent(a).map(|p| &cat.grant_areas[p as usize]);
        GrantAreaFlat {
            area: GrantAreaBase::new(cat, a),
            parent_id: parent.map(|p| p.id),
            parent_name: parent.map(|p| p.name_de.clone()),
            is_parent: parent.is_none(),
        }
    }
}

/// A legal form of applicants.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = EligibleEntity))]
pub struct EligibleEntityView {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
    pub description: String,
    pub description_de: String,
    pub description_en: String,
}

impl EligibleEntityView {
    pub fn new(cat: &Catalogue, e: Idx) -> Self {
        let entity = &cat.eligible_entities[e as usize];
        EligibleEntityView {
            id: entity.id,
            name: entity.name_de.clone(),
            name_de: entity.name_de.clone(),
            name_en: entity.name_en.clone(),
            description: entity.description_de.clone(),
            description_de: entity.description_de.clone(),
            description_en: entity.description_en.clone(),
        }
    }
}

/// A target group.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TargetGroup))]
pub struct TargetGroupView {
    pub id: Uuid,
    pub name: String,
    pub name_de: String,
    pub name_en: String,
}

impl TargetGroupView {
    pub fn new(cat: &Catalogue, t: Idx) -> Self {
        let tg = &cat.target_groups[t as usize];
        TargetGroupView {
            id: tg.id,
            name: tg.name_de.clone(),
            name_de: tg.name_de.clone(),
            name_en: tg.name_en.clone(),
        }
    }
}

/// One ranked match as every front-end shows it (the API adds the id of the stored
/// result; the CLI and Python add the slug).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatchView {
    /// 1 is the best match.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 25))]
    pub rank: u64,
    pub grant_id: Uuid,
    pub title: String,
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    pub relevance_score: u8,
    pub match_category: MatchCategory,
    /// Two or three sentences in the profile's locale, built from facts of the match.
    pub match_reason: String,
    /// Per-criterion checks (extra field).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub checks: Checks,
    /// The need of the profile this programme serves best (extra field): one of its
    /// `keywords` (or unknown target groups, project title; for a German profile without
    /// keywords the funding terms read from its texts), or, when it names none, a
    /// sentence of its description, mission or project; null when the profile has no
    /// need of its own (a single sentence and no keywords) or the server runs with
    /// `need_weight` 0 in `--match-options`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(nullable))]
    pub matched_need: Option<String>,
    /// An investment measure the profile's texts plan that the programme funds for
    /// organisations of its type (extra field): `solar_power`, `wind_power`,
    /// `power_storage`, `building_energy`, `production_energy` or `lighting`; the reason
    /// names it. Such a programme ranks at least like a good topical match but is never
    /// `very_suitable` on the measure alone. Null otherwise.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(nullable))]
    pub planned_measure: Option<crate::facts::measure::Measure>,
}

impl MatchView {
    pub fn new(cat: &Catalogue, m: &Match) -> Self {
        let grant = cat.grant(m.grant);
        MatchView {
            rank: m.rank as u64,
            grant_id: grant.id,
            title: grant.title.clone(),
            relevance_score: m.relevance_score,
            match_category: m.match_category,
            match_reason: m.match_reason.clone(),
            checks: m.checks,
            matched_need: m.matched_need.clone(),
            planned_measure: m.planned_measure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::Check;

    /// Results stored before `checks` and `matched_need` existed still read back.
    #[test]
    fn a_match_stored_without_the_later_fields_reads_back() {
        let stored = serde_json::json!({
            "rank": 1, "grant_id": Uuid::nil(), "title": "T", "relevance_score": 91,
            "match_category": "very_suitable", "match_reason": "R",
            "checks": { "region": "pass" },
        });
        let m: MatchView = serde_json::from_value(stored).expect("readable");
        assert_eq!(m.match_category, MatchCategory::VerySuitable);
        assert_eq!(m.checks.region, Check::Pass);
        assert_eq!(m.checks.funding_type, Check::Unknown);
        assert_eq!(m.matched_need, None);
        assert_eq!(m.planned_measure, None);
        let unknown = serde_json::json!({ "region": "pass", "typo": "fail" });
        assert!(serde_json::from_value::<Checks>(unknown).is_err());
    }
}
