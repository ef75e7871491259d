//! `ApiJson<T>`: the JSON body extractor whose rejections are the spec's error body.
//!
//! 413 `payload_too_large` for a body over the limit, 415 `unsupported_media_type`
//! without a JSON content type, 400 `bad_request` for a body that is not valid JSON or
//! not of the shape `T` (serde's message names the field). Handlers that check a scope
//! first take `Result<ApiJson<T>, ApiError>` and return the rejection after the check.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ErrorCode};

/// A JSON request body parsed into `T`.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

/// `application/json` or any `+json` type, parameters ignored.
fn is_json(headers: &HeaderMap) -> bool {
    let mime = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|ct| ct.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json" || mime.ends_with("+json")
}

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let json = is_json(req.headers());
        let body = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    ErrorCode::PayloadTooLarge,
                    "the request body is larger than the limit (64 KiB by default)",
                )
            } else {
                ApiError::bad_request(format!("cannot read the request body: {e}"))
            }
        })?;
        if !json {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "the request body must be JSON with Content-Type: application/json",
            ));
        }
        serde_json::from_slice(&body)
            .map(ApiJson)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))
    }
}
