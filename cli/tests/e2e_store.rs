//! The store with the real binary: `db migrate`, several `grantmatch serve` processes
//! on one store, and a crash under load — on the store the tests run against: the SQLite
//! file of the data directory, or (`make test-postgres`, GRANTMATCH_TEST_DATABASE_URL) a
//! PostgreSQL schema shared by both replicas.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::*;

const MODEL_TIMEOUT: Duration = Duration::from_secs(120);

/// The tiny catalogue imported with embeddings and a starter partner with a contact
/// address and a token for matching and usage; (data dir, model dir, token).
fn setup(tmp: &Path) -> (PathBuf, PathBuf, String) {
    let model = real_model_dir();
    let data = tmp.join("data");
    import_tiny_with_model(&data, &model);
    run_ok(
        &data,
        &[
            "partner",
            "create",
            "--name",
            "Replicated",
            "--tier",
            "starter",
            "--contact-email",
            "ops@example.org",
        ],
    );
    let token = only_line(&run_ok(
        &data,
        &[
            "token",
            "create",
            "--partner",
            "Replicated",
            "--scopes",
            "matching:use,usage:read,grants:read",
        ],
    ));
    (data, model, token)
}

fn body(org: &str) -> Value {
    json!({
        "organization_id": org,
        "organization_profile": {
            "description": "Kleines Unternehmen in Bayern digitalisiert seine Fertigung mit KI.",
            "regions": ["Bayern"],
            "keywords": ["Digitalisierung"]
        }
    })
}

fn start(data: &Path, log_dir: &Path, model: &Path, name: &str, args: &[&str]) -> Server {
    Server::start_with(
        data,
        log_dir,
        ServeOpts {
            name,
            model_dir: Some(model),
            args,
            ..ServeOpts::default()
        },
    )
}

