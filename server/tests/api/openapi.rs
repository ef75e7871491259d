//! The OpenAPI document (`GET /api/v1/openapi.json`), the interactive docs
//! (`GET /api/v1/docs`), route coverage, and validation of real responses against the
//! documented schemas.
//!
//! **Route coverage.** The route table lives in one place, `app()` in `lib.rs`. The
//! test reads it from the router itself: axum's `Debug` output of `app(state)` lists
//! every route path (nested ones with their prefix); for each path the test probes
//! every method without a token (a routed method answers anything but 404/405), and
//! the resulting (method, path) set must equal the operations of the document. A
//! route added to `app()` without documentation, or a documented operation without a
//! route, fails `every_route_is_documented`.
//!
//! **Schema validation.** `responses_of_every_endpoint_validate` sends requests to
//! every endpoint (success and every error status the document lists), validates each
//! body with `jsonschema` (draft 2020-12, formats checked) against the schema of the
//! documented response for that operation and status, and fails unless every
//! documented 2xx response and every error status was exercised.
//!
//! Examples in the document are real responses over `fixtures/catalogue`; with
//! `GRANTMATCH_WRITE_OPENAPI_EXAMPLES=1` `examples_are_real_responses` rewrites
//! `server/src/openapi/examples/*.json` from the current server (arrays cut to three
//! elements) instead of comparing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use grantmatch_engine::MatchOptions;
use grantmatch_server::clock::Clock;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::error::ApiError;
use grantmatch_server::matcher::Matcher;
use grantmatch_server::openapi;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::AppState;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::common::{id, real, repo_root, send_with, tiny, Resp};

// ---------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------

fn doc() -> &'static Value {
    openapi::document()
}

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// (method, path) of every documented operation.
fn documented_operations() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc()["paths"].as_object().expect("paths") {
        for m in METHODS {
            if item.get(m).is_some() {
                out.insert((m.to_string(), path.clone()));
            }
        }
    }
    out
}

/// Follows a local `$ref` (`#/components/...`).
fn resolve(v: &Value) -> &Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let pointer = r.strip_prefix('#').expect("local ref");
            resolve(
                doc()
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("dangling $ref {r}")),
            )
        }
        None => v,
    }
}

