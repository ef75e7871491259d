//! The partner dashboard under `/dashboard` (issue #16): server-rendered pages in German
//! and English, usable without JavaScript, reading and writing through the same `Db`,
//! quota and usage code as the API and the CLI.

pub mod auth;
mod overview;
pub mod page;
pub mod store;
mod tokens;

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::AppState;

/// The pages' Content-Security-Policy: nothing but this origin, no script at all.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async fn csp(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert("content-security-policy", HeaderValue::from_static(CSP));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

async fn style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        page::STYLE,
    )
}

/// The dashboard routes (nested under `/dashboard` by [`crate::app`]).
pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(overview::show))
        .route("/style.css", get(style))
        .route("/sign-in", get(auth::sign_in_page).post(auth::sign_in))
        .route("/sign-out", post(auth::sign_out))
        .route(
            "/invite/{invite}",
            get(auth::invite_page).post(auth::set_password),
        )
        .route("/tokens", get(tokens::list).post(tokens::create))
        .route("/tokens/{id}/revoke", post(tokens::revoke))
        .layer(axum::middleware::from_fn(csp))
}
