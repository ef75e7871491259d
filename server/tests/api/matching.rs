//! POST /api/v1/matching, GET /matching/:id and GET /matching/:id/results through
//! `app(state)`.
//!
//! The catalogue is the synthetic `tiny` one (12 programmes) with real embeddings
//! computed in memory once per test binary; the embedding model is loaded from
//! `GRANTMATCH_MODEL_DIR` (default `~/.cache/grantmatch/model`) and its absence FAILS
//! these tests with a clear message (`make test` builds it first). With fewer than 25
//! programmes every candidate is returned, so expected result sets are computed exactly
//! from the raw JSONL records. Every test has its own in-memory database, a fixed clock
//! and rate limits off (they are tested elsewhere).

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use chrono::{DateTime, NaiveDate, Utc};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::{Engine, GrantVectors, MatchOptions};
use grantmatch_server::clock::Clock;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::matcher::Matcher;
use grantmatch_server::matching_store::MatchingStatus;

/// Status names in responses.
const COMPLETED: &str = "completed";
const PENDING: &str = "pending";
use grantmatch_server::quota::quarter_of;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::AppState;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::common::{assert_error, embedder, id, keys, send_with, strs, tiny_dir, Raw, Resp};

// ---------------------------------------------------------------------------------
// Model, catalogue, state
// ---------------------------------------------------------------------------------

const NOW: &str = "2026-11-22T10:00:00Z";

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .with_timezone(&Utc)
}

fn tiny_plain() -> Engine {
    Engine::from_records(CatalogueRecords::read_dir(&tiny_dir()).expect("tiny is valid"))
        .expect("engine builds")
}

/// The tiny catalogue with real embeddings.
pub(crate) fn tiny_engine() -> Arc<Engine> {
    static E: OnceLock<Arc<Engine>> = OnceLock::new();
    E.get_or_init(|| {
        let embedder = embedder();
        let engine = tiny_plain();
        let (vectors, _) = GrantVectors::build(&engine.catalogue, &embedder, None, &|_, _| {})
            .expect("embedding the tiny catalogue");
        Arc::new(engine.with_vectors(vectors).expect("vectors fit"))
    })
    .clone()
}

fn raw() -> &'static Raw {
    static R: OnceLock<Raw> = OnceLock::new();
    R.get_or_init(|| Raw::load(&tiny_dir()))
}

/// How to build the state of one test.
struct Setup {
    engine: Option<Arc<Engine>>,
    clock: &'static str,
    queue: usize,
    model: bool,
    options: MatchOptions,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            engine: None,
            clock: NOW,
            queue: grantmatch_server::matcher::DEFAULT_QUEUE_CAPACITY,
            model: true,
            options: MatchOptions::default(),
        }
    }
}

/// A state with partners and tokens.
struct M {
    state: Arc<AppState>,
    raw: &'static Raw,
    /// Unrestricted partner (standard tier), token with matching:use.
    full: String,
    full_partner: Uuid,
    /// Another unrestricted partner, token with matching:use.
    other: String,
    /// Partner scoped to Bayern, token with matching:use.
    bayern: String,
    /// Token of the unrestricted partner without matching:use.
    no_matching: String,
    starter: String,
    enterprise: String,
}

fn setup() -> M {
    setup_with(Setup::default())
}

fn setup_with(s: Setup) -> M {
    let engine = s.engine.unwrap_or_else(tiny_engine);
    let db = Arc::new(Db::for_tests().expect("in-memory db"));
    let matcher = Matcher::new(s.options, s.queue);
    if s.model {
        matcher.set_embedder(embedder());
    }
    let state = AppState::new(engine, db.clone())
        .with_matcher(matcher)
        .with_clock(Clock::fixed(t(s.clock)))
        .with_rate_limits(RateLimits {
            enabled: false,
            ..RateLimits::default()
        });
    let raw = raw();
    let partner = |name: &str, tier: &str, regions: Vec<Uuid>| {
        crate::common::off_runtime(|| {
            db.create_partner(&NewPartner {
                name: name.into(),
                tier: tier.into(),
                contact_email: Some(format!("{}@example.org", name.to_lowercase())),
                region_ids: regions,
                grant_area_ids: vec![],
            })
        })
        .expect("partner")
        .id
    };
    let token = |p: Uuid, scopes: &[&str]| {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        crate::common::off_runtime(|| db.create_token(p, &scopes))
            .expect("token")
            .1
    };
    let full_partner = partner("Full", "standard", vec![]);
    let other = partner("Other", "standard", vec![]);
    let bayern = partner(
        "Bayern",
        "standard",
        vec![Uuid::parse_str(&raw.region_id("bayern")).unwrap()],
    );
    let starter = partner("Starter", "starter", vec![]);
    let enterprise = partner("Enterprise", "enterprise", vec![]);
    M {
        full: token(full_partner, &["grants:read", "matching:use"]),
        no_matching: token(full_partner, &["grants:read", "usage:read"]),
        other: token(other, &["matching:use"]),
        bayern: token(bayern, &["matching:use", "grants:read"]),
        starter: token(starter, &["matching:use"]),
        enterprise: token(enterprise, &["matching:use"]),
        full_partner,
        state: Arc::new(state),
        raw,
    }
}

impl M {
    /// POST /matching with the given Content-Type (or none) and extra headers.
    async fn post_raw(
        &self,
        token: Option<&str>,
        content_type: Option<&str>,
        extra: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
        if let Some(ct) = content_type {
            headers.push(("content-type", ct));
        }
        headers.extend_from_slice(extra);
        send_with(
            &self.state,
            "POST",
            "/api/v1/matching",
            &headers,
            body.to_vec(),
        )
        .await
    }

    async fn post(&self, token: &str, body: &Value) -> Resp {
        self.post_raw(
            Some(token),
            Some("application/json"),
            &[],
            body.to_string().as_bytes(),
        )
        .await
    }

    async fn post_async(&self, token: &str, body: &Value) -> Resp {
        self.post_raw(
            Some(token),
            Some("application/json"),
            &[("prefer", "respond-async")],
            body.to_string().as_bytes(),
        )
        .await
    }

