//! The usage ledger, GET /usage/stats, GET /usage/quota, the quota warning e-mail and
//! the rate limits, through `app(state)` (no socket).
//!
//! Every test builds its own state over the synthetic `tiny` catalogue with an
//! in-memory database and a fixed clock that the test moves (`state.clock.set`).
//! Expected statistics are computed from the requests the test sent (a model of the
//! ledger kept by the test), never from the server.
//!
//! The tests with matching requests need the embedding model, loaded from
//! `GRANTMATCH_MODEL_DIR` (default `~/.cache/grantmatch/model`); its absence FAILS them
//! with a clear message. The rate limiter runs on the real monotonic clock (governor),
//! so the tests that count requests within a window send them quickly and check the
//! elapsed time; a run that was too slow to be conclusive is repeated on a fresh state.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use chrono::{DateTime, NaiveDate, Utc};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::{Engine, GrantVectors, MatchOptions};
use grantmatch_server::clock::Clock;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::matcher::Matcher;
use grantmatch_server::matching_store::{MatchingRecord, MatchingStatus};

/// Status name of a completed matching in responses.
const COMPLETED: &str = "completed";
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::usage::{outbox, queue_quota_warnings, QuotaPolicy, QuotaView};
use grantmatch_server::AppState;
use http_body_util::BodyExt;
use serde_json::{json, Map, Value};
use tower::ServiceExt;
use uuid::Uuid;

use crate::common::{assert_error, embedder, keys, tiny_dir, Resp};

// ---------------------------------------------------------------------------------
// Catalogue, model, state
// ---------------------------------------------------------------------------------

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .with_timezone(&Utc)
}

/// The tiny catalogue without embeddings (enough for everything but matching).
fn tiny_plain() -> Arc<Engine> {
    static E: OnceLock<Arc<Engine>> = OnceLock::new();
    E.get_or_init(|| {
        Arc::new(
            Engine::from_records(CatalogueRecords::read_dir(&tiny_dir()).expect("tiny is valid"))
                .expect("engine builds"),
        )
    })
    .clone()
}

/// The tiny catalogue with real embeddings (in memory).
fn tiny_vectors() -> Arc<Engine> {
    static E: OnceLock<Arc<Engine>> = OnceLock::new();
    E.get_or_init(|| {
        let embedder = embedder();
        let engine =
            Engine::from_records(CatalogueRecords::read_dir(&tiny_dir()).expect("tiny is valid"))
                .expect("engine builds");
        let (vectors, _) = GrantVectors::build(&engine.catalogue, &embedder, None, &|_, _| {})
            .expect("embedding the tiny catalogue");
        Arc::new(engine.with_vectors(vectors).expect("vectors fit"))
    })
    .clone()
}

const NO_LIMITS: RateLimits = RateLimits {
    per_token_per_minute: 100,
    per_partner_per_minute: 1_000,
    matching_per_second: 10,
    enabled: false,
};

/// One test's state and router.
struct U {
    state: Arc<AppState>,
    router: Router,
}

impl U {
    /// A state over the tiny catalogue; `matching` loads the model and embeddings.
    fn new(now: &str, limits: RateLimits, policy: QuotaPolicy, matching: bool) -> U {
        let engine = if matching {
            tiny_vectors()
        } else {
            tiny_plain()
        };
        let db = Arc::new(Db::for_tests().expect("in-memory db"));
        let matcher = Matcher::new(
            MatchOptions::default(),
            grantmatch_server::matcher::DEFAULT_QUEUE_CAPACITY,
        );
        if matching {
            matcher.set_embedder(embedder());
        }
        let state = Arc::new(
            AppState::new(engine, db)
                .with_matcher(matcher)
                .with_clock(Clock::fixed(t(now)))
                .with_rate_limits(limits)
                .with_quota_policy(policy),
        );
        U {
            router: grantmatch_server::app(state.clone()),
            state,
        }
    }

    fn db(&self) -> &Db {
        self.state.store.db()
    }

    /// The ledger flushed, then the partner's stats since `since`, read directly (off
    /// the runtime, as the server does on its blocking pool).
    fn ledger_stats(&self, partner: Uuid, since: DateTime<Utc>) -> Value {
        crate::common::off_runtime(|| self.state.store.ledger().flush()).unwrap();
        json!(
            crate::common::off_runtime(|| grantmatch_server::usage::stats(
                self.db(),
                partner,
                since
            ))
            .unwrap()
        )
    }

    fn partner(&self, name: &str, tier: &str) -> Uuid {
        crate::common::off_runtime(|| {
            self.db().create_partner(&NewPartner {
                name: name.into(),
                tier: tier.into(),
                contact_email: Some(format!("{}@example.org", name.to_lowercase())),
                region_ids: vec![],
                grant_area_ids: vec![],
            })
        })
        .expect("partner")
        .id
    }

    fn token(&self, partner: Uuid, scopes: &[&str]) -> String {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        crate::common::off_runtime(|| self.db().create_token(partner, &scopes))
            .expect("token")
            .1
    }

    fn set_now(&self, now: &str) {
        self.state.clock.set(t(now));
    }

