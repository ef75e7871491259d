//! End-to-end test of the usage ledger with the real `grantmatch` binary: requests
//! over plain HTTP/1.1 (hand-written with `std::net::TcpStream`), rate limits set on
//! the command line, a graceful stop with SIGTERM (and SIGINT), and
//! `grantmatch usage` afterwards: every answered request is in the ledger.
//!
//! The requests are sent and the signal follows at once, well within the ledger's
//! batch interval (0.5 s), so the rows of the last batch are only on disk if the
//! shutdown flushed them.

mod common;

use std::path::Path;

use serde_json::{json, Value};

use common::*;

/// `grantmatch usage --partner P --period PERIOD` as JSON.
#[track_caller]
fn usage(data_dir: &Path, partner: &str, period: &str) -> Value {
    let out = run_ok(
        data_dir,
        &["usage", "--partner", partner, "--period", period],
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("usage output is not JSON ({e}): {out}"))
}

/// The stats of a partner's `grantmatch usage` output.
fn counts(v: &Value) -> (u64, u64, u64) {
    let s = &v["stats"];
    (
        s["total_requests"].as_u64().unwrap(),
        s["successful_requests"].as_u64().unwrap(),
        s["failed_requests"].as_u64().unwrap(),
    )
}

/// Counts the answers by status.
#[derive(Default, Debug)]
struct Tally {
    total: u64,
    ok: u64,
    failed: u64,
}

impl Tally {
    #[track_caller]
    fn add(&mut self, r: &Reply, expect: u16) {
        assert_eq!(r.status, expect, "{}", r.body);
        self.total += 1;
        if (200..300).contains(&r.status) {
            self.ok += 1;
        }
        if r.status >= 400 {
            self.failed += 1;
        }
    }
}

// ---------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------