    async fn get(&self, token: Option<&str>, uri: &str) -> Resp {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| vec![("authorization", a)])
            .unwrap_or_default();
        send_with(&self.state, "GET", uri, &headers, Vec::new()).await
    }

    /// A synchronous matching that must answer 200; checks the response shape.
    #[track_caller]
    fn match_ok<'a>(
        &'a self,
        token: &'a str,
        body: &'a Value,
    ) -> impl std::future::Future<Output = Value> + 'a {
        let caller = std::panic::Location::caller();
        async move {
            let r = self.post(token, body).await;
            assert_eq!(
                r.status,
                StatusCode::OK,
                "POST /matching (called at {caller}) with {body}: {}",
                r.text
            );
            check_sync_response(self.raw, body, &r.json);
            r.json
        }
    }

    /// Polls GET /matching/:id until the request is completed (bounded).
    async fn wait_completed(&self, token: &str, id: &str) -> Value {
        let start = Instant::now();
        loop {
            let r = self
                .get(Some(token), &format!("/api/v1/matching/{id}"))
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            match r.json["status"].as_str() {
                Some(s) if s == COMPLETED => return r.json,
                Some(s) if s == PENDING => {}
                other => panic!("unexpected status {other:?}: {}", r.text),
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "matching {id} not completed after 120 s: {}",
                r.text
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn body(org: &str, profile: Value) -> Value {
    json!({"organization_id": org, "organization_profile": profile})
}

/// A profile with only a description (and optional extra fields).
fn profile(description: &str, extra: Value) -> Value {
    let mut p = json!({ "description": description });
    for (k, v) in extra.as_object().expect("object").iter() {
        p[k] = v.clone();
    }
    p
}

fn band(score: u64) -> &'static str {
    match score {
        90.. => "very_suitable",
        70..=89 => "partially_suitable",
        50..=69 => "conditionally_suitable",
        _ => "not_suitable",
    }
}

/// The results of a response: shape of each match and of the list.
#[track_caller]
fn check_results(raw: &Raw, results: &Value) {
    let list = results
        .as_array()
        .unwrap_or_else(|| panic!("results is not an array: {results}"));
    assert!(list.len() <= 25, "{} results", list.len());
    let mut seen = BTreeSet::new();
    let mut prev: Option<u64> = None;
    for (i, m) in list.iter().enumerate() {
        for k in [
            "id",
            "rank",
            "grant_id",
            "title",
            "relevance_score",
            "match_category",
            "match_reason",
            "checks",
            "matched_need",
        ] {
            assert!(m.get(k).is_some(), "result without `{k}`: {m}");
        }
        assert!(Uuid::parse_str(m["id"].as_str().unwrap()).is_ok(), "{m}");
        assert_eq!(m["rank"], json!(i + 1), "{results}");
        let score = m["relevance_score"]
            .as_u64()
            .unwrap_or_else(|| panic!("score is not an integer: {m}"));
        assert!(score <= 100, "{m}");
        assert_eq!(m["match_category"], band(score), "{m}");
        if let Some(p) = prev {
            assert!(p >= score, "not sorted by score: {results}");
        }
        prev = Some(score);
        let gid = m["grant_id"].as_str().unwrap();
        let g = raw.grant_by_id(gid);
        assert_eq!(m["title"], g["title"], "{m}");
        assert!(
            !m["match_reason"].as_str().unwrap().trim().is_empty(),
            "{m}"
        );
        assert!(seen.insert(gid.to_string()), "grant twice: {results}");
    }
}

#[track_caller]
fn check_sync_response(raw: &Raw, request: &Value, v: &Value) {
    for k in [
        "matching_request_id",
        "organization_id",
        "status",
        "results_count",
        "results",
        "quota",
    ] {
        assert!(v.get(k).is_some(), "response without `{k}`: {v}");
    }
    assert!(Uuid::parse_str(v["matching_request_id"].as_str().unwrap()).is_ok());
    assert_eq!(v["status"], COMPLETED);
    assert_eq!(
        v["organization_id"].as_str(),
        request["organization_id"].as_str().map(str::trim)
    );
    check_results(raw, &v["results"]);
    assert_eq!(
        v["results_count"],
        json!(v["results"].as_array().unwrap().len())
    );
    assert_eq!(
        keys(&v["quota"]),
        vec![
            "matching_requests_limit",
            "matching_requests_used",
            "usage_percentage"
        ]
    );
}

/// Slugs of the programmes of a results list.
fn result_slugs(raw: &Raw, results: &Value) -> BTreeSet<String> {
    results
        .as_array()
        .unwrap()
        .iter()
        .map(|m| slug_of(raw, m["grant_id"].as_str().unwrap()))
        .collect()
}

fn slug_of(raw: &Raw, grant_id: &str) -> String {
    raw.grant_by_id(grant_id)["slug"]
        .as_str()
        .unwrap()
        .to_string()
}

/// (grant, score, category, reason) per rank: what must repeat for identical input.
fn ranking(results: &Value) -> Vec<(String, u64, String, String)> {
    results
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["grant_id"].as_str().unwrap().to_string(),
                m["relevance_score"].as_u64().unwrap(),
                m["match_category"].as_str().unwrap().to_string(),
                m["match_reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The filters of a profile as raw ids, for the expected set.
#[derive(Default)]
struct Want<'a> {
    scope_regions: Vec<String>,
    regions: Vec<String>,
    areas: Vec<String>,
    entities: Vec<String>,
    non_profit: Option<bool>,
    today: &'a str,
}

/// Slugs of the programmes a matching must return, from the raw records: visible in
/// the partner's scope, open on `today` (end date not passed, or ongoing), not
/// non-profit-only for a for-profit, region/area related (equal, inside or containing),
/// an eligible entity of the profile unless the programme lists none or its eligibility
/// was derived (`classification: "derived"`) rather than stated by the source.
fn expected(raw: &Raw, w: &Want) -> BTreeSet<String> {
    let today = NaiveDate::parse_from_str(
        if w.today.is_empty() {
            &NOW[..10]
        } else {
            w.today
        },
        "%Y-%m-%d",
    )
    .unwrap();
    raw.grants
        .iter()
        .filter(|g| raw.is_visible(g, &w.scope_regions, &[]))
        .filter(|g| {
            g["ongoing_grant"] == json!(true)
                || g["end_date"]
                    .as_str()
                    .is_none_or(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap() >= today)
        })
        .filter(|g| !(w.non_profit == Some(false) && g["non_profit_only"] == json!(true)))
        .filter(|g| {
            w.regions.is_empty()
                || strs(g, "region_ids").iter().any(|r| {
                    w.regions
                        .iter()
                        .any(|o| raw.region_within(r, o) || raw.region_within(o, r))
                })
        })
        .filter(|g| {
            w.areas.is_empty()
                || strs(g, "grant_area_ids").iter().any(|a| {
                    w.areas
                        .iter()
                        .any(|o| raw.area_within(a, o) || raw.area_within(o, a))
                })
        })
        .filter(|g| {
            let e = strs(g, "eligible_entity_ids");
            w.entities.is_empty()
                || e.is_empty()
                || g["classification"] == "derived"
                || e.iter().any(|x| w.entities.contains(x))
        })
        .map(|g| g["slug"].as_str().unwrap().to_string())
        .collect()
}

fn entity_id(raw: &Raw, slug: &str) -> String {
    id(raw
        .eligible_entities
        .iter()
        .find(|e| e["slug"] == slug)
        .unwrap())
}

fn set(slugs: &[&str]) -> BTreeSet<String> {
    slugs.iter().map(|s| s.to_string()).collect()
}

const DESCRIPTION: &str =
    "Gemeinnütziger Verein in Sachsen für Jugendbegegnungen, Seniorenarbeit und Digitalisierung.";

// ---------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn missing_required_fields_are_400_naming_the_field() {
    let m = setup();
    let cases = [
        (json!({}), "organization_id"),
        (
            json!({"organization_profile": {"description": "x"}}),
            "organization_id",
        ),
        (
            json!({"organization_id": "  ", "organization_profile": {"description": "x"}}),
            "organization_id",
        ),
        (json!({"organization_id": "o"}), "organization_profile"),
        (
            json!({"organization_id": "o", "organization_profile": null}),
            "organization_profile",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {}}),
            "organization_profile.description",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": ""}}),
            "organization_profile.description",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": " \n "}}),
            "organization_profile.description",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"name": "Verein", "regions": ["Bayern"]}}),
            "organization_profile.description",
        ),
    ];
    for (b, field) in cases {
        let r = m.post(&m.full, &b).await;
        let msg = assert_error(&r, 400, "bad_request");
        assert!(
            msg.contains(field),
            "{b}: message `{msg}` does not name `{field}`"
        );
        if field == "organization_profile" {
            assert!(!msg.contains("organization_profile."), "{b}: {msg}");
        }
    }
    // Nothing was recorded for refused requests.
    let (used, _) = crate::common::off_runtime(|| {
        m.state
            .store
            .db()
            .matching_usage(m.full_partner, &quarter_of(t(NOW)).0)
    })
    .unwrap();
    assert_eq!(used, 0);
}

