//! Passwords (argon2id), the session cookie, CSRF checks and the sign-in, set-password
//! and sign-out pages.

use std::sync::Arc;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use subtle::ConstantTimeEq;

use super::page::{esc, form_fields, page, Lang};
use super::store::{secret, Session};
use crate::store::SignIn;
use crate::AppState;

pub const SESSION_COOKIE: &str = "gm_session";
/// Double-submit CSRF cookie of the forms shown before sign-in.
pub const PRE_CSRF_COOKIE: &str = "gm_csrf";
pub const MIN_PASSWORD: usize = 12;

pub fn hash_password(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// True when the request came over TLS (directly or through a proxy that says so).
fn behind_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"))
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax, path /dashboard, Secure behind TLS.
pub fn set_cookie(headers: &HeaderMap, name: &str, value: &str, max_age: i64) -> HeaderValue {
    let secure = if behind_tls(headers) { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/dashboard; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static(""))
}

pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// 403 for a form without a valid CSRF token.
pub fn csrf_refused() -> Response {
    (
        StatusCode::FORBIDDEN,
        "403 Forbidden: missing or invalid CSRF token",
    )
        .into_response()
}

/// The signed-in session of a request; pages redirect to the sign-in page without one.
pub struct SignedIn(pub Session, pub String);

impl FromRequestParts<Arc<AppState>> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Response> {
        let id = cookie(&parts.headers, SESSION_COOKIE);
        let session = match id.clone() {
            Some(id) => state
                .store
                .session(id, state.clock.now())
                .await
                .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())?,
            None => None,
        };
        match (session, id) {
            (Some(s), Some(id)) => Ok(SignedIn(s, id)),
            _ => Err(Redirect::to("/dashboard/sign-in").into_response()),
        }
    }
}

impl SignedIn {
    /// Checks the CSRF field of a posted form.
    pub fn csrf_ok(&self, form: &[(String, String)]) -> bool {
        field(form, "csrf").is_some_and(|t| same(t, &self.0.csrf))
    }
}

pub fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Checks the double-submit CSRF token of a form shown before sign-in.
fn pre_csrf_ok(headers: &HeaderMap, form: &[(String, String)]) -> bool {
    match (cookie(headers, PRE_CSRF_COOKIE), field(form, "csrf")) {
        (Some(c), Some(f)) => same(&c, f),
        _ => false,
    }
}

fn with_pre_csrf(
    headers: &HeaderMap,
    lang: Lang,
    title: &str,
    body: impl Fn(&str) -> String,
) -> Response {
    let token = secret();
    let mut resp = page(lang, title, None, &body(&token)).into_response();
    resp.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(headers, PRE_CSRF_COOKIE, &token, 3600),
    );
    resp
}

