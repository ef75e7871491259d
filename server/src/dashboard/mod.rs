//! The partner dashboard under `/dashboard` (issue #16): server-rendered pages in German
//! and English, usable without JavaScript, reading and writing through the same `Db`,
//! quota and usage code as the API and the CLI.

pub mod auth;
mod context;
mod criteria;
mod grant;
mod history;
mod overview;
pub mod page;
pub use crate::store::dashboard as store;
mod tokens;
pub mod usage;

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::AppState;

/// The pages' Content-Security-Policy: nothing but this origin; the one script is the
/// served file `/dashboard/copy.js` (no inline script).
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

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

async fn copy_js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        page::COPY_JS,
    )
}

/// The dashboard routes (nested under `/dashboard` by [`crate::app`]).
pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(overview::show))
        .route("/style.css", get(style))
        .route("/copy.js", get(copy_js))
        .route("/sign-in", get(auth::sign_in_page).post(auth::sign_in))
        .route("/sign-out", post(auth::sign_out))
        .route(
            "/invite/{invite}",
            get(auth::invite_page).post(auth::set_password),
        )
        .route("/tokens", get(tokens::list).post(tokens::create))
        .route("/tokens/{id}/revoke", post(tokens::revoke))
        .route("/usage", get(usage::show))
        .route("/usage.csv", get(usage::download))
        .route("/matching", get(history::show))
        .route("/grants/{id}", get(grant::show))
        .route(
            "/qualification",
            get(criteria::show).post(criteria::set_prompt),
        )
        .route("/qualification/clear", post(criteria::clear_prompt))
        .route("/categories", post(criteria::add_category))
        .route("/categories/{id}/remove", post(criteria::remove_category))
        .layer(axum::middleware::from_fn(csp))
}
