//! Prometheus `/metrics`: request counts and latency by endpoint label and status,
//! rate-limit refusals, model state and the ledger backlog, in the OpenMetrics format.

use std::sync::Arc;

use axum::http::StatusCode;
use grantmatch_server::db::Db;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::AppState;

use crate::common::{send_with, starter_token, tiny_engine_plain, Resp};

fn state(separate: bool) -> (Arc<AppState>, String) {
    let db = Arc::new(Db::for_tests().unwrap());
    let auth = starter_token(&db, &["grants:read"]);
    let mut state = AppState::new(tiny_engine_plain(), db).with_rate_limits(RateLimits {
        per_token_per_minute: 2,
        ..RateLimits::default()
    });
    if separate {
        state = state.with_separate_metrics();
    }
    (Arc::new(state), auth)
}

async fn get(state: &Arc<AppState>, uri: &str, auth: Option<&str>) -> Resp {
    let headers: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
    send_with(state, "GET", uri, &headers, vec![]).await
}

/// The value of the sample `name{labels}` in an exposition (None when absent).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_count_requests_refusals_and_show_the_state() {
    let (state, auth) = state(false);
    let empty = get(&state, "/metrics", None).await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.text);
    assert_eq!(
        empty.headers["content-type"],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(empty.text.trim_end().ends_with("# EOF"), "{}", empty.text);
    assert_eq!(
        sample(&empty.text, "grantmatch_model_state{state=\"loading\"}"),
        Some(1.0)
    );
    assert_eq!(
        sample(&empty.text, "grantmatch_model_state{state=\"loaded\"}"),
        Some(0.0)
    );
    assert_eq!(
        sample(&empty.text, "grantmatch_matching_in_progress"),
        Some(0.0)
    );

    // Two answered requests, a third refused by the per-token limit (2 per minute), one
    // without a token; ids never become labels.
    for _ in 0..3 {
        get(&state, "/api/v1/grants?per_page=1", Some(&auth)).await;
    }
    assert_eq!(
        get(&state, "/api/v1/regions", None).await.status,
        StatusCode::UNAUTHORIZED
    );
    let m = get(&state, "/metrics", None).await.text;
    let grants = "endpoint=\"GET /api/v1/grants\"";
    assert_eq!(
        sample(
            &m,
            &format!("grantmatch_http_requests_total{{{grants},status=\"200\"}}")
        ),
        Some(2.0),
        "{m}"
    );
    assert_eq!(
        sample(
            &m,
            &format!("grantmatch_http_requests_total{{{grants},status=\"429\"}}")
        ),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(
            &m,
            &format!("grantmatch_rate_limit_refusals_total{{{grants}}}")
        ),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(
            &m,
            "grantmatch_http_requests_total{endpoint=\"GET /api/v1/regions\",status=\"401\"}"
        ),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(
            &m,
            &format!("grantmatch_http_request_duration_seconds_count{{{grants}}}")
        ),
        Some(3.0),
        "{m}"
    );
    // The four requests wait in the ledger's buffer (no flusher runs in this test).
    assert_eq!(
        sample(&m, "grantmatch_ledger_backlog_rows"),
        Some(4.0),
        "{m}"
    );
    assert!(sample(&m, "grantmatch_ledger_flush_lag_seconds").is_some_and(|s| s >= 0.0));
    crate::common::off_runtime(|| state.store.ledger().flush()).unwrap();
    let m = get(&state, "/metrics", None).await.text;
    assert_eq!(
        sample(&m, "grantmatch_ledger_backlog_rows"),
        Some(0.0),
        "{m}"
    );
    assert_eq!(
        sample(&m, "grantmatch_ledger_flush_lag_seconds"),
        Some(0.0),
        "{m}"
    );
}

/// With `--metrics-addr` the API's address does not serve `/metrics`; the metrics
/// router does.
#[tokio::test]
async fn separate_metrics_are_not_served_with_the_api() {
    let (state, _) = state(true);
    let r = get(&state, "/metrics", None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let resp = tower::ServiceExt::oneshot(
        grantmatch_server::metrics_app(state.clone()),
        axum::http::Request::get("/metrics")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}