    /// Sends a request through the router (built once per state).
    async fn send(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Resp {
        send_to(self.router.clone(), method, uri, token, headers, body).await
    }

    async fn get(&self, token: &str, uri: &str) -> Resp {
        self.send("GET", uri, Some(token), &[], Vec::new()).await
    }

    /// A synchronous POST /matching.
    async fn post_matching(&self, token: &str, body: &Value) -> Resp {
        self.send(
            "POST",
            "/api/v1/matching",
            Some(token),
            &[("content-type", "application/json")],
            body.to_string().into_bytes(),
        )
        .await
    }

    /// A synchronous matching that must answer 200.
    async fn match_ok(&self, token: &str, org: &str) -> Value {
        let r = self.post_matching(token, &matching_body(org)).await;
        assert_eq!(r.status, StatusCode::OK, "matching for {org}: {}", r.text);
        assert_eq!(r.json["status"], COMPLETED, "{}", r.text);
        r.json
    }

    /// GET /usage/stats that must answer 200.
    async fn stats(&self, token: &str, query: &str) -> Value {
        let r = self
            .get(token, &format!("/api/v1/usage/stats{query}"))
            .await;
        assert_eq!(r.status, StatusCode::OK, "stats{query}: {}", r.text);
        r.json
    }

    /// GET /usage/quota that must answer 200; returns the `quota` object.
    async fn quota(&self, token: &str) -> Value {
        let r = self.get(token, "/api/v1/usage/quota").await;
        assert_eq!(r.status, StatusCode::OK, "quota: {}", r.text);
        assert_eq!(keys(&r.json), vec!["quota"], "{}", r.text);
        r.json["quota"].clone()
    }
}

async fn send_to(
    router: Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Resp {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(tok) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {tok}"));
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = router
        .oneshot(req.body(Body::from(body)).expect("request"))
        .await
        .expect("router is infallible");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&bytes).to_string();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Resp {
        status,
        headers,
        text,
        json,
    }
}

const DESCRIPTION: &str = "Gemeinnütziger Verein, der kleine Unternehmen bei der Digitalisierung \
     und beim Einsatz von KI unterstützt.";

/// A matching body with an identical profile (the query embedding is cached after the
/// first request, so repeated matchings are fast).
fn matching_body(org: &str) -> Value {
    json!({"organization_id": org, "organization_profile": {"description": DESCRIPTION}})
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// The `X-RateLimit-*` headers of a response: (limit, remaining, reset).
#[track_caller]
fn rate_headers(r: &Resp) -> (u64, u64, u64) {
    let h = |name: &str| -> u64 {
        r.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} on a {} response: {}", r.status, r.text))
            .to_str()
            .expect("ASCII header")
            .parse()
            .unwrap_or_else(|e| panic!("{name} is not an integer: {e}"))
    };
    (
        h("x-ratelimit-limit"),
        h("x-ratelimit-remaining"),
        h("x-ratelimit-reset"),
    )
}

/// A 429 `rate_limit_exceeded` with `Retry-After` equal to `error.retry_after`;
/// returns the seconds to wait.
#[track_caller]
fn assert_429(r: &Resp) -> u64 {
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
    assert_eq!(keys(&r.json), vec!["error"], "{}", r.text);
    assert_eq!(
        keys(&r.json["error"]),
        vec!["code", "message", "retry_after"],
        "{}",
        r.text
    );
    assert_eq!(r.json["error"]["code"], "rate_limit_exceeded", "{}", r.text);
    let retry = r.json["error"]["retry_after"]
        .as_u64()
        .unwrap_or_else(|| panic!("retry_after is not a non-negative integer: {}", r.text));
    assert!(retry >= 1, "{}", r.text);
    let header: u64 = r
        .headers
        .get(header::RETRY_AFTER)
        .expect("Retry-After on a 429")
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in seconds");
    assert_eq!(header, retry, "Retry-After header and error.retry_after");
    retry
}

// ---------------------------------------------------------------------------------
// A model of the ledger: the requests a test sent for one partner
// ---------------------------------------------------------------------------------

const GRANTS: &str = "GET /api/v1/grants";
const GRANT: &str = "GET /api/v1/grants/{id}";
const MATCHING: &str = "POST /api/v1/matching";
const STATS: &str = "GET /api/v1/usage/stats";
const QUOTA: &str = "GET /api/v1/usage/quota";

#[derive(Default)]
struct Expect {
    rows: Vec<(DateTime<Utc>, String, u16, Option<String>)>,
}

impl Expect {
    /// Records a request the server answered with `r` at `at`.
    #[track_caller]
    fn add(&mut self, at: &str, endpoint: &str, status: u16, r: &Resp) {
        assert_eq!(
            r.status.as_u16(),
            status,
            "{endpoint} at {at}: unexpected answer {}",
            r.text
        );
        self.rows.push((t(at), endpoint.into(), status, None));
    }

    fn add_matching(&mut self, at: &str, status: u16, org: Option<&str>) {
        self.rows
            .push((t(at), MATCHING.into(), status, org.map(str::to_string)));
    }