#[test]
fn ledger_is_flushed_on_graceful_shutdown() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let data = data.as_path();
    let tiny = repo().join("fixtures/test-catalogues/tiny");
    let o = run(data, &["import", tiny.to_str().unwrap()]);
    assert!(o.status.success(), "import failed: {}", stderr(&o));
    run_ok(
        data,
        &[
            "partner",
            "create",
            "--name",
            "Ledger Partner",
            "--tier",
            "starter",
            "--contact-email",
            "ledger@example.org",
        ],
    );
    run_ok(
        data,
        &["partner", "create", "--name", "Other", "--tier", "standard"],
    );
    let token = |partner: &str, scopes: &str| {
        run_ok(
            data,
            &["token", "create", "--partner", partner, "--scopes", scopes],
        )
        .trim()
        .to_string()
    };
    let t1 = token("Ledger Partner", "grants:read,usage:read");
    let t2 = token("Ledger Partner", "grants:read,matching:use");
    let t3 = token("Ledger Partner", "usage:read");
    let other = token("Other", "grants:read");

    // Nothing yet.
    let v = usage(data, "Ledger Partner", "day");
    assert_eq!(counts(&v), (0, 0, 0), "{v}");
    assert_eq!(v["partner"]["name"], "Ledger Partner");
    assert_eq!(v["period"], "day");

    // -- first run: 10 requests per token and minute
    let logs = tmp.path();
    let mut server = Server::start_with(
        data,
        logs,
        ServeOpts {
            name: "first",
            args: &["--rate-limit-per-token", "10"],
            log_filter: Some("info"),
            ..ServeOpts::default()
        },
    );
    let missing = "00000000-0000-0000-0000-000000000000";
    let mut tally = Tally::default();
    // t1: 12 listings, the last two refused (429 with the headers and Retry-After).
    for i in 0..12 {
        let r = server.request("GET", "/api/v1/grants?per_page=2", Some(&t1), None);
        tally.add(&r, if i < 10 { 200 } else { 429 });
        assert_eq!(r.header("x-ratelimit-limit"), Some("10"), "request {i}");
        let remaining: u64 = r.header("x-ratelimit-remaining").unwrap().parse().unwrap();
        assert_eq!(remaining, 9u64.saturating_sub(i), "request {i}");
        let reset: u64 = r.header("x-ratelimit-reset").unwrap().parse().unwrap();
        assert!(reset > 1_700_000_000, "reset is Unix time: {reset}");
        if i >= 10 {
            let retry = r.header("retry-after").expect("Retry-After on a 429");
            assert_eq!(r.json()["error"]["code"], "rate_limit_exceeded");
            assert_eq!(
                r.json()["error"]["retry_after"].to_string(),
                retry,
                "{}",
                r.body
            );
        }
    }
    // t2: 404s, a 400, reference data, and matching (no model here: 503).
    for _ in 0..4 {
        let r = server.request("GET", &format!("/api/v1/grants/{missing}"), Some(&t2), None);
        tally.add(&r, 404);
        assert!(r.header("x-ratelimit-limit").is_some(), "headers on a 404");
    }
    tally.add(
        &server.request("GET", "/api/v1/grants?per_page=0", Some(&t2), None),
        400,
    );
    tally.add(
        &server.request("GET", "/api/v1/regions", Some(&t2), None),
        200,
    );
    let body = json!({"organization_id": "org-1", "organization_profile": {"description": "Ein Verein für Digitalisierung."}});
    for _ in 0..2 {
        let r = server.request("POST", "/api/v1/matching", Some(&t2), Some(&body));
        tally.add(&r, 503);
    }
    // t3: lacks grants:read.
    tally.add(
        &server.request("GET", "/api/v1/grants", Some(&t3), None),
        403,
    );
    // Not the partner's: another partner, no token, an unknown token.
    for _ in 0..3 {
        assert_eq!(
            server
                .request("GET", "/api/v1/grants", Some(&other), None)
                .status,
            200
        );
    }
    assert_eq!(
        server.request("GET", "/api/v1/grants", None, None).status,
        401
    );
    assert_eq!(
        server
            .request("GET", "/api/v1/grants", Some("nope"), None)
            .status,
        401
    );
    assert_eq!(tally.total, 21);

    // SIGTERM right after the last answer: the last batch is only on disk if the
    // shutdown flushed it.
    let status = server.stop("TERM");
    assert!(
        status.success(),
        "exit after SIGTERM: {status}\n{}",
        server.log()
    );
    let log = server.log();
    assert!(log.contains("usage ledger flushed"), "{log}");
    for l in log.lines().filter(|l| l.contains("usage ledger flushed")) {
        eprintln!("server: {l}");
    }

    let v = usage(data, "Ledger Partner", "day");
    assert_eq!(
        counts(&v),
        (tally.total, tally.ok, tally.failed),
        "ledger rows (total, ok, failed) vs the answers the client saw: {v}\nserver log:\n{log}"
    );
    let s = &v["stats"];
    let by_endpoint_sum: u64 = s["by_endpoint"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(by_endpoint_sum, tally.total, "{s}");
    let by_day = s["by_day"].as_array().unwrap();
    assert_eq!(by_day.len(), 1, "{s}");
    assert_eq!(by_day[0]["requests"], tally.total);
    assert_eq!(s["matching_requests"], 0, "503s are not matching requests");
    assert_eq!(counts(&usage(data, "Other", "day")).0, 3);
    // The default period is the quarter, with the quota.
    let out = run_ok(data, &["usage", "--partner", "Ledger Partner"]);
    let q: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(q["period"], "quarter");
    assert_eq!(q["stats"]["total_requests"], tally.total);
    assert_eq!(q["quota"]["tier"], "starter");
    assert_eq!(q["quota"]["matching_requests"]["current"], 0);
    assert_eq!(q["quota"]["matching_requests"]["limit"], 2_500);
    assert_eq!(q["quota"]["status"], "ok");
    // A bad period or an unknown partner fails.
    let o = run(
        data,
        &["usage", "--partner", "Ledger Partner", "--period", "decade"],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("decade"));
    let o = run(data, &["usage", "--partner", "Nobody"]);
    assert!(!o.status.success());

    // -- second run on the same data (default limits), stopped with SIGINT: the rows
    // add up.
    let mut server = Server::start_with(
        data,
        logs,
        ServeOpts {
            name: "second",
            log_filter: Some("info"),
            ..ServeOpts::default()
        },
    );
    let mut second = Tally::default();
    for i in 0..30 {
        let path = if i % 3 == 0 {
            format!("/api/v1/grants/{missing}")
        } else {
            "/api/v1/grant_areas".to_string()
        };
        second.add(
            &server.request("GET", &path, Some(&t1), None),
            if i % 3 == 0 { 404 } else { 200 },
        );
    }
    // The stats endpoint flushes before it counts (this call is not in its own answer).
    let r = server.request("GET", "/api/v1/usage/stats?period=day", Some(&t3), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.json()["stats"]["total_requests"],
        tally.total + second.total
    );
    second.add(&r, 200);
    let status = server.stop("INT");
    assert!(
        status.success(),
        "exit after SIGINT: {status}\n{}",
        server.log()
    );
    let v = usage(data, "Ledger Partner", "day");
    assert_eq!(
        counts(&v),
        (
            tally.total + second.total,
            tally.ok + second.ok,
            tally.failed + second.failed
        ),
        "{v}\nserver log:\n{}",
        server.log()
    );
}
