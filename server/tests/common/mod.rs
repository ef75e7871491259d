//! Shared fixtures of the API tests: an [`AppState`] over a real catalogue directory,
//! partners and tokens created through the `Db` API, an in-process HTTP client
//! (`tower::ServiceExt::oneshot`, no socket) and the raw JSONL records as ground truth.
//!
//! Expected values are computed from the raw catalogue files, never from the engine,
//! so the tests check the server against the data rather than against itself.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::{header, HeaderMap, Request, StatusCode};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::Engine;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::AppState;
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use uuid::Uuid;

/// The embedding model of the environment (`ModelConfig::from_vars`), loaded once per
/// test binary; the tests that need it fail (never skip) when it is missing, with the
/// engine's message naming the missing file and how to build it.
pub fn embedder() -> Arc<grantmatch_engine::embed::Embedder> {
    static E: OnceLock<Arc<grantmatch_engine::embed::Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        let cfg = grantmatch_engine::embed::ModelConfig::from_vars(std::env::var_os);
        Arc::new(grantmatch_engine::embed::Embedder::load(&cfg).expect("the embedding model"))
    })
    .clone()
}

/// The synthetic test catalogue `fixtures/test-catalogues/tiny`.
pub fn tiny_dir() -> PathBuf {
    repo_root().join("fixtures/test-catalogues/tiny")
}

/// The synthetic tiny catalogue as an engine without embeddings.
pub fn tiny_engine_plain() -> Arc<Engine> {
    let records = CatalogueRecords::read_dir(&tiny_dir()).expect("tiny catalogue");
    Arc::new(Engine::from_records(records).expect("engine builds"))
}

/// Runs `f` — a test's own database set-up or check — on a plain thread outside the
/// tokio runtime and waits for it. The server's store panics (debug builds) on SQLite
/// calls from a thread inside a runtime outside the store's blocking section (that is,
/// not through its async API, `grantmatch_server::store::Store`) (rule: no SQLite call
/// runs on an async worker thread); test code reaches the database directly through
/// this instead.
pub fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(f)
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// A new starter partner in `db` with one token of `scopes`: the `Authorization` value.
pub fn starter_token(db: &Db, scopes: &[&str]) -> String {
    off_runtime(|| starter_token_here(db, scopes))
}

fn starter_token_here(db: &Db, scopes: &[&str]) -> String {
    let p = db
        .create_partner(&NewPartner {
            name: "Starter".into(),
            tier: "starter".into(),
            ..Default::default()
        })
        .expect("partner");
    let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
    let (_, token) = db.create_token(p.id, &scopes).expect("token");
    format!("Bearer {token}")
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server crate lives in the workspace")
        .to_path_buf()
}

// ---------------------------------------------------------------------------------
// Raw catalogue records (ground truth)
// ---------------------------------------------------------------------------------

/// The six JSONL files of a catalogue, parsed as plain JSON.
pub struct Raw {
    pub regions: Vec<Value>,
    pub grant_areas: Vec<Value>,
    pub eligible_entities: Vec<Value>,
    pub target_groups: Vec<Value>,
    pub grant_providers: Vec<Value>,
    pub grants: Vec<Value>,
}

fn read_jsonl(dir: &Path, file: &str) -> Vec<Value> {
    let path = dir.join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect()
}

/// `id` of a record (or of a response object) as a string.
pub fn id(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no string id in {v}"))
        .to_string()
}

/// String values of an optional array field (absent = empty).
pub fn strs(v: &Value, field: &str) -> Vec<String> {
    v.get(field)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().expect("string array").to_string())
                .collect()
        })
        .unwrap_or_default()
}

impl Raw {
    pub fn load(dir: &Path) -> Self {
        Raw {
            regions: read_jsonl(dir, "regions.jsonl"),
            grant_areas: read_jsonl(dir, "grant_areas.jsonl"),
            eligible_entities: read_jsonl(dir, "eligible_entities.jsonl"),
            target_groups: read_jsonl(dir, "target_groups.jsonl"),
            grant_providers: read_jsonl(dir, "grant_providers.jsonl"),
            grants: read_jsonl(dir, "grants.jsonl"),
        }
    }

