//! Property tests (fuzzing) of the matching-profile parsing: `MatchInput::from_value`
//! and `MatchInput::resolve` over arbitrary JSON and over near-valid bodies with
//! hostile values. Properties: never a panic; every error is `InvalidInput` whose
//! message names the offending field (or says the body is not an object); a body that
//! resolves has a non-blank organisation id and description.
//!
//! Cases: `PROPTEST_CASES` (default 10,000 per property).

use std::path::Path;
use std::sync::OnceLock;

use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::{Catalogue, Engine, Error, MatchInput};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn catalogue() -> &'static Catalogue {
    static E: OnceLock<Engine> = OnceLock::new();
    &E.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/test-catalogues/tiny");
        Engine::from_records(CatalogueRecords::read_dir(&dir).expect("tiny is valid"))
            .expect("engine builds")
    })
    .catalogue
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// Fields of the request body, as error messages name them.
const FIELDS: &[&str] = &[
    "organization_id",
    "organization_profile",
    "project",
    "description",
    "name",
    "regions",
    "grant_areas",
    "eligible_entities",
    "is_non_profit",
    "mission",
    "target_groups",
    "keywords",
    "annual_budget",
    "number_of_employees",
    "locale",
    "title",
    "budget",
    "duration",
];

/// The message names a field of the body (or rejects the body as a whole).
fn names_a_field(message: &str) -> bool {
    message.contains("the request body must be a JSON object")
        || FIELDS.iter().any(|f| message.contains(f))
}

/// Parses and resolves; checks the error properties. Returns whether it resolved.
fn check(body: Value) -> Result<bool, TestCaseError> {
    let input = match MatchInput::from_value(body.clone()) {
        Ok(i) => i,
        Err(Error::InvalidInput(m)) => {
            prop_assert!(
                names_a_field(&m),
                "from_value error names no field: {m} (body {body})"
            );
            return Ok(false);
        }
        Err(other) => {
            return Err(TestCaseError::fail(format!(
                "not InvalidInput: {other} (body {body})"
            )))
        }
    };
    match input.resolve(catalogue()) {
        Ok(p) => {
            prop_assert!(!p.organization_id.trim().is_empty());
            prop_assert!(!p.query_text.trim().is_empty());
            prop_assert!(p.organization_id.chars().count() <= 200);
            Ok(true)
        }
        Err(Error::InvalidInput(m)) => {
            prop_assert!(
                names_a_field(&m),
                "resolve error names no field: {m} (body {body})"
            );
            Ok(false)
        }
        Err(other) => Err(TestCaseError::fail(format!(
            "not InvalidInput: {other} (body {body})"
        ))),
    }
}

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)),
        any::<String>().prop_map(Value::String),
        hostile_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(field_name(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A known field name most of the time, sometimes anything.
fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(FIELDS).prop_map(str::to_string),
        1 => any::<String>(),
    ]
}

/// Strings that exercise trimming, Unicode, lengths around the limits and catalogue
/// names in odd spellings.
fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("   \t\n".to_string()),
        Just("\u{0}".to_string()),
        Just("\u{200b}".to_string()),
        Just("Bayern".to_string()),
        Just(" bayern ".to_string()),
        Just("BAYERN".to_string()),
        Just("Baden-Württemberg".to_string()),
        Just("digitalisierung-ki".to_string()),
        Just("de".to_string()),
        Just("EN".to_string()),
        Just("en-us".to_string()),
        Just("1,5 Mio. €".to_string()),
        Just("9".repeat(400)),
        Just("x".repeat(200)),
        Just("x".repeat(201)),
        Just("ä".repeat(20_001)),
        "[\\PC]{0,40}",
        "[0-9.,]{0,30} ?(Mio|k|Tsd|EUR|€)?",
    ]
}

fn opt<T: std::fmt::Debug + Clone + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(0.6, s)
}

/// A value for a profile field: usually of the right type, sometimes not.
fn text_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => hostile_string().prop_map(Value::String),
        1 => any_json(),
    ]
}

fn list_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => prop::collection::vec(hostile_string(), 0..4).prop_map(|v| json!(v)),
        1 => prop::collection::vec(Just("Bayern".to_string()), 99..103).prop_map(|v| json!(v)),
        1 => any_json(),
    ]
}

