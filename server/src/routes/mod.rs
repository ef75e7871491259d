//! Handlers, one module per resource family.

pub mod grants;
pub mod matching;
pub mod providers;
pub mod reference;
pub mod usage;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::error::ApiError;

/// The `{id}` path segment of a detail endpoint. Unlike `Path<String>`, a segment that
/// cannot be decoded (e.g. percent-encoded bytes that are not UTF-8) is rejected with
/// the API's JSON error body instead of axum's plain-text one.
pub struct PathId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| PathId(id))
            .map_err(|_| ApiError::bad_request("id: the path segment is not valid UTF-8"))
    }
}