#[tokio::test]
async fn malformed_json_is_400_with_the_error_body() {
    let m = setup();
    for raw_body in [
        &b"{\"organization_id\": "[..],
        b"{organization_id: 'x'}",
        b"",
        b"not json",
        b"{\"organization_id\": \"x\",}",
        b"\xff\xfe",
    ] {
        let r = m
            .post_raw(Some(&m.full), Some("application/json"), &[], raw_body)
            .await;
        let msg = assert_error(&r, 400, "bad_request");
        assert!(
            msg.to_lowercase().contains("json"),
            "{:?}: {msg}",
            String::from_utf8_lossy(raw_body)
        );
    }
    // Well-formed JSON that is not an object.
    for b in ["[]", "\"text\"", "42", "null"] {
        let r = m
            .post_raw(Some(&m.full), Some("application/json"), &[], b.as_bytes())
            .await;
        assert_error(&r, 400, "bad_request");
    }
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let m = setup();
    let b = body("o-ct", profile(DESCRIPTION, json!({})));
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonp"),
    ] {
        let r = m
            .post_raw(Some(&m.full), ct, &[], b.to_string().as_bytes())
            .await;
        let msg = assert_error(&r, 415, "unsupported_media_type");
        assert!(msg.contains("application/json"), "{ct:?}: {msg}");
    }
    // JSON with parameters or in upper case is accepted.
    for ct in ["application/json; charset=utf-8", "Application/JSON"] {
        let r = m
            .post_raw(Some(&m.full), Some(ct), &[], b.to_string().as_bytes())
            .await;
        assert_eq!(r.status, StatusCode::OK, "{ct}: {}", r.text);
    }
}

#[tokio::test]
async fn unknown_filter_values_are_400_naming_them() {
    let m = setup();
    let cases = [
        ("regions", json!(["Bayern", "Atlantis"]), "Atlantis"),
        (
            "regions",
            json!(["00000000-0000-0000-0000-000000000001"]),
            "00000000-0000-0000-0000-000000000001",
        ),
        ("grant_areas", json!(["Raumfahrt"]), "Raumfahrt"),
        (
            "grant_areas",
            json!(["digitalisierung-quanten"]),
            "digitalisierung-quanten",
        ),
        (
            "eligible_entities",
            json!(["Piratenschiff"]),
            "Piratenschiff",
        ),
        // A region name is not a grant area.
        ("grant_areas", json!(["Bayern"]), "Bayern"),
        // A town name found in several Länder is no region.
        ("regions", json!(["Neustadt"]), "Neustadt"),
    ];
    for (field, values, bad) in cases {
        let b = body(
            "o-unknown",
            profile(DESCRIPTION, json!({ field: values.clone() })),
        );
        let r = m.post(&m.full, &b).await;
        let msg = assert_error(&r, 400, "bad_request");
        assert!(
            msg.contains(bad) && msg.contains(&format!("organization_profile.{field}")),
            "{field} {values}: `{msg}` does not name the field and `{bad}`"
        );
    }
}

/// A German town in `regions` stands for its Land: "Leipzig" filters like "Sachsen".
#[tokio::test]
async fn a_town_in_regions_stands_for_its_land() {
    let m = setup();
    let raw = m.raw;
    let by = |regions: Value| {
        body(
            "o-town",
            profile(DESCRIPTION, json!({ "regions": regions })),
        )
    };
    let sachsen = m.match_ok(&m.full, &by(json!(["Sachsen"]))).await;
    let leipzig = m.match_ok(&m.full, &by(json!(["Leipzig"]))).await;
    assert_eq!(
        result_slugs(raw, &leipzig["results"]),
        result_slugs(raw, &sachsen["results"])
    );
    assert!(result_slugs(raw, &leipzig["results"]).contains("testprogramm-4"));
    assert!(!result_slugs(raw, &leipzig["results"]).contains("testprogramm-3"));
}

#[tokio::test]
async fn wrong_types_name_the_field() {
    let m = setup();
    let cases = [
        (
            json!({"organization_id": 42, "organization_profile": {"description": "x"}}),
            "organization_id",
        ),
        (
            json!({"organization_id": "o", "organization_profile": "Verein"}),
            "organization_profile",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": 5}}),
            "organization_profile.description",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x", "regions": "Bayern"}}),
            "organization_profile.regions",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x", "grant_areas": [1]}}),
            "organization_profile.grant_areas",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x", "eligible_entities": {"a": 1}}}),
            "organization_profile.eligible_entities",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x", "is_non_profit": "yes"}}),
            "organization_profile.is_non_profit",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x", "keywords": "KI"}}),
            "organization_profile.keywords",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x"}, "project": "a"}),
            "project",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x"}, "project": {"budget": 5000}}),
            "project.budget",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x", "locale": "fr"}}),
            "organization_profile.locale",
        ),
    ];
    for (b, field) in cases {
        let r = m.post(&m.full, &b).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{b}: {}", r.text);
        let msg = assert_error(&r, 400, "bad_request");
        assert!(msg.contains(field), "{b}: `{msg}` does not name `{field}`");
    }
}

/// serde's derived `Deserialize` also accepts a struct as a JSON array of its fields in
/// declaration order, so `"organization_profile": ["Wir sind ein Verein"]` is taken as
/// a profile with that description and `"project": ["a"]` as a project titled "a".
#[tokio::test]
async fn arrays_in_place_of_objects_are_400_naming_the_field() {
    let m = setup();
    for (b, field) in [
        (
            json!({"organization_id": "o", "organization_profile": ["Wir sind ein Verein"]}),
            "organization_profile",
        ),
        (
            json!({"organization_id": "o", "organization_profile": {"description": "x"}, "project": ["a"]}),
            "project",
        ),
    ] {
        let r = m.post(&m.full, &b).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{b}: {}", r.text);
        let msg = assert_error(&r, 400, "bad_request");
        assert!(msg.contains(field), "{b}: `{msg}` does not name `{field}`");
    }
}

#[tokio::test]
async fn filter_values_in_every_spelling_at_every_level() {
    let m = setup();
    let raw = m.raw;
    let region_cases: Vec<(&str, Vec<String>)> = vec![
        (
            "europe",
            vec![
                "Europa".into(),
                "Europe".into(),
                "europe".into(),
                raw.region_id("europe"),
            ],
        ),
        (
            "germany",
            vec![
                "Deutschland".into(),
                "Germany".into(),
                "germany".into(),
                "DE".into(),
                raw.region_id("germany"),
            ],
        ),
        (
            "bayern",
            vec![
                "Bayern".into(),
                "BAVARIA".into(),
                "bayern".into(),
                "DE-BY".into(),
                raw.region_id("bayern"),
            ],
        ),
        (
            "austria",
            vec![
                "Österreich".into(),
                "Austria".into(),
                raw.region_id("austria"),
            ],
        ),
    ];
    for (slug, spellings) in region_cases {
        let want = expected(
            raw,
            &Want {
                regions: vec![raw.region_id(slug)],
                ..Want::default()
            },
        );
        for s in spellings {
            let b = body("o-spell", profile(DESCRIPTION, json!({ "regions": [s] })));
            let v = m.match_ok(&m.full, &b).await;
            assert_eq!(result_slugs(raw, &v["results"]), want, "region `{s}`");
        }
    }
    let area_cases: Vec<(&str, Vec<String>)> = vec![
        (
            "digitalisierung",
            vec![
                "Digitalisierung".into(),
                "Digitalisation".into(),
                "digitalisierung".into(),
                raw.area_id("digitalisierung"),
            ],
        ),
        (
            "digitalisierung-ki",
            vec![
                "Künstliche Intelligenz".into(),
                "künstliche intelligenz".into(),
                "Artificial intelligence".into(),
                "digitalisierung-ki".into(),
                raw.area_id("digitalisierung-ki"),
            ],
        ),
        (
            "umwelt-naturschutz",
            vec![
                "Umwelt- & Naturschutz".into(),
                "Environment & nature conservation".into(),
                raw.area_id("umwelt-naturschutz"),
            ],
        ),
    ];
    for (slug, spellings) in area_cases {
        let want = expected(
            raw,
            &Want {
                areas: vec![raw.area_id(slug)],
                ..Want::default()
            },
        );
        assert!(!want.is_empty());
        for s in spellings {
            let b = body(
                "o-spell",
                profile(DESCRIPTION, json!({ "grant_areas": [s] })),
            );
            let v = m.match_ok(&m.full, &b).await;
            assert_eq!(result_slugs(raw, &v["results"]), want, "area `{s}`");
        }
    }
    let entity_cases: Vec<(&str, Vec<String>)> = vec![
        (
            "gmbh",
            vec![
                "GmbH".into(),
                "Limited liability company (GmbH)".into(),
                "gmbh".into(),
                "GmbHs".into(),
                "Gesellschaft mit beschränkter Haftung".into(),
                entity_id(raw, "gmbh"),
            ],
        ),
        (
            "ev",
            vec![
                "Eingetragener Verein (e.V.)".into(),
                "Registered association (e.V.)".into(),
                "e.V.".into(),
                "Verein".into(),
                entity_id(raw, "ev"),
            ],
        ),
    ];
    for (slug, spellings) in entity_cases {
        let want = expected(
            raw,
            &Want {
                entities: vec![entity_id(raw, slug)],
                ..Want::default()
            },
        );
        for s in spellings {
            let b = body(
                "o-spell",
                profile(DESCRIPTION, json!({ "eligible_entities": [s] })),
            );
            let v = m.match_ok(&m.full, &b).await;
            assert_eq!(result_slugs(raw, &v["results"]), want, "entity `{s}`");
        }
    }
}

