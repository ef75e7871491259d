//! What every signed-in page needs: the session's partner with its scope resolved (the
//! same [`crate::auth::PartnerCache`] as the API) and the page frame around a body.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::auth::SignedIn;
use super::page::{esc, page, Lang, Nav};
use crate::auth::PartnerCtx;
use crate::AppState;

/// A signed-in request: its language, session and partner.
pub struct Ctx {
    pub lang: Lang,
    pub signed: SignedIn,
    pub partner: Arc<PartnerCtx>,
}

impl Ctx {
    /// None when the session's partner cannot be read (answer [`internal`]).
    pub async fn new(state: &Arc<AppState>, lang: Lang, signed: SignedIn) -> Option<Ctx> {
        let id = signed.0.user.partner_id;
        match state
            .store
            .partner_ctx(state.engine(), state.partners.clone(), id)
            .await
        {
            Ok(Some(partner)) => Some(Ctx {
                lang,
                signed,
                partner,
            }),
            _ => None,
        }
    }

    pub fn t(&self, en: &'static str, de: &'static str) -> &'static str {
        self.lang.t(en, de)
    }

    pub fn csrf(&self) -> String {
        esc(&self.signed.0.csrf)
    }

    pub fn partner_id(&self) -> uuid::Uuid {
        self.partner.partner.id
    }

    /// The page with the signed-in navigation.
    pub fn page(&self, title: &str, body: &str) -> Response {
        let nav = Nav {
            partner: &self.partner.partner.name,
            csrf: &self.signed.0.csrf,
        };
        page(self.lang, title, Some(nav), body).into_response()
    }

    /// A page with `status` whose body starts with an alert saying `message`.
    pub fn page_with_error(
        &self,
        status: StatusCode,
        title: &str,
        message: &str,
        body: &str,
    ) -> Response {
        let alert = format!(
            r#"<p class="notice exceeded" role="alert">{}</p>"#,
            esc(message)
        );
        let mut r = self.page(title, &format!("{alert}{body}"));
        *r.status_mut() = status;
        r
    }
}

/// 500 for a store error (logged; no detail for the browser).
pub fn internal(e: impl std::fmt::Display) -> Response {
    tracing::error!("dashboard: {e}");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "500 Internal Server Error",
    )
        .into_response()
}
