//! Per-partner AI qualification and custom categories through `app(state)`:
//! `ai_qualified`, `ai_qualification_reasoning` and `custom_categories` of grant lists
//! and details, the `ai_qualified` and `custom_category_ids[]` filters, re-assessment
//! after a prompt change, isolation between partners and persistence across restarts.
//!
//! The catalogue is the synthetic `tiny` one (12 programmes) with real embeddings
//! computed in memory; the embedding model is loaded from `GRANTMATCH_MODEL_DIR`
//! (default `~/.cache/grantmatch/model`) and its absence FAILS these tests. Rate limits
//! are off.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::{Engine, GrantVectors};
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::matcher::Matcher;
use grantmatch_server::qualification::{self as q, Assessor, NewCategory};
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::AppState;
use serde_json::Value;
use uuid::Uuid;

use crate::common::{assert_error, embedder, id, send_with, tiny_dir, Raw, Resp};

/// The tiny catalogue with real embeddings.
fn tiny_engine() -> Arc<Engine> {
    static E: OnceLock<Arc<Engine>> = OnceLock::new();
    E.get_or_init(|| {
        let embedder = embedder();
        let engine = Engine::from_records(CatalogueRecords::read_dir(&tiny_dir()).unwrap())
            .expect("engine builds");
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

const PROMPT: &str =
    "Programme, die gemeinnützige Vereine in Sachsen für Senioren nutzen können; keine Kredite";

struct Q {
    state: Arc<AppState>,
    db: Arc<Db>,
    /// Partner with the prompt and two categories.
    a: Uuid,
    a_token: String,
    /// Partner without any configuration.
    b_token: String,
    /// Partner with its own prompt.
    c: Uuid,
    c_token: String,
}

fn state_over(db: Arc<Db>, model: bool) -> Arc<AppState> {
    let matcher = Matcher::new(Default::default(), 8);
    if model {
        matcher.set_embedder(embedder());
    }
    Arc::new(
        AppState::new(tiny_engine(), db)
            .with_matcher(matcher)
            .with_rate_limits(RateLimits {
                enabled: false,
                ..RateLimits::default()
            }),
    )
}

fn setup_with_db(db: Arc<Db>) -> Q {
    let partner = |name: &str| {
        crate::common::off_runtime(|| {
            db.create_partner(&NewPartner {
                name: name.into(),
                tier: "standard".into(),
                ..Default::default()
            })
        })
        .expect("partner")
        .id
    };
    let token = |p: Uuid| {
        crate::common::off_runtime(|| db.create_token(p, &["grants:read".into()]))
            .unwrap()
            .1
    };
    let (a, b, c) = (partner("A"), partner("B"), partner("C"));
    Q {
        state: state_over(db.clone(), true),
        a_token: token(a),
        b_token: token(b),
        c_token: token(c),
        a,
        c,
        db,
    }
}

fn setup() -> Q {
    setup_with_db(Arc::new(Db::for_tests().unwrap()))
}

fn categories(db: &Db, partner: Uuid) -> (Uuid, Uuid) {
    let digital = crate::common::off_runtime(|| {
        q::add_category(
            db,
            partner,
            &NewCategory {
                name: "Digitalisierung".into(),
                name_en: "Digitalisation".into(),
                description: Some("Digitale Technik, Breitband und künstliche Intelligenz".into()),
                keywords: vec!["Digitalisierung".into(), "Breitband".into(), "KI".into()],
            },
        )
    })
    .unwrap();
    let umwelt = crate::common::off_runtime(|| {
        q::add_category(
            db,
            partner,
            &NewCategory {
                name: "Umwelt & Klima".into(),
                name_en: "Environment & climate".into(),
                description: None,
                keywords: vec!["Naturschutz".into(), "Klimaschutz".into(), "Umwelt".into()],
            },
        )
    })
    .unwrap();
    (digital.id, umwelt.id)
}

async fn pass(state: &Arc<AppState>) -> usize {
    Assessor::default()
        .pass(state)
        .await
        .expect("assessment pass")
        .expect("the model is loaded")
}

async fn get(state: &Arc<AppState>, token: &str, uri: &str) -> Resp {
    let auth = format!("Bearer {token}");
    send_with(state, "GET", uri, &[("authorization", &auth)], vec![]).await
}

/// Every grant of the list (one page: tiny has 12), by slug.
async fn list(state: &Arc<AppState>, token: &str, query: &str) -> HashMap<String, Value> {
    let body = get(state, token, &format!("/api/v1/grants?per_page=100{query}"))
        .await
        .ok();
    body["grants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["slug"].as_str().unwrap().to_string(), g.clone()))
        .collect()
}

async fn detail(state: &Arc<AppState>, token: &str, slug: &str) -> Value {
    get(state, token, &format!("/api/v1/grants/{slug}"))
        .await
        .ok()["grant"]
        .clone()
}

fn category_ids(v: &Value) -> Vec<String> {
    v["custom_categories"]
        .as_array()
        .expect("custom_categories is an array")
        .iter()
        .map(id)
        .collect()
}

#[track_caller]
fn assert_unassessed(v: &Value) {
    assert_eq!(v["ai_qualified"], Value::Null, "{v}");
    assert_eq!(v["ai_qualification_reasoning"], Value::Null, "{v}");
    assert_eq!(v["custom_categories"], serde_json::json!([]), "{v}");
}

#[tokio::test]
async fn prompt_and_categories_fill_list_and_detail_of_that_partner_only() {
    let t = setup();
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
    let (digital, umwelt) = categories(&t.db, t.a);
    crate::common::off_runtime(|| {
        q::set_prompt(&t.db, t.c, "Nur Bürgschaften für Unternehmen", None)
    })
    .unwrap();

    // Null before assessment.
    let before = list(&t.state, &t.a_token, "").await;
    assert_eq!(before.len(), raw().grants.len());
    before.values().for_each(assert_unassessed);
    assert_unassessed(&detail(&t.state, &t.a_token, "testprogramm-12").await);

    let written = pass(&t.state).await;
    // A: 12 qualifications + 12 categorisations; C: 12 qualifications.
    assert_eq!(written, 36);

    let a = list(&t.state, &t.a_token, "").await;
    for (slug, g) in &a {
        assert!(g["ai_qualified"].is_boolean(), "{slug}: {g}");
        let r = g["ai_qualification_reasoning"].as_str().unwrap();
        let sentences = r.matches(". ").count() + 1;
        assert!((2..=3).contains(&sentences), "{slug}: {r}");
        for c in g["custom_categories"].as_array().unwrap() {
            let mut k: Vec<&String> = c.as_object().unwrap().keys().collect();
            k.sort();
            assert_eq!(k, vec!["id", "name", "name_en"]);
        }
    }
    // The rules decide: region, grant type, eligibility.
    let g12 = &a["testprogramm-12"];
    assert_eq!(g12["ai_qualified"], true, "{g12}");
    assert!(g12["ai_qualification_reasoning"]
        .as_str()
        .unwrap()
        .contains("Sachsen"));
    for (slug, why) in [
        ("testprogramm-2", "nicht in Sachsen"),   // Bayern and Berlin
        ("testprogramm-3", "nicht in Sachsen"),   // Bayern, loan
        ("testprogramm-8", "Kredit"),             // national loan
        ("testprogramm-9", "nicht in Sachsen"),   // Austria
        ("testprogramm-11", "Antragsberechtigt"), // companies only
    ] {
        let g = &a[slug];
        assert_eq!(g["ai_qualified"], false, "{slug}: {g}");
        let r = g["ai_qualification_reasoning"].as_str().unwrap();
        assert!(
            r.to_lowercase().contains(&why.to_lowercase()),
            "{slug}: {r}"
        );
    }
    // Categories: keyword hits in titles and short descriptions.
    let digital_s = digital.to_string();
    let umwelt_s = umwelt.to_string();
    assert!(category_ids(&a["testprogramm-1"]).contains(&digital_s));
    assert!(category_ids(&a["testprogramm-6"]).contains(&digital_s));
    assert!(category_ids(&a["testprogramm-7"]).contains(&umwelt_s));
    assert!(category_ids(&a["testprogramm-8"]).contains(&umwelt_s));
    assert!(!category_ids(&a["testprogramm-12"]).contains(&digital_s));
    let cat = a["testprogramm-1"]["custom_categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == digital_s.as_str())
        .unwrap()
        .clone();
    assert_eq!(cat["name"], "Digitalisierung");
    assert_eq!(cat["name_en"], "Digitalisation");

    // Detail = list item.
    for slug in ["testprogramm-1", "testprogramm-12", "testprogramm-8"] {
        let d = detail(&t.state, &t.a_token, slug).await;
        for f in [
            "ai_qualified",
            "ai_qualification_reasoning",
            "custom_categories",
        ] {
            assert_eq!(d[f], a[slug][f], "{slug}.{f}");
        }
    }

    // B has nothing configured: null/[] everywhere.
    let b = list(&t.state, &t.b_token, "").await;
    b.values().for_each(assert_unassessed);
    assert_unassessed(&detail(&t.state, &t.b_token, "testprogramm-12").await);

    // C sees its own decisions, never A's reasoning or categories.
    let c = list(&t.state, &t.c_token, "").await;
    for (slug, g) in &c {
        assert_eq!(g["custom_categories"], serde_json::json!([]), "{slug}");
        assert!(g["ai_qualified"].is_boolean());
        assert_ne!(
            g["ai_qualification_reasoning"], a[slug]["ai_qualification_reasoning"],
            "{slug}"
        );
        let is_guarantee = raw().grant(slug)["grant_type"] == "guarantee";
        if !is_guarantee {
            assert_eq!(g["ai_qualified"], false, "{slug}: {g}");
        }
    }
    assert_eq!(
        c["testprogramm-11"]["ai_qualified"], true,
        "{}",
        c["testprogramm-11"]
    );
    assert_eq!(a["testprogramm-11"]["ai_qualified"], false);
}

#[tokio::test]
async fn a_prompt_change_reassesses_and_nothing_stale_is_shown() {
    let t = setup();
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
    pass(&t.state).await;
    let first = list(&t.state, &t.a_token, "").await;
    assert_eq!(first["testprogramm-12"]["ai_qualified"], true);
    assert_eq!(first["testprogramm-4"]["ai_qualified"], false);

    // An assessor that has completed the first version does nothing more...
    let mut assessor = Assessor::default();
    assert_eq!(assessor.pass(&t.state).await.unwrap(), Some(0));
    assert_eq!(assessor.pass(&t.state).await.unwrap(), Some(0));

    // ...until the prompt changes: results are null at once, then re-assessed.
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, "Nur Bürgschaften in Sachsen", None))
        .unwrap();
    list(&t.state, &t.a_token, "")
        .await
        .values()
        .for_each(assert_unassessed);
    assert_eq!(assessor.pass(&t.state).await.unwrap(), Some(12));
    let second = list(&t.state, &t.a_token, "").await;
    assert_eq!(
        second["testprogramm-4"]["ai_qualified"], true,
        "{}",
        second["testprogramm-4"]
    );
    assert_eq!(second["testprogramm-12"]["ai_qualified"], false);
    assert!(second["testprogramm-12"]["ai_qualification_reasoning"]
        .as_str()
        .unwrap()
        .contains("Zuschuss"));

    // Clearing the prompt: null again, nothing to assess.
    assert!(crate::common::off_runtime(|| q::clear_prompt(&t.db, t.a)).unwrap());
    assert_eq!(assessor.pass(&t.state).await.unwrap(), Some(0));
    list(&t.state, &t.a_token, "")
        .await
        .values()
        .for_each(assert_unassessed);
}

#[tokio::test]
async fn filters_on_own_results() {
    let t = setup();
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
    let (digital, umwelt) = categories(&t.db, t.a);
    pass(&t.state).await;
    let all = list(&t.state, &t.a_token, "").await;

    let yes = list(&t.state, &t.a_token, "&ai_qualified=true").await;
    let no = list(&t.state, &t.a_token, "&ai_qualified=false").await;
    assert!(!yes.is_empty() && !no.is_empty());
    assert_eq!(yes.len() + no.len(), all.len());
    assert!(yes.values().all(|g| g["ai_qualified"] == true));
    assert!(no.values().all(|g| g["ai_qualified"] == false));
    let body = get(
        &t.state,
        &t.a_token,
        "/api/v1/grants?ai_qualified=true&per_page=1",
    )
    .await
    .ok();
    assert_eq!(body["meta"]["total_count"], yes.len());
    assert_eq!(body["grants"].as_array().unwrap().len(), 1);

    let dig = list(
        &t.state,
        &t.a_token,
        &format!("&custom_category_ids[]={digital}"),
    )
    .await;
    assert!(!dig.is_empty());
    assert!(dig
        .values()
        .all(|g| category_ids(g).contains(&digital.to_string())));
    let either = list(
        &t.state,
        &t.a_token,
        &format!("&custom_category_ids[]={digital}&custom_category_ids[]={umwelt}"),
    )
    .await;
    let expect = all.values().filter(|g| !category_ids(g).is_empty()).count();
    assert_eq!(either.len(), expect);

    // Another partner's (or an unknown) category id, a bad boolean: 400.
    let r = get(
        &t.state,
        &t.b_token,
        &format!("/api/v1/grants?custom_category_ids[]={digital}"),
    )
    .await;
    assert_error(&r, 400, "bad_request");
    let r = get(&t.state, &t.a_token, "/api/v1/grants?ai_qualified=maybe").await;
    assert_error(&r, 400, "bad_request");
    // B has no results: ai_qualified=true finds nothing, =false nothing either.
    assert!(list(&t.state, &t.b_token, "&ai_qualified=true")
        .await
        .is_empty());
    assert!(list(&t.state, &t.b_token, "&ai_qualified=false")
        .await
        .is_empty());
}

#[tokio::test]
async fn results_persist_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_token, expected) = {
        let t = setup_with_db(Arc::new(Db::for_tests_in(dir.path()).unwrap()));
        crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
        categories(&t.db, t.a);
        pass(&t.state).await;
        let l = list(&t.state, &t.a_token, "").await;
        (t.a, t.a_token.clone(), l)
    };
    // A new state over the same database, without the model: the stored results show.
    let db = Arc::new(Db::for_tests_in(dir.path()).unwrap());
    let state = state_over(db.clone(), false);
    let after = list(&state, &a_token, "").await;
    assert_eq!(after, expected);
    assert!(after.values().any(|g| g["ai_qualified"] == true));
    // With the model, a restart re-assesses nothing (keys unchanged).
    let state = state_over(db.clone(), true);
    assert_eq!(pass(&state).await, 0);
    let partner = crate::common::off_runtime(|| db.partner(a))
        .unwrap()
        .unwrap();
    let status = crate::common::off_runtime(|| q::status(&state.engine(), &db, &partner)).unwrap();
    assert_eq!(status["pending"], 0, "{status}");
    assert_eq!(status["qualification"]["assessed"], 12, "{status}");
}

#[tokio::test]
async fn the_background_assessor_notices_changes_and_reports_progress() {
    let t = setup();
    let handle = q::spawn_assessor_every(t.state.clone(), Duration::from_millis(100));
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
    let partner = crate::common::off_runtime(|| t.db.partner(t.a))
        .unwrap()
        .unwrap();
    let started = Instant::now();
    loop {
        let status =
            crate::common::off_runtime(|| q::status(&t.state.engine(), &t.db, &partner)).unwrap();
        if status["pending"] == 0 {
            assert_eq!(status["qualification"]["total"], 12);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not assessed in time: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let l = list(&t.state, &t.a_token, "").await;
    assert!(l.values().all(|g| g["ai_qualified"].is_boolean()));
    // A category added later is picked up too.
    categories(&t.db, t.a);
    let started = Instant::now();
    loop {
        let l = list(&t.state, &t.a_token, "").await;
        if l.values().any(|g| !category_ids(g).is_empty()) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "categories not assessed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    handle.abort();
}

#[tokio::test]
async fn only_grants_in_scope_are_assessed() {
    let db = Arc::new(Db::for_tests().unwrap());
    let bayern = Uuid::parse_str(&raw().region_id("bayern")).unwrap();
    let p = crate::common::off_runtime(|| {
        db.create_partner(&NewPartner {
            name: "Bayern".into(),
            tier: "standard".into(),
            region_ids: vec![bayern],
            ..Default::default()
        })
    })
    .unwrap();
    let token = crate::common::off_runtime(|| db.create_token(p.id, &["grants:read".into()]))
        .unwrap()
        .1;
    let state = state_over(db.clone(), true);
    crate::common::off_runtime(|| q::set_prompt(&db, p.id, "Naturschutz", None)).unwrap();
    let visible = raw().visible(&[bayern.to_string()], &[]);
    assert_eq!(pass(&state).await, visible.len());
    let l = list(&state, &token, "").await;
    assert_eq!(l.len(), visible.len());
    assert!(l.values().all(|g| g["ai_qualified"].is_boolean()));
    assert_eq!(
        l["testprogramm-7"]["ai_qualified"], true,
        "{}",
        l["testprogramm-7"]
    );
}

/// The partner's rules correct the reading: stored with the prompt, part of what the
/// results depend on (a change re-assesses), shown by `status`; removed with a plain `set`.
#[tokio::test]
async fn rules_correct_the_reading_and_a_change_reassesses() {
    let t = setup();
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
    pass(&t.state).await;
    assert_eq!(
        list(&t.state, &t.a_token, "").await["testprogramm-12"]["ai_qualified"],
        true
    );
    let rules =
        grantmatch_engine::qualify::QualificationRules::from_json(r#"{"regions": ["Bayern"]}"#)
            .unwrap();
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, Some(&rules))).unwrap();
    let config = crate::common::off_runtime(|| q::config(&t.db, t.a)).unwrap();
    assert_eq!(config.rules.as_ref(), Some(&rules));
    let bayern = t.state.engine().catalogue.find_region("Bayern").unwrap();
    assert_eq!(
        config.read_prompt(&t.state.engine()).unwrap().regions,
        vec![bayern]
    );
    let mut assessor = Assessor::default();
    assert_eq!(assessor.pass(&t.state).await.unwrap(), Some(12));
    let g12 = &list(&t.state, &t.a_token, "").await["testprogramm-12"];
    assert_eq!(g12["ai_qualified"], false, "{g12}");
    assert!(
        g12["ai_qualification_reasoning"]
            .as_str()
            .unwrap()
            .contains("Bayern"),
        "{g12}"
    );
    // The same prompt without rules: the rules are gone and the reading decides again.
    crate::common::off_runtime(|| q::set_prompt(&t.db, t.a, PROMPT, None)).unwrap();
    assert_eq!(
        crate::common::off_runtime(|| q::config(&t.db, t.a))
            .unwrap()
            .rules,
        None
    );
    assert_eq!(assessor.pass(&t.state).await.unwrap(), Some(12));
    assert_eq!(
        list(&t.state, &t.a_token, "").await["testprogramm-12"]["ai_qualified"],
        true
    );
}