// ---------------------------------------------------------------------------------
// Authentication
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn without_token_401_and_without_matching_scope_403() {
    let m = setup();
    let b = body("o-auth", profile(DESCRIPTION, json!({})));
    let v = m.match_ok(&m.full, &b).await;
    let id = v["matching_request_id"].as_str().unwrap().to_string();
    let gets = [
        format!("/api/v1/matching/{id}"),
        format!("/api/v1/matching/{id}/results"),
    ];

    let r = m
        .post_raw(
            None,
            Some("application/json"),
            &[],
            b.to_string().as_bytes(),
        )
        .await;
    assert_error(&r, 401, "unauthorized");
    let r = m
        .post_raw(
            Some("gm_wrong"),
            Some("application/json"),
            &[],
            b.to_string().as_bytes(),
        )
        .await;
    assert_error(&r, 401, "unauthorized");
    // Authentication comes before looking at the body.
    let r = m.post_raw(None, Some("text/plain"), &[], b"{broken").await;
    assert_error(&r, 401, "unauthorized");
    for uri in &gets {
        assert_error(&m.get(None, uri).await, 401, "unauthorized");
    }

    let r = m.post(&m.no_matching, &b).await;
    let msg = assert_error(&r, 403, "insufficient_scope");
    assert!(msg.contains("matching:use"), "{msg}");
    let r = m
        .post_raw(
            Some(&m.no_matching),
            Some("application/json"),
            &[],
            b"{broken",
        )
        .await;
    assert_error(&r, 403, "insufficient_scope");
    // The same partner's own request, but the token lacks the scope.
    for uri in &gets {
        let r = m.get(Some(&m.no_matching), uri).await;
        assert_error(&r, 403, "insufficient_scope");
    }
    // Only the one accepted request was recorded.
    let (used, _) = crate::common::off_runtime(|| {
        m.state
            .store
            .db()
            .matching_usage(m.full_partner, &quarter_of(t(NOW)).0)
    })
    .unwrap();
    assert_eq!(used, 1);
}

// ---------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn results_are_ranked_deterministic_and_carry_the_quota() {
    let m = setup();
    let b = json!({
        "organization_id": "kmu-by-1",
        "organization_profile": {
            "name": "Muster GmbH",
            "description": "Kleines Unternehmen (GmbH) in Bayern, das seine Fertigung digitalisieren und KI einsetzen möchte.",
            "regions": ["Bayern"],
            "eligible_entities": ["GmbH"],
            "keywords": ["Digitalisierung", "KI"],
            "is_non_profit": false
        },
        "project": {"title": "KI-gestützte Qualitätskontrolle", "budget": "45.000 EUR"}
    });
    let mut first: Option<Value> = None;
    let mut ids = BTreeSet::new();
    for n in 1..=3i64 {
        let v = m.match_ok(&m.full, &b).await;
        assert!(ids.insert(v["matching_request_id"].as_str().unwrap().to_string()));
        assert_eq!(v["organization_id"], "kmu-by-1");
        // The quota: one more request each time; a quarter of the standard tier's
        // 50,000 per year.
        let q = &v["quota"];
        assert_eq!(q["matching_requests_used"], json!(n), "{q}");
        assert_eq!(q["matching_requests_limit"], json!(12_500), "{q}");
        let pct = q["usage_percentage"].as_f64().unwrap();
        assert!(
            (pct - (n as f64 * 100.0 / 12_500.0 * 100.0).round() / 100.0).abs() < 1e-9,
            "{q}"
        );
        match &first {
            None => first = Some(v),
            Some(f) => assert_eq!(
                ranking(&v["results"]),
                ranking(&f["results"]),
                "identical input, different output"
            ),
        }
    }
    let first = first.unwrap();
    // Exactly the candidates; the digitalisation programme first.
    let want = expected(
        m.raw,
        &Want {
            regions: vec![m.raw.region_id("bayern")],
            entities: vec![entity_id(m.raw, "gmbh")],
            non_profit: Some(false),
            ..Want::default()
        },
    );
    assert_eq!(result_slugs(m.raw, &first["results"]), want);
    assert_eq!(
        slug_of(m.raw, first["results"][0]["grant_id"].as_str().unwrap()),
        "testprogramm-1",
        "{}",
        first["results"]
    );
    // Other partners' counters are their own; the limits follow the tier.
    for (token, limit) in [
        (&m.other, 12_500),
        (&m.starter, 2_500),
        (&m.enterprise, 25_000),
    ] {
        let v = m.match_ok(token, &b).await;
        assert_eq!(v["quota"]["matching_requests_used"], json!(1));
        assert_eq!(v["quota"]["matching_requests_limit"], json!(limit));
        assert_eq!(ranking(&v["results"]), ranking(&first["results"]));
    }
}

