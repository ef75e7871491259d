//! Helpers shared by the end-to-end tests of the real `grantmatch` binary: running
//! commands, a `grantmatch serve` child process, and a minimal HTTP/1.1 client
//! hand-written with `std::net::TcpStream`.

// Each test binary compiles this module and uses only a subset of it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_grantmatch");
/// How long a server may take to answer /health after the start.
pub const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a server may take to exit after a signal.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// Environment variables of the binary that must not leak in from the caller.
const CLEARED_ENV: &[&str] = &[
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
    "GRANTMATCH_MATCH_OPTIONS",
    "GRANTMATCH_REQUEST_TIMEOUT",
    "GRANTMATCH_HEADER_TIMEOUT",
    "GRANTMATCH_MAX_BODY_BYTES",
    "GRANTMATCH_CORS_ORIGINS",
    "GRANTMATCH_DATABASE_URL",
];

/// The workspace root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli crate lives in the workspace")
        .to_path_buf()
}

/// `REPO/fixtures/REL`.
pub fn catalogue(rel: &str) -> PathBuf {
    repo().join("fixtures").join(rel)
}

// ---------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------

/// `grantmatch --data-dir DATA` with a clean environment. The embedding model is
/// pointed at a directory that does not exist, so nothing depends on or waits for a
/// locally installed model (import warns and skips embeddings, matching answers 503).
pub fn command(data_dir: &Path) -> Command {
    command_with_model(data_dir, &data_dir.with_file_name("no-model"))
}

/// `grantmatch --data-dir DATA` with a clean environment and the embedding model in
/// `model_dir`.
pub fn command_with_model(data_dir: &Path, model_dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--data-dir").arg(data_dir);
    for var in CLEARED_ENV {
        c.env_remove(var);
    }
    c.env("GRANTMATCH_MODEL_DIR", model_dir)
        .stdin(Stdio::null());
    // With GRANTMATCH_TEST_DATABASE_URL (make test's PostgreSQL), every data directory
    // has a schema of its own there, and the commands use it.
    if let grantmatch_server::db::Location::Postgres(url) =
        grantmatch_server::store::testing::location(data_dir)
    {
        c.env("GRANTMATCH_DATABASE_URL", url);
    }
    c
}

/// The real model assets (`GRANTMATCH_MODEL_DIR`, default `~/.cache/grantmatch/model`).
/// Tests that need them FAIL with a clear message when they are missing.
pub fn real_model_dir() -> PathBuf {
    let dir = grantmatch_engine::embed::default_model_dir(std::env::var_os);
    for f in ["model.onnx", "tokenizer.json", "libonnxruntime.so"] {
        assert!(
            dir.join(f).is_file(),
            "this test needs the embedding model, but {} is missing.\n\
             Build the assets with `make model` (scripts/model/fetch.sh) or point \
             GRANTMATCH_MODEL_DIR at a directory that has them.",
            dir.join(f).display()
        );
    }
    dir
}

