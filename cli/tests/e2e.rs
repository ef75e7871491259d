//! End-to-end test of the real `grantmatch` binary: import (valid, invalid, atomic),
//! partner and token management, `serve` on a free port, queries over plain HTTP/1.1
//! (hand-written with `std::net::TcpStream`), token revocation.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_grantmatch");
const READY_TIMEOUT: Duration = Duration::from_secs(20);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli crate lives in the workspace")
        .to_path_buf()
}

fn catalogue(rel: &str) -> PathBuf {
    repo().join("fixtures").join(rel)
}

/// `grantmatch --data-dir DATA` with a clean environment. The embedding model is
/// pointed at a directory that does not exist, so the test neither depends on nor
/// waits for a locally installed model (import then warns and skips embeddings).
fn command(data_dir: &Path) -> Command {
    let no_model = data_dir.with_file_name("no-model");
    let mut c = Command::new(BIN);
    c.arg("--data-dir")
        .arg(data_dir)
        .env_remove("GRANTMATCH_DATA_DIR")
        .env_remove("GRANTMATCH_ADDR")
        .env_remove("GRANTMATCH_LOG")
        .env_remove("GRANTMATCH_MODEL_VARIANT")
        .env("GRANTMATCH_MODEL_DIR", no_model)
        .stdin(Stdio::null());
    c
}