#[tokio::test]
async fn at_most_25_results_when_more_programmes_fit() {
    // The tiny catalogue cannot exceed 25 results; three copies of its grants (36) can. Build
    // such a catalogue in memory with real vectors copied from the tiny ones.
    let tiny = tiny_engine();
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "regions.jsonl",
        "grant_areas.jsonl",
        "eligible_entities.jsonl",
        "target_groups.jsonl",
        "grant_providers.jsonl",
    ] {
        std::fs::copy(tiny_dir().join(f), dir.path().join(f)).unwrap();
    }
    let mut lines = Vec::new();
    let mut rows = Vec::new();
    for copy in 0..3 {
        for (i, g) in raw().grants.iter().enumerate() {
            let mut g = g.clone();
            if copy > 0 {
                g["id"] = json!(Uuid::new_v5(
                    &Uuid::NAMESPACE_OID,
                    format!("{copy}-{i}").as_bytes()
                )
                .to_string());
                g["slug"] = json!(format!("{}-copy-{copy}", g["slug"].as_str().unwrap()));
                g["title"] = json!(format!("{} (Kopie {copy})", g["title"].as_str().unwrap()));
            }
            lines.push(g.to_string());
        }
    }
    std::fs::write(dir.path().join("grants.jsonl"), lines.join("\n") + "\n").unwrap();
    let engine = Engine::from_records(CatalogueRecords::read_dir(dir.path()).unwrap()).unwrap();
    let vectors = tiny.vectors().unwrap();
    for g in &engine.catalogue.grants {
        let orig = g.slug.split("-copy-").next().unwrap();
        let idx = tiny
            .catalogue
            .grants
            .iter()
            .position(|x| x.slug == orig)
            .unwrap();
        rows.push(vectors.row(idx).to_vec());
    }
    let engine = engine
        .with_vectors(GrantVectors::from_rows(&vectors.model_id, vectors.dim, rows).unwrap())
        .unwrap();
    assert_eq!(engine.catalogue.grants.len(), 36);
    let m = setup_with(Setup {
        engine: Some(Arc::new(engine)),
        ..Setup::default()
    });
    let b = body("o-many", profile(DESCRIPTION, json!({})));
    let r = m.post(&m.full, &b).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let results = r.json["results"].as_array().unwrap();
    assert_eq!(results.len(), 25, "{}", r.text);
    assert_eq!(r.json["results_count"], 25);
    let mut prev = u64::MAX;
    for (i, x) in results.iter().enumerate() {
        assert_eq!(x["rank"], json!(i + 1));
        let s = x["relevance_score"].as_u64().unwrap();
        assert!(s <= prev && s <= 100);
        assert_eq!(x["match_category"], band(s));
        prev = s;
    }
}

#[tokio::test]
async fn non_profit_only_programmes_are_excluded_for_for_profits() {
    let m = setup_with(Setup {
        clock: "2025-06-01T08:00:00Z",
        ..Setup::default()
    });
    let raw = m.raw;
    let np_only = set(&["testprogramm-2", "testprogramm-9"]);
    for (np, excluded) in [(Some(false), true), (Some(true), false), (None, false)] {
        let mut p = profile(DESCRIPTION, json!({}));
        if let Some(np) = np {
            p["is_non_profit"] = json!(np);
        }
        let v = m.match_ok(&m.full, &body("o-np", p)).await;
        let got = result_slugs(raw, &v["results"]);
        assert_eq!(
            got,
            expected(
                raw,
                &Want {
                    non_profit: np,
                    today: "2025-06-01",
                    ..Want::default()
                }
            ),
            "is_non_profit {np:?}"
        );
        if excluded {
            assert!(got.is_disjoint(&np_only), "{np:?}: {got:?}");
        } else {
            assert!(got.is_superset(&np_only), "{np:?}: {got:?}");
        }
    }
}

/// A profile without `regions` whose texts place it in a Land: nothing is filtered out
/// (`regions` stays the only filter), but a programme of another Land fails the region
/// check, scores at most 45 and its reason says where the description places the
/// organisation; a programme of that Land passes. With `regions` the texts are not read.
#[tokio::test]
async fn a_land_named_in_the_texts_ranks_but_does_not_filter() {
    let m = setup();
    let raw = m.raw;
    let description =
        "Familiengeführte Bäckerei in Leipzig. Wir suchen eine Bürgschaft oder ein Darlehen für eine neue Filiale.";
    let located = body("o-loc", profile(description, json!({})));
    let v = m.match_ok(&m.full, &located).await;
    let unfiltered = result_slugs(raw, &v["results"]);
    let by_slug = |v: &Value, slug: &str| -> Value {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| slug_of(raw, r["grant_id"].as_str().unwrap()) == slug)
            .unwrap_or_else(|| panic!("{slug} is not among the results: {v}"))
            .clone()
    };
    // Bayern (3) and Berlin (5) programmes stay candidates, but fail the region check.
    for slug in ["testprogramm-3", "testprogramm-5"] {
        let r = by_slug(&v, slug);
        assert_eq!(r["checks"]["region"], "fail", "{r}");
        assert!(r["relevance_score"].as_u64().unwrap() <= 45, "{r}");
        assert_eq!(r["match_category"], "not_suitable", "{r}");
        let reason = r["match_reason"].as_str().unwrap();
        assert!(
            reason.contains("laut Ihrer Beschreibung sind Sie in Sachsen ansässig"),
            "{reason}"
        );
    }
    let sachsen = by_slug(&v, "testprogramm-4");
    assert_eq!(sachsen["checks"]["region"], "pass", "{sachsen}");
    assert!(
        sachsen["match_reason"]
            .as_str()
            .unwrap()
            .contains("Programm für Sachsen, wo Sie laut Ihrer Beschreibung ansässig sind"),
        "{sachsen}"
    );
    assert_eq!(by_slug(&v, "testprogramm-11")["checks"]["region"], "pass");

    // In English the same facts, in English names.
    let mut en = located.clone();
    en["organization_profile"]["locale"] = json!("en");
    let v_en = m.match_ok(&m.full, &en).await;
    let r = by_slug(&v_en, "testprogramm-3");
    assert!(
        r["match_reason"]
            .as_str()
            .unwrap()
            .contains("A programme for Bavaria, while your description places you in Saxony"),
        "{r}"
    );

    // The same profile with `regions` Bayern: the filter decides, the texts are not read.
    let mut in_bayern = located.clone();
    in_bayern["organization_profile"]["regions"] = json!(["Bayern"]);
    let v = m.match_ok(&m.full, &in_bayern).await;
    let filtered = result_slugs(raw, &v["results"]);
    assert!(filtered.is_subset(&unfiltered) && filtered.len() < unfiltered.len());
    assert!(!filtered.contains("testprogramm-4"));
    assert_eq!(by_slug(&v, "testprogramm-3")["checks"]["region"], "pass");
}

#[tokio::test]
async fn expired_programmes_are_excluded_by_the_server_clock() {
    let m = setup_with(Setup {
        clock: "2025-06-01T08:00:00Z",
        ..Setup::default()
    });
    let raw = m.raw;
    let b = body("o-exp", profile(DESCRIPTION, json!({})));
    // (time, day, open programmes with an end date)
    let cases = [
        (
            "2025-06-01T08:00:00Z",
            "2025-06-01",
            vec!["testprogramm-1", "testprogramm-2", "testprogramm-8"],
        ),
        // The end date itself is still open.
        (
            "2025-06-30T23:59:00Z",
            "2025-06-30",
            vec!["testprogramm-1", "testprogramm-2", "testprogramm-8"],
        ),
        (
            "2025-07-01T00:00:00Z",
            "2025-07-01",
            vec!["testprogramm-1", "testprogramm-8"],
        ),
        (
            "2026-11-22T10:00:00Z",
            "2026-11-22",
            vec!["testprogramm-1", "testprogramm-8"],
        ),
        ("2031-01-01T00:00:00Z", "2031-01-01", vec!["testprogramm-8"]),
        ("2031-04-01T00:00:00Z", "2031-04-01", vec![]),
    ];
    let dated = set(&["testprogramm-1", "testprogramm-2", "testprogramm-8"]);
    for (time, day, open) in cases {
        m.state.clock.set(t(time));
        let v = m.match_ok(&m.full, &b).await;
        let got = result_slugs(raw, &v["results"]);
        assert_eq!(
            got,
            expected(
                raw,
                &Want {
                    today: day,
                    ..Want::default()
                }
            ),
            "at {time}"
        );
        let open: BTreeSet<String> = open.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            got.intersection(&dated).cloned().collect::<BTreeSet<_>>(),
            open,
            "at {time}"
        );
        // Ongoing programmes never expire.
        assert!(got.contains("testprogramm-3"), "at {time}: {got:?}");
    }
}

