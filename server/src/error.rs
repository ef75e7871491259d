//! Errors of the server crate and their mapping to HTTP.
//!
//! Every error response has the spec's body `{"error": {"code", "message"}}` (429 adds
//! `retry_after`). Internal details (5xx) are logged, never sent to the client.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Errors of the server's own operations (database, configuration).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("{0}")]
    Invalid(String),
    #[error("I/O: {0}")]
    Io(String),
    #[error(transparent)]
    Engine(#[from] grantmatch_engine::Error),
}

/// An error answer of the API.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
    pub fn insufficient_scope(scope: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            format!("this token lacks the scope `{scope}`"),
        )
    }
    pub fn out_of_scope(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "out_of_scope", message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "an internal error occurred; it has been logged",
        )
    }
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "service_unavailable",
            message,
        )
    }
}

impl From<ServerError> for ApiError {
    fn from(e: ServerError) -> Self {
        match e {
            ServerError::Invalid(m) => ApiError::bad_request(m),
            ServerError::Engine(e) => e.into(),
            other => {
                tracing::error!(error = %other, "internal error");
                ApiError::internal()
            }
        }
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(s) = self.retry_after {
            error["retry_after"] = json!(s);
        }
        let mut resp = (self.status, axum::Json(json!({ "error": error }))).into_response();
        // Every 503 tells the client when to retry; a 429 says exactly when.
        let retry =
            self.retry_after
                .or((self.status == StatusCode::SERVICE_UNAVAILABLE)
                    .then_some(RETRY_AFTER_UNAVAILABLE));
        if let Some(s) = retry {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}