/// A near-valid matching body: the right shape with hostile values and wrong types.
fn near_valid_body() -> impl Strategy<Value = Value> {
    let profile = (
        opt(text_value()),
        opt(text_value()),
        opt(list_value()),
        opt(list_value()),
        opt(list_value()),
        opt(prop_oneof![any::<bool>().prop_map(Value::Bool), any_json()]),
        opt(text_value()),
        opt(list_value()),
        opt(list_value()),
        opt(text_value()),
    )
        .prop_map(
            |(
                description,
                name,
                regions,
                areas,
                entities,
                non_profit,
                mission,
                groups,
                keywords,
                locale,
            )| {
                let mut m = Map::new();
                for (k, v) in [
                    ("description", description),
                    ("name", name),
                    ("regions", regions),
                    ("grant_areas", areas),
                    ("eligible_entities", entities),
                    ("is_non_profit", non_profit),
                    ("mission", mission),
                    ("target_groups", groups),
                    ("keywords", keywords),
                    ("locale", locale),
                ] {
                    if let Some(v) = v {
                        m.insert(k.to_string(), v);
                    }
                }
                Value::Object(m)
            },
        );
    let project = (
        opt(text_value()),
        opt(text_value()),
        opt(text_value()),
        opt(text_value()),
    )
        .prop_map(|(title, description, budget, duration)| {
            let mut m = Map::new();
            for (k, v) in [
                ("title", title),
                ("description", description),
                ("budget", budget),
                ("duration", duration),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            Value::Object(m)
        });
    (
        opt(text_value()),
        opt(prop_oneof![5 => profile, 1 => any_json()]),
        opt(prop_oneof![5 => project, 1 => any_json()]),
        opt(any_json()),
    )
        .prop_map(|(org, profile, project, extra)| {
            let mut m = Map::new();
            if let Some(v) = org {
                m.insert("organization_id".into(), v);
            }
            if let Some(v) = profile {
                m.insert("organization_profile".into(), v);
            }
            if let Some(v) = project {
                m.insert("project".into(), v);
            }
            if let Some(v) = extra {
                m.insert("unknown_extension".into(), v);
            }
            Value::Object(m)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics_and_errors_name_a_field(body in any_json()) {
        check(body)?;
    }

    #[test]
    fn near_valid_bodies_never_panic_and_errors_name_a_field(body in near_valid_body()) {
        check(body)?;
    }

    /// A valid body stays valid with unknown fields added anywhere (documented policy).
    #[test]
    fn unknown_fields_are_ignored(extra in prop::collection::btree_map("[a-z_]{1,12}", any_json(), 0..4)) {
        let mut body = json!({
            "organization_id": "org-1",
            "organization_profile": {"description": "Verein für digitale Bildung in Bayern", "regions": ["Bayern"]},
            "project": {"title": "Werkstatt"},
        });
        for (k, v) in &extra {
            if FIELDS.contains(&k.as_str()) {
                continue;
            }
            body[k] = v.clone();
            body["organization_profile"][k] = v.clone();
            body["project"][k] = v.clone();
        }
        prop_assert!(check(body.clone())?, "valid body with unknown fields rejected: {body}");
    }
}

#[test]
fn errors_name_the_exact_field() {
    for (body, field) in [
        (json!([]), "the request body must be a JSON object"),
        (json!({}), "organization_id"),
        (json!({"organization_id": 5}), "organization_id"),
        (json!({"organization_id": "x"}), "organization_profile"),
        (
            json!({"organization_id": "x", "organization_profile": []}),
            "organization_profile",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {}}),
            "organization_profile.description",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d", "regions": "Bayern"}}),
            "organization_profile.regions",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d", "regions": ["Atlantis"]}}),
            "organization_profile.regions",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d", "keywords": [1]}}),
            "organization_profile.keywords",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d", "locale": "fr"}}),
            "organization_profile.locale",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d", "is_non_profit": "ja"}}),
            "organization_profile.is_non_profit",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d"}, "project": {"budget": 5}}),
            "project.budget",
        ),
        (
            json!({"organization_id": "x", "organization_profile": {"description": "d"}, "project": "p"}),
            "project",
        ),
        (
            json!({"organization_id": "x".repeat(201), "organization_profile": {"description": "d"}}),
            "organization_id",
        ),
    ] {
        let err = MatchInput::from_value(body.clone())
            .and_then(|i| i.resolve(catalogue()).map(|_| ()))
            .expect_err(&body.to_string());
        let m = err.to_string();
        assert!(m.contains(field), "{body}: `{m}` does not name `{field}`");
    }
}
