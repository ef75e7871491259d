//! Hostile input and HTTP hygiene: body limits, content types, malformed JSON, timeouts,
//! security headers, CORS off by default.

use std::sync::Arc;

use axum::http::StatusCode;
use grantmatch_server::db::Db;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::{AppState, HttpConfig};

use crate::common::{send_with, starter_token, tiny_engine_plain, Resp};

pub(crate) struct Hx {
    pub(crate) state: Arc<AppState>,
    auth: String,
}

pub(crate) fn hx(http: HttpConfig) -> Hx {
    let db = Arc::new(Db::for_tests().unwrap());
    let auth = starter_token(&db, &["grants:read", "matching:use", "usage:read"]);
    let state = AppState::new(tiny_engine_plain(), db)
        .with_rate_limits(RateLimits {
            enabled: false,
            ..Default::default()
        })
        .with_http(http);
    Hx {
        state: Arc::new(state),
        auth,
    }
}

#[track_caller]
fn assert_error(r: &Resp, status: StatusCode, code: &str) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(r.json["error"]["code"], code, "{}", r.text);
    assert!(
        r.json["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        r.text
    );
    assert_eq!(r.json.as_object().unwrap().len(), 1, "{}", r.text);
}

#[tokio::test]
async fn body_over_the_limit_is_413() {
    let h = hx(HttpConfig {
        max_body_bytes: 1024,
        ..Default::default()
    });
    let big = format!(
        r#"{{"organization_id":"x","organization_profile":{{"description":"{}"}}}}"#,
        "a".repeat(4096)
    );
    let r = send_with(
        &h.state,
        "POST",
        "/api/v1/matching",
        &[
            ("authorization", &h.auth),
            ("content-type", "application/json"),
        ],
        big.into_bytes(),
    )
    .await;
    assert_error(&r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
}

#[tokio::test]
async fn wrong_content_type_malformed_json_and_deep_nesting() {
    let h = hx(HttpConfig::default());
    let post = |ct: &'static str, body: Vec<u8>| {
        let state = h.state.clone();
        let auth = h.auth.clone();
        async move {
            send_with(
                &state,
                "POST",
                "/api/v1/matching",
                &[("authorization", &auth), ("content-type", ct)],
                body,
            )
            .await
        }
    };
    assert_error(
        &post("text/plain", b"{}".to_vec()).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
    assert_error(
        &post("application/json", b"{\"organization_id\":".to_vec()).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    assert_error(
        &post("application/json", vec![b'{', 0xff, 0xfe, b'}']).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_error(
        &post("application/json", deep.into_bytes()).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
}

#[tokio::test]
async fn absurd_query_values_are_400_never_5xx() {
    let h = hx(HttpConfig::default());
    // 1,000 values: an in-process URI is limited to 64 KiB (over a socket, hyper answers
    // longer request lines itself).
    let many: String = (0..1_000)
        .map(|_| "region_ids[]=00000000-0000-0000-0000-000000000000&")
        .collect();
    for uri in [
        format!("/api/v1/grants?{many}"),
        "/api/v1/grants?page=18446744073709551616".to_string(),
        "/api/v1/grants?per_page=99999999999999999999".to_string(),
        format!("/api/v1/grants?q={}", "x".repeat(10_000)),
        "/api/v1/grants?page=1&page=2".to_string(),
    ] {
        let r = send_with(&h.state, "GET", &uri, &[("authorization", &h.auth)], vec![]).await;
        assert_error(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
}

#[tokio::test]
async fn security_headers_and_no_cors_by_default() {
    let h = hx(HttpConfig::default());
    let r = send_with(
        &h.state,
        "GET",
        "/api/v1/regions",
        &[
            ("authorization", &h.auth),
            ("origin", "https://evil.example"),
        ],
        vec![],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers["x-content-type-options"], "nosniff");
    assert_eq!(r.headers["x-frame-options"], "DENY");
    assert_eq!(r.headers["referrer-policy"], "no-referrer");
    assert!(r.headers.get("access-control-allow-origin").is_none());
    // Error responses carry them too.
    let r = send_with(&h.state, "GET", "/api/v1/regions", &[], vec![]).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.headers["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn cors_only_for_configured_origins() {
    let h = hx(HttpConfig {
        cors_origins: vec!["https://partner.example".into()],
        ..Default::default()
    });
    let r = send_with(
        &h.state,
        "GET",
        "/api/v1/regions",
        &[
            ("authorization", &h.auth),
            ("origin", "https://partner.example"),
        ],
        vec![],
    )
    .await;
    assert_eq!(
        r.headers["access-control-allow-origin"],
        "https://partner.example"
    );
    let r = send_with(
        &h.state,
        "GET",
        "/api/v1/regions",
        &[
            ("authorization", &h.auth),
            ("origin", "https://evil.example"),
        ],
        vec![],
    )
    .await;
    assert!(r.headers.get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn a_bad_token_is_not_echoed() {
    let h = hx(HttpConfig::default());
    let secret = "gm_0123456789abcdef-super-secret";
    let r = send_with(
        &h.state,
        "GET",
        "/api/v1/grants",
        &[("authorization", &format!("Bearer {secret}"))],
        vec![],
    )
    .await;
    assert_error(&r, StatusCode::UNAUTHORIZED, "unauthorized");
    assert!(!r.text.contains(secret));
}

/// A token store that cannot be read answers 500 `internal_error` (and is recorded as
/// such), never 401 as if the token were missing.
#[tokio::test]
async fn an_unreadable_token_store_is_a_server_error_not_a_missing_token() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::for_tests_in(dir.path()).unwrap());
    let auth = starter_token(&db, &["grants:read"]);
    let state = Arc::new(
        AppState::new(tiny_engine_plain(), db).with_rate_limits(RateLimits {
            enabled: false,
            ..Default::default()
        }),
    );
    let headers = [("authorization", auth.as_str())];
    let get = || send_with(&state, "GET", "/api/v1/grants", &headers, vec![]);
    assert_eq!(get().await.status, StatusCode::OK);

    // Another process breaks the database under the running server.
    let mut other = grantmatch_server::store::testing::other_connection(dir.path()).unwrap();
    other
        .batch("ALTER TABLE tokens RENAME TO tokens_gone")
        .unwrap();
    // Once the token's cached lookup has expired, the token is read again.
    tokio::time::sleep(grantmatch_server::store::token_cache::TOKEN_TTL).await;
    let r = get().await;
    assert_error(&r, StatusCode::INTERNAL_SERVER_ERROR, "internal_error");
    // A request without a token is still a 401.
    let r = send_with(&state, "GET", "/api/v1/grants", &[], vec![]).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
}