fn sign_in_form(lang: Lang, message: Option<&str>) -> impl Fn(&str) -> String + '_ {
    move |csrf| {
        format!(
            r#"{msg}<form method="post" action="/dashboard/sign-in">
<input type="hidden" name="csrf" value="{csrf}">
<p><label>{email}<br><input type="email" name="email" required autocomplete="username"></label></p>
<p><label>{password}<br><input type="password" name="password" required autocomplete="current-password"></label></p>
<p><button type="submit">{submit}</button></p>
</form>"#,
            msg = message
                .map(|m| format!(r#"<p class="notice" role="alert">{}</p>"#, esc(m)))
                .unwrap_or_default(),
            email = lang.t("E-mail", "E-Mail"),
            password = lang.t("Password", "Passwort"),
            submit = lang.t("Sign in", "Anmelden"),
        )
    }
}

pub async fn sign_in_page(lang: Lang, headers: HeaderMap) -> Response {
    with_pre_csrf(
        &headers,
        lang,
        lang.t("Sign in", "Anmelden"),
        sign_in_form(lang, None),
    )
}

pub async fn sign_in(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let form = form_fields(&body);
    if !pre_csrf_ok(&headers, &form) {
        return csrf_refused();
    }
    let email = field(&form, "email").unwrap_or("");
    let password = field(&form, "password").unwrap_or("");
    let now = state.clock.now();
    let fail = |msg: &str, status: StatusCode| {
        let mut r = with_pre_csrf(
            &headers,
            lang,
            lang.t("Sign in", "Anmelden"),
            sign_in_form(lang, Some(msg)),
        );
        *r.status_mut() = status;
        r
    };
    // The store's part (and the password check) on the blocking pool: the lockout
    // count, then a session or a recorded failure.
    let outcome = state
        .store
        .sign_in(
            email.to_string(),
            password.to_string(),
            now,
            verify_password,
        )
        .await;
    let outcome = match outcome {
        Ok(o) => o,
        Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    if let SignIn::Locked = outcome {
        return fail(
            lang.t(
                "Too many failed attempts: this account is locked for 15 minutes.",
                "Zu viele Fehlversuche: dieses Konto ist für 15 Minuten gesperrt.",
            ),
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    match outcome {
        SignIn::Session(session) => match session {
            Ok(id) => {
                let mut resp = Redirect::to("/dashboard").into_response();
                resp.headers_mut().append(
                    header::SET_COOKIE,
                    set_cookie(
                        &headers,
                        SESSION_COOKIE,
                        &id,
                        super::store::SESSION_VALIDITY.num_seconds(),
                    ),
                );
                resp
            }
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        },
        _ => fail(
            lang.t("Wrong e-mail or password.", "E-Mail oder Passwort falsch."),
            StatusCode::UNAUTHORIZED,
        ),
    }
}

pub async fn sign_out(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    signed: SignedIn,
    body: axum::body::Bytes,
) -> Response {
    if !signed.csrf_ok(&form_fields(&body)) {
        return csrf_refused();
    }
    let _ = state.store.end_session(signed.1.clone()).await;
    let mut resp = Redirect::to("/dashboard/sign-in").into_response();
    resp.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(&headers, SESSION_COOKIE, "", 0),
    );
    resp
}

fn invite_form(
    lang: Lang,
    invite: &str,
    email: &str,
    message: Option<&str>,
) -> impl Fn(&str) -> String {
    let (invite, email) = (invite.to_string(), email.to_string());
    let message = message.map(str::to_string);
    move |csrf| {
        format!(
            r#"{msg}<p>{intro} <strong>{email}</strong></p>
<form method="post" action="/dashboard/invite/{invite}">
<input type="hidden" name="csrf" value="{csrf}">
<p><label>{password}<br><input type="password" name="password" required minlength="{MIN_PASSWORD}" autocomplete="new-password"></label></p>
<p><button type="submit">{submit}</button></p>
</form>"#,
            msg = message
                .as_deref()
                .map(|m| format!(r#"<p class="notice" role="alert">{}</p>"#, esc(m)))
                .unwrap_or_default(),
            intro = lang.t(
                "Choose a password (at least 12 characters) for",
                "Wählen Sie ein Passwort (mindestens 12 Zeichen) für"
            ),
            email = esc(&email),
            invite = esc(&invite),
            password = lang.t("New password", "Neues Passwort"),
            submit = lang.t("Set password", "Passwort setzen"),
        )
    }
}

fn invite_gone(lang: Lang) -> Response {
    let mut r = page(
        lang,
        lang.t("Invitation", "Einladung"),
        None,
        lang.t(
            "<p>This link is unknown, expired or already used. Ask your operator for a new one.</p>",
            "<p>Dieser Link ist unbekannt, abgelaufen oder schon benutzt. Bitten Sie Ihren Betreiber um einen neuen.</p>",
        ),
    )
    .into_response();
    *r.status_mut() = StatusCode::NOT_FOUND;
    r
}

pub async fn invite_page(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    headers: HeaderMap,
    Path(invite): Path<String>,
) -> Response {
    match state
        .store
        .invite_user(invite.clone(), state.clock.now())
        .await
    {
        Ok(Some(user)) => with_pre_csrf(
            &headers,
            lang,
            lang.t("Set your password", "Passwort setzen"),
            invite_form(lang, &invite, &user.email, None),
        ),
        _ => invite_gone(lang),
    }
}

pub async fn set_password(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    headers: HeaderMap,
    Path(invite): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let form = form_fields(&body);
    if !pre_csrf_ok(&headers, &form) {
        return csrf_refused();
    }
    let now = state.clock.now();
    let Ok(Some(user)) = state.store.invite_user(invite.clone(), now).await else {
        return invite_gone(lang);
    };
    let password = field(&form, "password").unwrap_or("");
    if password.chars().count() < MIN_PASSWORD {
        let mut r = with_pre_csrf(
            &headers,
            lang,
            lang.t("Set your password", "Passwort setzen"),
            invite_form(
                lang,
                &invite,
                &user.email,
                Some(lang.t("The password is too short.", "Das Passwort ist zu kurz.")),
            ),
        );
        *r.status_mut() = StatusCode::BAD_REQUEST;
        return r;
    }
    let Ok(hash) = hash_password(password) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    match state.store.redeem_invite(invite.clone(), hash, now).await {
        Ok(true) => Redirect::to("/dashboard/sign-in").into_response(),
        Ok(false) => invite_gone(lang),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
