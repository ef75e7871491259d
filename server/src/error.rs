//! Errors of the server crate and their mapping to HTTP.
//!
//! Every error response has the spec's body `{"error": {"code", "message"}}` (429 adds
//! `retry_after`). Internal details (5xx) are logged, never sent to the client.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Errors of the server's own operations (database, configuration).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("database: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A stored value of an unexpected type, or a database URL that names no backend.
    #[error("database: {0}")]
    Database(String),
    #[error("{0}")]
    Invalid(String),
    #[error("I/O: {0}")]
    Io(String),
    #[error(transparent)]
    Engine(#[from] grantmatch_engine::Error),
    #[error(transparent)]
    Unavailable(#[from] crate::matcher::Unavailable),
    #[error("background task: {0}")]
    Task(String),
}

// The OpenAPI document's `ErrorCode` schema is this enum, so the doc comment below is
// API documentation.
/// Machine-readable error codes; each code always comes with the same HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 400: an invalid parameter value, a malformed JSON body or a missing required field; the message names the parameter or field.
    BadRequest,
    /// 401: missing, malformed, unknown or revoked bearer token.
    Unauthorized,
    /// 403: the token lacks the scope of the endpoint; the message names the scope.
    InsufficientScope,
    /// 403: a filter value lies outside the partner's assigned regions or grant areas.
    OutOfScope,
    /// 404: unknown resource, resource outside the partner scope, or unknown path.
    NotFound,
    /// 405: the path exists but not with this method.
    MethodNotAllowed,
    /// 413: the request body is larger than the limit.
    PayloadTooLarge,
    /// 415: a request body without `Content-Type: application/json`.
    UnsupportedMediaType,
    /// 429: a rate limit was exceeded; see `retry_after` and the `Retry-After` header.
    RateLimitExceeded,
    /// 500: an internal error (details only in the server log).
    InternalError,
    /// 503: matching temporarily unavailable (model loading, no embeddings, queue full).
    ServiceUnavailable,
    /// 503: the request took longer than the server's time limit and was aborted.
    Timeout,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 12] = [
        Self::BadRequest,
        Self::Unauthorized,
        Self::InsufficientScope,
        Self::OutOfScope,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
        Self::RateLimitExceeded,
        Self::InternalError,
        Self::ServiceUnavailable,
        Self::Timeout,
    ];

    /// The HTTP status every response with this code has.
    pub const fn status(self) -> StatusCode {
        match self {
            Self::BadRequest => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::InsufficientScope | Self::OutOfScope => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RateLimitExceeded => StatusCode::TOO_MANY_REQUESTS,
            Self::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Self::ServiceUnavailable | Self::Timeout => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code as it appears in the body (`bad_request` …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "bad_request",
            Self::Unauthorized => "unauthorized",
            Self::InsufficientScope => "insufficient_scope",
            Self::OutOfScope => "out_of_scope",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::RateLimitExceeded => "rate_limit_exceeded",
            Self::InternalError => "internal_error",
            Self::ServiceUnavailable => "service_unavailable",
            Self::Timeout => "timeout",
        }
    }
}

/// An error answer of the API; its status is its code's.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            retry_after: None,
        }
    }
    pub fn status(&self) -> StatusCode {
        self.code.status()
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, message)
    }
    pub fn insufficient_scope(scope: &str) -> Self {
        Self::new(
            ErrorCode::InsufficientScope,
            format!("this token lacks the scope `{scope}`"),
        )
    }
    pub fn out_of_scope(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::OutOfScope, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn method_not_allowed() -> Self {
        Self::new(
            ErrorCode::MethodNotAllowed,
            "this method is not allowed on this endpoint",
        )
    }
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::InternalError,
            "an internal error occurred; it has been logged",
        )
    }
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ServiceUnavailable, message)
    }
}

impl From<ServerError> for ApiError {
    fn from(e: ServerError) -> Self {
        match e {
            ServerError::Invalid(m) => ApiError::bad_request(m),
            ServerError::Engine(e) => e.into(),
            ServerError::Unavailable(u) => u.into(),
            other => {
                tracing::error!(error = %other, "internal error");
                ApiError::internal()
            }
        }
    }
}

impl From<crate::matcher::Unavailable> for ApiError {
    fn from(e: crate::matcher::Unavailable) -> Self {
        ApiError::service_unavailable(e.to_string())
    }
}

impl From<grantmatch_engine::Error> for ApiError {
    fn from(e: grantmatch_engine::Error) -> Self {
        use grantmatch_engine::Error as E;
        match e {
            E::InvalidInput(m) => ApiError::bad_request(m),
            E::NotFound(m) => ApiError::not_found(m),
            E::Filter(f) => f.into(),
            other => {
                tracing::error!(error = %other, "engine error");
                ApiError::internal()
            }
        }
    }
}

impl From<grantmatch_engine::FilterError> for ApiError {
    fn from(e: grantmatch_engine::FilterError) -> Self {
        use grantmatch_engine::FilterError as F;
        match e {
            F::Unknown { .. } => ApiError::bad_request(e.to_string()),
            F::OutOfScope { .. } => ApiError::out_of_scope(e.to_string()),
        }
    }
}

/// How to fix an engine error of the set-up, for the operator running `grantmatch`: the
/// engine names what is missing, the front-end says how to get it.
pub fn setup_hint(e: &grantmatch_engine::Error) -> Option<&'static str> {
    use grantmatch_engine::Error as E;
    match e {
        E::ModelFileMissing(_) => Some(
            "build the model assets with `grantmatch model fetch` (or `make model`), or point \
             GRANTMATCH_MODEL_DIR at a directory that has them",
        ),
        E::NoCatalogue(_) => Some("run `grantmatch import DIR` first"),
        _ => None,
    }
}

/// An engine error with its [`setup_hint`], if it has one.
pub fn with_setup_hint(e: &grantmatch_engine::Error) -> String {
    match setup_hint(e) {
        Some(h) => format!("{e} — {h}"),
        None => e.to_string(),
    }
}

/// Seconds in the `Retry-After` header of a 503 (model loading, queue full, timeout).
pub const RETRY_AFTER_UNAVAILABLE: u64 = 5;

/// The `error` object of every error response.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    /// Human-readable explanation; names the offending parameter or field. Never echoes a token.
    #[schema(example = "page: `0` is not a positive integer")]
    pub message: String,
    /// Only on 429: seconds to wait before retrying (also sent as the `Retry-After` header).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, nullable = false)]
    pub retry_after: Option<u64>,
}

/// The body of every error response (4xx and 5xx).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let retry_after = self.retry_after;
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: self.message,
                retry_after,
            },
        };
        let mut resp = (status, axum::Json(body)).into_response();
        // Every 503 tells the client when to retry; a 429 says exactly when.
        let retry = retry_after
            .or((status == StatusCode::SERVICE_UNAVAILABLE).then_some(RETRY_AFTER_UNAVAILABLE));
        if let Some(s) = retry {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}