    fn by<'a>(list: &'a [Value], field: &str, value: &str, what: &str) -> &'a Value {
        list.iter()
            .find(|r| r[field].as_str() == Some(value))
            .unwrap_or_else(|| panic!("no {what} with {field} = {value}"))
    }

    pub fn region(&self, slug: &str) -> &Value {
        Self::by(&self.regions, "slug", slug, "region")
    }
    pub fn region_by_id(&self, id: &str) -> &Value {
        Self::by(&self.regions, "id", id, "region")
    }
    pub fn region_id(&self, slug: &str) -> String {
        id(self.region(slug))
    }
    pub fn area(&self, slug: &str) -> &Value {
        Self::by(&self.grant_areas, "slug", slug, "grant area")
    }
    pub fn area_by_id(&self, id: &str) -> &Value {
        Self::by(&self.grant_areas, "id", id, "grant area")
    }
    pub fn area_id(&self, slug: &str) -> String {
        id(self.area(slug))
    }
    pub fn provider(&self, slug: &str) -> &Value {
        Self::by(&self.grant_providers, "slug", slug, "grant provider")
    }
    pub fn grant(&self, slug: &str) -> &Value {
        Self::by(&self.grants, "slug", slug, "grant")
    }
    pub fn grant_by_id(&self, id: &str) -> &Value {
        Self::by(&self.grants, "id", id, "grant")
    }

    /// `inner` is `outer` or lies (transitively) inside it.
    pub fn region_within(&self, inner: &str, outer: &str) -> bool {
        let mut cur = Some(inner.to_string());
        let mut steps = 0;
        while let Some(r) = cur {
            if r == outer {
                return true;
            }
            steps += 1;
            assert!(steps < 10, "region cycle at {inner}");
            cur = self.region_by_id(&r)["parent_id"]
                .as_str()
                .map(str::to_string);
        }
        false
    }

    /// `inner` is `outer` or one of its sub-areas.
    pub fn area_within(&self, inner: &str, outer: &str) -> bool {
        inner == outer || self.area_by_id(inner)["parent_id"].as_str() == Some(outer)
    }

    pub fn subareas(&self, parent: &str) -> Vec<&Value> {
        self.grant_areas
            .iter()
            .filter(|a| a["parent_id"].as_str() == Some(parent))
            .collect()
    }

    /// Ids of the grants satisfying `pred`.
    pub fn grant_ids(&self, pred: impl Fn(&Value) -> bool) -> BTreeSet<String> {
        self.grants.iter().filter(|g| pred(g)).map(id).collect()
    }

    /// Grants visible to a partner scoped to these regions and areas (empty =
    /// unrestricted): a grant region/area must equal, lie inside or contain an
    /// assigned one.
    pub fn visible(&self, regions: &[String], areas: &[String]) -> BTreeSet<String> {
        self.grant_ids(|g| self.is_visible(g, regions, areas))
    }

    pub fn is_visible(&self, g: &Value, regions: &[String], areas: &[String]) -> bool {
        let region_ok = regions.is_empty()
            || strs(g, "region_ids").iter().any(|r| {
                regions
                    .iter()
                    .any(|s| self.region_within(r, s) || self.region_within(s, r))
            });
        let area_ok = areas.is_empty()
            || strs(g, "grant_area_ids").iter().any(|a| {
                areas
                    .iter()
                    .any(|s| self.area_within(a, s) || self.area_within(s, a))
            });
        region_ok && area_ok
    }

    /// Grants with a region equal to or inside `region`.
    pub fn in_region(&self, region: &str) -> BTreeSet<String> {
        self.grant_ids(|g| {
            strs(g, "region_ids")
                .iter()
                .any(|r| self.region_within(r, region))
        })
    }

    /// Grants with `area` or one of its sub-areas.
    pub fn in_area(&self, area: &str) -> BTreeSet<String> {
        self.grant_ids(|g| {
            strs(g, "grant_area_ids")
                .iter()
                .any(|a| self.area_within(a, area))
        })
    }

    /// Region codes of a grant.
    pub fn region_codes(&self, g: &Value) -> Vec<String> {
        strs(g, "region_ids")
            .iter()
            .map(|r| self.region_by_id(r)["code"].as_str().unwrap().to_string())
            .collect()
    }
}

// ---------------------------------------------------------------------------------
// The fixture: state, partners, tokens
// ---------------------------------------------------------------------------------