#[tokio::test]
async fn region_filter_of_a_state_includes_national_and_eu_programmes() {
    let m = setup();
    let raw = m.raw;
    let v = m
        .match_ok(
            &m.full,
            &body(
                "o-reg",
                profile(DESCRIPTION, json!({"regions": ["Sachsen"]})),
            ),
        )
        .await;
    let got = result_slugs(raw, &v["results"]);
    assert_eq!(
        got,
        expected(
            raw,
            &Want {
                regions: vec![raw.region_id("sachsen")],
                ..Want::default()
            }
        )
    );
    // National (Deutschland) and EU-wide programmes, the Sachsen ones, nothing of
    // Bayern-only, Berlin-only or Austria.
    assert_eq!(
        got,
        set(&[
            "testprogramm-1",
            "testprogramm-4",
            "testprogramm-6",
            "testprogramm-8",
            "testprogramm-10",
            "testprogramm-11",
            "testprogramm-12"
        ])
    );
}

#[tokio::test]
async fn eligible_entities_and_combined_filters() {
    let m = setup();
    let raw = m.raw;
    let kommune = entity_id(raw, "kommune");
    let v = m
        .match_ok(
            &m.full,
            &body(
                "o-ent",
                profile(DESCRIPTION, json!({"eligible_entities": ["Kommune"]})),
            ),
        )
        .await;
    let got = result_slugs(raw, &v["results"]);
    assert_eq!(
        got,
        expected(
            raw,
            &Want {
                entities: vec![kommune.clone()],
                ..Want::default()
            }
        )
    );
    // Programmes stating Kommunen as eligible, plus those whose eligibility is derived
    // (3, 4, 5, 8, 9, 10; 2 has expired); not those stating only other entities (1, 11).
    assert_eq!(
        got,
        set(&[
            "testprogramm-3",
            "testprogramm-4",
            "testprogramm-5",
            "testprogramm-6",
            "testprogramm-7",
            "testprogramm-8",
            "testprogramm-9",
            "testprogramm-10",
            "testprogramm-12"
        ])
    );
    // Several values of one filter are alternatives; filters combine with AND.
    let b = body(
        "o-ent2",
        profile(
            DESCRIPTION,
            json!({
                "eligible_entities": ["Kommune", "e.V."],
                "regions": ["Bayern"],
                "grant_areas": ["Umwelt- & Naturschutz"],
            }),
        ),
    );
    let v = m.match_ok(&m.full, &b).await;
    let got = result_slugs(raw, &v["results"]);
    assert_eq!(
        got,
        expected(
            raw,
            &Want {
                entities: vec![kommune, entity_id(raw, "ev")],
                regions: vec![raw.region_id("bayern")],
                areas: vec![raw.area_id("umwelt-naturschutz")],
                ..Want::default()
            }
        )
    );
    assert_eq!(
        got,
        set(&["testprogramm-7", "testprogramm-8", "testprogramm-10"])
    );
}

