//! Property tests (fuzzing) of query-parameter parsing: `params::Params` directly and
//! the list endpoints through `app(state)`. Properties: never a panic and never a 5xx;
//! every error is 400 `bad_request` whose message starts with the parameter's name.
//!
//! Cases: `PROPTEST_CASES` (default 1,000 per property).

use axum::http::{StatusCode, Uri};
use grantmatch_server::error::ErrorCode;
use grantmatch_server::params::Params;
use proptest::prelude::*;

use crate::common::{assert_error, tiny};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

const NAMES: &[&str] = &[
    "region_ids",
    "grant_area_ids",
    "grant_provider_id",
    "q",
    "grant_type",
    "page",
    "per_page",
    "grant_provider_type",
    "flat",
    "type",
    "country_id",
    "include_parent",
    "period",
    "ai_qualified",
    "custom_category_ids",
];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(NAMES).prop_map(str::to_string),
        2 => prop::sample::select(NAMES).prop_map(|n| format!("{n}[]")),
        1 => "[a-z_\\[\\]%]{0,12}",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("0".to_string()),
        Just("1".to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("true".to_string()),
        Just("maybe".to_string()),
        Just("99999999999999999999999".to_string()),
        Just(u64::MAX.to_string()),
        Just("1000001".to_string()),
        Just("18446744073709551616".to_string()),
        Just("subsidy".to_string()),
        Just("state".to_string()),
        Just("federal_ministry".to_string()),
        Just("b3ee81a6-95a5-5dcf-b8ab-e61e400186eb".to_string()),
        Just(
            "b3ee81a6-95a5-5dcf-b8ab-e61e400186eb,24224655-36d7-5381-aa30-017c2a220f0b".to_string()
        ),
        Just(",,,".to_string()),
        Just("x".repeat(501)),
        Just(vec!["a"; 101].join(",")),
        "[0-9]{1,25}",
        "[\\PC]{0,30}",
    ]
}

/// A query string: encoded pairs, sometimes with raw garbage appended.
fn query() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((name(), value()), 0..8),
        prop::option::weighted(0.2, "[a-zA-Z0-9%&=\\[\\],._~+-]{0,20}"),
    )
        .prop_map(|(pairs, raw)| {
            let mut q = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &pairs {
                q.append_pair(k, v);
            }
            let mut s = q.finish();
            if let Some(r) = raw {
                s.push('&');
                s.push_str(&r);
            }
            s
        })
}

#[track_caller]
fn assert_names(
    result: Result<impl std::fmt::Debug, grantmatch_server::error::ApiError>,
    name: &str,
) {
    if let Err(e) = result {
        assert_eq!(e.status(), StatusCode::BAD_REQUEST, "{name}: {e:?}");
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(
            e.message.starts_with(&format!("{name}:"))
                || e.message.starts_with(&format!("{name}[]:")),
            "the error of `{name}` does not start with its name: {}",
            e.message
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn params_never_panic_and_errors_name_the_parameter(q in query()) {
        let p = Params::parse(Some(&q));
        for n in NAMES {
            assert_names(p.single(n), n);
            assert_names(p.uuid(n), n);
            assert_names(p.list(n), n);
            assert_names(p.uuids(n), n);
            assert_names(p.flag(n), n);
        }
        assert_names(p.q(), "q");
        // page/per_page: the message names whichever of the two is wrong.
        if let Err(e) = p.page(100) {
            prop_assert_eq!(e.status(), StatusCode::BAD_REQUEST);
            prop_assert!(e.message.starts_with("page:") || e.message.starts_with("per_page:"), "{}", e.message);
        }
        if let Ok(r) = p.page(100) {
            prop_assert!(r.page >= 1 && r.page <= 1_000_000 && r.per_page >= 1 && r.per_page <= 100);
        }
        if let Ok(ids) = p.uuids("region_ids") {
            prop_assert!(ids.len() <= 100);
        }
    }

    /// The same through the router: any query on the list endpoints is 200 or a 4xx
    /// error body; a 400 names one of the endpoint's parameters.
    #[test]
    fn list_endpoints_never_5xx_on_any_query(q in query(), endpoint in 0usize..6) {
        let (path, params): (&str, &[&str]) = [
            ("/api/v1/grants", &["region_ids", "grant_area_ids", "grant_provider_id", "q", "grant_type", "page", "per_page", "ai_qualified", "custom_category_ids"][..]),
            ("/api/v1/grant_providers", &["q", "grant_provider_type", "page", "per_page"][..]),
            ("/api/v1/regions", &["flat", "type", "country_id"][..]),
            ("/api/v1/grant_areas", &["flat", "include_parent"][..]),
            ("/api/v1/usage/stats", &["period"][..]),
            ("/api/v1/target_groups", &[][..]),
        ][endpoint];
        let uri = format!("{path}?{q}");
        prop_assume!(uri.parse::<Uri>().is_ok());
        let fx = tiny();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let r = rt.block_on(fx.get(&fx.full, &uri));
        prop_assert!(r.status.is_success() || r.status.is_client_error(), "{uri}: {} {}", r.status, r.text);
        if r.status == StatusCode::BAD_REQUEST {
            let m = assert_error(&r, 400, "bad_request");
            prop_assert!(params.iter().any(|p| m.starts_with(p)), "{uri}: `{m}` names none of {params:?}");
        } else if !r.status.is_success() {
            let code = r.json["error"]["code"].as_str().unwrap_or("").to_string();
            prop_assert!(code == "out_of_scope" || code == "not_found", "{uri}: {}", r.text);
        }
    }
}

#[test]
fn ten_thousand_region_ids_are_one_error() {
    let ids = vec!["b3ee81a6-95a5-5dcf-b8ab-e61e400186eb"; 10_000];
    let q: String = ids
        .iter()
        .map(|i| format!("region_ids[]={i}"))
        .collect::<Vec<_>>()
        .join("&");
    let e = Params::parse(Some(&q)).uuids("region_ids").unwrap_err();
    assert_eq!(e.status(), StatusCode::BAD_REQUEST);
    assert!(e.message.starts_with("region_ids[]:"), "{}", e.message);
}