pub struct Fx {
    pub state: Arc<AppState>,
    pub db: Arc<Db>,
    pub raw: Raw,
    /// Unrestricted partner, all scopes.
    pub full: String,
    /// Partner scoped to the region `bayern`, scope grants:read.
    pub bayern: String,
    /// Partner scoped to the grant area `area_slug`, scope grants:read.
    pub area: String,
    pub area_slug: &'static str,
    /// Unrestricted partner, token with every scope except grants:read.
    pub no_read: String,
    pub unrestricted_partner: Uuid,
}

fn build(dir: &Path, area_slug: &'static str) -> Fx {
    let raw = Raw::load(dir);
    let records = CatalogueRecords::read_dir(dir).expect("fixture catalogue is valid");
    let engine = Engine::from_records(records).expect("engine builds");
    let db = Arc::new(Db::for_tests().expect("in-memory db"));
    // The read-API tests send far more than 100 requests per token; rate limits have
    // their own tests (api/usage.rs).
    let state = Arc::new(
        AppState::new(Arc::new(engine), db.clone()).with_rate_limits(
            grantmatch_server::ratelimit::RateLimits {
                enabled: false,
                ..Default::default()
            },
        ),
    );
    let uuid = |s: String| Uuid::parse_str(&s).unwrap();
    let partner = |name: &str, regions: Vec<Uuid>, areas: Vec<Uuid>| {
        db.create_partner(&NewPartner {
            name: name.into(),
            tier: "standard".into(),
            contact_email: Some(format!("{}@example.org", name.to_lowercase())),
            region_ids: regions,
            grant_area_ids: areas,
        })
        .expect("partner")
        .id
    };
    let token = |p: Uuid, scopes: &[&str]| {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        db.create_token(p, &scopes).expect("token").1
    };
    let unrestricted = partner("Unrestricted", vec![], vec![]);
    let bayern = partner("Bayern", vec![uuid(raw.region_id("bayern"))], vec![]);
    let area = partner("Area", vec![], vec![uuid(raw.area_id(area_slug))]);
    Fx {
        full: token(unrestricted, &["grants:read", "matching:use", "usage:read"]),
        bayern: token(bayern, &["grants:read"]),
        area: token(area, &["grants:read"]),
        no_read: token(unrestricted, &["matching:use", "usage:read"]),
        area_slug,
        unrestricted_partner: unrestricted,
        state,
        db,
        raw,
    }
}

/// The real catalogue (`fixtures/catalogue`, 1,434 grants); the area partner is scoped
/// to the parent area `energieeffizienz-erneuerbare-energien`.
pub fn real() -> &'static Fx {
    static FX: OnceLock<Fx> = OnceLock::new();
    FX.get_or_init(|| {
        off_runtime(|| {
            build(
                &repo_root().join("fixtures/catalogue"),
                "energieeffizienz-erneuerbare-energien",
            )
        })
    })
}

/// The synthetic `fixtures/test-catalogues/tiny` catalogue (12 grants, sub-area-only
/// and multi-region grants, an EU-wide grant); the area partner is scoped to the
/// sub-area `digitalisierung-ki`.
pub fn tiny() -> &'static Fx {
    static FX: OnceLock<Fx> = OnceLock::new();
    FX.get_or_init(|| {
        off_runtime(|| {
            build(
                &repo_root().join("fixtures/test-catalogues/tiny"),
                "digitalisierung-ki",
            )
        })
    })
}

// ---------------------------------------------------------------------------------
// In-process HTTP
// ---------------------------------------------------------------------------------

pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    /// The body as JSON; `Value::Null` when it is not JSON.
    pub json: Value,
}

impl Resp {
    #[track_caller]
    pub fn ok(self) -> Value {
        assert_eq!(self.status, StatusCode::OK, "body: {}", self.text);
        assert_json_content_type(&self);
        self.json
    }
}

