//! Records of the catalogue, exactly as they are stored in the import format
//! (`docs/catalogue-format.md`). Unknown fields are rejected so that a typo in an
//! operator's file never loses data silently.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Level of a region in the hierarchy continent → country → state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum RegionType {
    Continent,
    Country,
    State,
}

impl RegionType {
    pub fn as_str(self) -> &'static str {
        match self {
            RegionType::Continent => "continent",
            RegionType::Country => "country",
            RegionType::State => "state",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "continent" => Some(Self::Continent),
            "country" => Some(Self::Country),
            "state" => Some(Self::State),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub id: Uuid,
    pub code: String,
    pub slug: String,
    pub name_de: String,
    pub name_en: String,
    pub region_type: RegionType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantArea {
    pub id: Uuid,
    pub code: String,
    pub slug: String,
    pub name_de: String,
    pub name_en: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EligibleEntity {
    pub id: Uuid,
    pub code: String,
    pub slug: String,
    pub name_de: String,
    pub name_en: String,
    pub name_plural_de: String,
    pub name_plural_en: String,
    pub description_de: String,
    pub description_en: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetGroup {
    pub id: Uuid,
    pub code: String,
    pub slug: String,
    pub name_de: String,
    pub name_en: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// Kind of funding body (the record's `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ProviderType {
    FederalMinistry,
    StateMinistry,
    Municipality,
    PublicAgency,
    EuropeanUnion,
    FederalFundingBank,
    PrivateFoundation,
    PublicFoundation,
    PoliticalFoundation,
    FederalFoundation,
    IndustryChamber,
    ResearchInstitution,
    University,
    NonProfitOrganization,
    ChurchOrganization,
    LotteryFund,
    PrivateCompany,
    OtherType,
}

impl ProviderType {
    pub const ALL: [ProviderType; 18] = [
        Self::FederalMinistry,
        Self::StateMinistry,
        Self::Municipality,
        Self::PublicAgency,
        Self::EuropeanUnion,
        Self::FederalFundingBank,
        Self::PrivateFoundation,
        Self::PublicFoundation,
        Self::PoliticalFoundation,
        Self::FederalFoundation,
        Self::IndustryChamber,
        Self::ResearchInstitution,
        Self::University,
        Self::NonProfitOrganization,
        Self::ChurchOrganization,
        Self::LotteryFund,
        Self::PrivateCompany,
        Self::OtherType,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::FederalMinistry => "federal_ministry",
            Self::StateMinistry => "state_ministry",
            Self::Municipality => "municipality",
            Self::PublicAgency => "public_agency",
            Self::EuropeanUnion => "european_union",
            Self::FederalFundingBank => "federal_funding_bank",
            Self::PrivateFoundation => "private_foundation",
            Self::PublicFoundation => "public_foundation",
            Self::PoliticalFoundation => "political_foundation",
            Self::FederalFoundation => "federal_foundation",
            Self::IndustryChamber => "industry_chamber",
            Self::ResearchInstitution => "research_institution",
            Self::University => "university",
            Self::NonProfitOrganization => "non_profit_organization",
            Self::ChurchOrganization => "church_organization",
            Self::LotteryFund => "lottery_fund",
            Self::PrivateCompany => "private_company",
            Self::OtherType => "other_type",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The type a validated record names (`other_type` for a name it does not know,
    /// which import refuses).
    pub fn of(s: &str) -> Self {
        Self::parse(s).unwrap_or(Self::OtherType)
    }

    /// The names of all provider types, for error messages.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.map(Self::as_str).to_vec()
    }

    /// German label (the API's `type_label`).
    pub fn label_de(self) -> &'static str {
        match self {
            Self::FederalMinistry => "Bundesministerium",
            Self::StateMinistry => "Landesministerium",
            Self::Municipality => "Kommune",
            Self::PublicAgency => "Öffentliche Einrichtung",
            Self::EuropeanUnion => "Europäische Union",
            Self::FederalFundingBank => "Förderbank des Bundes",
            Self::PrivateFoundation => "Private Stiftung",
            Self::PublicFoundation => "Öffentliche Stiftung",
            Self::PoliticalFoundation => "Politische Stiftung",
            Self::FederalFoundation => "Bundesstiftung",
            Self::IndustryChamber => "Kammer",
            Self::ResearchInstitution => "Forschungseinrichtung",
            Self::University => "Hochschule",
            Self::NonProfitOrganization => "Gemeinnützige Organisation",
            Self::ChurchOrganization => "Kirchliche Organisation",
            Self::LotteryFund => "Lotteriemittel",
            Self::PrivateCompany => "Unternehmen",
            Self::OtherType => "Sonstige",
        }
    }
}

/// Postal address of a provider; only set fields are present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Address {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub street_and_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub address_line_2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub postal_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub complete_address: Option<String>,
}

/// Geocoded location of a provider; only set fields are present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GeoLocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub latitude: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub longitude: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub federal_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    /// ISO 3166-2:DE code.
    pub federal_state_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub county: Option<String>,
}

/// Social media URLs of a provider; only set fields are present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SocialMedia {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub linkedin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub facebook: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub instagram: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub youtube: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantProvider {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    #[serde(rename = "type")]
    pub provider_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fax: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geo_location: Option<GeoLocation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub social_media: Option<SocialMedia>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Form of the funding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum GrantType {
    Subsidy,
    Loan,
    Guarantee,
    Equity,
}

impl GrantType {
    pub const ALL: [GrantType; 4] = [Self::Subsidy, Self::Loan, Self::Guarantee, Self::Equity];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Subsidy => "subsidy",
            Self::Loan => "loan",
            Self::Guarantee => "guarantee",
            Self::Equity => "equity",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// German name (singular).
    pub fn label_de(self) -> &'static str {
        match self {
            Self::Subsidy => "Zuschuss",
            Self::Loan => "Kredit",
            Self::Guarantee => "Bürgschaft",
            Self::Equity => "Beteiligung",
        }
    }

    /// English name (singular).
    pub fn label_en(self) -> &'static str {
        match self {
            Self::Subsidy => "grant",
            Self::Loan => "loan",
            Self::Guarantee => "guarantee",
            Self::Equity => "equity",
        }
    }
}

/// Contact point of a grant; only the known fields are present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContactPoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub url: Option<String>,
}

/// A funding programme.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    pub id: Uuid,
    pub slug: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub grant_type: GrantType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_provider_id: Option<Uuid>,
    pub region_ids: Vec<Uuid>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grant_area_ids: Vec<Uuid>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_group_ids: Vec<Uuid>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eligible_entity_ids: Vec<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_date: Option<NaiveDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_date: Option<NaiveDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earliest_project_start: Option<NaiveDate>,
    pub ongoing_grant: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_date_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub funding_amount: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_funding_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_duration: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub funding_rate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub funding_goal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_profit_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_point: Option<ContactPoint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eligibility_requirements: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eligible_expenditures: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_eligible_expenditures: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eligible_expenditure_categories: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evaluation_criteria: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents_needed: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub application_links: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guideline_links: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reporting_and_claims_links: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Grant {
    /// True when the grant can still be applied for on `today`.
    pub fn is_open_on(&self, today: NaiveDate) -> bool {
        self.ongoing_grant || self.end_date.is_none_or(|d| d >= today)
    }
}
