//! End-to-end test of the usage ledger with the real `grantmatch` binary: requests
//! over plain HTTP/1.1 (hand-written with `std::net::TcpStream`), rate limits set on
//! the command line, a graceful stop with SIGTERM (and SIGINT), and
//! `grantmatch usage` afterwards: every answered request is in the ledger.
//!
//! The requests are sent and the signal follows at once, well within the ledger's
//! batch interval (0.5 s), so the rows of the last batch are only on disk if the
//! shutdown flushed them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_grantmatch");
const READY_TIMEOUT: Duration = Duration::from_secs(20);
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli crate lives in the workspace")
        .to_path_buf()
}

/// `grantmatch --data-dir DATA` with a clean environment; the embedding model points at
/// a directory that does not exist (matching answers 503; nothing here needs it).
fn command(data_dir: &Path) -> Command {
    let no_model = data_dir.with_file_name("no-model");
    let mut c = Command::new(BIN);
    c.arg("--data-dir").arg(data_dir);
    for var in [
        "GRANTMATCH_DATA_DIR",
        "GRANTMATCH_ADDR",
        "GRANTMATCH_LOG",
        "GRANTMATCH_MODEL_VARIANT",
        "GRANTMATCH_RATE_LIMIT_PER_TOKEN",
        "GRANTMATCH_RATE_LIMIT_PER_PARTNER",
        "GRANTMATCH_RATE_LIMIT_MATCHING",
        "GRANTMATCH_NO_RATE_LIMITS",
        "GRANTMATCH_QUOTA_QUARTER_SHARE",
        "GRANTMATCH_SMTP_URL",
        "GRANTMATCH_SMTP_FROM",
    ] {
        c.env_remove(var);
    }
    c.env("GRANTMATCH_MODEL_DIR", no_model).stdin(Stdio::null());
    c
}

fn run(data_dir: &Path, args: &[&str]) -> Output {
    command(data_dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

#[track_caller]
fn run_ok(data_dir: &Path, args: &[&str]) -> String {
    let o = run(data_dir, args);
    assert!(
        o.status.success(),
        "grantmatch {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// `grantmatch usage --partner P --period PERIOD` as JSON.
#[track_caller]
fn usage(data_dir: &Path, partner: &str, period: &str) -> Value {
    let out = run_ok(
        data_dir,
        &["usage", "--partner", partner, "--period", period],
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("usage output is not JSON ({e}): {out}"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A running `grantmatch serve`; killed (and reaped) when dropped, also on panic.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    fn start(data_dir: &Path, log_dir: &Path, extra: &[&str]) -> Server {
        for attempt in 1..=3 {
            let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
            let log = log_dir.join(format!("server-{}-{attempt}.log", addr.port()));
            let log_file = std::fs::File::create(&log).unwrap();
            let child = command(data_dir)
                .args(["serve", "--addr", &addr.to_string()])
                .args(extra)
                .env("GRANTMATCH_LOG", "info")
                .stdout(Stdio::null())
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {BIN} serve: {e}"));
            let mut server = Server { child, addr, log };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(e) if e.contains("cannot listen") && attempt < 3 => continue,
                Err(e) => panic!("{e}"),
            }
        }
        unreachable!("the last attempt panics")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!("server exited early ({status}):\n{}", self.log()));
            }
            if let Ok(r) = http(self.addr, "GET", "/health", None, None) {
                if r.status == 200 {
                    return Ok(());
                }
            }
            if start.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "server not ready on {} after {READY_TIMEOUT:?}:\n{}",
                    self.addr,
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[track_caller]
    fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        http(self.addr, method, path, token, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}\nserver log:\n{}", self.log()))
    }

    /// Sends `signal` (TERM or INT) with kill(1) and waits for the exit (bounded).
    fn stop(&mut self, signal: &str) -> ExitStatus {
        let pid = self.child.id().to_string();
        let st = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("kill(1) runs");
        assert!(st.success(), "kill -{signal} {pid} failed");
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < STOP_TIMEOUT,
                "server did not stop within {STOP_TIMEOUT:?} after SIG{signal}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }
}

/// A minimal HTTP/1.1 request (`Connection: close`).
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> std::io::Result<Reply> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    let payload = body.map(Value::to_string).unwrap_or_default();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n"
    );
    if let Some(t) = token {
        req.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if body.is_some() {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            payload.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(&payload);
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status code"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    let body = &raw[split + 4..];
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok(Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}

fn dechunk(mut data: &[u8]) -> std::io::Result<Vec<u8>> {
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "bad chunked body");
    let mut out = Vec::new();
    loop {
        let eol = data.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let size_line = String::from_utf8_lossy(&data[..eol]).to_string();
        let size = usize::from_str_radix(size_line.split(';').next().unwrap().trim(), 16)
            .map_err(|_| bad())?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size + 2 {
            return Err(bad());
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
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
    assert!(
        o.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
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
    let mut server = Server::start(data, logs, &["--rate-limit-per-token", "10"]);
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
    assert!(String::from_utf8_lossy(&o.stderr).contains("decade"));
    let o = run(data, &["usage", "--partner", "Nobody"]);
    assert!(!o.status.success());

    // -- second run on the same data (default limits), stopped with SIGINT: the rows
    // add up.
    let mut server = Server::start(data, logs, &[]);
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
