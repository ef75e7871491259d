//! The tokens page: list, create with chosen scopes (shown once) and revoke, through
//! the same `Db` functions as the CLI. A token of another partner is 404.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use uuid::Uuid;

use super::auth::SignedIn;
use super::page::{esc, form_fields, page, Lang, Nav};
use crate::db::SCOPES;
use crate::AppState;

async fn render(
    state: &Arc<AppState>,
    lang: Lang,
    signed: &SignedIn,
    created: Option<&str>,
    error: Option<&str>,
) -> Response {
    let session = &signed.0;
    let partner_id = session.user.partner_id;
    let loaded = state.store.token_page(partner_id).await;
    let Ok(crate::store::TokenPage {
        partner: Some(partner),
        tokens,
        last_used,
    }) = loaded
    else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let csrf = esc(&session.csrf);
    let shown = created
        .map(|t| {
            format!(
                r#"<div class="notice" role="status"><p>{once}</p><p><label>{label}<br><input id="new-token" readonly size="70" value="{t}"></label></p><p><button type="button" data-copy="new-token" data-done="{copied}" hidden>{copy}</button></p></div>"#,
                once = lang.t(
                    "Your new token. It is shown only now: copy it and keep it safe.",
                    "Ihr neuer Token. Er wird nur jetzt angezeigt: kopieren und sicher aufbewahren."
                ),
                label = lang.t("Token", "Token"),
                t = esc(t),
                copy = lang.t("Copy", "Kopieren"),
                copied = lang.t("Copied", "Kopiert"),
            )
        })
        .unwrap_or_default();
    let error = error
        .map(|e| format!(r#"<p class="notice exceeded" role="alert">{}</p>"#, esc(e)))
        .unwrap_or_default();
    let checkboxes: String = SCOPES
        .iter()
        .map(|s| {
            format!(
                r#"<label><input type="checkbox" name="scope" value="{s}" checked> {s}</label> "#
            )
        })
        .collect();
    let rows: String = tokens
        .iter()
        .rev()
        .map(|t| {
            let action = if t.revoked_at.is_some() {
                lang.t("revoked", "widerrufen").to_string()
            } else {
                format!(
                    r#"<form method="post" action="/dashboard/tokens/{id}/revoke" class="inline"><input type="hidden" name="csrf" value="{csrf}"><button type="submit">{revoke}</button></form>"#,
                    id = t.id,
                    revoke = lang.t("Revoke", "Widerrufen"),
                )
            };
            format!(
                r#"<tr data-token="{id}"><td><code>{id}</code></td><td>{scopes}</td><td>{created}</td><td>{used}</td><td>{action}</td></tr>"#,
                id = t.id,
                scopes = esc(&t.scopes.join(", ")),
                created = t.created_at.format("%Y-%m-%d %H:%M"),
                used = last_used.get(&t.id).map(|u| esc(u.get(..16).unwrap_or(u))).unwrap_or_else(|| "–".into()),
            )
        })
        .collect();
    let body = format!(
        r#"{shown}{error}<h2>{new}</h2>
<form method="post" action="/dashboard/tokens"><input type="hidden" name="csrf" value="{csrf}">
<p>{checkboxes}</p><p><button type="submit">{create}</button></p></form>
<h2>{list}</h2>
<table><thead><tr><th>Id</th><th>{scopes}</th><th>{created}</th><th>{used}</th><th></th></tr></thead><tbody>{rows}</tbody></table>"#,
        new = lang.t("New token", "Neuer Token"),
        create = lang.t("Create token", "Token erstellen"),
        list = lang.t("Tokens", "Tokens"),
        scopes = lang.t("Scopes", "Berechtigungen"),
        created = lang.t("Created", "Erstellt"),
        used = lang.t("Last used", "Zuletzt benutzt"),
    );
    let nav = Nav {
        partner: &partner.name,
        csrf: &session.csrf,
    };
    page(lang, lang.t("API tokens", "API-Tokens"), Some(nav), &body).into_response()
}

pub async fn list(State(state): State<Arc<AppState>>, lang: Lang, signed: SignedIn) -> Response {
    render(&state, lang, &signed, None, None).await
}

pub async fn create(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    body: axum::body::Bytes,
) -> Response {
    let form = form_fields(&body);
    if !signed.csrf_ok(&form) {
        return super::auth::csrf_refused();
    }
    let scopes: Vec<String> = form
        .iter()
        .filter(|(k, _)| k == "scope")
        .map(|(_, v)| v.clone())
        .collect();
    let partner = signed.0.user.partner_id;
    let created = state.store.create_token(partner, scopes).await;
    match created {
        Ok((_, token)) => render(&state, lang, &signed, Some(&token), None).await,
        Err(crate::error::ServerError::Invalid(m)) => {
            let mut r = render(&state, lang, &signed, None, Some(&m)).await;
            *r.status_mut() = StatusCode::BAD_REQUEST;
            r
        }
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

pub async fn revoke(
    State(state): State<Arc<AppState>>,
    signed: SignedIn,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    if !signed.csrf_ok(&form_fields(&body)) {
        return super::auth::csrf_refused();
    }
    let Ok(id) = id.parse::<Uuid>() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let partner = signed.0.user.partner_id;
    match state.store.revoke_own_token(partner, id).await {
        Ok(None) => (StatusCode::NOT_FOUND, "404 Not Found").into_response(),
        Ok(Some(_)) => Redirect::to("/dashboard/tokens").into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