#[track_caller]
pub fn assert_json_content_type(r: &Resp) {
    let ct = r
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(
        ct.starts_with("application/json"),
        "content-type `{ct}` (status {}, body {})",
        r.status,
        r.text
    );
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl Fx {
    /// Sends a request with the given raw `Authorization` header value (or none).
    pub async fn send(&self, method: &str, uri: &str, authorization: Option<&str>) -> Resp {
        let mut req = Request::builder().method(method).uri(uri);
        if let Some(a) = authorization {
            req = req.header(header::AUTHORIZATION, a);
        }
        let req = req.body(Body::empty()).expect("request");
        let resp = grantmatch_server::app(self.state.clone())
            .oneshot(req)
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

    /// GET with `Authorization: Bearer <token>`.
    pub async fn get(&self, token: &str, uri: &str) -> Resp {
        self.send("GET", uri, Some(&format!("Bearer {token}")))
            .await
    }

    /// GET that must answer 200 with JSON; returns the body.
    #[track_caller]
    pub fn get_ok<'a>(
        &'a self,
        token: &'a str,
        uri: &'a str,
    ) -> impl std::future::Future<Output = Value> + 'a {
        let caller = std::panic::Location::caller();
        async move {
            let r = self.get(token, uri).await;
            assert_eq!(
                r.status,
                StatusCode::OK,
                "GET {uri} (called at {caller}): {}",
                r.text
            );
            assert_json_content_type(&r);
            r.json
        }
    }

    /// Every grant of a listing, walking all pages with per_page=100; checks that the
    /// meta of every page is consistent. `query` is appended to the URL (may be "").
    pub async fn all_grants(&self, token: &str, query: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut page = 1;
        loop {
            let sep = if query.is_empty() { "" } else { "&" };
            let uri = format!("/api/v1/grants?per_page=100&page={page}{sep}{query}");
            let body = self.get_ok(token, &uri).await;
            let meta = &body["meta"];
            let total = meta["total_count"].as_u64().unwrap() as usize;
            let pages = meta["total_pages"].as_u64().unwrap() as usize;
            assert_eq!(meta["current_page"], page, "{uri}");
            assert_eq!(meta["per_page"], 100, "{uri}");
            assert_eq!(pages, total.div_ceil(100), "{uri}: {meta}");
            let items = body["grants"].as_array().unwrap();
            let expect_len = if page < pages {
                100
            } else if page == pages {
                total - 100 * (pages - 1)
            } else {
                0
            };
            assert_eq!(items.len(), expect_len, "{uri}: {meta}");
            out.extend(items.iter().cloned());
            if page >= pages {
                assert_eq!(out.len(), total, "{uri}");
                return out;
            }
            page += 1;
        }
    }

    /// The set of ids of every grant of a listing.
    pub async fn grant_id_set(&self, token: &str, query: &str) -> BTreeSet<String> {
        let all = self.all_grants(token, query).await;
        let set: BTreeSet<String> = all.iter().map(id).collect();
        assert_eq!(
            set.len(),
            all.len(),
            "duplicate grants across pages: {query}"
        );
        set
    }

    /// `meta.total_count` of a grant listing.
    pub async fn grant_total(&self, token: &str, query: &str) -> u64 {
        let body = self.get_ok(token, &format!("/api/v1/grants?{query}")).await;
        body["meta"]["total_count"].as_u64().unwrap()
    }
}

/// Asserts an error response: status, exact body shape `{"error":{"code","message"}}`
/// and code; returns the message.
#[track_caller]
pub fn assert_error(r: &Resp, status: u16, code: &str) -> String {
    assert_eq!(r.status.as_u16(), status, "body: {}", r.text);
    assert_json_content_type(r);
    let obj = r
        .json
        .as_object()
        .unwrap_or_else(|| panic!("error body is not a JSON object: {}", r.text));
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        vec!["error"],
        "body: {}",
        r.text
    );
    let err = obj["error"].as_object().expect("error is an object");
    let mut keys: Vec<&String> = err.keys().collect();
    keys.sort();
    assert_eq!(keys, vec!["code", "message"], "body: {}", r.text);
    assert_eq!(err["code"], code, "body: {}", r.text);
    let message = err["message"].as_str().expect("message is a string");
    assert!(!message.trim().is_empty(), "empty message: {}", r.text);
    message.to_string()
}

/// Sorted keys of a JSON object.
#[track_caller]
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

/// Sorted list of field names.
pub fn fields(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Lower-cases and folds umlauts/ß, for title checks.
pub fn fold(s: &str) -> String {
    s.to_lowercase()
        .replace('ä', "a")
        .replace('ö', "o")
        .replace('ü', "u")
        .replace('ß', "ss")
}

/// A per-call map from slug to record, for quick lookups of responses.
pub fn by_id(items: &[Value]) -> HashMap<String, &Value> {
    items.iter().map(|v| (id(v), v)).collect()
}

/// Sends a request with extra headers and a body through `app(state)` (no socket).
pub async fn send_with(
    state: &Arc<AppState>,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Resp {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Body::from(body)).expect("request");
    let resp = grantmatch_server::app(state.clone())
        .oneshot(req)
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