/// POST /matching, retried while the model still loads (503).
#[track_caller]
fn post(server: &Server, token: &str, body: &Value, respond_async: bool) -> (u16, Value) {
    let headers: &[(&str, &str)] = if respond_async {
        &[("Prefer", "respond-async")]
    } else {
        &[]
    };
    let start = Instant::now();
    loop {
        let (status, v) = server.send("POST", "/api/v1/matching", token, headers, Some(body));
        if status != 503 {
            return (status, v);
        }
        assert!(start.elapsed() < MODEL_TIMEOUT, "still 503: {v}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `db migrate` creates the schema (10 migrations) and is idempotent; an unknown URL
/// scheme is refused without echoing a password.
#[test]
fn db_migrate_creates_the_schema_once() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    assert_eq!(run_ok(&data, &["db", "migrate"]).trim(), "10");
    assert_eq!(run_ok(&data, &["db", "migrate"]).trim(), "10");
    assert_eq!(run_ok(&data, &["partner", "list"]), "");
    let err = run_err(
        &data,
        &[
            "--database-url",
            "mysql://gm:hunter2@db/gm",
            "partner",
            "list",
        ],
    );
    assert!(
        err.contains("expected sqlite://PATH or postgres://"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

/// Two replicas on one store: a matching request made on one is readable on the other
/// (also an asynchronous one, completed by the replica that accepted it); the quota
/// counts the requests of both, and the 90 % e-mail is queued exactly once.
#[test]
fn two_replicas_share_requests_quota_and_the_warning_mail() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, model, token) = setup(tmp.path());
    // A starter's 10,000 matchings a year × 0.0004 = 4 a quarter: the 4th request
    // reaches 90 %, and every later one is over it.
    let args = ["--quota-quarter-share", "0.0004", "--no-rate-limits"];
    let a = start(&data, tmp.path(), &model, "replica-a", &args);
    let b = start(&data, tmp.path(), &model, "replica-b", &args);
    let replicas = [&a, &b];

    let mut answered = Vec::new();
    for i in 0..6 {
        let (on, other) = (replicas[i % 2], replicas[(i + 1) % 2]);
        let (status, v) = post(on, &token, &body(&format!("org-{}", i % 3)), false);
        assert_eq!(status, 200, "request {i}: {v}");
        // Counted across both replicas: the i-th request of either is the i-th used.
        assert_eq!(
            v["quota"]["matching_requests_used"],
            i + 1,
            "request {i}: {v}"
        );
        let id = v["matching_request_id"].as_str().unwrap().to_string();
        let (status, s) = other.get(&format!("/api/v1/matching/{id}"), Some(&token));
        assert_eq!(status, 200, "request {i} read on the other replica: {s}");
        assert_eq!(s["results"], v["results"], "request {i}");
        answered.push(id);
    }
    // Asynchronous on B, read (and seen completed) on A.
    let (status, v) = post(&b, &token, &body("org-async"), true);
    assert_eq!(status, 202, "{v}");
    let id = v["matching_request_id"].as_str().unwrap().to_string();
    let started = Instant::now();
    loop {
        let (status, s) = a.get(&format!("/api/v1/matching/{id}"), Some(&token));
        assert_eq!(status, 200, "{s}");
        if s["status"] == "completed" {
            assert!(!s["results"].as_array().unwrap().is_empty(), "{s}");
            break;
        }
        assert!(started.elapsed() < MODEL_TIMEOUT, "{s}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // Both replicas report the same quota and statistics: 7 matchings of 4, 4 orgs.
    for r in replicas {
        let (status, q) = r.get("/api/v1/usage/quota", Some(&token));
        assert_eq!(status, 200, "{q}");
        assert_eq!(q["quota"]["matching_requests"]["current"], 7, "{q}");
        assert_eq!(q["quota"]["matching_requests"]["limit"], 4, "{q}");
        assert_eq!(q["quota"]["active_organizations"]["current"], 4, "{q}");
        assert_eq!(q["quota"]["status"], "exceeded", "{q}");
        let (status, s) = r.get("/api/v1/usage/stats?period=day", Some(&token));
        assert_eq!(status, 200, "{s}");
        assert_eq!(s["stats"]["matching_requests"], 7, "{s}");
    }
    // The 90 % e-mail: queued once, though both replicas crossed the mark.
    let usage: Value = serde_json::from_str(&run_ok(
        &data,
        &[
            "usage",
            "--partner",
            "Replicated",
            "--quota-quarter-share",
            "0.0004",
        ],
    ))
    .unwrap();
    let mails = usage["warning_emails"].as_array().unwrap();
    assert_eq!(mails.len(), 1, "{usage}");
    assert_eq!(mails[0]["kind"], "matching_requests");
    assert_eq!(mails[0]["recipient"], "ops@example.org");
}

/// Token lookups are cached for at most a second per replica: a token revoked by the
/// CLI (another process, as a revocation on another replica is) is refused by both
/// replicas one second after the revocation — and not read from the store on every
/// request before it.
#[test]
fn a_revoked_token_is_refused_by_both_replicas_within_a_second() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    run_ok(
        &data,
        &[
            "import",
            catalogue("test-catalogues/tiny").to_str().unwrap(),
        ],
    );
    run_ok(
        &data,
        &[
            "partner",
            "create",
            "--name",
            "Replicated",
            "--tier",
            "starter",
        ],
    );
    // The token and its id (`token create` names it on stderr).
    let create = || {
        let o = run(
            &data,
            &[
                "token",
                "create",
                "--partner",
                "Replicated",
                "--scopes",
                "grants:read",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let id = stderr(&o)
            .split_whitespace()
            .nth(1)
            .expect("token ID created …")
            .to_string();
        (only_line(&stdout(&o)), id)
    };
    let ((token, id), (other_token, _)) = (create(), create());
    let opts = |name| ServeOpts {
        name,
        args: &["--no-rate-limits"],
        ..ServeOpts::default()
    };
    let a = Server::start_with(&data, tmp.path(), opts("replica-a"));
    let b = Server::start_with(&data, tmp.path(), opts("replica-b"));
    for r in [&a, &b] {
        let (status, v) = r.get("/api/v1/grants?per_page=1", Some(&token));
        assert_eq!(status, 200, "{v}");
    }
    run_ok(&data, &["token", "revoke", &id]);
    let revoked = Instant::now();
    std::thread::sleep(Duration::from_secs(1).saturating_sub(revoked.elapsed()));
    for r in [&a, &b] {
        for _ in 0..6 {
            let (status, v) = r.get("/api/v1/grants?per_page=1", Some(&token));
            assert_eq!(status, 401, "token {id} on {}: {v}", r.addr());
        }
        let (status, v) = r.get("/api/v1/grants?per_page=1", Some(&other_token));
        assert_eq!(status, 200, "{v}");
    }
}

/// Polls GET `path` until it answers `want` (bounded); the time it took.
#[track_caller]
fn wait_for_status(
    server: &Server,
    path: &str,
    token: &str,
    want: u16,
    limit: Duration,
) -> Duration {
    let start = Instant::now();
    loop {
        let (status, v) = server.get(path, Some(token));
        if status == want {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "{path} still {status} after {limit:?}: {v}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `catalogue.FIELD` of the server's `GET /health` (`snapshot`, `fingerprint`).
fn served(server: &Server, field: &str) -> String {
    let r = http(server.addr(), "GET", "/health", None, &[], None).unwrap();
    r.json()["catalogue"][field]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn served_snapshot(server: &Server) -> String {
    served(server, "snapshot")
}

/// The tiny catalogue imported without the model, and a starter partner with a token
/// for reading grants.
fn tiny_with_reader(data: &Path) -> String {
    run_ok(
        data,
        &[
            "import",
            catalogue("test-catalogues/tiny").to_str().unwrap(),
        ],
    );
    run_ok(
        data,
        &[
            "partner",
            "create",
            "--name",
            "Replicated",
            "--tier",
            "starter",
        ],
    );
    only_line(&run_ok(
        data,
        &[
            "token",
            "create",
            "--partner",
            "Replicated",
            "--scopes",
            "grants:read",
        ],
    ))
}

/// A new import is served without a restart: a replica polling the data directory
/// (`--catalogue-poll 1`) serves the new grant within seconds, one that only listens
/// for SIGHUP (`--catalogue-poll 0`) keeps the old snapshot until it gets the signal;
/// `/health` names the snapshot served. Both share one data directory and one store.
#[test]
fn replicas_pick_up_a_new_catalogue_without_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let token = tiny_with_reader(&data);
    let opts = |name, args| ServeOpts {
        name,
        args,
        ..ServeOpts::default()
    };
    let polling = Server::start_with(
        &data,
        tmp.path(),
        opts("polling", &["--no-rate-limits", "--catalogue-poll", "1"]),
    );
    let on_hup = Server::start_with(
        &data,
        tmp.path(),
        opts("on-hup", &["--no-rate-limits", "--catalogue-poll", "0"]),
    );
    let old = served_snapshot(&polling);
    assert!(old.starts_with("snap-"), "{old}");
    assert_eq!(served_snapshot(&on_hup), old);
    let path = "/api/v1/grants/testprogramm-neu";
    for s in [&polling, &on_hup] {
        assert_eq!(s.get(path, Some(&token)).0, 404);
    }

    let changed = tiny_with_extra_grant(
        &tmp.path().join("changed"),
        "7d3c1a52-1b9e-4c55-9a57-2f1e0c6b7a01",
        "testprogramm-neu",
        "Testprogramm Neu nach dem Import",
    );
    run_ok(&data, &["import", changed.to_str().unwrap()]);

    let took = wait_for_status(&polling, path, &token, 200, Duration::from_secs(10));
    let new = served_snapshot(&polling);
    assert_ne!(new, old);
    let (_, v) = polling.get(path, Some(&token));
    assert_eq!(
        v["grant"]["title"], "Testprogramm Neu nach dem Import",
        "{v}"
    );
    let (_, list) = polling.get("/api/v1/grants?per_page=100", Some(&token));
    assert_eq!(list["meta"]["total_count"], 13, "{list}");
    assert!(polling.log().contains("catalogue snapshot picked up"));
    eprintln!("picked up by polling after {took:?}");

    // The SIGHUP-only replica still serves the old snapshot, then the new one at once.
    assert_eq!(on_hup.get(path, Some(&token)).0, 404);
    assert_eq!(served_snapshot(&on_hup), old);
    on_hup.signal("HUP");
    wait_for_status(&on_hup, path, &token, 200, Duration::from_secs(10));
    assert_eq!(served_snapshot(&on_hup), new);
}

fn served_fingerprint(server: &Server) -> String {
    served(server, "fingerprint")
}

/// Replicas with data directories of their own on one PostgreSQL database: the
/// database records the imported catalogue as current, with its files. A replica that
/// starts with an empty data directory serves it, and a new import on another machine's
/// data directory reaches it without a restart (`--catalogue-poll 1`). On the embedded
/// SQLite the data directory's `CURRENT` is the record: an import publishes nothing.
#[test]
fn a_replica_with_its_own_data_directory_serves_the_catalogue_recorded_in_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let token = tiny_with_reader(&data);
    let location = grantmatch_server::store::testing::location(&data);
    if !matches!(location, grantmatch_server::db::Location::Postgres(_)) {
        let db = grantmatch_server::db::Db::for_tests_in(&data).unwrap();
        assert_eq!(
            db.current_catalogue().unwrap(),
            None,
            "SQLite: the data directory is the record"
        );
        eprintln!("the replica part needs PostgreSQL (make test-postgres)");
        return;
    }
    let own = tmp.path().join("replica-data");
    let first = Server::start_with(
        &data,
        tmp.path(),
        ServeOpts {
            name: "first",
            args: &["--no-rate-limits", "--catalogue-poll", "1"],
            ..ServeOpts::default()
        },
    );
    let replica = Server::start_with(
        &own,
        tmp.path(),
        ServeOpts {
            name: "replica",
            args: &["--no-rate-limits", "--catalogue-poll", "1"],
            database_of: Some(&data),
            ..ServeOpts::default()
        },
    );
    let fp = served_fingerprint(&first);
    assert_eq!(fp.len(), 64, "{fp}");
    assert_eq!(served_fingerprint(&replica), fp);
    let (_, list) = replica.get("/api/v1/grants?per_page=100", Some(&token));
    assert_eq!(list["meta"]["total_count"], 12, "{list}");
    assert!(replica
        .log()
        .contains("installed the catalogue recorded as current in the database"));

    let changed = tiny_with_extra_grant(
        &tmp.path().join("changed"),
        "7d3c1a52-1b9e-4c55-9a57-2f1e0c6b7a01",
        "testprogramm-neu",
        "Testprogramm Neu nach dem Import",
    );
    let o = run(&data, &["import", changed.to_str().unwrap()]);
    let said = stderr(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("recorded as current in the database"),
        "{said}"
    );
    let path = "/api/v1/grants/testprogramm-neu";
    let took = wait_for_status(&replica, path, &token, 200, Duration::from_secs(15));
    eprintln!("the replica served the new catalogue after {took:?}");
    let new = served_fingerprint(&replica);
    assert_ne!(new, fp);
    wait_for_status(&first, path, &token, 200, Duration::from_secs(15));
    assert_eq!(served_fingerprint(&first), new);
    assert!(own.join("catalogue").join("CURRENT").exists());
}

/// Rate limits are kept per replica (in memory): each replica allows a token its
/// limit, so N replicas behind a balancer allow at most N × the limit. This pins that
/// documented tolerance: 3 per minute per token on each of two replicas.
#[test]
fn rate_limits_hold_per_replica() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let o = run(
        &data,
        &[
            "import",
            catalogue("test-catalogues/tiny").to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "import failed: {}", stderr(&o));
    run_ok(
        &data,
        &[
            "partner", "create", "--name", "Limited", "--tier", "starter",
        ],
    );
    let token = only_line(&run_ok(
        &data,
        &[
            "token",
            "create",
            "--partner",
            "Limited",
            "--scopes",
            "grants:read",
        ],
    ));
    let args = ["--rate-limit-per-token", "3"];
    let opts = |name| ServeOpts {
        name,
        args: &args,
        ..ServeOpts::default()
    };
    let a = Server::start_with(&data, tmp.path(), opts("limit-a"));
    let b = Server::start_with(&data, tmp.path(), opts("limit-b"));
    let statuses = |s: &Server| -> Vec<u16> {
        (0..4)
            .map(|_| {
                s.request("GET", "/api/v1/grants", Some(&token), None)
                    .status
            })
            .collect()
    };
    assert_eq!(statuses(&a), [200, 200, 200, 429]);
    assert_eq!(statuses(&b), [200, 200, 200, 429]);
}

/// Crash under matching load: clients post synchronous and asynchronous matchings to
/// a server, which is killed with SIGKILL in the middle. After a restart every request
/// that had been answered 2xx is there (the synchronous ones completed with results),
/// and the quota counted each of them.
#[test]
fn every_answered_matching_survives_a_kill_under_load() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, model, token) = setup(tmp.path());
    let args = ["--no-rate-limits"];
    let mut server = start(&data, tmp.path(), &model, "loaded", &args);
    // Warm: the model answers.
    let (status, warm) = post(&server, &token, &body("warm-up"), false);
    assert_eq!(status, 200, "{warm}");

    let addr = server.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let answered: Arc<Mutex<Vec<(String, u16)>>> = Arc::default();
    let clients: Vec<_> = (0..3)
        .map(|c| {
            let (stop, answered, token) = (stop.clone(), answered.clone(), token.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let respond_async = n % 3 == 2;
                    let headers: &[(&str, &str)] = if respond_async {
                        &[("Prefer", "respond-async")]
                    } else {
                        &[]
                    };
                    let b = body(&format!("org-{c}-{n}")).to_string();
                    n += 1;
                    // A request cut off by the kill is no answer: nothing to check.
                    let Ok(r) = http(
                        addr,
                        "POST",
                        "/api/v1/matching",
                        Some(&token),
                        headers,
                        Some(&b),
                    ) else {
                        continue;
                    };
                    if (200..300).contains(&r.status) {
                        let id = r.json()["matching_request_id"]
                            .as_str()
                            .expect("a 2xx matching has an id")
                            .to_string();
                        answered.lock().unwrap().push((id, r.status));
                    }
                }
            })
        })
        .collect();
    // Let the load run, then kill the server while requests are in flight.
    let started = Instant::now();
    while answered.lock().unwrap().len() < 12 && started.elapsed() < MODEL_TIMEOUT {
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = server.stop("KILL");
    assert!(!killed.success());
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().unwrap();
    }
    let answered = answered.lock().unwrap().clone();
    assert!(answered.len() >= 12, "only {} answered", answered.len());

    let server = start(&data, tmp.path(), &model, "restarted", &args);
    for (id, status) in &answered {
        let (s, v) = server.get(&format!("/api/v1/matching/{id}"), Some(&token));
        assert_eq!(
            s, 200,
            "{id} (answered {status}) missing after the crash: {v}"
        );
        if *status == 200 {
            assert_eq!(v["status"], "completed", "{v}");
            assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
        }
    }
    // The quota counted every answered request (and the warm-up): possibly more, for
    // requests committed whose answer the kill cut off.
    let (status, q) = server.get("/api/v1/usage/quota", Some(&token));
    assert_eq!(status, 200, "{q}");
    let used = q["quota"]["matching_requests"]["current"].as_u64().unwrap();
    assert!(
        used > answered.len() as u64,
        "used {used}, answered {}",
        answered.len()
    );
    eprintln!(
        "{} matching requests answered 2xx before the kill, all present after the restart ({used} counted)",
        answered.len()
    );
}