/// Runs `grantmatch --data-dir DATA ARGS...` to completion.
fn run(data_dir: &Path, args: &[&str]) -> Output {
    command(data_dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Runs a command that must succeed; returns its stdout.
#[track_caller]
fn run_ok(data_dir: &Path, args: &[&str]) -> String {
    let o = run(data_dir, args);
    assert!(
        o.status.success(),
        "grantmatch {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// Runs a command that must fail; returns its stderr.
#[track_caller]
fn run_err(data_dir: &Path, args: &[&str]) -> String {
    let o = run(data_dir, args);
    assert!(
        !o.status.success(),
        "grantmatch {args:?} unexpectedly succeeded:\nstdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    assert_eq!(
        stdout(&o),
        "",
        "a failing command prints nothing on stdout: {args:?}"
    );
    stderr(&o)
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The single line of a command's stdout (exactly one line, newline-terminated).
#[track_caller]
fn only_line(out: &str) -> String {
    assert!(out.ends_with('\n'), "stdout is not one line: {out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "stdout has more than one line: {out:?}");
    lines[0].to_string()
}

/// Names of the entries of `DATA/catalogue` plus the content of CURRENT.
fn catalogue_state(data_dir: &Path) -> (BTreeSet<String>, String) {
    let dir = data_dir.join("catalogue");
    let entries = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap_or_default();
    (entries, current)
}

fn raw_grants() -> Vec<Value> {
    std::fs::read_to_string(catalogue("catalogue/grants.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------
// The server child process
// ---------------------------------------------------------------------------------

/// A running `grantmatch serve`; killed (and reaped) when dropped, also on panic.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Server {
    /// Starts `serve` on a free port and waits until it is ready. The port is probed
    /// free and then handed to the child, so another process may take it in between:
    /// a child that exits because it cannot listen is retried on a new port.
    fn start(data_dir: &Path, log_dir: &Path) -> Server {
        for attempt in 1..=3 {
            let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
            let log = log_dir.join(format!("server-{attempt}.log"));
            let log_file = std::fs::File::create(&log).unwrap();
            let child = command(data_dir)
                .args(["serve", "--addr", &addr.to_string()])
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

    /// Polls /health until it answers 200 (bounded by READY_TIMEOUT).
    fn wait_ready(&mut self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!("server exited early ({status}):\n{}", self.log()));
            }
            if let Ok((200, body)) = http_get(self.addr, "/health", None) {
                let v: Value = serde_json::from_str(&body).expect("health is JSON");
                assert_eq!(v["status"], "ok");
                return Ok(());
            }
            if start.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "server not ready on {} after {:?}:\n{}",
                    self.addr,
                    READY_TIMEOUT,
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// GET returning status and JSON body.
    #[track_caller]
    fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let (status, body) = http_get(self.addr, path, token)
            .unwrap_or_else(|e| panic!("GET {path}: {e}\nserver log:\n{}", self.log()));
        let json = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("GET {path}: body is not JSON ({e}): {body}"));
        (status, json)
    }
}

/// A minimal HTTP/1.1 GET (`Connection: close`); returns status and body.
fn http_get(addr: SocketAddr, path: &str, token: Option<&str>) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n"
    );
    if let Some(t) = token {
        req.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let body = &raw[split + 4..];
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status code"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok((status, String::from_utf8_lossy(&body).to_string()))
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

// ---------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------

#[test]
fn import_partner_token_serve_revoke() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let data = data.as_path();

    // -- import the real catalogue
    let o = run(data, &["import", catalogue("catalogue").to_str().unwrap()]);
    assert!(o.status.success(), "import failed: {}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("1434 grants"), "{}", stderr(&o));
    let before = catalogue_state(data);
    assert!(!before.1.trim().is_empty(), "CURRENT not written");

    // -- invalid catalogues are refused with file, line, field and problem
    let err = run_err(
        data,
        &[
            "import",
            catalogue("test-catalogues/bad-field").to_str().unwrap(),
        ],
    );
    for needle in ["grants.jsonl", ":3", "grant_type", "donation"] {
        assert!(err.contains(needle), "`{needle}` missing in:\n{err}");
    }
    let err = run_err(
        data,
        &[
            "import",
            catalogue("test-catalogues/bad-dangling").to_str().unwrap(),
        ],
    );
    for needle in ["grants.jsonl", ":5", "region_ids", "unknown region"] {
        assert!(err.contains(needle), "`{needle}` missing in:\n{err}");
    }
    let err = run_err(data, &["import", tmp.path().join("nope").to_str().unwrap()]);
    assert!(err.contains("nope"), "{err}");
    // Atomic: nothing changed on disk, no half-written snapshot left behind.
    assert_eq!(catalogue_state(data), before);

    // -- partners: the id alone on stdout
    let partner_id = only_line(&run_ok(
        data,
        &[
            "partner",
            "create",
            "--name",
            "E2E Partner",
            "--tier",
            "standard",
            "--contact-email",
            "e2e@example.org",
        ],
    ));
    assert!(is_uuid(&partner_id), "not a UUID: {partner_id:?}");
    let bayern_id = only_line(&run_ok(
        data,
        &[
            "partner", "create", "--name", "Bayern", "--tier", "starter", "--region", "Bayern",
        ],
    ));
    assert!(is_uuid(&bayern_id), "not a UUID: {bayern_id:?}");
    assert_ne!(partner_id, bayern_id);
    let err = run_err(
        data,
        &[
            "partner", "create", "--name", "X", "--tier", "starter", "--region", "Atlantis",
        ],
    );
    assert!(err.contains("Atlantis"), "{err}");
    run_err(
        data,
        &["partner", "create", "--name", "Y", "--tier", "gold"],
    );
    let list = run_ok(data, &["partner", "list"]);
    assert!(
        list.contains(&partner_id) && list.contains("E2E Partner"),
        "{list}"
    );
    assert!(list.contains(&bayern_id), "{list}");

    // -- tokens: the token alone on stdout; by partner name or id
    let token = only_line(&run_ok(
        data,
        &[
            "token",
            "create",
            "--partner",
            "E2E Partner",
            "--scopes",
            "grants:read,usage:read",
        ],
    ));
    assert!(
        token.len() > 20 && !token.contains(char::is_whitespace),
        "{token:?}"
    );
    let bayern_token = only_line(&run_ok(
        data,
        &[
            "token",
            "create",
            "--partner",
            &bayern_id,
            "--scopes",
            "grants:read",
        ],
    ));
    assert_ne!(token, bayern_token);
    let usage_token = only_line(&run_ok(
        data,
        &[
            "token",
            "create",
            "--partner",
            "E2E Partner",
            "--scopes",
            "usage:read",
        ],
    ));
    run_err(
        data,
        &[
            "token",
            "create",
            "--partner",
            "E2E Partner",
            "--scopes",
            "admin",
        ],
    );
    run_err(
        data,
        &[
            "token",
            "create",
            "--partner",
            "Nobody",
            "--scopes",
            "grants:read",
        ],
    );
    let tokens = run_ok(data, &["token", "list", "--partner", "E2E Partner"]);
    assert!(!tokens.contains(&token), "token list must not show secrets");
    let token_id = tokens
        .lines()
        .find(|l| l.split('\t').nth(1) == Some("grants:read,usage:read"))
        .and_then(|l| l.split('\t').next())
        .unwrap_or_else(|| panic!("token not listed:\n{tokens}"))
        .to_string();
    assert!(is_uuid(&token_id), "{token_id:?}");

    // -- serve
    let server = Server::start(data, tmp.path());
    let raw = raw_grants();
    let raw_ids: BTreeSet<String> = raw
        .iter()
        .map(|g| g["id"].as_str().unwrap().to_string())
        .collect();

    let (status, body) = server.get("/api/v1/grants?q=Digitalisierung", Some(&token));
    assert_eq!(status, 200, "{body}");
    let grants = body["grants"].as_array().unwrap();
    assert!(!grants.is_empty());
    assert!(body["meta"]["total_count"].as_u64().unwrap() >= grants.len() as u64);
    for g in grants {
        let id = g["id"].as_str().unwrap();
        assert!(raw_ids.contains(id), "unknown grant {id}");
        let rg = raw.iter().find(|r| r["id"] == g["id"]).unwrap();
        assert_eq!(g["title"], rg["title"]);
    }
    let first = grants[0]["title"].as_str().unwrap().to_lowercase();
    assert!(first.contains("digital"), "first result: {first}");

    // The catalogue imported before the failed imports is the one served.
    let (status, body) = server.get("/api/v1/grants?per_page=1", Some(&token));
    assert_eq!(status, 200);
    assert_eq!(body["meta"]["total_count"], 1434);
    let sample = &raw[700];
    let (status, body) = server.get(
        &format!("/api/v1/grants/{}", sample["slug"].as_str().unwrap()),
        Some(&token),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["grant"]["id"], sample["id"]);
    assert_eq!(body["grant"]["title"], sample["title"]);
    assert_eq!(body["grant"]["attribution"], sample["attribution"]);

    // The Bayern partner created via `--region Bayern` is scoped.
    let (status, body) = server.get("/api/v1/grants?per_page=1", Some(&bayern_token));
    assert_eq!(status, 200);
    let scoped = body["meta"]["total_count"].as_u64().unwrap();
    assert!(scoped > 0 && scoped < 1434, "{scoped}");
    let regions: Vec<Value> = std::fs::read_to_string(catalogue("catalogue/regions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let region_id = |slug: &str| {
        regions
            .iter()
            .find(|r| r["slug"] == slug)
            .and_then(|r| r["id"].as_str())
            .unwrap()
            .to_string()
    };
    // Bayern, the country and the continent containing it.
    let related = [
        region_id("bayern"),
        region_id("germany"),
        region_id("europe"),
    ];
    let expected = raw
        .iter()
        .filter(|g| {
            g["region_ids"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| related.iter().any(|x| r == x))
        })
        .count() as u64;
    assert_eq!(scoped, expected);
    let (status, body) = server.get(
        &format!("/api/v1/grants?region_ids[]={}", region_id("sachsen")),
        Some(&bayern_token),
    );
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "out_of_scope");

    // Errors over the wire.
    let (status, body) = server.get("/api/v1/grants", None);
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, body) = server.get("/api/v1/grants", Some(&usage_token));
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "insufficient_scope");
    let (status, body) = server.get("/api/v1/grants?per_page=1000", Some(&token));
    assert_eq!(status, 400);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("per_page"));

    // -- revoke: the running server refuses the token at once
    let o = run(data, &["token", "revoke", &token_id]);
    assert!(o.status.success(), "revoke failed: {}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let (status, body) = server.get("/api/v1/grants?q=Digitalisierung", Some(&token));
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized");
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        vec!["error"]
    );
    // The other tokens still work; revoking twice fails.
    let (status, _) = server.get("/api/v1/grants?per_page=1", Some(&bayern_token));
    assert_eq!(status, 200);
    run_err(data, &["token", "revoke", &token_id]);

    drop(server);
}

/// A failed first import leaves no catalogue: nothing to serve, nothing half-written.
#[test]
fn failed_first_import_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let data = data.as_path();
    let err = run_err(
        data,
        &[
            "import",
            catalogue("test-catalogues/bad-dangling").to_str().unwrap(),
        ],
    );
    assert!(err.contains("grants.jsonl:5"), "{err}");
    let (entries, current) = catalogue_state(data);
    assert_eq!(current, "");
    assert!(
        entries
            .iter()
            .all(|e| !e.starts_with("snap-") && !e.starts_with(".tmp")),
        "{entries:?}"
    );
    // Commands that need a catalogue say so.
    let err = run_err(
        data,
        &["partner", "create", "--name", "P", "--tier", "starter"],
    );
    assert!(err.contains("import"), "{err}");
    // A valid import afterwards works.
    run_ok(
        data,
        &[
            "import",
            catalogue("test-catalogues/tiny").to_str().unwrap(),
        ],
    );
    let (_, current) = catalogue_state(data);
    assert!(!current.trim().is_empty());
}
