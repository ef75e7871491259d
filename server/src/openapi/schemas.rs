//! The schemas of every response and request body of the API, in one namespace for the
//! handlers' `#[utoipa::path]` annotations.
//!
//! Responses are the types the handlers serialise, re-exported from `crate::views` and
//! the engine's views (conventions in `crate::views`). The matching request body is
//! described by the structs below: the handler reads it with the engine's
//! `MatchInput::from_value`, which accepts exactly these fields and explains every
//! refusal (`tests/api/openapi.rs` posts the documented examples).

use serde::Deserialize;
use utoipa::ToSchema;

pub use grantmatch_engine::facts::{
    ApplicantType as ApplicantTypeValue, ProgrammeKind as ProgrammeKindValue, Source as FactSource,
};
pub use grantmatch_engine::matching::{
    Check as CheckOutcome, Checks as MatchChecks, MatchCategory,
};
pub use grantmatch_engine::model::{
    Address, ContactPoint, GeoLocation, GrantType, ProviderType, RegionType, SocialMedia,
};
pub use grantmatch_engine::views::*;

pub use crate::views::*;

// ---------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------

pub use crate::error::{ErrorBody, ErrorCode, ErrorDetail};

// ---------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------

/// The organisation to match. Unknown fields are ignored. Texts up to 20,000 characters, lists up to 100 values.
#[derive(ToSchema, Deserialize)]
pub struct OrganizationProfile {
    /// Detailed description of the organisation (required, not blank); longer and more specific descriptions give better matches.
    #[schema(max_length = 20000)]
    pub description: String,
    #[schema(max_length = 20000, nullable = false)]
    pub name: Option<String>,
    /// Filter: German or English names, slugs, codes or UUIDs at any level; an unknown value is 400.
    #[schema(max_items = 100, nullable = false)]
    pub regions: Option<Vec<String>>,
    /// Filter: names, slugs, codes or UUIDs of parent areas or sub-areas; an unknown value is 400.
    #[schema(max_items = 100, nullable = false)]
    pub grant_areas: Option<Vec<String>>,
    /// Filter: names, slugs, codes or UUIDs of legal forms; an unknown value is 400.
    #[schema(max_items = 100, nullable = false)]
    pub eligible_entities: Option<Vec<String>>,
    pub is_non_profit: Option<bool>,
    #[schema(max_length = 20000, nullable = false)]
    pub mission: Option<String>,
    /// Target group names; names outside the vocabulary are used as keywords.
    #[schema(max_items = 100, nullable = false)]
    pub target_groups: Option<Vec<String>>,
    #[schema(max_items = 100, nullable = false)]
    pub keywords: Option<Vec<String>>,
    pub annual_budget: Option<String>,
    pub number_of_employees: Option<String>,
    /// Language of the match reasons: `de` (default) or `en`.
    #[schema(
        nullable = false,
        pattern = "^\\s*([dD][eE]|[eE][nN])(-[a-zA-Z]{2})?\\s*$"
    )]
    pub locale: Option<String>,
}

/// The project to fund (all optional).
#[derive(ToSchema, Deserialize)]
pub struct Project {
    #[schema(max_length = 20000)]
    pub title: Option<String>,
    #[schema(max_length = 20000)]
    pub description: Option<String>,
    /// Free-text amount, e.g. "50.000 EUR", "1,5 Mio. €", "200k".
    pub budget: Option<String>,
    pub duration: Option<String>,
}

/// The body of `POST /matching`. Unknown fields are ignored (forward compatibility).
#[derive(ToSchema, Deserialize)]
pub struct MatchingRequest {
    /// Id of the organisation in the partner's own system (not blank, at most 200 characters); use the same id consistently.
    #[schema(min_length = 1, max_length = 200)]
    pub organization_id: String,
    pub organization_profile: OrganizationProfile,
    pub project: Option<Project>,
}

// ---------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------