/// Imports the tiny test catalogue into `data_dir` with the model in `model_dir`, so its
/// grants are embedded; returns the import's output (asserted successful).
pub fn import_tiny_with_model(data_dir: &Path, model_dir: &Path) -> Output {
    let o = command_with_model(data_dir, model_dir)
        .args([
            "import",
            catalogue("test-catalogues/tiny").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "import failed: {}", stderr(&o));
    o
}

/// A copy of the tiny test catalogue in `dir` with one grant more: a copy of its first
/// grant with `id`, `slug` and `title` (for imports that change the catalogue).
pub fn tiny_with_extra_grant(dir: &Path, id: &str, slug: &str, title: &str) -> PathBuf {
    let src = catalogue("test-catalogues/tiny");
    std::fs::create_dir_all(dir).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let grants = std::fs::read_to_string(src.join("grants.jsonl")).unwrap();
    let mut extra: serde_json::Value =
        serde_json::from_str(grants.lines().next().unwrap()).unwrap();
    extra["id"] = id.into();
    extra["slug"] = slug.into();
    extra["title"] = title.into();
    let text = format!("{}{}\n", grants, extra);
    std::fs::write(dir.join("grants.jsonl"), text).unwrap();
    dir.to_path_buf()
}

/// The single line of a command's stdout (exactly one line, newline-terminated).
#[track_caller]
pub fn only_line(out: &str) -> String {
    assert!(out.ends_with('\n'), "stdout is not one line: {out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "stdout has more than one line: {out:?}");
    lines[0].to_string()
}

/// Runs `grantmatch --data-dir DATA ARGS...` to completion.
pub fn run(data_dir: &Path, args: &[&str]) -> Output {
    command(data_dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Runs a command that must succeed; returns its stdout.
#[track_caller]
pub fn run_ok(data_dir: &Path, args: &[&str]) -> String {
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

/// Runs a command that must fail and print nothing on stdout; returns its stderr.
#[track_caller]
pub fn run_err(data_dir: &Path, args: &[&str]) -> String {
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

// ---------------------------------------------------------------------------------
// The server child process
// ---------------------------------------------------------------------------------

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// How [`Server::start_with`] runs `serve`; the default is what [`Server::start`] uses.
#[derive(Clone, Copy)]
pub struct ServeOpts<'a> {
    /// The child's stderr goes to `LOG_DIR/NAME-ATTEMPT.log`.
    pub name: &'a str,
    /// The embedding model directory; `None`: a missing one (see [`command`]).
    pub model_dir: Option<&'a Path>,
    /// Extra arguments after `serve --addr ADDR`.
    pub args: &'a [&'a str],
    /// `GRANTMATCH_LOG` for the child; `None`: the binary's default filter.
    pub log_filter: Option<&'a str>,
    /// On PostgreSQL, use the database of this data directory instead of the server's
    /// own (a replica with a data directory of its own on a shared database).
    pub database_of: Option<&'a Path>,
}

impl Default for ServeOpts<'_> {
    fn default() -> Self {
        ServeOpts {
            name: "server",
            model_dir: None,
            args: &[],
            log_filter: None,
            database_of: None,
        }
    }
}

/// A running `grantmatch serve`; killed (and reaped) when dropped, also on panic,
/// unless it has already exited (e.g. after [`Server::stop`]).
pub struct Server {
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
    /// Starts `serve` without the model on a free port and waits until it is ready.
    pub fn start(data_dir: &Path, log_dir: &Path) -> Server {
        Self::start_with(data_dir, log_dir, ServeOpts::default())
    }

    /// Like [`Server::start`], with `opts`. The port is probed free and then handed to
    /// the child, so another process may take it in between: a child that exits
    /// because it cannot listen is retried on a new port.
    pub fn start_with(data_dir: &Path, log_dir: &Path, opts: ServeOpts) -> Server {
        for attempt in 1..=3 {
            let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
            let log = log_dir.join(format!("{}-{attempt}.log", opts.name));
            let log_file = std::fs::File::create(&log).unwrap();
            let mut cmd = match opts.model_dir {
                Some(m) => command_with_model(data_dir, m),
                None => command(data_dir),
            };
            cmd.args(["serve", "--addr", &addr.to_string()])
                .args(opts.args)
                .stdout(Stdio::null())
                .stderr(log_file);
            if let Some(filter) = opts.log_filter {
                cmd.env("GRANTMATCH_LOG", filter);
            }
            if let Some(grantmatch_server::db::Location::Postgres(url)) = opts
                .database_of
                .map(grantmatch_server::store::testing::location)
            {
                cmd.env("GRANTMATCH_DATABASE_URL", url);
            }
            let child = cmd
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

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's log (its stderr) so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Polls /health until it answers 200 with status "ok" (bounded by READY_TIMEOUT).
    fn wait_ready(&mut self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!("server exited early ({status}):\n{}", self.log()));
            }
            if let Ok(r) = http(self.addr, "GET", "/health", None, &[], None) {
                if r.status == 200 {
                    let v: Value = serde_json::from_str(&r.body).expect("health is JSON");
                    assert_eq!(v["status"], "ok");
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

    /// Sends `signal` (e.g. HUP) with kill(1), without waiting for anything.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let st = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("kill(1) runs");
        assert!(st.success(), "kill -{signal} {pid} failed");
    }

    /// Sends `signal` (TERM or INT) with kill(1) and waits for the exit (bounded by
    /// STOP_TIMEOUT).
    pub fn stop(&mut self, signal: &str) -> ExitStatus {
        self.signal(signal);
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

    /// One request, the whole reply; panics (with the server log) if it fails.
    #[track_caller]
    pub fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        let body = body.map(Value::to_string);
        http(self.addr, method, path, token, &[], body.as_deref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}\nserver log:\n{}", self.log()))
    }

    /// GET returning status and JSON body.
    #[track_caller]
    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let r = self.request("GET", path, token, None);
        let json = serde_json::from_str(&r.body)
            .unwrap_or_else(|e| panic!("GET {path}: body is not JSON ({e}): {}", r.body));
        (r.status, json)
    }

    /// A request returning status and JSON body; a 429 (rate limit) is waited out and
    /// retried, so polling loops never trip the limits.
    #[track_caller]
    pub fn send(
        &self,
        method: &str,
        path: &str,
        token: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, Value) {
        let body = body.map(Value::to_string);
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let r = http(
                self.addr,
                method,
                path,
                Some(token),
                headers,
                body.as_deref(),
            )
            .unwrap_or_else(|e| panic!("{method} {path}: {e}\nserver log:\n{}", self.log()));
            let json: Value = serde_json::from_str(&r.body)
                .unwrap_or_else(|e| panic!("{method} {path}: body is not JSON ({e}): {}", r.body));
            if r.status == 429 && Instant::now() < deadline {
                let wait = json["error"]["retry_after"]
                    .as_u64()
                    .unwrap_or(1)
                    .clamp(1, 60);
                std::thread::sleep(Duration::from_secs(wait));
                continue;
            }
            return (r.status, json);
        }
    }
}

// ---------------------------------------------------------------------------------
// HTTP/1.1 client
// ---------------------------------------------------------------------------------

/// An HTTP answer: status, headers in order, and the (de-chunked) body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The first header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics if it is not.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }
}

/// A minimal HTTP/1.1 request (`Connection: close`) with an optional bearer token,
/// extra headers and an optional JSON body.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    json_body: Option<&str>,
) -> std::io::Result<Reply> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n"
    );
    if let Some(t) = token {
        req.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = json_body {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    if let Some(b) = json_body {
        req.push_str(b);
    }
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

/// Decodes a `Transfer-Encoding: chunked` body (trailers are ignored).
pub fn dechunk(mut data: &[u8]) -> std::io::Result<Vec<u8>> {
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