fn collect_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(s) = x.as_str() {
                        out.insert(s.to_string());
                    }
                } else {
                    collect_refs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn document_is_valid_openapi_31() {
    let fx = real();
    // Served without a token, as JSON, equal to the document the code builds.
    let r = fx.send("GET", "/api/v1/openapi.json", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    crate::common::assert_json_content_type(&r);
    assert_eq!(&r.json, doc());
    let d = &r.json;

    let version = d["openapi"].as_str().expect("openapi version");
    assert!(version.starts_with("3.1."), "openapi = {version}");
    assert!(d["info"]["title"].is_string() && d["info"]["version"].is_string());
    // Structurally a valid OpenAPI document (utoipa's model parses it back).
    let parsed: utoipa::openapi::OpenApi =
        serde_json::from_value(d.clone()).expect("the document parses as OpenAPI");
    assert_eq!(
        parsed.paths.paths.len(),
        d["paths"].as_object().unwrap().len()
    );

    // The bearer scheme.
    assert_eq!(
        d["components"]["securitySchemes"]["bearer"],
        json!({
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "opaque token (gm_…)",
            "description": d["components"]["securitySchemes"]["bearer"]["description"],
        })
    );

    let mut op_ids = BTreeSet::new();
    let paths = d["paths"].as_object().unwrap();
    assert!(paths.len() >= 17, "{} paths", paths.len());
    for (path, item) in paths {
        let ops: Vec<(&str, &Value)> = METHODS
            .iter()
            .filter_map(|m| item.get(*m).map(|o| (*m, o)))
            .collect();
        assert!(!ops.is_empty(), "{path} has no operation");
        let path_params: BTreeSet<String> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_string)
            .collect();
        for (m, op) in ops {
            let what = format!("{} {path}", m.to_uppercase());
            let op_id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{what}: no operationId"));
            assert!(
                op_ids.insert(op_id.to_string()),
                "duplicate operationId {op_id}"
            );
            assert!(op["summary"].is_string(), "{what}: no summary");
            let responses = op["responses"]
                .as_object()
                .unwrap_or_else(|| panic!("{what}: no responses"));
            assert!(
                responses
                    .keys()
                    .any(|s| s.starts_with('2') || s.starts_with('3')),
                "{what}: no success response"
            );
            for (status, resp) in responses {
                let resp = resolve(resp);
                assert!(
                    resp["description"].is_string(),
                    "{what} {status}: no description"
                );
                if status.starts_with('4') || status.starts_with('5') {
                    assert_eq!(
                        resp["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ErrorBody",
                        "{what} {status}: not the error body"
                    );
                }
            }
            // Path parameters are declared.
            let declared: BTreeSet<String> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(declared, path_params, "{what}: path parameters");
            // Authenticated operations: bearer with the scope, named in the
            // description, and the auth errors documented.
            let security = op["security"].as_array().expect("security");
            let public = security
                .iter()
                .all(|s| s.as_object().is_some_and(|o| o.is_empty()));
            if path.starts_with("/api/v1/") && !public {
                let scopes = security[0]["bearer"]
                    .as_array()
                    .expect("bearer requirement");
                assert_eq!(scopes.len(), 1, "{what}: {scopes:?}");
                let scope = scopes[0].as_str().unwrap();
                assert!(["grants:read", "matching:use", "usage:read"].contains(&scope));
                assert!(
                    op["description"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("`{scope}`")),
                    "{what}: scope not in the description"
                );
                for s in ["401", "403", "429", "500"] {
                    assert!(responses.contains_key(s), "{what}: no {s}");
                }
            }
        }
    }
    // The matching request body and its example.
    let body = &d["paths"]["/api/v1/matching"]["post"]["requestBody"];
    assert_eq!(
        body["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/MatchingRequest"
    );
    assert!(body["required"].as_bool().unwrap_or(false));
    // region_ids[] is an exploded form array of UUIDs.
    let params = d["paths"]["/api/v1/grants"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let region = params
        .iter()
        .find(|p| p["name"] == "region_ids[]")
        .expect("region_ids[]");
    assert_eq!(region["in"], "query");
    assert_eq!(region["style"], "form");
    assert_eq!(region["explode"], true);
    assert_eq!(region["schema"]["items"]["format"], "uuid");
    // 429 documents retry_after and Retry-After.
    let too_many = &d["components"]["responses"]["TooManyRequests"];
    assert!(too_many["headers"]["Retry-After"].is_object());
    assert!(d["components"]["schemas"]["ErrorDetail"]["properties"]["retry_after"].is_object());

    // Every $ref resolves; every component schema is a valid JSON Schema.
    let mut refs = BTreeSet::new();
    collect_refs(d, &mut refs);
    for r in &refs {
        assert!(
            d.pointer(r.strip_prefix('#').unwrap()).is_some(),
            "dangling $ref {r}"
        );
    }
    for name in d["components"]["schemas"].as_object().unwrap().keys() {
        validator_for(&json!({ "$ref": format!("#/components/schemas/{name}") }));
    }
    // Every example validates against its schema.
    for_each_example(|what, schema, example| {
        let v = validator_for(schema);
        if let Err(e) = v.validate(example) {
            panic!("example {what} does not validate: {e}\n{example}");
        }
    });
}

/// Calls `f(name, schema, example)` for every example of a response or request body.
fn for_each_example(mut f: impl FnMut(&str, &Value, &Value)) {
    let mut visit = |what: String, media: &Value| {
        let schema = &media["schema"];
        if let Some(e) = media.get("example") {
            f(&what, schema, e);
        }
        for (name, e) in media["examples"].as_object().into_iter().flatten() {
            f(&format!("{what} ({name})"), schema, &resolve(e)["value"]);
        }
    };
    for (path, item) in doc()["paths"].as_object().unwrap() {
        for m in METHODS {
            let Some(op) = item.get(m) else { continue };
            if let Some(media) = op.pointer("/requestBody/content/application~1json") {
                visit(format!("{m} {path} request"), media);
            }
            for (status, resp) in op["responses"].as_object().unwrap() {
                if let Some(media) = resolve(resp).pointer("/content/application~1json") {
                    visit(format!("{m} {path} {status}"), media);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Interactive docs
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn docs_are_served_offline_from_the_binary() {
    let fx = real();
    let r = fx.send("GET", "/api/v1/docs", None).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    assert_eq!(r.headers["location"], "/api/v1/docs/");
    let page = fx.send("GET", "/api/v1/docs/", None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(page.text.contains("swagger-ui"), "{}", page.text);
    // No asset is loaded from another host: every script and stylesheet is relative.
    for needle in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
        assert!(
            !page.text.contains(needle),
            "external asset in the docs page: {needle}"
        );
    }
    for (asset, kind, min_len) in [
        ("swagger-ui-bundle.js", "javascript", 100_000),
        ("swagger-ui.css", "css", 10_000),
        ("swagger-initializer.js", "javascript", 100),
    ] {
        let r = fx.send("GET", &format!("/api/v1/docs/{asset}"), None).await;
        assert_eq!(r.status, StatusCode::OK, "{asset}");
        let ct = r.headers["content-type"].to_str().unwrap().to_string();
        assert!(ct.contains(kind), "{asset}: {ct}");
        assert!(r.text.len() >= min_len, "{asset}: {} bytes", r.text.len());
    }
    // The UI loads this server's document.
    let init = fx
        .send("GET", "/api/v1/docs/swagger-config.json", None)
        .await;
    let cfg = if init.status == StatusCode::OK {
        init.text
    } else {
        fx.send("GET", "/api/v1/docs/swagger-initializer.js", None)
            .await
            .text
    };
    assert!(cfg.contains("/api/v1/openapi.json"), "{cfg}");
    // Neither the document nor the docs are recorded as partner traffic or rate limited:
    // they answer without a token and carry no rate-limit headers.
    let r = fx.send("GET", "/api/v1/openapi.json", None).await;
    assert!(r.headers.get("x-ratelimit-limit").is_none());
    // Other methods: 405 with the error body.
    let r = fx.send("POST", "/api/v1/openapi.json", None).await;
    crate::common::assert_error(&r, 405, "method_not_allowed");
}

// ---------------------------------------------------------------------------------
// Route coverage
// ---------------------------------------------------------------------------------

/// Paths of the routes of `app()`, read from axum's `Debug` output of the router.
fn routed_paths(state: Arc<AppState>) -> BTreeSet<String> {
    let dump = format!("{:?}", grantmatch_server::app(state));
    let mut out = BTreeSet::new();
    let mut rest = dump.as_str();
    while let Some(i) = rest.find("RouteId(") {
        rest = &rest[i + "RouteId(".len()..];
        let Some(close) = rest.find("): \"") else {
            continue;
        };
        if !rest[..close].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let tail = &rest[close + 4..];
        if let Some(end) = tail.find('"') {
            out.insert(tail[..end].to_string());
        }
    }
    out
}

/// Routes of the Swagger UI's static assets (served under `DOCS_PATH/`): not API
/// operations, documented as the docs page.
fn is_docs_asset(path: &str) -> bool {
    path == "/api/v1/docs/{*rest}"
}

/// A concrete URL for a route template.
fn concrete(path: &str) -> String {
    path.replace("{id}", &Uuid::new_v4().to_string())
}

#[tokio::test]
async fn every_route_is_documented() {
    let fx = real();
    let paths = routed_paths(fx.state.clone());
    // The Debug format is axum's: fail loudly if it changes instead of passing vacuously.
    for known in [
        "/health",
        "/health/ready",
        "/api/v1/grants",
        "/api/v1/grants/{id}",
        "/api/v1/matching/{id}/results",
    ] {
        assert!(
            paths.contains(known),
            "route {known} not found in the router dump: {paths:?}"
        );
    }
    let mut routed = BTreeSet::new();
    for path in paths.iter().filter(|p| !is_docs_asset(p)) {
        // Axum's internal catch-all routes of nested fallbacks are not endpoints.
        if path.contains("__private__axum") {
            continue;
        }
        // The partner dashboard's HTML pages are not part of the API document.
        if path.starts_with("/dashboard") {
            continue;
        }
        for m in METHODS {
            let r = fx.send(&m.to_uppercase(), &concrete(path), None).await;
            let code = r.json["error"]["code"].as_str().unwrap_or("");
            let unrouted = r.status == StatusCode::METHOD_NOT_ALLOWED
                || (r.status == StatusCode::NOT_FOUND && r.text.contains("no such endpoint"));
            if !unrouted {
                routed.insert((m.to_string(), path.clone()));
                // Routed API operations need a token (except the public ones).
                if path.starts_with("/api/v1/")
                    && !path.starts_with("/api/v1/docs")
                    && path != "/api/v1/openapi.json"
                {
                    assert_eq!(
                        code, "unauthorized",
                        "{m} {path} without a token: {}",
                        r.text
                    );
                }
            }
        }
    }
    let documented = documented_operations();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        undocumented.is_empty(),
        "routes without documentation in server/src/openapi/paths.rs: {undocumented:?}"
    );
    assert!(
        unrouted.is_empty(),
        "documented operations without a route: {unrouted:?}"
    );
    // Undocumented paths are 404 with the error body.
    let r = fx.send("GET", "/api/v1/openapi.yaml", None).await;
    crate::common::assert_error(&r, 404, "not_found");
}

/// Query parameters a handler module reads (from its source: `p.single("x")`,
/// `p.uuids("x")`, `p.q()`, `p.page(..)` …) must be documented on the operations of
/// its paths.
#[test]
fn every_query_parameter_is_documented() {
    let modules: &[(&str, &[&str])] = &[
        ("grants.rs", &["/api/v1/grants"]),
        ("providers.rs", &["/api/v1/grant_providers"]),
        (
            "reference.rs",
            &[
                "/api/v1/regions",
                "/api/v1/grant_areas",
                "/api/v1/eligible_entities",
                "/api/v1/target_groups",
            ],
        ),
        ("usage.rs", &["/api/v1/usage/stats", "/api/v1/usage/quota"]),
    ];
    let routes_dir = repo_root().join("server/src/routes");
    let mut all_modules: Vec<String> = std::fs::read_dir(&routes_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".rs") && n != "mod.rs" && n != "matching.rs")
        .collect();
    all_modules.sort();
    let mut known: Vec<String> = modules.iter().map(|(m, _)| m.to_string()).collect();
    known.sort();
    assert_eq!(
        all_modules, known,
        "a new handler module: add it to this test's table"
    );
    for (module, paths) in modules {
        let src = std::fs::read_to_string(routes_dir.join(module)).unwrap();
        let mut read = BTreeSet::new();
        for accessor in [
            ".single(\"",
            ".uuid(\"",
            ".uuids(\"",
            ".list(\"",
            ".flag(\"",
        ] {
            let mut rest = src.as_str();
            while let Some(i) = rest.find(accessor) {
                rest = &rest[i + accessor.len()..];
                let end = rest.find('"').unwrap();
                read.insert(rest[..end].to_string());
            }
        }
        if src.contains(".q()") {
            read.insert("q".to_string());
        }
        if src.contains(".page(") {
            read.insert("page".to_string());
            read.insert("per_page".to_string());
        }
        let mut documented = BTreeSet::new();
        for path in *paths {
            for p in doc()["paths"][*path]["get"]["parameters"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if p["in"] == "query" {
                    documented.insert(
                        p["name"]
                            .as_str()
                            .unwrap()
                            .trim_end_matches("[]")
                            .to_string(),
                    );
                }
            }
        }
        let missing: Vec<_> = read.difference(&documented).collect();
        assert!(
            missing.is_empty(),
            "{module} reads query parameters not documented on {paths:?}: {missing:?}"
        );
    }
}

// ---------------------------------------------------------------------------------
// Validation of real responses
// ---------------------------------------------------------------------------------

fn validator_for(schema: &Value) -> jsonschema::Validator {
    let mut root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [schema],
    });
    root["components"] = doc()["components"].clone();
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("invalid schema {schema}: {e}"))
}

/// Validates responses against the document and records what was covered.
#[derive(Default)]
struct Checker {
    covered: Mutex<BTreeSet<(String, String, String)>>,
}

impl Checker {
    /// The documented response of `method path` for `status`.
    fn response(&self, method: &str, path: &str, status: u16) -> &'static Value {
        let op = &doc()["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not documented");
        let r = op["responses"]
            .get(status.to_string())
            .unwrap_or_else(|| panic!("{method} {path}: status {status} is not documented"));
        resolve(r)
    }

    #[track_caller]
    fn check(&self, method: &str, path: &str, r: &Resp) {
        let status = r.status.as_u16();
        let resp = self.response(method, path, status);
        let content = resp["content"].as_object();
        match content {
            None => assert!(
                r.text.is_empty() || status / 100 == 3,
                "{method} {path} {status}: undocumented body {}",
                r.text
            ),
            Some(c) => {
                let ct = r
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let media = ct.split(';').next().unwrap_or("").trim().to_string();
                let m = c.get(&media).unwrap_or_else(|| {
                    panic!(
                        "{method} {path} {status}: content type `{ct}` not documented; body {}",
                        r.text
                    )
                });
                if media == "application/json" {
                    let v = validator_for(&m["schema"]);
                    let errors: Vec<String> = v
                        .iter_errors(&r.json)
                        .map(|e| format!("{} at {}", e, e.instance_path()))
                        .collect();
                    assert!(
                        errors.is_empty(),
                        "{method} {path} {status}: the body does not validate against the documented schema:\n{}\nbody: {}",
                        errors.join("\n"),
                        &r.text[..r.text.len().min(2000)]
                    );
                }
            }
        }
        self.covered.lock().unwrap().insert((
            method.to_string(),
            path.to_string(),
            status.to_string(),
        ));
    }
}

async fn call(
    state: &Arc<AppState>,
    method: &str,
    uri: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: Vec<u8>,
) -> Resp {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers: Vec<(&str, &str)> = Vec::new();
    if let Some(a) = &auth {
        headers.push(("authorization", a));
    }
    headers.extend_from_slice(extra);
    send_with(state, method, uri, &headers, body).await
}

fn matching_state(model: bool, limits: RateLimits) -> (Arc<AppState>, String, String, String) {
    let db = Arc::new(Db::for_tests().unwrap());
    let matcher = Matcher::new(MatchOptions::default(), 8);
    if model {
        matcher.set_embedder(crate::common::embedder());
    }
    let state = AppState::new(crate::matching::tiny_engine(), db.clone())
        .with_matcher(matcher)
        .with_clock(Clock::fixed(
            chrono::DateTime::parse_from_rfc3339("2026-11-22T10:00:00Z")
                .unwrap()
                .with_timezone(&chrono::Utc),
        ))
        .with_rate_limits(limits);
    let p = crate::common::off_runtime(|| {
        db.create_partner(&NewPartner {
            name: "Docs".into(),
            tier: "standard".into(),
            contact_email: Some("docs@example.org".into()),
            region_ids: vec![],
            grant_area_ids: vec![],
        })
    })
    .unwrap()
    .id;
    let token = |scopes: &[&str]| {
        let s: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        crate::common::off_runtime(|| db.create_token(p, &s))
            .unwrap()
            .1
    };
    let all = token(&["grants:read", "matching:use", "usage:read"]);
    let read_only = token(&["grants:read"]);
    let matching_only = token(&["matching:use"]);
    (Arc::new(state), all, read_only, matching_only)
}

const NO_LIMITS: RateLimits = RateLimits {
    per_token_per_minute: 100,
    per_partner_per_minute: 1_000,
    matching_per_second: 10,
    enabled: false,
};

fn profile_body() -> Value {
    serde_json::from_str(include_str!(
        "../../src/openapi/examples/createMatching.request.json"
    ))
    .expect("request example")
}

#[tokio::test]
async fn responses_of_every_endpoint_validate() {
    let c = Checker::default();
    let fx = real();
    let st = &fx.state;
    let raw = &fx.raw;
    let full = Some(fx.full.as_str());

    // --- Read API, success responses (real catalogue) ---
    let detail_ids = |path: &str| -> Vec<String> {
        match path {
            "/api/v1/grants/{id}" => vec![
                id(&raw.grants[0]),
                raw.grants[1]["slug"].as_str().unwrap().into(),
            ],
            "/api/v1/grant_providers/{id}" => raw.grant_providers.iter().take(5).map(id).collect(),
            "/api/v1/regions/{id}" => vec![
                raw.region_id("europe"),
                raw.region_id("germany"),
                raw.region_id("bayern"),
            ],
            "/api/v1/grant_areas/{id}" => {
                let parent = raw
                    .grant_areas
                    .iter()
                    .find(|a| a.get("parent_id").is_none())
                    .unwrap();
                let sub = raw
                    .grant_areas
                    .iter()
                    .find(|a| a.get("parent_id").is_some())
                    .unwrap();
                vec![id(parent), id(sub)]
            }
            "/api/v1/eligible_entities/{id}" => {
                raw.eligible_entities.iter().take(3).map(id).collect()
            }
            "/api/v1/target_groups/{id}" => raw.target_groups.iter().take(3).map(id).collect(),
            other => panic!("{other}"),
        }
    };
    let lists: &[(&str, &[&str])] = &[
        (
            "/api/v1/grants",
            &[
                "",
                "?per_page=100&page=3",
                "?q=Digitalisierung&grant_type=subsidy",
                "?page=9999",
            ],
        ),
        (
            "/api/v1/grant_providers",
            &["", "?per_page=100", "?grant_provider_type=federal_ministry"],
        ),
        (
            "/api/v1/regions",
            &["", "?flat=true", "?type=state", "?country_id=COUNTRY"],
        ),
        (
            "/api/v1/grant_areas",
            &["", "?flat=true", "?flat=true&include_parent=true"],
        ),
        ("/api/v1/eligible_entities", &[""]),
        ("/api/v1/target_groups", &[""]),
    ];
    for (path, queries) in lists {
        for q in *queries {
            let q = q.replace("COUNTRY", &raw.region_id("germany"));
            let r = call(st, "GET", &format!("{path}{q}"), full, &[], vec![]).await;
            assert_eq!(r.status, StatusCode::OK, "{path}{q}: {}", r.text);
            c.check("get", path, &r);
        }
    }
    // Every grant detail and every provider of the real catalogue (all field variants).
    for g in &raw.grants {
        let r = call(
            st,
            "GET",
            &format!("/api/v1/grants/{}", id(g)),
            full,
            &[],
            vec![],
        )
        .await;
        c.check("get", "/api/v1/grants/{id}", &r);
    }
    for p in &raw.grant_providers {
        let r = call(
            st,
            "GET",
            &format!("/api/v1/grant_providers/{}", id(p)),
            full,
            &[],
            vec![],
        )
        .await;
        c.check("get", "/api/v1/grant_providers/{id}", &r);
    }
    for path in [
        "/api/v1/grants/{id}",
        "/api/v1/grant_providers/{id}",
        "/api/v1/regions/{id}",
        "/api/v1/grant_areas/{id}",
        "/api/v1/eligible_entities/{id}",
        "/api/v1/target_groups/{id}",
    ] {
        for i in detail_ids(path) {
            let r = call(st, "GET", &path.replace("{id}", &i), full, &[], vec![]).await;
            assert_eq!(r.status, StatusCode::OK, "{path} {i}: {}", r.text);
            c.check("get", path, &r);
        }
        // 404, 400 (a segment that is not UTF-8), 401, 403.
        let r = call(
            st,
            "GET",
            &path.replace("{id}", "no-such-record"),
            full,
            &[],
            vec![],
        )
        .await;
        c.check("get", path, &r);
        let r = call(
            st,
            "GET",
            &path.replace("{id}", "%FF%FE"),
            full,
            &[],
            vec![],
        )
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        c.check("get", path, &r);
        let r = call(st, "GET", &path.replace("{id}", "x"), None, &[], vec![]).await;
        c.check("get", path, &r);
        let r = call(
            st,
            "GET",
            &path.replace("{id}", "x"),
            Some(&fx.no_read),
            &[],
            vec![],
        )
        .await;
        c.check("get", path, &r);
    }
    // The synthetic catalogue has filled addresses, contact points and multi-region grants.
    let t = tiny();
    for g in &t.raw.grants {
        let r = call(
            &t.state,
            "GET",
            &format!("/api/v1/grants/{}", id(g)),
            Some(&t.full),
            &[],
            vec![],
        )
        .await;
        c.check("get", "/api/v1/grants/{id}", &r);
    }
    for p in &t.raw.grant_providers {
        let r = call(
            &t.state,
            "GET",
            &format!("/api/v1/grant_providers/{}", id(p)),
            Some(&t.full),
            &[],
            vec![],
        )
        .await;
        c.check("get", "/api/v1/grant_providers/{id}", &r);
    }
    let r = call(
        &t.state,
        "GET",
        "/api/v1/grants?per_page=100",
        Some(&t.full),
        &[],
        vec![],
    )
    .await;
    c.check("get", "/api/v1/grants", &r);

    // --- Read API, errors of the lists ---
    for (path, bad) in [
        ("/api/v1/grants", "?page=0"),
        ("/api/v1/grant_providers", "?per_page=1000"),
        ("/api/v1/regions", "?flat=maybe"),
        ("/api/v1/grant_areas", "?include_parent=maybe"),
    ] {
        let r = call(st, "GET", &format!("{path}{bad}"), full, &[], vec![]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        c.check("get", path, &r);
    }
    for path in [
        "/api/v1/grants",
        "/api/v1/grant_providers",
        "/api/v1/regions",
        "/api/v1/grant_areas",
        "/api/v1/eligible_entities",
        "/api/v1/target_groups",
    ] {
        let r = call(st, "GET", path, None, &[], vec![]).await;
        c.check("get", path, &r);
        let r = call(st, "GET", path, Some(&fx.no_read), &[], vec![]).await;
        c.check("get", path, &r);
    }
    // out_of_scope.
    let r = call(
        st,
        "GET",
        &format!("/api/v1/grants?region_ids[]={}", raw.region_id("berlin")),
        Some(&fx.bayern),
        &[],
        vec![],
    )
    .await;
    assert_eq!(r.json["error"]["code"], "out_of_scope", "{}", r.text);
    c.check("get", "/api/v1/grants", &r);

    // --- Usage ---
    for q in ["", "?period=day", "?period=year"] {
        let r = call(
            st,
            "GET",
            &format!("/api/v1/usage/stats{q}"),
            full,
            &[],
            vec![],
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        c.check("get", "/api/v1/usage/stats", &r);
    }
    let r = call(
        st,
        "GET",
        "/api/v1/usage/stats?period=decade",
        full,
        &[],
        vec![],
    )
    .await;
    c.check("get", "/api/v1/usage/stats", &r);
    let r = call(st, "GET", "/api/v1/usage/quota", full, &[], vec![]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    c.check("get", "/api/v1/usage/quota", &r);
    for path in ["/api/v1/usage/stats", "/api/v1/usage/quota"] {
        let r = call(st, "GET", path, None, &[], vec![]).await;
        c.check("get", path, &r);
        let r = call(st, "GET", path, Some(&fx.bayern), &[], vec![]).await;
        c.check("get", path, &r);
    }

    // --- Service ---
    for path in [
        "/health",
        "/health/ready",
        "/metrics",
        "/api/v1/openapi.json",
        "/api/v1/docs",
        "/api/v1/docs/",
    ] {
        let r = call(st, "GET", path, None, &[], vec![]).await;
        c.check("get", path, &r);
    }

    // --- Matching (tiny catalogue with real embeddings) ---
    let (ms, all, read_only, matching_only) = matching_state(true, NO_LIMITS);
    for path in ["/health", "/health/ready"] {
        let r = call(&ms, "GET", path, None, &[], vec![]).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        c.check("get", path, &r);
    }
    let json_ct = [("content-type", "application/json")];
    let body = profile_body().to_string().into_bytes();
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        Some(&all),
        &json_ct,
        body.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    c.check("post", "/api/v1/matching", &r);
    let sync_id = r.json["matching_request_id"].as_str().unwrap().to_string();
    let mut en = profile_body();
    en["organization_profile"]["locale"] = json!("en");
    en["organization_profile"]["regions"] = json!(["Bayern"]);
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        Some(&matching_only),
        &json_ct,
        en.to_string().into_bytes(),
    )
    .await;
    c.check("post", "/api/v1/matching", &r);
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        Some(&all),
        &[json_ct[0], ("prefer", "respond-async")],
        body.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    c.check("post", "/api/v1/matching", &r);
    let async_id = r.json["matching_request_id"].as_str().unwrap().to_string();
    // Status while pending or completed, then completed for sure.
    let r = call(
        &ms,
        "GET",
        &format!("/api/v1/matching/{async_id}"),
        Some(&all),
        &[],
        vec![],
    )
    .await;
    c.check("get", "/api/v1/matching/{id}", &r);
    let r = call(
        &ms,
        "GET",
        &format!("/api/v1/matching/{async_id}/results"),
        Some(&all),
        &[],
        vec![],
    )
    .await;
    c.check("get", "/api/v1/matching/{id}/results", &r);
    let start = std::time::Instant::now();
    loop {
        let r = call(
            &ms,
            "GET",
            &format!("/api/v1/matching/{async_id}"),
            Some(&all),
            &[],
            vec![],
        )
        .await;
        c.check("get", "/api/v1/matching/{id}", &r);
        if r.json["status"] == "completed" {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 120,
            "async matching not completed: {}",
            r.text
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for i in [&sync_id, &async_id] {
        let r = call(
            &ms,
            "GET",
            &format!("/api/v1/matching/{i}"),
            Some(&all),
            &[],
            vec![],
        )
        .await;
        assert_eq!(r.status, StatusCode::OK);
        c.check("get", "/api/v1/matching/{id}", &r);
        let r = call(
            &ms,
            "GET",
            &format!("/api/v1/matching/{i}/results"),
            Some(&all),
            &[],
            vec![],
        )
        .await;
        assert_eq!(r.status, StatusCode::OK);
        c.check("get", "/api/v1/matching/{id}/results", &r);
    }
    for path in ["/api/v1/matching/{id}", "/api/v1/matching/{id}/results"] {
        for (token, id) in [
            (Some(all.as_str()), Uuid::new_v4().to_string()),
            (Some(all.as_str()), "nope".into()),
            (None, sync_id.clone()),
            (Some(read_only.as_str()), sync_id.clone()),
        ] {
            let r = call(&ms, "GET", &path.replace("{id}", &id), token, &[], vec![]).await;
            c.check("get", path, &r);
        }
        let r = call(
            &ms,
            "GET",
            &path.replace("{id}", "%FF"),
            Some(&all),
            &[],
            vec![],
        )
        .await;
        c.check("get", path, &r);
    }
    // Matching errors: 400 (several), 401, 403, 413, 415.
    for bad in [
        b"{".to_vec(),
        b"[]".to_vec(),
        json!({"organization_id": "x"}).to_string().into_bytes(),
        json!({"organization_id": "x", "organization_profile": {"description": "d", "regions": ["Atlantis"]}}).to_string().into_bytes(),
        json!({"organization_id": "x", "organization_profile": {"description": "d", "regions": "Bayern"}}).to_string().into_bytes(),
    ] {
        let r = call(&ms, "POST", "/api/v1/matching", Some(&all), &json_ct, bad).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        c.check("post", "/api/v1/matching", &r);
    }
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        None,
        &json_ct,
        body.clone(),
    )
    .await;
    c.check("post", "/api/v1/matching", &r);
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        Some(&read_only),
        &json_ct,
        body.clone(),
    )
    .await;
    c.check("post", "/api/v1/matching", &r);
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        Some(&all),
        &[("content-type", "text/plain")],
        body.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    c.check("post", "/api/v1/matching", &r);
    let mut huge = profile_body();
    huge["organization_profile"]["mission"] = json!("x".repeat(3 * 1024 * 1024));
    let r = call(
        &ms,
        "POST",
        "/api/v1/matching",
        Some(&all),
        &json_ct,
        huge.to_string().into_bytes(),
    )
    .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.text);
    c.check("post", "/api/v1/matching", &r);

    // 503: the model is not loaded.
    let (no_model, all_nm, _, _) = matching_state(false, NO_LIMITS);
    let r = call(
        &no_model,
        "POST",
        "/api/v1/matching",
        Some(&all_nm),
        &json_ct,
        body.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text);
    c.check("post", "/api/v1/matching", &r);

    // 429 with retry_after: a limit of one request per minute and token.
    let tight = RateLimits {
        per_token_per_minute: 1,
        per_partner_per_minute: 1_000,
        matching_per_second: 10,
        enabled: true,
    };
    let (limited, all_l, _, _) = matching_state(true, tight);
    for (m, path, uri) in [
        ("get", "/api/v1/grants", "/api/v1/grants"),
        ("get", "/api/v1/usage/quota", "/api/v1/usage/quota"),
    ] {
        let mut got = None;
        for _ in 0..3 {
            let r = call(&limited, "GET", uri, Some(&all_l), &[], vec![]).await;
            if r.status == StatusCode::TOO_MANY_REQUESTS {
                got = Some(r);
                break;
            }
        }
        let r = got.expect("429");
        assert!(r.json["error"]["retry_after"].is_u64(), "{}", r.text);
        c.check(m, path, &r);
    }

    // 405 (any path) and 500 (any operation): the documented reusable responses.
    let r = call(st, "DELETE", "/api/v1/grants", full, &[], vec![]).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    validate_component_response("MethodNotAllowed", &r);
    let resp = ApiError::internal().into_response();
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let internal = Resp {
        status,
        headers,
        text: String::from_utf8_lossy(&bytes).to_string(),
        json: serde_json::from_slice(&bytes).unwrap(),
    };
    c.check("get", "/api/v1/grants", &internal);

    // Coverage: every documented 2xx response of every operation, and every error
    // status documented anywhere, was validated at least once.
    let covered = c.covered.lock().unwrap().clone();
    let mut missing = Vec::new();
    let mut error_statuses: BTreeMap<String, bool> = BTreeMap::new();
    for (path, item) in doc()["paths"].as_object().unwrap() {
        for m in METHODS {
            let Some(op) = item.get(m) else { continue };
            for status in op["responses"].as_object().unwrap().keys() {
                let key = (m.to_string(), path.clone(), status.clone());
                if status.starts_with('2') && !covered.contains(&key) {
                    missing.push(key.clone());
                }
                if status.starts_with('4') || status.starts_with('5') {
                    let hit = covered.iter().any(|(_, _, s)| s == status);
                    error_statuses.insert(status.clone(), hit);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "documented success responses never validated: {missing:?}"
    );
    let never: Vec<_> = error_statuses
        .iter()
        .filter(|(_, hit)| !**hit)
        .map(|(s, _)| s)
        .collect();
    assert!(
        never.is_empty(),
        "documented error statuses never validated: {never:?}"
    );
}

/// A grant is built from the engine's view and the partner's annotations (flattened);
/// the document shows one closed object that requires the fields of both parts.
#[test]
fn composed_grant_objects_are_closed() {
    let example: Value =
        serde_json::from_str(include_str!("../../src/openapi/examples/listGrants.json"))
            .expect("example");
    let item = example["grants"][0].clone();
    for (name, item) in [
        ("GrantListItem", item),
        ("GrantDetail", {
            let detail: Value =
                serde_json::from_str(include_str!("../../src/openapi/examples/getGrant.json"))
                    .expect("example");
            detail["grant"].clone()
        }),
    ] {
        let schema = &doc()["components"]["schemas"][name];
        assert!(
            schema.get("allOf").is_none(),
            "{name}: one object, not a composition"
        );
        let v = validator_for(&json!({ "$ref": format!("#/components/schemas/{name}") }));
        assert!(
            v.is_valid(&item),
            "{name}: the example itself must validate"
        );
        let mut extra = item.clone();
        extra["undocumented"] = json!(1);
        assert!(
            !v.is_valid(&extra),
            "{name}: an undocumented field must fail"
        );
        for part_field in ["title", "ai_qualified"] {
            let mut missing = item.clone();
            missing.as_object_mut().expect("object").remove(part_field);
            assert!(
                !v.is_valid(&missing),
                "{name}: without `{part_field}` must fail"
            );
        }
    }
}

fn validate_component_response(name: &str, r: &Resp) {
    let resp = &doc()["components"]["responses"][name];
    let schema = &resp["content"]["application/json"]["schema"];
    let v = validator_for(schema);
    if let Err(e) = v.validate(&r.json) {
        panic!("{name}: {e}: {}", r.text);
    }
}

// ---------------------------------------------------------------------------------
// Examples are real responses
// ---------------------------------------------------------------------------------

/// Cuts every array to at most three elements (examples stay readable).
fn abbreviate(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().take(3).map(abbreviate).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), abbreviate(x))).collect())
        }
        other => other.clone(),
    }
}

#[tokio::test]
async fn examples_are_real_responses() {
    let fx = real();
    let raw = &fx.raw;
    let sub_area = raw
        .grant_areas
        .iter()
        .find(|a| a.get("parent_id").is_some())
        .unwrap();
    let cases: Vec<(&str, String)> = vec![
        (
            "listGrants",
            "/api/v1/grants?q=Digitalisierung&per_page=3".into(),
        ),
        ("getGrant", "/api/v1/grants/kunst-und-ki".into()),
        (
            "listGrantProviders",
            "/api/v1/grant_providers?per_page=3".into(),
        ),
        (
            "getGrantProvider",
            "/api/v1/grant_providers/bundesministerium-fuer-wirtschaft-und-energie-bmwe".into(),
        ),
        ("listRegions", "/api/v1/regions".into()),
        ("listRegions.flat", "/api/v1/regions?flat=true".into()),
        (
            "getRegion",
            format!("/api/v1/regions/{}", raw.region_id("germany")),
        ),
        ("listGrantAreas", "/api/v1/grant_areas".into()),
        (
            "listGrantAreas.flat",
            "/api/v1/grant_areas?flat=true".into(),
        ),
        (
            "getGrantArea",
            format!("/api/v1/grant_areas/{}", id(sub_area)),
        ),
        ("listEligibleEntities", "/api/v1/eligible_entities".into()),
        (
            "getEligibleEntity",
            format!(
                "/api/v1/eligible_entities/{}",
                id(&raw.eligible_entities[0])
            ),
        ),
        ("listTargetGroups", "/api/v1/target_groups".into()),
        (
            "getTargetGroup",
            format!("/api/v1/target_groups/{}", id(&raw.target_groups[0])),
        ),
    ];
    let write = std::env::var_os("GRANTMATCH_WRITE_OPENAPI_EXAMPLES").is_some();
    let dir = repo_root().join("server/src/openapi/examples");
    for (name, uri) in cases {
        let real = abbreviate(&fx.get_ok(&fx.full, &uri).await);
        let file = dir.join(format!("{name}.json"));
        if write {
            let text = serde_json::to_string_pretty(&real).unwrap() + "\n";
            std::fs::write(&file, text).unwrap();
            continue;
        }
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            stored, real,
            "{}: the example is no longer what GET {uri} answers (arrays cut to 3); \
             regenerate with GRANTMATCH_WRITE_OPENAPI_EXAMPLES=1 cargo test -p grantmatch-server --test api openapi::examples",
            file.display()
        );
    }
}