    /// The `stats` object the server should report since `since` (everything except
    /// `average_response_time_ms`, which is checked separately).
    fn stats(&self, since: DateTime<Utc>) -> Value {
        let rows: Vec<_> = self.rows.iter().filter(|r| r.0 >= since).collect();
        let ok = |s: u16| (200..300).contains(&s);
        let matching: Vec<_> = rows.iter().filter(|r| r.1 == MATCHING && ok(r.2)).collect();
        let orgs: std::collections::BTreeSet<_> =
            matching.iter().filter_map(|r| r.3.clone()).collect();
        let mut by_endpoint = Map::new();
        let mut by_day: BTreeMap<NaiveDate, (u64, u64)> = BTreeMap::new();
        for r in &rows {
            let n = by_endpoint.get(&r.1).and_then(Value::as_u64).unwrap_or(0);
            by_endpoint.insert(r.1.clone(), json!(n + 1));
            let d = by_day.entry(r.0.date_naive()).or_default();
            d.0 += 1;
            if r.1 == MATCHING && ok(r.2) {
                d.1 += 1;
            }
        }
        json!({
            "total_requests": rows.len(),
            "successful_requests": rows.iter().filter(|r| ok(r.2)).count(),
            "failed_requests": rows.iter().filter(|r| r.2 >= 400).count(),
            "matching_requests": matching.len(),
            "grants_requests": rows.iter().filter(|r| r.1 == GRANTS || r.1 == GRANT).count(),
            "active_organizations": orgs.len(),
            "by_endpoint": by_endpoint,
            "by_day": by_day.iter().map(|(d, (n, m))| json!({
                "date": d.format("%Y-%m-%d").to_string(),
                "requests": n,
                "matching_requests": m,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Compares a `stats` object with the expectation; `average_response_time_ms` must be
/// a non-negative integer and `average_response_time_ms_precise` the same mean with one
/// decimal (the test cannot know the latencies).
#[track_caller]
fn assert_stats(got: &Value, want: &Value, what: &str) {
    let avg = &got["average_response_time_ms"];
    assert!(
        avg.is_u64(),
        "{what}: average_response_time_ms is not a non-negative integer: {got}"
    );
    assert!(
        avg.as_u64().unwrap() < 60_000,
        "{what}: implausible average: {got}"
    );
    let precise = got["average_response_time_ms_precise"]
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: no precise average: {got}"));
    assert_eq!(
        (precise * 10.0).round() / 10.0,
        precise,
        "{what}: one decimal"
    );
    assert!(
        (precise - avg.as_u64().unwrap() as f64).abs() <= 0.5 + 1e-9,
        "{what}: the two averages disagree: {got}"
    );
    let mut got = got.clone();
    let fields = got.as_object_mut().expect("stats is an object");
    fields.remove("average_response_time_ms");
    fields.remove("average_response_time_ms_precise");
    assert_eq!(&got, want, "{what}");
}

// ---------------------------------------------------------------------------------
// GET /usage/stats
// ---------------------------------------------------------------------------------

const STATS_FIELDS: [&str; 10] = [
    "active_organizations",
    "average_response_time_ms",
    "average_response_time_ms_precise",
    "by_day",
    "by_endpoint",
    "failed_requests",
    "grants_requests",
    "matching_requests",
    "successful_requests",
    "total_requests",
];

#[tokio::test]
async fn stats_count_exactly_per_period_across_tokens_and_only_the_callers_partner() {
    let u = U::new(
        "2025-12-31T23:00:00Z",
        RateLimits::default(),
        QuotaPolicy::default(),
        false,
    );
    let a = u.partner("Alpha", "standard");
    let b = u.partner("Beta", "enterprise");
    // Three tokens of Alpha: reading, reading, usage only; one of Beta.
    let a1 = u.token(a, &["grants:read", "usage:read"]);
    let a2 = u.token(a, &["grants:read"]);
    let a3 = u.token(a, &["usage:read"]);
    let b1 = u.token(b, &["grants:read", "usage:read"]);
    let grant = "ccff0053-fe6e-5a62-9f55-0293233a2f0a"; // testprogramm-1
    let missing = "00000000-0000-0000-0000-000000000000";
    let mut ea = Expect::default();
    let mut eb = Expect::default();

    // Last year (in no period of 2026).
    let at = "2025-12-31T23:00:00Z";
    ea.add(at, GRANTS, 200, &u.get(&a1, "/api/v1/grants").await);
    // Q3 2026: only in `year`.
    let at = "2026-09-30T23:59:59Z";
    u.set_now(at);
    ea.add(
        at,
        GRANT,
        200,
        &u.get(&a1, &format!("/api/v1/grants/{grant}")).await,
    );
    // Monday 5 October: quarter, not month.
    let at = "2026-10-05T09:00:00Z";
    u.set_now(at);
    ea.add(
        at,
        GRANTS,
        200,
        &u.get(&a1, "/api/v1/grants?per_page=5").await,
    );
    ea.add(
        at,
        GRANT,
        404,
        &u.get(&a2, &format!("/api/v1/grants/{missing}")).await,
    );
    // Sunday 15 November 23:59: month, not week.
    let at = "2026-11-15T23:59:59Z";
    u.set_now(at);
    ea.add(
        at,
        "GET /api/v1/regions",
        200,
        &u.get(&a2, "/api/v1/regions").await,
    );
    // Monday 16 November: week, not day.
    let at = "2026-11-16T00:00:00Z";
    u.set_now(at);
    let r = u.get(&a2, "/api/v1/grants?per_page=0").await;
    assert_error(&r, 400, "bad_request");
    ea.add(at, GRANTS, 400, &r);
    let r = u.get(&a3, "/api/v1/grants").await;
    assert_error(&r, 403, "insufficient_scope");
    ea.add(at, GRANTS, 403, &r);
    // Wednesday 18 November (today).
    let at = "2026-11-18T08:00:00Z";
    u.set_now(at);
    ea.add(at, "GET other", 404, &u.get(&a1, "/api/v1/nope").await);
    ea.add(
        at,
        "GET other",
        404,
        &u.get(&a1, &format!("/api/v1/grants/{grant}/x/y")).await,
    );
    ea.add(
        at,
        GRANT,
        200,
        &u.get(&a2, &format!("/api/v1/grants/{grant}")).await,
    );
    ea.add(
        at,
        "GET /api/v1/grant_providers",
        200,
        &u.get(&a2, "/api/v1/grant_providers").await,
    );
    let r = u
        .send("DELETE", "/api/v1/grants", Some(&a1), &[], Vec::new())
        .await;
    ea.add(at, "DELETE /api/v1/grants", 405, &r);
    // Matching without the scope, and with a body that is not JSON: failed requests of
    // the matching endpoint (not matching requests, no organisation).
    let r = u
        .send(
            "POST",
            "/api/v1/matching",
            Some(&a1),
            &[("content-type", "application/json")],
            matching_body("org-x").to_string().into_bytes(),
        )
        .await;
    assert_error(&r, 403, "insufficient_scope");
    ea.add_matching(at, 403, None);
    // Requests of nobody (no token, an unknown token) are not Alpha's.
    let r = u.send("GET", "/api/v1/grants", None, &[], Vec::new()).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = u.get("not-a-token", "/api/v1/grants").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    // Beta's traffic is Beta's.
    for _ in 0..3 {
        eb.add(at, GRANTS, 200, &u.get(&b1, "/api/v1/grants").await);
    }
    eb.add(
        at,
        GRANT,
        404,
        &u.get(&b1, &format!("/api/v1/grants/{missing}")).await,
    );

    // The statistics, at 10:00 on Wednesday 18 November 2026.
    let now = "2026-11-18T10:00:00Z";
    u.set_now(now);
    // Hand-checked figures of the first call (quarter, the default): the sequence from
    // 5 October on — 11 requests, 4 successful, 7 failed, 5 on grants.
    let v = u.stats(&a1, "").await;
    assert_eq!(
        keys(&v),
        vec!["partner", "period", "period_start", "stats"],
        "{v}"
    );
    assert_eq!(v["period"], "quarter");
    assert_eq!(v["partner"], json!({"name": "Alpha", "tier": "standard"}));
    assert_eq!(keys(&v["stats"]), STATS_FIELDS.map(String::from).to_vec());
    assert_eq!(
        t(v["period_start"].as_str().unwrap()),
        t("2026-10-01T00:00:00Z")
    );
    let s = &v["stats"];
    assert_eq!(
        (
            s["total_requests"].as_u64(),
            s["successful_requests"].as_u64(),
            s["failed_requests"].as_u64(),
            s["grants_requests"].as_u64(),
            s["matching_requests"].as_u64(),
            s["active_organizations"].as_u64(),
        ),
        (Some(11), Some(4), Some(7), Some(5), Some(0), Some(0)),
        "{s}"
    );
    assert_eq!(s["by_endpoint"][GRANTS], 3, "{s}");
    assert_eq!(s["by_endpoint"]["DELETE /api/v1/grants"], 1, "{s}");
    assert_eq!(s["by_endpoint"][GRANT], 2, "{s}");
    assert_eq!(s["by_endpoint"]["GET other"], 2, "{s}");
    assert_eq!(s["by_endpoint"][MATCHING], 1, "{s}");
    assert_eq!(
        s["by_day"],
        json!([
            {"date": "2026-10-05", "requests": 2, "matching_requests": 0},
            {"date": "2026-11-15", "requests": 1, "matching_requests": 0},
            {"date": "2026-11-16", "requests": 2, "matching_requests": 0},
            {"date": "2026-11-18", "requests": 6, "matching_requests": 0},
        ]),
        "by_day lists only days with traffic"
    );
    assert_stats(s, &ea.stats(t("2026-10-01T00:00:00Z")), "quarter (default)");
    ea.rows.push((t(now), STATS.into(), 200, None));

    // Every period, from either usage token of Alpha (the stats calls count too).
    let periods = [
        ("day", "2026-11-18T00:00:00Z"),
        ("week", "2026-11-16T00:00:00Z"),
        ("month", "2026-11-01T00:00:00Z"),
        ("quarter", "2026-10-01T00:00:00Z"),
        ("year", "2026-01-01T00:00:00Z"),
    ];
    for (i, (period, start)) in periods.iter().enumerate() {
        let token = if i % 2 == 0 { &a3 } else { &a1 };
        let v = u.stats(token, &format!("?period={period}")).await;
        assert_eq!(v["period"], *period);
        assert_eq!(t(v["period_start"].as_str().unwrap()), t(start), "{period}");
        assert_eq!(v["partner"]["name"], "Alpha");
        assert_stats(&v["stats"], &ea.stats(t(start)), period);
        ea.rows.push((t(now), STATS.into(), 200, None));
    }
    // Literal spot checks of the narrow periods (after the 6 stats calls so far).
    let v = u.stats(&a1, "?period=day").await;
    assert_eq!(v["stats"]["total_requests"], 6 + 6);
    assert_eq!(v["stats"]["failed_requests"], 4);
    assert_eq!(v["stats"]["by_endpoint"][STATS], 6);
    ea.rows.push((t(now), STATS.into(), 200, None));
    let v = u.stats(&a1, "?period=week").await;
    assert_eq!(v["stats"]["total_requests"], 2 + 6 + 7);
    ea.rows.push((t(now), STATS.into(), 200, None));

    // A bad period is 400 (and is itself a failed request of the stats endpoint).
    for q in ["?period=decade", "?period=Day", "?period=day&period=week"] {
        let r = u.get(&a1, &format!("/api/v1/usage/stats{q}")).await;
        let msg = assert_error(&r, 400, "bad_request");
        assert!(msg.contains("period"), "{q}: {msg}");
        ea.rows.push((t(now), STATS.into(), 400, None));
    }
    // An empty value counts as absent (the API's policy for every parameter).
    let v = u.stats(&a1, "?period=").await;
    assert_eq!(v["period"], "quarter");
    ea.rows.push((t(now), STATS.into(), 200, None));
    let v = u.stats(&a1, "?period=quarter").await;
    assert_stats(
        &v["stats"],
        &ea.stats(t("2026-10-01T00:00:00Z")),
        "after the 400s",
    );
    assert_eq!(v["stats"]["failed_requests"], 7 + 3);
    ea.rows.push((t(now), STATS.into(), 200, None));
    let v = u.stats(&a1, "?period=year").await;
    assert_stats(&v["stats"], &ea.stats(t("2026-01-01T00:00:00Z")), "year");

    // Beta sees only its own traffic.
    let v = u.stats(&b1, "?period=day").await;
    assert_eq!(v["partner"], json!({"name": "Beta", "tier": "enterprise"}));
    assert_stats(&v["stats"], &eb.stats(t("2026-11-18T00:00:00Z")), "Beta");
    assert_eq!(v["stats"]["total_requests"], 4);

    // Next year: nothing yet in the quarter, the period starts anew.
    u.set_now("2027-01-01T00:00:00Z");
    let v = u.stats(&b1, "").await;
    assert_eq!(
        t(v["period_start"].as_str().unwrap()),
        t("2027-01-01T00:00:00Z")
    );
    assert_stats(
        &v["stats"],
        &eb.stats(t("2027-01-01T00:00:00Z")),
        "new quarter",
    );
    assert_eq!(v["stats"]["total_requests"], 0);
    assert_eq!(v["stats"]["by_day"], json!([]));
    assert_eq!(v["stats"]["by_endpoint"], json!({}));
    assert_eq!(v["stats"]["average_response_time_ms"], 0);
}

#[tokio::test]
async fn usage_endpoints_need_a_token_with_usage_read() {
    let u = U::new(
        "2026-11-22T10:00:00Z",
        RateLimits::default(),
        QuotaPolicy::default(),
        false,
    );
    let p = u.partner("Scoped", "starter");
    let reader = u.token(p, &["grants:read", "matching:use"]);
    let usage = u.token(p, &["usage:read"]);
    for path in ["/api/v1/usage/stats", "/api/v1/usage/quota"] {
        assert_error(&u.get(&reader, path).await, 403, "insufficient_scope");
        let r = u.send("GET", path, None, &[], Vec::new()).await;
        assert_error(&r, 401, "unauthorized");
        assert_error(&u.get("bogus", path).await, 401, "unauthorized");
    }
    // The two 403s count as Scoped's failed requests; the 401s belong to nobody.
    let v = u.stats(&usage, "?period=day").await;
    assert_eq!(v["stats"]["total_requests"], 2);
    assert_eq!(v["stats"]["failed_requests"], 2);
    assert_eq!(v["stats"]["by_endpoint"], json!({STATS: 1, QUOTA: 1}));
}

// ---------------------------------------------------------------------------------
// Matching: active organisations, quotas, the warning e-mail
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn active_organizations_are_counted_once_per_partner() {
    let u = U::new(
        "2026-11-22T10:00:00Z",
        NO_LIMITS,
        QuotaPolicy::default(),
        true,
    );
    let p = u.partner("Orgs", "standard");
    let other = u.partner("Others", "standard");
    let m1 = u.token(p, &["matching:use", "usage:read"]);
    let m2 = u.token(p, &["matching:use"]);
    let o1 = u.token(other, &["matching:use"]);
    let at = "2026-11-22T10:00:00Z";
    let mut e = Expect::default();

    // org-a three times (two tokens), org-b twice, org-c once.
    for (token, org) in [
        (&m1, "org-a"),
        (&m1, "org-b"),
        (&m2, "org-a"),
        (&m1, "org-a"),
        (&m2, "org-b"),
        (&m1, "org-c"),
    ] {
        u.match_ok(token, org).await;
        e.add_matching(at, 200, Some(org));
    }
    // Surrounding whitespace does not make a new organisation.
    let r = u.post_matching(&m1, &matching_body("  org-c ")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json["organization_id"], "org-c");
    e.add_matching(at, 200, Some("org-c"));
    // A refused matching (no description) does not make its organisation active.
    let r = u
        .post_matching(
            &m1,
            &json!({"organization_id": "org-refused", "organization_profile": {"name": "x"}}),
        )
        .await;
    assert_error(&r, 400, "bad_request");
    e.add_matching(at, 400, Some("org-refused"));
    // The asynchronous form: accepted (202), its organisation is active at once.
    let r = u
        .send(
            "POST",
            "/api/v1/matching",
            Some(&m2),
            &[
                ("content-type", "application/json"),
                ("prefer", "respond-async"),
            ],
            matching_body("org-d").to_string().into_bytes(),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    e.add_matching(at, 202, Some("org-d"));
    let status_url = r.json["status_url"].as_str().unwrap().to_string();
    let started = Instant::now();
    loop {
        let s = u.get(&m2, &status_url).await;
        e.add(at, "GET /api/v1/matching/{id}", 200, &s);
        if s.json["status"] == COMPLETED {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{}", s.text);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Another partner's organisations (also the same ids) are its own.
    for org in ["org-a", "org-z"] {
        u.match_ok(&o1, org).await;
    }

    let v = u.stats(&m1, "").await;
    assert_stats(&v["stats"], &e.stats(t("2026-10-01T00:00:00Z")), "quarter");
    assert_eq!(v["stats"]["active_organizations"], 4, "a, b, c, d");
    assert_eq!(
        v["stats"]["matching_requests"], 8,
        "7 synchronous + 1 asynchronous"
    );
    assert_eq!(v["stats"]["failed_requests"], 1);
    let q = u.quota(&m1).await;
    assert_eq!(q["active_organizations"]["current"], 4, "{q}");
    assert_eq!(q["active_organizations"]["limit"], 500, "{q}");
    assert_eq!(q["active_organizations"]["percentage"], json!(0.8), "{q}");
    assert_eq!(q["matching_requests"]["current"], 8, "{q}");
    assert_eq!(q["matching_requests"]["limit"], 12_500, "{q}");
    assert_eq!(q["matching_requests"]["percentage"], json!(0.06), "{q}");

    // Next quarter: org-a is active again, once.
    u.set_now("2027-02-01T09:00:00Z");
    u.match_ok(&m2, "org-a").await;
    u.match_ok(&m1, "org-a").await;
    let v = u.stats(&m1, "?period=quarter").await;
    assert_eq!(v["stats"]["active_organizations"], 1);
    assert_eq!(v["stats"]["matching_requests"], 2);
    let v = u.stats(&m1, "?period=year").await;
    assert_eq!(v["stats"]["active_organizations"], 1);
    let q = u.quota(&m1).await;
    assert_eq!(q["quarter"], "2027-Q1");
    assert_eq!(q["active_organizations"]["current"], 1);
    assert_eq!(q["matching_requests"]["current"], 2);
}

/// Status, warning and exceeded of a quota object.
fn quota_state(q: &Value) -> (String, bool, bool) {
    (
        q["status"].as_str().unwrap().to_string(),
        q["warning"].as_bool().unwrap(),
        q["exceeded"].as_bool().unwrap(),
    )
}

#[tokio::test]
async fn matching_quota_transitions_at_89_90_100_101_percent_and_warns_once() {
    // Starter: 10,000 matchings a year; a share of 1 % gives 100 a quarter, so the
    // percentage equals the count.
    let policy = QuotaPolicy {
        quarter_share: 0.01,
    };
    let u = U::new("2026-11-22T10:00:00Z", NO_LIMITS, policy, true);
    let p = u.partner("Small", "starter");
    let tok = u.token(p, &["matching:use", "usage:read"]);
    let other = u.partner("Bystander", "starter");
    let other_tok = u.token(other, &["matching:use", "usage:read"]);

    // The quota object before any matching: every field, exactly.
    let q = u.quota(&tok).await;
    assert_eq!(
        q,
        json!({
            "quarter": "2026-Q4",
            "tier": "starter",
            "active_organizations": {"current": 0, "limit": 100, "percentage": 0.0},
            "matching_requests": {"current": 0, "limit": 100, "percentage": 0.0},
            "status": "ok",
            "warning": false,
            "exceeded": false,
        })
    );

    let mut seen = Vec::new();
    for i in 1..=101u64 {
        // Three organisations, so only the matching limit approaches.
        let org = format!("org-{}", i % 3);
        let v = u.match_ok(&tok, &org).await;
        // The quota block of the synchronous response counts this request.
        assert_eq!(
            v["quota"],
            json!({
                "matching_requests_used": i,
                "matching_requests_limit": 100,
                "usage_percentage": i as f64,
            }),
            "request {i}"
        );
        let mails = crate::common::off_runtime(|| outbox(u.db(), false)).unwrap();
        assert_eq!(
            mails.len(),
            usize::from(i >= 90),
            "the warning is queued at 90 % and only once (request {i}): {mails:?}"
        );
        if [89, 90, 100, 101].contains(&i) {
            let q = u.quota(&tok).await;
            assert_eq!(q["quarter"], "2026-Q4");
            assert_eq!(q["matching_requests"]["current"], i, "{q}");
            assert_eq!(q["matching_requests"]["limit"], 100, "{q}");
            assert_eq!(q["matching_requests"]["percentage"], json!(i as f64), "{q}");
            assert_eq!(q["active_organizations"]["current"], 3, "{q}");
            assert_eq!(q["active_organizations"]["percentage"], json!(3.0), "{q}");
            seen.push((i, quota_state(&q)));
        }
    }
    let s = |st: &str, w: bool, x: bool| (st.to_string(), w, x);
    assert_eq!(
        seen,
        vec![
            (89, s("ok", false, false)),
            (90, s("warning", true, false)),
            (100, s("warning", true, false)),
            (101, s("exceeded", true, true)),
        ]
    );
    // Exceeding never blocks.
    let v = u.match_ok(&tok, "org-1").await;
    assert_eq!(v["quota"]["matching_requests_used"], 102);
    assert_eq!(v["quota"]["usage_percentage"], json!(102.0));

    // Exactly one e-mail: to the contact address, for this quarter and limit, unsent
    // (no SMTP configured).
    let mails = crate::common::off_runtime(|| outbox(u.db(), false)).unwrap();
    assert_eq!(mails.len(), 1, "{mails:?}");
    let m = &mails[0];
    assert_eq!(m.partner_id, p.to_string());
    assert_eq!(m.kind.as_str(), "matching_requests");
    assert_eq!(m.quarter, "2026-Q4");
    assert_eq!(m.recipient.as_deref(), Some("small@example.org"));
    assert!(!m.sent);
    assert!(m.subject.contains("2026-Q4"), "{}", m.subject);
    assert!(m.body.contains("90 von 100"), "{}", m.body);
    assert_eq!(
        crate::common::off_runtime(|| outbox(u.db(), true))
            .unwrap()
            .len(),
        1,
        "still unsent"
    );

    // The bystander is untouched.
    let q = u.quota(&other_tok).await;
    assert_eq!(q["matching_requests"]["current"], 0);
    assert_eq!(q["status"], "ok");

    // The next quarter starts from zero.
    u.set_now("2027-01-01T00:00:00Z");
    let q = u.quota(&tok).await;
    assert_eq!(q["quarter"], "2027-Q1");
    assert_eq!(q["matching_requests"]["current"], 0, "{q}");
    assert_eq!(q["active_organizations"]["current"], 0, "{q}");
    assert_eq!(quota_state(&q), s("ok", false, false));
    let v = u.match_ok(&tok, "org-1").await;
    assert_eq!(
        v["quota"],
        json!({"matching_requests_used": 1, "matching_requests_limit": 100, "usage_percentage": 1.0})
    );
    assert_eq!(
        crate::common::off_runtime(|| outbox(u.db(), false))
            .unwrap()
            .len(),
        1,
        "no new e-mail"
    );
    // The stats of the new quarter hold only its own traffic.
    let v = u.stats(&tok, "").await;
    assert_eq!(v["stats"]["matching_requests"], 1);
    assert_eq!(
        v["stats"]["total_requests"], 2,
        "the quota call and the matching"
    );
}

#[tokio::test]
async fn organization_quota_transitions_and_warns_once_per_limit_and_quarter() {
    // The whole yearly allowance in each quarter: 10,000 matchings, so only the 100
    // active organisations of a starter approach their limit.
    let policy = QuotaPolicy { quarter_share: 1.0 };
    let u = U::new("2026-05-10T12:00:00Z", NO_LIMITS, policy, true);
    let p = u.partner("Many", "starter");
    let tok = u.token(p, &["matching:use", "usage:read"]);
    let mut seen = Vec::new();
    for i in 1..=101u64 {
        u.match_ok(&tok, &format!("org-{i}")).await;
        // A repeat never moves the count.
        if i % 10 == 0 {
            u.match_ok(&tok, "org-1").await;
        }
        if [89, 90, 100, 101].contains(&i) {
            let q = u.quota(&tok).await;
            assert_eq!(q["quarter"], "2026-Q2");
            assert_eq!(q["active_organizations"]["current"], i, "{q}");
            assert_eq!(q["active_organizations"]["limit"], 100, "{q}");
            assert_eq!(
                q["active_organizations"]["percentage"],
                json!(i as f64),
                "{q}"
            );
            assert_eq!(q["matching_requests"]["limit"], 10_000, "{q}");
            seen.push((
                i,
                quota_state(&q),
                crate::common::off_runtime(|| outbox(u.db(), false))
                    .unwrap()
                    .len(),
            ));
        }
    }
    let s = |st: &str, w: bool, x: bool| (st.to_string(), w, x);
    assert_eq!(
        seen,
        vec![
            (89, s("ok", false, false), 0),
            (90, s("warning", true, false), 1),
            (100, s("warning", true, false), 1),
            (101, s("exceeded", true, true), 1),
        ]
    );
    let mails = crate::common::off_runtime(|| outbox(u.db(), false)).unwrap();
    assert_eq!(mails[0].kind.as_str(), "active_organizations");
    assert_eq!(mails[0].quarter, "2026-Q2");
    assert_eq!(mails[0].recipient.as_deref(), Some("many@example.org"));

    // Next quarter: counted anew, and 90 organisations warn again — once.
    u.set_now("2026-07-01T00:00:00Z");
    for i in 1..=95u64 {
        u.match_ok(&tok, &format!("org-{i}")).await;
    }
    let q = u.quota(&tok).await;
    assert_eq!(q["quarter"], "2026-Q3");
    assert_eq!(q["active_organizations"]["current"], 95);
    assert_eq!(q["status"], "warning");
    let mails = crate::common::off_runtime(|| outbox(u.db(), false)).unwrap();
    assert_eq!(
        mails
            .iter()
            .map(|m| (m.quarter.as_str(), m.kind.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("2026-Q2", "active_organizations"),
            ("2026-Q3", "active_organizations")
        ]
    );
}

/// Writes `n` completed matching requests of a partner straight into the database
/// (the quota counts the stored matching requests); off the runtime: see
/// [`crate::common::off_runtime`].
fn store_matchings(db: &Db, partner: Uuid, n: usize, at: DateTime<Utc>) {
    let token = Uuid::new_v4();
    for i in 0..n {
        db.insert_matching(&MatchingRecord {
            id: Uuid::new_v4(),
            partner_id: partner,
            token_id: token,
            organization_id: format!("org-{}", i % 7),
            request: json!({}),
            status: MatchingStatus::Completed,
            results: Some(vec![]),
            results_count: Some(0),
            error: None,
            created_at: at,
            completed_at: Some(at),
        })
        .expect("insert");
    }
}

#[tokio::test]
async fn thresholds_are_exact_for_large_limits() {
    // Enterprise, default policy: 25,000 matchings a quarter.
    let u = U::new(
        "2026-11-22T10:00:00Z",
        NO_LIMITS,
        QuotaPolicy::default(),
        false,
    );
    let p = u.partner("Big", "enterprise");
    let tok = u.token(p, &["usage:read"]);
    let at = t("2026-11-01T00:00:00Z");
    crate::common::off_runtime(|| store_matchings(u.db(), p, 22_499, at));
    let q = u.quota(&tok).await;
    assert_eq!(q["matching_requests"]["current"], 22_499);
    assert_eq!(q["matching_requests"]["limit"], 25_000);
    assert_eq!(
        quota_state(&q),
        ("ok".into(), false, false),
        "89.996 % is below 90 %: {q}"
    );
    // The warning e-mail (queued after each matching) follows the same threshold.
    let partner = crate::common::off_runtime(|| u.db().partner(p))
        .unwrap()
        .unwrap();
    let queue = || {
        let now = u.state.clock.now();
        let view = crate::common::off_runtime(|| {
            QuotaView::compute(u.db(), &partner, now, &QuotaPolicy::default())
        })
        .unwrap();
        crate::common::off_runtime(|| queue_quota_warnings(u.db(), &partner, &view, now)).unwrap()
    };
    assert_eq!(queue(), 0, "no e-mail below 90 %");
    crate::common::off_runtime(|| store_matchings(u.db(), p, 1, at));
    let q = u.quota(&tok).await;
    assert_eq!(
        quota_state(&q),
        ("warning".into(), true, false),
        "22,500 is 90 %: {q}"
    );
    assert_eq!(queue(), 1, "the e-mail at 90 %");
    assert_eq!(queue(), 0, "and only once");
    crate::common::off_runtime(|| store_matchings(u.db(), p, 2_500, at));
    let q = u.quota(&tok).await;
    assert_eq!(q["matching_requests"]["current"], 25_000);
    assert_eq!(
        quota_state(&q),
        ("warning".into(), true, false),
        "100 % is not exceeded: {q}"
    );
    crate::common::off_runtime(|| store_matchings(u.db(), p, 1, at));
    let q = u.quota(&tok).await;
    assert_eq!(q["matching_requests"]["current"], 25_001);
    assert_eq!(
        quota_state(&q),
        ("exceeded".into(), true, true),
        "one over the limit is exceeded: {q}"
    );
}

// ---------------------------------------------------------------------------------
// Rate limits
// ---------------------------------------------------------------------------------

/// Runs `attempt` up to three times while it reports that it was too slow to be
/// conclusive (`false`); the last attempt must be conclusive.
async fn timed<F, Fut>(what: &str, mut attempt: F)
where
    F: FnMut(bool) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for i in 1..=3 {
        if attempt(i == 3).await {
            return;
        }
        eprintln!("{what}: attempt {i} too slow to be conclusive; again on a fresh state");
    }
    panic!("{what}: too slow three times");
}

#[tokio::test]
async fn token_limit_429_after_exactly_100_requests_with_headers_on_every_response() {
    timed("token limit", |last| async move {
        let u = U::new(
            "2026-11-22T10:00:00Z",
            RateLimits::default(),
            QuotaPolicy::default(),
            false,
        );
        let p = u.partner("Busy", "standard");
        let tok = u.token(p, &["grants:read"]);
        let usage = u.token(p, &["usage:read"]);
        let missing = "00000000-0000-0000-0000-000000000000";
        let started = Instant::now();
        let mut answers = Vec::new();
        // 100 requests: 2xx, 404, 400 and 403 in turn.
        for i in 0..100u64 {
            let (uri, status) = match i % 4 {
                0 => ("/api/v1/grants?per_page=1".to_string(), 200),
                1 => (format!("/api/v1/grants/{missing}"), 404),
                2 => ("/api/v1/grants?per_page=0".to_string(), 400),
                _ => ("/api/v1/usage/stats".to_string(), 403),
            };
            let before = unix_now();
            let r = u.get(&tok, &uri).await;
            assert_eq!(r.status.as_u16(), status, "request {i} {uri}: {}", r.text);
            answers.push((i, before, r));
        }
        let refused_first = u.get(&tok, "/api/v1/grants").await;
        let elapsed = started.elapsed();
        // One request is replenished every 600 ms: beyond that the count is not exact.
        if elapsed >= Duration::from_millis(550) && !last {
            return false;
        }
        for (i, before, r) in &answers {
            let (limit, remaining, reset) = rate_headers(r);
            assert_eq!(limit, 100, "request {i}");
            assert_eq!(remaining, 99 - i, "request {i} ({:?})", elapsed);
            // The full allowance is back 600 ms per used request from now.
            let back = (600 * (i + 1)).div_ceil(1000);
            assert!(
                reset >= *before && reset <= before + back + 2,
                "request {i}: reset {reset}, now {before}"
            );
            assert!(r.headers.get(header::RETRY_AFTER).is_none(), "request {i}");
        }
        // The 101st request in the minute is refused.
        let before = unix_now();
        let r = refused_first;
        assert_eq!(
            r.status,
            StatusCode::TOO_MANY_REQUESTS,
            "101st request after {elapsed:?}: {}",
            r.text
        );
        assert_eq!(assert_429(&r), 1, "one request is back within 600 ms");
        let (limit, remaining, reset) = rate_headers(&r);
        assert_eq!((limit, remaining), (100, 0));
        assert!(
            reset >= before + 58 && reset <= before + 61,
            "the whole allowance is back in a minute: reset {reset}, now {before}"
        );
        // More refusals, on any endpoint (a 404 route too).
        let mut refused = vec![r];
        refused.push(u.get(&tok, "/api/v1/grants").await);
        refused.push(u.get(&tok, "/api/v1/grants").await);
        refused.push(u.get(&tok, "/api/v1/grants").await);
        refused.push(u.get(&tok, &format!("/api/v1/grants/{missing}")).await);
        refused.push(u.get(&tok, "/api/v1/nope").await);
        if started.elapsed() >= Duration::from_millis(550) && !last {
            return false;
        }
        for r in &refused[1..] {
            assert_429(r);
            assert_eq!(rate_headers(r).1, 0);
        }
        // The limit is per token: another token of the partner goes on.
        let q = u.get(&usage, "/api/v1/usage/quota").await;
        assert_eq!(q.status, StatusCode::OK, "{}", q.text);
        let (limit, remaining, _) = rate_headers(&q);
        assert_eq!((limit, remaining), (100, 99), "the other token's own limit");
        // An unauthenticated request has no token and so no rate limit.
        let r = u.send("GET", "/api/v1/grants", None, &[], Vec::new()).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        assert!(r.headers.get("x-ratelimit-limit").is_none());

        // The ledger has every request, the 429s as failed ones.
        let v = u.stats(&usage, "?period=day").await;
        let s = &v["stats"];
        assert_eq!(s["total_requests"], 100 + 6 + 1, "{s}");
        assert_eq!(s["successful_requests"], 25 + 1, "{s}");
        assert_eq!(s["failed_requests"], 75 + 6, "{s}");
        assert_eq!(
            s["by_endpoint"],
            json!({
                GRANTS: 25 + 25 + 4,
                GRANT: 25 + 1,
                STATS: 25,
                QUOTA: 1,
                "GET other": 1,
            }),
            "{s}"
        );
        assert_eq!(s["grants_requests"], 80);
        true
    })
    .await;
}

#[tokio::test]
async fn matching_is_limited_to_10_per_second_per_partner() {
    // Warm the query-embedding cache (a partner of its own), so the matchings are fast.
    timed("matching limit", |last| async move {
        let u = U::new(
            "2026-11-22T10:00:00Z",
            RateLimits::default(),
            QuotaPolicy::default(),
            true,
        );
        let warm = u.partner("Warm", "standard");
        let wt = u.token(warm, &["matching:use"]);
        u.match_ok(&wt, "warm-up").await;
        let p = u.partner("Fast", "standard");
        let t1 = u.token(p, &["matching:use", "grants:read"]);
        let t2 = u.token(p, &["matching:use", "usage:read"]);
        // One request per token first, so the burst finds both tokens in the token cache:
        // authentication then needs no database call (which yields, and on PostgreSQL
        // spread the burst's rate checks over more than one replenishment). The cache
        // holds a token for TOKEN_TTL (1 s) from here.
        let warmed = Instant::now();
        assert_eq!(
            u.get(&t2, "/api/v1/usage/quota").await.status,
            StatusCode::OK
        );
        assert_eq!(
            u.get(&t1, "/api/v1/grants?per_page=1").await.status,
            StatusCode::OK
        );
        // 11 matchings at once over two tokens (the limit is the partner's): the rate
        // checks all happen before any of them yields.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..11 {
            let router = u.router.clone();
            let tok = if i % 2 == 0 { t1.clone() } else { t2.clone() };
            set.spawn(async move {
                let start = Instant::now();
                let r = send_to(
                    router,
                    "POST",
                    "/api/v1/matching",
                    Some(&tok),
                    &[("content-type", "application/json")],
                    matching_body(&format!("org-{i}")).to_string().into_bytes(),
                )
                .await;
                (start, r)
            });
        }
        // A non-matching request right after the burst is not limited by it.
        let g = u.get(&t1, "/api/v1/grants?per_page=1").await;
        let answers: Vec<(Instant, Resp)> = set.join_all().await;
        // All 11 rate checks must fall within one replenishment (100 ms).
        let last_start = answers.iter().map(|a| a.0).max().unwrap();
        let spread = last_start - answers.iter().map(|a| a.0).min().unwrap();
        let cached = last_start - warmed < Duration::from_millis(800);
        if (spread >= Duration::from_millis(80) || !cached) && !last {
            return false;
        }
        assert_eq!(g.status, StatusCode::OK, "{}", g.text);
        let (limit, _, _) = rate_headers(&g);
        assert_eq!(
            limit, 100,
            "the tightest limit of a non-matching request is the token's"
        );
        let answers: Vec<Resp> = answers.into_iter().map(|a| a.1).collect();
        let ok: Vec<&Resp> = answers
            .iter()
            .filter(|r| r.status == StatusCode::OK)
            .collect();
        let refused: Vec<&Resp> = answers
            .iter()
            .filter(|r| r.status == StatusCode::TOO_MANY_REQUESTS)
            .collect();
        assert_eq!(
            (ok.len(), refused.len()),
            (10, 1),
            "statuses: {:?}",
            answers.iter().map(|r| r.status).collect::<Vec<_>>()
        );
        let mut remaining: Vec<u64> = ok
            .iter()
            .map(|r| {
                let (limit, remaining, _) = rate_headers(r);
                assert_eq!(limit, 10, "the matching limit is the tightest: {}", r.text);
                remaining
            })
            .collect();
        remaining.sort();
        assert_eq!(remaining, (0..10).collect::<Vec<_>>());
        assert_eq!(assert_429(refused[0]), 1);
        assert_eq!(rate_headers(refused[0]).0, 10);
        // The quota counts the answered matchings only.
        let used: Vec<u64> = ok
            .iter()
            .map(|r| r.json["quota"]["matching_requests_used"].as_u64().unwrap())
            .collect();
        assert_eq!(used.iter().max(), Some(&10), "{used:?}");

        // A tenth of a second later one matching is allowed again.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let r = u.post_matching(&t2, &matching_body("org-later")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.json["quota"]["matching_requests_used"], 11);

        let v = u.stats(&t2, "?period=day").await;
        let s = &v["stats"];
        assert_eq!(s["by_endpoint"][MATCHING], 12, "{s}");
        assert_eq!(s["matching_requests"], 11, "{s}");
        assert_eq!(s["failed_requests"], 1, "the 429: {s}");
        assert_eq!(s["total_requests"], 15, "the two first requests too: {s}");
        true
    })
    .await;
}

#[tokio::test]
async fn partner_limit_is_shared_across_tokens() {
    let u = U::new(
        "2026-11-22T10:00:00Z",
        RateLimits {
            per_token_per_minute: 100,
            per_partner_per_minute: 5,
            matching_per_second: 10,
            enabled: true,
        },
        QuotaPolicy::default(),
        false,
    );
    let p = u.partner("Shared", "standard");
    let tokens: Vec<String> = (0..3)
        .map(|_| u.token(p, &["grants:read", "usage:read"]))
        .collect();
    let q = u.partner("Neighbour", "standard");
    let qt = u.token(q, &["grants:read"]);
    // GCRA: the sixth request is allowed 12 s after the first one, so what the refusals
    // say is counted from here (a slow machine must not fail the bounds below).
    let first = Instant::now();
    for i in 0..5u64 {
        let r = u
            .get(&tokens[i as usize % 3], "/api/v1/grants?per_page=1")
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let (limit, remaining, _) = rate_headers(&r);
        assert_eq!(
            (limit, remaining),
            (5, 4 - i),
            "request {i}: the partner limit is the tightest"
        );
    }
    // Every token of the partner is refused now, also one that has not been used.
    let fresh = u.token(p, &["grants:read"]);
    for tok in [&tokens[2], &tokens[0], &fresh] {
        let before = unix_now();
        let r = u.get(tok, "/api/v1/grants").await;
        let retry = assert_429(&r);
        let elapsed = first.elapsed().as_secs();
        assert!(
            retry <= 12 && retry + elapsed + 1 >= 12,
            "one request back 12 s after the first: {retry} s, {elapsed} s after it"
        );
        let (limit, remaining, reset) = rate_headers(&r);
        assert_eq!((limit, remaining), (5, 0));
        assert!(
            reset + elapsed >= before + 59 && reset <= before + 61,
            "reset {reset}, now {before}, {elapsed} s after the first request"
        );
    }
    // Another partner is not affected.
    let r = u.get(&qt, "/api/v1/grants").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(rate_headers(&r).0, 5);
    assert_eq!(rate_headers(&r).1, 4);

    // The ledger (read directly: every token of the partner is limited now).
    let s = u.ledger_stats(p, t("2026-11-22T00:00:00Z"));
    assert_eq!(s["total_requests"], 8);
    assert_eq!(s["failed_requests"], 3);
    assert_eq!(s["by_endpoint"], json!({GRANTS: 8}));
}

#[tokio::test]
async fn without_rate_limits_no_headers_and_no_429() {
    let u = U::new(
        "2026-11-22T10:00:00Z",
        NO_LIMITS,
        QuotaPolicy::default(),
        false,
    );
    let p = u.partner("Free", "standard");
    let tok = u.token(p, &["grants:read"]);
    for _ in 0..120 {
        let r = u.get(&tok, "/api/v1/regions").await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.headers.get("x-ratelimit-limit").is_none());
    }
}

/// A request body that never arrives: the client sent the head and stalls.
struct StalledBody;

impl http_body::Body for StalledBody {
    type Data = axum::body::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::task::Poll::Pending
    }
}

#[tokio::test]
async fn a_timed_out_request_is_in_the_ledger_with_rate_limit_headers() {
    let db = Arc::new(Db::for_tests().expect("in-memory db"));
    let state = Arc::new(
        AppState::new(tiny_plain(), db)
            .with_clock(Clock::fixed(t("2026-11-22T10:00:00Z")))
            .with_http(grantmatch_server::HttpConfig {
                request_timeout: Duration::from_millis(200),
                ..Default::default()
            }),
    );
    let u = U {
        router: grantmatch_server::app(state.clone()),
        state,
    };
    let p = u.partner("Slow", "standard");
    let tok = u.token(p, &["matching:use"]);
    // The body never comes, so the handler waits until the request timeout ends it.
    let req = Request::builder()
        .method("POST")
        .uri("/api/v1/matching")
        .header(header::AUTHORIZATION, format!("Bearer {tok}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::new(StalledBody))
        .unwrap();
    let started = Instant::now();
    let resp = tokio::time::timeout(Duration::from_secs(10), u.router.clone().oneshot(req))
        .await
        .expect("the request timeout answers a stalled request")
        .expect("router is infallible");
    assert!(started.elapsed() >= Duration::from_millis(200));
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["code"], "timeout", "{body}");
    assert!(headers.contains_key("x-ratelimit-limit"), "{headers:?}");
    let s = u.ledger_stats(p, t("2026-11-22T00:00:00Z"));
    assert_eq!(s["total_requests"], 1, "{s}");
    assert_eq!(s["failed_requests"], 1, "{s}");
    assert_eq!(s["by_endpoint"], json!({MATCHING: 1}), "{s}");
}
