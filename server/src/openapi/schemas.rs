//! The schemas of every response and request body of the API, in one namespace for the
//! handlers' `#[utoipa::path]` annotations.
//!
//! Responses are the types the handlers serialise, re-exported from `crate::views` and
//! the engine's views (conventions in `crate::views`); the matching request body is the
//! engine's `MatchInput` the handler parses (documented as `MatchingRequest`).

pub use grantmatch_engine::facts::{
    ApplicantType as ApplicantTypeValue, ProgrammeKind as ProgrammeKindValue, Source as FactSource,
};
pub use grantmatch_engine::matching::{
    Check as CheckOutcome, Checks as MatchChecks, MatchCategory,
};
pub use grantmatch_engine::model::{
    Address, ContactPoint, GeoLocation, GrantType, ProviderType, RegionType, SocialMedia,
};
pub use grantmatch_engine::profile::{MatchInput as MatchingRequest, OrganizationProfile, Project};
pub use grantmatch_engine::views::*;

pub use crate::views::*;

pub use crate::error::{ErrorBody, ErrorCode, ErrorDetail};
