//! The partner dashboard over HTTP (no browser): invite → password → sign-in → quota →
//! token create/use/revoke, CSRF refusal, sign-in lockout, partner isolation, invite
//! expiry and one-time use, cookie flags and the Content-Security-Policy.

use std::sync::Arc;

use axum::http::StatusCode;
use chrono::{Duration, TimeZone, Utc};
use grantmatch_server::clock::Clock;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::matching_store::MatchingRecord;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::usage::QuotaPolicy;
use grantmatch_server::AppState;
use uuid::Uuid;

use crate::common::{send_with, tiny_engine_plain, Resp};

pub(crate) const PASSWORD: &str = "correct horse battery";

pub(crate) fn state(quarter_share: f64) -> Arc<AppState> {
    let db = Arc::new(Db::for_tests().unwrap());
    Arc::new(
        AppState::new(tiny_engine_plain(), db)
            .with_rate_limits(RateLimits {
                enabled: false,
                ..Default::default()
            })
            .with_quota_policy(QuotaPolicy { quarter_share })
            .with_clock(Clock::fixed(
                Utc.with_ymd_and_hms(2026, 11, 20, 10, 0, 0).unwrap(),
            )),
    )
}

pub(crate) fn partner(s: &AppState, name: &str) -> Uuid {
    crate::common::off_runtime(|| {
        s.store.db().create_partner(&NewPartner {
            name: name.into(),
            tier: "starter".into(),
            ..Default::default()
        })
    })
    .unwrap()
    .id
}

/// The value of a `Set-Cookie` header of `name`, whole.
pub(crate) fn set_cookie(r: &Resp, name: &str) -> Option<String> {
    r.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(str::to_string)
}

pub(crate) fn cookie_value(r: &Resp, name: &str) -> String {
    let c = set_cookie(r, name).unwrap_or_else(|| panic!("no {name} cookie: {:?}", r.headers));
    c.split(';').next().unwrap()[name.len() + 1..].to_string()
}