// ---------------------------------------------------------------------------------
// Scope isolation
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn bayern_partner_never_gets_programmes_outside_its_scope() {
    let m = setup();
    let raw = m.raw;
    let bayern = vec![raw.region_id("bayern")];
    let profiles = [
        profile(DESCRIPTION, json!({"regions": ["Sachsen"]})),
        profile(DESCRIPTION, json!({})),
        profile(
            "Unternehmen in Sachsen sucht eine Bürgschaft.",
            json!({"regions": ["DE-SN"], "eligible_entities": ["GmbH"]}),
        ),
    ];
    let sachsen_only = set(&["testprogramm-4"]);
    for (i, p) in profiles.iter().enumerate() {
        let b = body(&format!("o-scope-{i}"), p.clone());
        // The unrestricted partner gets the Sachsen programme: the test is not vacuous.
        let v = m.match_ok(&m.full, &b).await;
        assert!(result_slugs(raw, &v["results"]).is_superset(&sachsen_only));

        let v = m.match_ok(&m.bayern, &b).await;
        let got = result_slugs(raw, &v["results"]);
        let visible: BTreeSet<String> = raw
            .visible(&bayern, &[])
            .iter()
            .map(|g| slug_of(raw, g))
            .collect();
        assert!(got.is_subset(&visible), "{got:?} not within {visible:?}");
        assert!(got.is_disjoint(&sachsen_only), "{got:?}");
        assert!(!got.contains("testprogramm-12"), "{got:?}");
        let regions: Vec<String> = p["regions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| {
                        let r = r.as_str().unwrap();
                        raw.regions
                            .iter()
                            .find(|x| x["name_de"] == r || x["code"] == r)
                            .map(id)
                            .unwrap()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let entities: Vec<String> = p["eligible_entities"]
            .as_array()
            .map(|_| vec![entity_id(raw, "gmbh")])
            .unwrap_or_default();
        assert_eq!(
            got,
            expected(
                raw,
                &Want {
                    scope_regions: bayern.clone(),
                    regions,
                    entities,
                    ..Want::default()
                }
            )
        );
        // The stored results and the asynchronous form are scoped alike.
        let id = v["matching_request_id"].as_str().unwrap();
        let stored = m
            .get(Some(&m.bayern), &format!("/api/v1/matching/{id}/results"))
            .await;
        assert_eq!(stored.status, StatusCode::OK, "{}", stored.text);
        assert_eq!(result_slugs(raw, &stored.json["results"]), got);
        let r = m.post_async(&m.bayern, &b).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
        let aid = r.json["matching_request_id"].as_str().unwrap().to_string();
        let done = m.wait_completed(&m.bayern, &aid).await;
        assert_eq!(result_slugs(raw, &done["results"]), got);
    }
}

#[tokio::test]
async fn stored_requests_of_other_partners_and_unknown_ids_are_404() {
    let m = setup();
    let b = body("o-iso", profile(DESCRIPTION, json!({})));
    let v = m.match_ok(&m.full, &b).await;
    let id = v["matching_request_id"].as_str().unwrap().to_string();
    let r = m.post_async(&m.full, &b).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let async_id = r.json["matching_request_id"].as_str().unwrap().to_string();
    m.wait_completed(&m.full, &async_id).await;

    for rid in [&id, &async_id] {
        for suffix in ["", "/results"] {
            let uri = format!("/api/v1/matching/{rid}{suffix}");
            // The owner sees it.
            let r = m.get(Some(&m.full), &uri).await;
            assert_eq!(r.status, StatusCode::OK, "{uri}: {}", r.text);
            assert_eq!(r.json["matching_request_id"], json!(rid));
            // Other partners (unrestricted or scoped) do not, and cannot tell it exists.
            for token in [&m.other, &m.bayern] {
                let r = m.get(Some(token), &uri).await;
                let msg = assert_error(&r, 404, "not_found");
                assert!(!msg.contains("partner"), "{msg}");
            }
        }
    }
    let unknown = Uuid::new_v4();
    for uri in [
        format!("/api/v1/matching/{unknown}"),
        format!("/api/v1/matching/{unknown}/results"),
        "/api/v1/matching/not-a-uuid".to_string(),
        "/api/v1/matching/not-a-uuid/results".to_string(),
        "/api/v1/matching/12345".to_string(),
        format!("/api/v1/matching/{}", &id[..35]),
        format!("/api/v1/matching/{}x", id),
    ] {
        let r = m.get(Some(&m.full), &uri).await;
        assert_error(&r, 404, "not_found");
    }
}

// ---------------------------------------------------------------------------------
// Reasons
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn reasons_in_german_by_default_and_in_english_on_request() {
    let m = setup();
    let base = profile(
        DESCRIPTION,
        json!({"regions": ["Bayern"], "eligible_entities": ["Verein"], "is_non_profit": true}),
    );
    let mut out = Vec::new();
    for locale in [None, Some("de"), Some("en")] {
        let mut p = base.clone();
        if let Some(l) = locale {
            p["locale"] = json!(l);
        }
        let v = m.match_ok(&m.full, &body("o-loc", p)).await;
        for r in v["results"].as_array().unwrap() {
            let reason = r["match_reason"].as_str().unwrap();
            let g = m.raw.grant_by_id(r["grant_id"].as_str().unwrap());
            if locale == Some("en") {
                assert!(
                    reason.contains("similarity to your description"),
                    "{reason}"
                );
                for de in [
                    "Übereinstimmung",
                    "Antragsfrist",
                    "Programm ",
                    "Bayern",
                    "Deutschland",
                ] {
                    assert!(
                        !reason.contains(de),
                        "German `{de}` in English reason: {reason}"
                    );
                }
                if let Some(d) = g["end_date"].as_str() {
                    assert!(reason.contains(&format!("Deadline: {d}.")), "{reason}");
                }
            } else {
                assert!(
                    reason.contains("Übereinstimmung mit Ihrer Beschreibung"),
                    "{reason}"
                );
                for en in ["similarity", "Deadline", "programme", "Bavaria", "Germany"] {
                    assert!(
                        !reason.contains(en),
                        "English `{en}` in German reason: {reason}"
                    );
                }
                if let Some(d) = g["end_date"].as_str() {
                    let d = NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap();
                    assert!(
                        reason.contains(&format!("Antragsfrist: bis {}.", d.format("%d.%m.%Y"))),
                        "{reason}"
                    );
                }
            }
            // Region facts name the programme's own regions.
            let slug = g["slug"].as_str().unwrap();
            if slug == "testprogramm-3" || slug == "testprogramm-7" {
                let want = if locale == Some("en") {
                    "Bavaria"
                } else {
                    "Bayern"
                };
                assert!(reason.contains(want), "{slug}: {reason}");
            }
        }
        out.push(v);
    }
    // Same ranking in every locale; default = German.
    let key = |v: &Value| -> Vec<(String, u64)> {
        ranking(&v["results"])
            .into_iter()
            .map(|(g, s, _, _)| (g, s))
            .collect()
    };
    assert_eq!(key(&out[0]), key(&out[2]));
    assert_eq!(ranking(&out[0]["results"]), ranking(&out[1]["results"]));
}

// ---------------------------------------------------------------------------------
// Billing record, response forms
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn sync_request_is_stored_before_the_response() {
    let m = setup();
    let b = body(
        "org-billing-1",
        profile(DESCRIPTION, json!({"regions": ["Berlin"]})),
    );
    let v = m.match_ok(&m.full, &b).await;
    let id = Uuid::parse_str(v["matching_request_id"].as_str().unwrap()).unwrap();
    // No waiting: the row is there when the response is.
    let rec = crate::common::off_runtime(|| m.state.store.db().matching(id))
        .unwrap()
        .expect("the billing record exists when the response arrives");
    assert_eq!(rec.status, MatchingStatus::Completed);
    assert_eq!(rec.partner_id, m.full_partner);
    let tokens = crate::common::off_runtime(|| m.state.store.db().tokens(m.full_partner)).unwrap();
    let token = tokens
        .iter()
        .find(|t| t.scopes.iter().any(|s| s == "matching:use"))
        .unwrap();
    assert_eq!(rec.token_id, token.id);
    assert_eq!(rec.organization_id, "org-billing-1");
    assert_eq!(rec.created_at, t(NOW));
    assert_eq!(
        rec.results_count,
        Some(v["results_count"].as_i64().unwrap())
    );
    assert_eq!(json!(rec.results), v["results"]);
    assert_eq!(rec.request, b);
    assert!(rec.error.is_none());

    // GET /matching/:id and /results return the stored request, ids included.
    let s = m
        .get(Some(&m.full), &format!("/api/v1/matching/{id}"))
        .await
        .ok();
    assert_eq!(s["status"], COMPLETED);
    assert_eq!(s["organization_id"], "org-billing-1");
    assert_eq!(s["results"], v["results"]);
    assert_eq!(s["results_count"], v["results_count"]);
    assert_eq!(s["status_url"], format!("/api/v1/matching/{id}"));
    assert_eq!(s["results_url"], format!("/api/v1/matching/{id}/results"));
    let r = m
        .get(Some(&m.full), &format!("/api/v1/matching/{id}/results"))
        .await
        .ok();
    assert_eq!(r["results"], v["results"]);
    assert_eq!(r["results_count"], v["results_count"]);
    assert_eq!(r["status"], COMPLETED);
}

#[tokio::test]
async fn async_request_202_stored_at_once_then_completed() {
    let m = setup();
    let b = body(
        "org-async-1",
        profile(
            "Kommune in Bayern plant Naturschutz und Breitbandausbau.",
            json!({"regions": ["Bayern"], "eligible_entities": ["Kommune"]}),
        ),
    );
    let r = m.post_async(&m.full, &b).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let v = &r.json;
    let id = v["matching_request_id"].as_str().unwrap().to_string();
    let uuid = Uuid::parse_str(&id).unwrap();
    // The row exists the moment the 202 is seen.
    let rec = crate::common::off_runtime(|| m.state.store.db().matching(uuid))
        .unwrap()
        .expect("the billing record exists when the 202 arrives");
    assert!(
        rec.status == MatchingStatus::Pending || rec.status == MatchingStatus::Completed,
        "{:?}",
        rec.status
    );
    assert_eq!(rec.partner_id, m.full_partner);
    assert_eq!(rec.organization_id, "org-async-1");
    assert_eq!(rec.request, b);

    assert_eq!(v["status"], PENDING);
    assert_eq!(v["status_url"], format!("/api/v1/matching/{id}"));
    assert_eq!(v["results_url"], format!("/api/v1/matching/{id}/results"));
    assert!(!v["message"].as_str().unwrap().is_empty());
    assert_eq!(
        r.headers.get("location").and_then(|h| h.to_str().ok()),
        Some(format!("/api/v1/matching/{id}").as_str())
    );

    let done = m.wait_completed(&m.full, &id).await;
    check_results(m.raw, &done["results"]);
    assert_eq!(
        done["results_count"],
        json!(done["results"].as_array().unwrap().len())
    );
    assert!(done["completed_at"].is_string(), "{done}");
    let results = m
        .get(Some(&m.full), v["results_url"].as_str().unwrap())
        .await
        .ok();
    assert_eq!(results["status"], COMPLETED);
    assert_eq!(results["results"], done["results"]);
    let rec = crate::common::off_runtime(|| m.state.store.db().matching(uuid))
        .unwrap()
        .unwrap();
    assert_eq!(rec.status, MatchingStatus::Completed);
    assert_eq!(rec.results_count, done["results_count"].as_i64());

    // The same profile synchronously: the same ranking; the async one counted.
    let s = m.match_ok(&m.full, &b).await;
    let key = |v: &Value| -> Vec<(String, u64)> {
        ranking(v).into_iter().map(|(g, s, _, _)| (g, s)).collect()
    };
    assert_eq!(key(&s["results"]), key(&done["results"]));
    assert_eq!(s["quota"]["matching_requests_used"], json!(2));
    assert_eq!(
        result_slugs(m.raw, &s["results"]),
        expected(
            m.raw,
            &Want {
                regions: vec![m.raw.region_id("bayern")],
                entities: vec![entity_id(m.raw, "kommune")],
                ..Want::default()
            }
        )
    );

    // `Prefer` may list several preferences.
    let r = m
        .post_raw(
            Some(&m.full),
            Some("application/json"),
            &[("prefer", "wait=10, respond-async")],
            b.to_string().as_bytes(),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let id2 = r.json["matching_request_id"].as_str().unwrap().to_string();
    m.wait_completed(&m.full, &id2).await;
}

// ---------------------------------------------------------------------------------
// 503
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn without_a_loaded_model_matching_is_503() {
    // `AppState::new` without an embedder: the model is still loading.
    let engine = tiny_engine();
    let db = Arc::new(Db::for_tests().unwrap());
    let state = Arc::new(AppState::new(engine, db.clone()));
    let partner = crate::common::off_runtime(|| {
        db.create_partner(&NewPartner {
            name: "P".into(),
            tier: "starter".into(),
            ..NewPartner::default()
        })
    })
    .unwrap()
    .id;
    let (_, token) =
        crate::common::off_runtime(|| db.create_token(partner, &["matching:use".to_string()]))
            .unwrap();
    let auth = format!("Bearer {token}");
    let b = body("o-503", profile(DESCRIPTION, json!({}))).to_string();
    for prefer in [None, Some("respond-async")] {
        let mut headers = vec![
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
        ];
        if let Some(p) = prefer {
            headers.push(("prefer", p));
        }
        let r = send_with(
            &state,
            "POST",
            "/api/v1/matching",
            &headers,
            b.clone().into_bytes(),
        )
        .await;
        let msg = assert_error(&r, 503, "service_unavailable");
        assert!(msg.to_lowercase().contains("model"), "{msg}");
    }
    // Nothing stored, nothing pending.
    assert!(crate::common::off_runtime(|| db.pending_matchings())
        .unwrap()
        .is_empty());
    assert_eq!(
        crate::common::off_runtime(|| db.matching_usage(partner, &quarter_of(chrono::Utc::now()).0))
            .unwrap()
            .0,
        0
    );

    // The model failed to load: still 503, not a hang or a panic.
    state.matcher.set_load_error("missing model.onnx".into());
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
    ];
    let r = send_with(
        &state,
        "POST",
        "/api/v1/matching",
        &headers,
        b.clone().into_bytes(),
    )
    .await;
    assert_error(&r, 503, "service_unavailable");

    // A catalogue imported without embeddings: 503 too.
    let m = setup_with(Setup {
        engine: Some(Arc::new(tiny_plain())),
        ..Setup::default()
    });
    let r = m
        .post(&m.full, &body("o-503", profile(DESCRIPTION, json!({}))))
        .await;
    assert_error(&r, 503, "service_unavailable");
}

#[tokio::test]
async fn full_queue_is_503_and_frees_up() {
    let m = setup_with(Setup {
        queue: 1,
        ..Setup::default()
    });
    let b = body("o-queue", profile(DESCRIPTION, json!({})));
    let slot = m.state.matcher.slot().expect("the only slot");
    let r = m.post(&m.full, &b).await;
    let msg = assert_error(&r, 503, "service_unavailable");
    assert!(!msg.is_empty());
    let r = m.post_async(&m.full, &b).await;
    assert_error(&r, 503, "service_unavailable");
    assert!(
        crate::common::off_runtime(|| m.state.store.db().pending_matchings())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        crate::common::off_runtime(|| m
            .state
            .store
            .db()
            .matching_usage(m.full_partner, &quarter_of(t(NOW)).0))
        .unwrap()
        .0,
        0
    );
    drop(slot);
    let v = m.match_ok(&m.full, &b).await;
    assert_eq!(v["quota"]["matching_requests_used"], json!(1));
    // The slot is released after each request.
    m.match_ok(&m.full, &b).await;
    let r = m.post_async(&m.full, &b).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let id = r.json["matching_request_id"].as_str().unwrap().to_string();
    m.wait_completed(&m.full, &id).await;
    // Once the async job is done its slot is free again.
    let start = Instant::now();
    loop {
        match m.state.matcher.slot() {
            Ok(_) => break,
            Err(_) => {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "slot never released"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Every result names the need it serves: one of the profile's keywords; for a profile
/// without keywords, German or English, one of its sentences of intent (not the topic
/// words read from a German one, not a sentence that only names funding instruments).
/// With multi-need matching off (`need_weight` 0 in the server's match options)
/// `matched_need` is null.
#[tokio::test]
async fn results_name_the_need_they_serve() {
    let sentences = [
        "Wir wollen unsere Vereinsräume energetisch sanieren und eine Solaranlage bauen.",
        "Außerdem suchen wir Geld für Ferienfreizeiten von Kindern und Jugendlichen.",
    ];
    let instruments = "Wir brauchen Zuschüsse, Kredite können wir nicht tragen.";
    let by_topics = body(
        "org-needs",
        json!({"name": "Jugendtreff e.V.", "description": format!("{} {instruments}", sentences.join(" "))}),
    );
    let english = [
        "We want to renovate our club rooms and install solar panels.",
        "We also need money for holiday camps for children and young people.",
    ];
    let by_sentences = body(
        "org-needs",
        json!({"name": "Youth Club", "description": english.join(" "), "locale": "en"}),
    );
    let keywords = ["Solaranlage", "Ferienfreizeit"];
    let by_keywords = body(
        "org-needs",
        json!({"name": "Jugendtreff e.V.", "description": sentences.join(" "), "keywords": keywords}),
    );
    let needs_of = |r: &Value| -> Vec<Value> {
        let results = r["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{r}");
        results.iter().map(|m| m["matched_need"].clone()).collect()
    };

    let on = setup();
    let r = on.match_ok(&on.full, &by_topics).await;
    for need in needs_of(&r) {
        let need = need.as_str().unwrap_or_else(|| panic!("{r}"));
        assert!(sentences.contains(&need), "{need} not in {sentences:?}");
    }
    let r = on.match_ok(&on.full, &by_sentences).await;
    for need in needs_of(&r) {
        let need = need.as_str().unwrap_or_else(|| panic!("{r}"));
        assert!(english.contains(&need), "{need}");
    }
    let r = on.match_ok(&on.full, &by_keywords).await;
    for need in needs_of(&r) {
        let need = need.as_str().unwrap_or_else(|| panic!("{r}"));
        assert!(keywords.contains(&need), "{need}");
    }

    let off = setup_with(Setup {
        options: MatchOptions {
            need_weight: 0.0,
            ..MatchOptions::default()
        },
        ..Setup::default()
    });
    let r = off.match_ok(&off.full, &by_keywords).await;
    assert!(needs_of(&r).iter().all(Value::is_null), "{r}");
}

/// While the model loads, `/health` answers 200 with `starting`, `/health/ready` and
/// matching answer 503 with `Retry-After`; once loaded, `ok` and `ready`.
#[tokio::test]
async fn health_and_readiness_follow_the_model() {
    let loading = setup_with(Setup {
        model: false,
        ..Setup::default()
    });
    let h = loading.get(None, "/health").await;
    assert_eq!(h.status, StatusCode::OK, "{}", h.text);
    assert_eq!(h.json["status"], "ok", "{}", h.text);
    assert_eq!(h.json["state"], "starting", "{}", h.text);
    assert_eq!(h.json["model"], "loading");
    assert_eq!(h.json["database"], "ok");
    assert_eq!(
        h.json["catalogue"]["grants"],
        json!(loading.state.engine().catalogue.grants.len())
    );
    assert_eq!(h.json["catalogue"]["embeddings"], true);
    for r in [
        loading.get(None, "/health/ready").await,
        loading
            .post(
                &loading.full,
                &body("org-1", json!({"description": "Ein Sportverein."})),
            )
            .await,
    ] {
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text);
        assert_eq!(r.json["error"]["code"], "service_unavailable");
        assert_eq!(r.headers["retry-after"], "5", "{:?}", r.headers);
    }

    loading.state.matcher.set_load_error("no model".into());
    assert_eq!(loading.get(None, "/health").await.json["state"], "degraded");

    let ready = setup();
    let h = ready.get(None, "/health").await;
    assert_eq!(
        (&h.json["state"], &h.json["model"]),
        (&json!("ok"), &json!("loaded"))
    );
    let r = ready.get(None, "/health/ready").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json, json!({"status": "ready"}));
}
