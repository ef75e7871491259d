//! The API's response types. Each handler returns one of them, and the OpenAPI document
//! is generated from the same types (`crate::openapi::schemas` re-exports them), so a
//! response and its documentation cannot drift apart.
//!
//! The record views (a grant, a region, a provider …) come from the engine
//! (`grantmatch_engine::views`, shared with the Python module); these modules add what
//! only the server knows — the calling partner's annotations and the envelopes, paging,
//! hierarchy and scoped counts of each response — with `#[serde(flatten)]` where a
//! response extends a record view (the document shows one object; see
//! `crate::openapi`).
//!
//! Conventions: `#[serde(deny_unknown_fields)]` makes a response object closed
//! (`additionalProperties: false`), so an undocumented field fails the tests. A field
//! that is always present but may be null is `Option<T>` with
//! `#[schema(required = true)]`; a field that may be absent is `Option<T>` skipped when
//! `None`, with `#[schema(nullable = false)]`.

mod grants;
mod matching;
mod providers;
mod reference;
mod service;
mod usage;

pub use grants::*;
pub use matching::*;
pub use providers::*;
pub use reference::*;
pub use service::*;
pub use usage::*;