/// The value of the hidden `csrf` field of a page.
pub(crate) fn csrf_field(html: &str) -> String {
    let at = html.find(r#"name="csrf" value=""#).expect("a csrf field") + 19;
    html[at..].split('"').next().unwrap().to_string()
}

pub(crate) async fn get(s: &Arc<AppState>, uri: &str, cookie: &str) -> Resp {
    send_with(s, "GET", uri, &[("cookie", cookie)], vec![]).await
}

pub(crate) async fn post(s: &Arc<AppState>, uri: &str, cookie: &str, form: &str) -> Resp {
    send_with(
        s,
        "POST",
        uri,
        &[
            ("cookie", cookie),
            ("content-type", "application/x-www-form-urlencoded"),
        ],
        form.as_bytes().to_vec(),
    )
    .await
}

/// Sets the password through the invite page.
pub(crate) async fn set_password(s: &Arc<AppState>, invite: &str) -> Resp {
    let page = get(s, &format!("/dashboard/invite/{invite}"), "").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    let pre = cookie_value(&page, "gm_csrf");
    post(
        s,
        &format!("/dashboard/invite/{invite}"),
        &format!("gm_csrf={pre}"),
        &format!(
            "csrf={}&password={}",
            csrf_field(&page.text),
            PASSWORD.replace(' ', "+")
        ),
    )
    .await
}

pub(crate) async fn sign_in(s: &Arc<AppState>, email: &str, password: &str) -> Resp {
    let page = get(s, "/dashboard/sign-in", "").await;
    let pre = cookie_value(&page, "gm_csrf");
    post(
        s,
        "/dashboard/sign-in",
        &format!("gm_csrf={pre}"),
        &format!(
            "csrf={}&email={email}&password={}",
            csrf_field(&page.text),
            password.replace(' ', "+")
        ),
    )
    .await
}

/// A signed-in user of a new partner: (partner id, session cookie header).
pub(crate) async fn user(s: &Arc<AppState>, name: &str, email: &str) -> (Uuid, String) {
    let p = partner(s, name);
    (p, user_of(s, p, email).await)
}

/// A signed-in user of partner `p`: the session cookie header.
pub(crate) async fn user_of(s: &Arc<AppState>, p: Uuid, email: &str) -> String {
    let (_, invite) =
        crate::common::off_runtime(|| s.store.db().add_user(p, email, s.clock.now())).unwrap();
    let r = set_password(s, &invite).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = sign_in(s, email, PASSWORD).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    format!("gm_session={}", cookie_value(&r, "gm_session"))
}

#[tokio::test]
async fn invite_password_sign_in_quota_token_lifecycle() {
    let s = state(0.25);
    let (_, session) = user(&s, "A", "a@example.org").await;
    let overview = get(&s, "/dashboard", &session).await;
    assert_eq!(overview.status, StatusCode::OK);
    assert!(overview.text.contains("2026-Q4"), "{}", overview.text);
    assert!(overview.text.contains("0 / 2500"), "{}", overview.text);
    assert!(!overview.text.contains("role=\"alert\""));
    let csp = overview.headers["content-security-policy"]
        .to_str()
        .unwrap();
    assert!(
        csp.contains("default-src 'none'") && !csp.contains("unsafe"),
        "{csp}"
    );
    assert_eq!(overview.headers["x-frame-options"], "DENY");
    assert_eq!(overview.headers["x-content-type-options"], "nosniff");

    let tokens = get(&s, "/dashboard/tokens", &session).await;
    let csrf = csrf_field(&tokens.text);
    let created = post(
        &s,
        "/dashboard/tokens",
        &session,
        &format!("csrf={csrf}&scope=grants%3Aread"),
    )
    .await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text);
    let at = created
        .text
        .find(r#"id="new-token" readonly size="70" value=""#)
        .unwrap()
        + 41;
    let token = created.text[at..].split('"').next().unwrap().to_string();
    assert!(token.starts_with("gm_"), "{token}");
    let bearer = format!("Bearer {token}");
    let api = send_with(
        &s,
        "GET",
        "/api/v1/grants",
        &[("authorization", &bearer)],
        vec![],
    )
    .await;
    assert_eq!(api.status, StatusCode::OK, "{}", api.text);
    // The token is listed without its secret; revoke it.
    let listed = get(&s, "/dashboard/tokens", &session).await;
    assert!(!listed.text.contains(&token));
    let at = listed.text.find("data-token=\"").unwrap() + 12;
    let id = &listed.text[at..at + 36];
    let r = post(
        &s,
        &format!("/dashboard/tokens/{id}/revoke"),
        &session,
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let api = send_with(
        &s,
        "GET",
        "/api/v1/grants",
        &[("authorization", &bearer)],
        vec![],
    )
    .await;
    assert_eq!(api.status, StatusCode::UNAUTHORIZED);

    // Sign-out ends the session.
    let r = post(&s, "/dashboard/sign-out", &session, &format!("csrf={csrf}")).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = get(&s, "/dashboard", &session).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.headers["location"], "/dashboard/sign-in");
}

#[tokio::test]
async fn warning_and_exceeded_notices() {
    // Starter: 10,000 a year; a share of 0.001 leaves 10 matchings a quarter.
    let s = state(0.001);
    let (p, session) = user(&s, "A", "a@example.org").await;
    let now = s.clock.now();
    let record = |i: usize| MatchingRecord {
        id: Uuid::new_v4(),
        partner_id: p,
        token_id: Uuid::new_v4(),
        organization_id: format!("org-{i}"),
        request: serde_json::json!({}),
        status: grantmatch_server::matching_store::MatchingStatus::Completed,
        results: Some(vec![]),
        results_count: Some(0),
        error: None,
        created_at: now,
        completed_at: Some(now),
    };
    for i in 0..8 {
        crate::common::off_runtime(|| s.store.db().insert_matching(&record(i))).unwrap();
    }
    let r = get(&s, "/dashboard", &session).await;
    assert!(!r.text.contains("role=\"alert\""), "{}", r.text);
    crate::common::off_runtime(|| s.store.db().insert_matching(&record(8))).unwrap();
    let r = get(&s, "/dashboard", &session).await;
    assert!(r.text.contains("90 %"), "{}", r.text);
    let r = get(&s, "/dashboard?lang=de", &session).await;
    assert!(r.text.contains("Warnung: 90 %"), "{}", r.text);
    for i in 9..11 {
        crate::common::off_runtime(|| s.store.db().insert_matching(&record(i))).unwrap();
    }
    let r = get(&s, "/dashboard", &session).await;
    assert!(r.text.contains("Quota exceeded"), "{}", r.text);
}

#[tokio::test]
async fn forms_without_csrf_are_403() {
    let s = state(0.25);
    let (p, session) = user(&s, "A", "a@example.org").await;
    for form in [
        "scope=grants%3Aread",
        "csrf=&scope=grants%3Aread",
        "csrf=0000&scope=grants%3Aread",
    ] {
        let r = post(&s, "/dashboard/tokens", &session, form).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{form}");
    }
    assert!(crate::common::off_runtime(|| s.store.db().tokens(p))
        .unwrap()
        .is_empty());
    let (row, _) =
        crate::common::off_runtime(|| s.store.db().create_token(p, &["grants:read".into()]))
            .unwrap();
    let r = post(
        &s,
        &format!("/dashboard/tokens/{}/revoke", row.id),
        &session,
        "",
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        crate::common::off_runtime(|| s.store.db().tokens(p)).unwrap()[0]
            .revoked_at
            .is_none()
    );
    let r = post(&s, "/dashboard/sign-out", &session, "").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    // The sign-in form too: no double-submit cookie, or a field that does not match it.
    let r = post(
        &s,
        "/dashboard/sign-in",
        "",
        &format!("email=a@example.org&password={PASSWORD}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = post(
        &s,
        "/dashboard/sign-in",
        "gm_csrf=abc",
        &format!("csrf=abd&email=a@example.org&password={PASSWORD}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn five_failed_sign_ins_lock_the_account_for_15_minutes() {
    let s = state(0.25);
    user(&s, "A", "a@example.org").await;
    for _ in 0..5 {
        let r = sign_in(&s, "a@example.org", "wrong password!").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        assert!(set_cookie(&r, "gm_session").is_none());
    }
    let r = sign_in(&s, "a@example.org", PASSWORD).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
    assert!(set_cookie(&r, "gm_session").is_none());
    s.clock.set(s.clock.now() + Duration::minutes(16));
    let r = sign_in(&s, "a@example.org", PASSWORD).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
}

#[tokio::test]
async fn another_partners_user_cannot_see_or_revoke_tokens() {
    let s = state(0.25);
    let (a, _) = user(&s, "A", "a@example.org").await;
    let (_, session_b) = user(&s, "B", "b@example.org").await;
    let (row, _) =
        crate::common::off_runtime(|| s.store.db().create_token(a, &["grants:read".into()]))
            .unwrap();
    let page = get(&s, "/dashboard/tokens", &session_b).await;
    assert!(!page.text.contains(&row.id.to_string()));
    let csrf = csrf_field(&page.text);
    let r = post(
        &s,
        &format!("/dashboard/tokens/{}/revoke", row.id),
        &session_b,
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(
        crate::common::off_runtime(|| s.store.db().tokens(a)).unwrap()[0]
            .revoked_at
            .is_none()
    );
    let overview = get(&s, "/dashboard", &session_b).await;
    assert!(overview.text.contains("<strong>B</strong>"));
}

#[tokio::test]
async fn invites_work_once_and_expire_after_24_hours() {
    let s = state(0.25);
    let p = partner(&s, "A");
    let (_, invite) =
        crate::common::off_runtime(|| s.store.db().add_user(p, "a@example.org", s.clock.now()))
            .unwrap();
    assert_eq!(
        set_password(&s, &invite).await.status,
        StatusCode::SEE_OTHER
    );
    let again = get(&s, &format!("/dashboard/invite/{invite}"), "").await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    let (_, late) =
        crate::common::off_runtime(|| s.store.db().add_user(p, "late@example.org", s.clock.now()))
            .unwrap();
    s.clock
        .set(s.clock.now() + Duration::hours(24) + Duration::seconds(1));
    let r = get(&s, &format!("/dashboard/invite/{late}"), "").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // The store keeps hashes only.
    assert!(
        crate::common::off_runtime(|| s.store.db().user_by_email("late@example.org"))
            .unwrap()
            .unwrap()
            .password_hash
            .is_none()
    );
    let hash = crate::common::off_runtime(|| s.store.db().user_by_email("a@example.org"))
        .unwrap()
        .unwrap()
        .password_hash
        .unwrap();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
}

#[tokio::test]
async fn session_cookie_flags() {
    let s = state(0.25);
    let p = partner(&s, "A");
    let (_, invite) =
        crate::common::off_runtime(|| s.store.db().add_user(p, "a@example.org", s.clock.now()))
            .unwrap();
    set_password(&s, &invite).await;
    let r = sign_in(&s, "a@example.org", PASSWORD).await;
    let c = set_cookie(&r, "gm_session").unwrap();
    assert!(
        c.contains("HttpOnly") && c.contains("SameSite=Lax") && c.contains("Path=/dashboard"),
        "{c}"
    );
    assert!(!c.contains("Secure"), "{c}");
    // Behind TLS (a proxy saying so) the cookie is Secure.
    let page = send_with(
        &s,
        "GET",
        "/dashboard/sign-in",
        &[("x-forwarded-proto", "https")],
        vec![],
    )
    .await;
    assert!(set_cookie(&page, "gm_csrf").unwrap().contains("; Secure"));
    // Without a session the pages redirect to the sign-in page.
    let r = get(&s, "/dashboard/tokens", "gm_session=nope").await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
}
