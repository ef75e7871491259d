//! Integration tests of the read API through `grantmatch_server::app(state)` (no socket;
//! `sockets` alone runs the real accept loop on a loopback port).
//!
//! Most tests run against the real catalogue (`fixtures/catalogue`, 1,434 programmes);
//! a few use the synthetic `fixtures/test-catalogues/tiny` catalogue where the real
//! data cannot show a case (sub-area-only grants, multi-region and EU-wide grants,
//! filled provider addresses and contact points). Expected values come from the raw
//! JSONL files (see `common`).

#[path = "api/catalogue.rs"]
mod catalogue;
mod common;
#[path = "api/dashboard.rs"]
mod dashboard;
#[path = "api/dashboard_pages.rs"]
mod dashboard_pages;
#[path = "api/hardening.rs"]
mod hardening;
#[path = "api/matching.rs"]
mod matching;
#[path = "api/metrics.rs"]
mod metrics;
#[path = "api/openapi.rs"]
mod openapi;
#[path = "api/params_props.rs"]
mod params_props;
#[path = "api/qualification.rs"]
mod qualification;
#[path = "api/sockets.rs"]
mod sockets;
#[path = "api/store.rs"]
mod store;
#[path = "api/store_api.rs"]
mod store_api;
#[path = "api/usage.rs"]
mod usage;

use std::collections::BTreeSet;

use axum::http::StatusCode;
use common::{assert_error, enc, fields, fold, id, keys, real, strs, tiny, Fx};
use serde_json::{json, Value};

const LIST_FIELDS: &[&str] = &[
    "id",
    "slug",
    "title",
    "short_description",
    "grant_type",
    "grant_provider",
    "end_date",
    "ongoing_grant",
    "funding_amount",
    "max_funding_amount",
    "regions",
    "grant_areas",
    "target_groups",
    "updated_at",
    "ai_qualified",
    "ai_qualification_reasoning",
    "custom_categories",
];

const DETAIL_EXTRA_FIELDS: &[&str] = &[
    "description",
    "contact_point",
    "start_date",
    "end_date_description",
    "earliest_project_start",
    "project_duration",
    "funding_rate",
    "funding_goal",
    "eligibility_requirements",
    "target_group_description",
    "non_profit_only",
    "company_size",
    "eligible_entities",
    "eligible_expenditures",
    "non_eligible_expenditures",
    "eligible_expenditure_categories",
    "evaluation_criteria",
    "documents_needed",
    "application_level",
    "application_links",
    "guideline_links",
    "reporting_and_claims_links",
    "created_at",
    "attribution",
    "facts",
];

const PROVIDER_FIELDS: &[&str] = &[
    "id",
    "name",
    "slug",
    "type",
    "grant_provider_type",
    "type_label",
    "description",
    "website",
    "email",
    "phone",
    "fax",
    "city",
    "grants_count",
    "created_at",
    "updated_at",
];

fn detail_fields() -> Vec<String> {
    let mut all: Vec<&str> = LIST_FIELDS.to_vec();
    all.extend(DETAIL_EXTRA_FIELDS);
    fields(&all)
}

fn set_of(items: &[Value]) -> BTreeSet<String> {
    items.iter().map(id).collect()
}

fn ids_of(v: &Value) -> BTreeSet<String> {
    set_of(v.as_array().unwrap_or_else(|| panic!("not an array: {v}")))
}

fn raw_set(v: &Value, field: &str) -> BTreeSet<String> {
    strs(v, field).into_iter().collect()
}

/// `Some(value)` of an optional raw field as JSON (absent = null).
fn opt(v: &Value, field: &str) -> Value {
    v.get(field).cloned().unwrap_or(Value::Null)
}

/// Raw grants whose region codes are exactly `codes`.
fn grants_only_in<'a>(fx: &'a Fx, code: &str) -> Vec<&'a Value> {
    fx.raw
        .grants
        .iter()
        .filter(|g| fx.raw.region_codes(g) == vec![code.to_string()])
        .collect()
}

fn slugs(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .map(|g| g["slug"].as_str().unwrap().to_string())
        .collect()
}

fn slug_set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Every endpoint of the read API, with a valid path parameter for the details.
fn endpoints(fx: &Fx) -> Vec<String> {
    let raw = &fx.raw;
    vec![
        "/api/v1/grants".into(),
        format!("/api/v1/grants/{}", id(&raw.grants[0])),
        "/api/v1/grant_providers".into(),
        format!("/api/v1/grant_providers/{}", id(&raw.grant_providers[0])),
        "/api/v1/regions".into(),
        format!("/api/v1/regions/{}", raw.region_id("germany")),
        "/api/v1/grant_areas".into(),
        format!("/api/v1/grant_areas/{}", id(&raw.grant_areas[0])),
        "/api/v1/eligible_entities".into(),
        format!(
            "/api/v1/eligible_entities/{}",
            id(&raw.eligible_entities[0])
        ),
        "/api/v1/target_groups".into(),
        format!("/api/v1/target_groups/{}", id(&raw.target_groups[0])),
    ]
}

// =================================================================================
// Grants: envelopes and fields
// =================================================================================

#[tokio::test]
async fn grants_list_envelope_meta_and_item_fields() {
    let fx = real();
    let body = fx.get_ok(&fx.full, "/api/v1/grants").await;
    assert_eq!(keys(&body), fields(&["grants", "meta"]));
    assert_eq!(
        body["meta"],
        json!({ "current_page": 1, "per_page": 25, "total_pages": 58, "total_count": 1434 })
    );
    let items = body["grants"].as_array().unwrap();
    assert_eq!(items.len(), 25);
    for item in items {
        assert_eq!(keys(item), fields(LIST_FIELDS), "{item}");
        assert_eq!(item["ai_qualified"], Value::Null);
        assert_eq!(item["ai_qualification_reasoning"], Value::Null);
        assert_eq!(item["custom_categories"], json!([]));
    }
}

/// Every list item of the whole catalogue reflects its record.
#[tokio::test]
async fn grants_list_items_match_catalogue_records() {
    let fx = real();
    let raw = &fx.raw;
    let all = fx.all_grants(&fx.full, "").await;
    assert_eq!(set_of(&all), raw.grant_ids(|_| true));
    for item in &all {
        let g = raw.grant_by_id(&id(item));
        for f in ["slug", "title", "grant_type", "ongoing_grant", "updated_at"] {
            assert_eq!(item[f], g[f], "{f} of {}", g["slug"]);
        }
        for f in [
            "short_description",
            "end_date",
            "funding_amount",
            "max_funding_amount",
        ] {
            assert_eq!(item[f], opt(g, f), "{f} of {}", g["slug"]);
        }
        // regions: {id, name} with the German name
        let regions = item["regions"].as_array().unwrap();
        assert_eq!(ids_of(&item["regions"]), raw_set(g, "region_ids"));
        for r in regions {
            assert_eq!(keys(r), fields(&["id", "name"]));
            assert_eq!(r["name"], raw.region_by_id(&id(r))["name_de"]);
        }
        for a in item["grant_areas"].as_array().unwrap() {
            assert_eq!(keys(a), fields(&["id", "name"]));
            assert_eq!(a["name"], raw.area_by_id(&id(a))["name_de"]);
        }
        assert_eq!(ids_of(&item["grant_areas"]), raw_set(g, "grant_area_ids"));
        assert_eq!(
            ids_of(&item["target_groups"]),
            raw_set(g, "target_group_ids")
        );
        match g["grant_provider_id"].as_str() {
            None => assert_eq!(item["grant_provider"], Value::Null),
            Some(p) => {
                let provider = &item["grant_provider"];
                assert_eq!(provider["id"], p);
                let rp = raw.grant_providers.iter().find(|x| x["id"] == p).unwrap();
                assert_eq!(provider["name"], rp["name"]);
                assert_eq!(provider["slug"], rp["slug"]);
            }
        }
    }
}

#[tokio::test]
async fn grant_detail_by_uuid_and_by_slug() {
    let fx = real();
    let raw = &fx.raw;
    // A real programme with provider, texts, sub-areas, target groups and entities.
    let g = raw
        .grants
        .iter()
        .find(|g| {
            g.get("grant_provider_id").is_some()
                && g.get("description").is_some()
                && !strs(g, "application_links").is_empty()
                && !strs(g, "target_group_ids").is_empty()
                && !strs(g, "eligible_entity_ids").is_empty()
                && strs(g, "grant_area_ids")
                    .iter()
                    .any(|a| raw.area_by_id(a).get("parent_id").is_some())
        })
        .expect("a fully classified grant");
    let by_id = fx
        .get_ok(&fx.full, &format!("/api/v1/grants/{}", id(g)))
        .await;
    let slug = g["slug"].as_str().unwrap();
    let by_slug = fx.get_ok(&fx.full, &format!("/api/v1/grants/{slug}")).await;
    assert_eq!(by_id, by_slug);
    assert_eq!(keys(&by_id), fields(&["grant"]));
    let d = &by_id["grant"];
    assert_eq!(keys(d), detail_fields());

    assert_eq!(d["id"], g["id"]);
    assert_eq!(d["slug"], g["slug"]);
    assert_eq!(d["title"], g["title"]);
    // Texts verbatim, attribution (CC BY-ND) present.
    assert_eq!(d["description"], g["description"]);
    assert_eq!(d["attribution"], g["attribution"]);
    let attribution = d["attribution"].as_str().unwrap();
    assert!(attribution.contains("CC BY-ND"), "{attribution}");
    assert!(attribution.contains(g["title"].as_str().unwrap()));
    assert_eq!(d["guideline_links"], g["guideline_links"]);
    assert_eq!(d["application_links"], g["application_links"]);
    assert!(d["guideline_links"][0]
        .as_str()
        .unwrap()
        .starts_with("https://www.foerderdatenbank.de/"));
    assert_eq!(d["created_at"], g["created_at"]);
    assert_eq!(d["updated_at"], g["updated_at"]);

    // Placeholders of later issues.
    assert_eq!(d["ai_qualified"], Value::Null);
    assert_eq!(d["ai_qualification_reasoning"], Value::Null);
    assert_eq!(d["custom_categories"], json!([]));
    // Fields the data does not have stay null / empty.
    assert_eq!(d["contact_point"], Value::Null);
    assert_eq!(d["company_size"], Value::Null);
    assert_eq!(d["non_profit_only"], false);
    assert_eq!(d["evaluation_criteria"], json!([]));

    // Provider object of the detail.
    let p = &d["grant_provider"];
    assert_eq!(
        keys(p),
        fields(&[
            "id",
            "name",
            "slug",
            "grant_provider_type",
            "website",
            "email",
            "phone",
            "address"
        ])
    );
    let rp = raw
        .grant_providers
        .iter()
        .find(|x| x["id"] == g["grant_provider_id"])
        .unwrap();
    assert_eq!(p["id"], rp["id"]);
    assert_eq!(p["name"], rp["name"]);
    assert_eq!(p["slug"], rp["slug"]);
    assert_eq!(p["grant_provider_type"], rp["type"]);

    // Regions with region_type, areas with parent_id, entities with names.
    for r in d["regions"].as_array().unwrap() {
        assert_eq!(keys(r), fields(&["id", "name", "region_type"]));
        let rr = raw.region_by_id(&id(r));
        assert_eq!(r["region_type"], rr["region_type"]);
        assert_eq!(r["name"], rr["name_de"]);
    }
    assert_eq!(ids_of(&d["regions"]), raw_set(g, "region_ids"));
    for a in d["grant_areas"].as_array().unwrap() {
        assert_eq!(keys(a), fields(&["id", "name", "parent_id"]));
        assert_eq!(a["parent_id"], opt(raw.area_by_id(&id(a)), "parent_id"));
    }
    assert_eq!(ids_of(&d["grant_areas"]), raw_set(g, "grant_area_ids"));
    assert!(d["grant_areas"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["parent_id"].is_string()));
    let entities = d["eligible_entities"].as_array().unwrap();
    assert_eq!(
        ids_of(&d["eligible_entities"]),
        raw_set(g, "eligible_entity_ids")
    );
    for e in entities {
        assert_eq!(keys(e), fields(&["id", "name"]));
        let re = raw
            .eligible_entities
            .iter()
            .find(|x| x["id"] == e["id"])
            .unwrap();
        assert_eq!(e["name"], re["name_de"]);
    }
    assert_eq!(ids_of(&d["target_groups"]), raw_set(g, "target_group_ids"));
}

#[tokio::test]
async fn grant_without_provider_has_null_provider() {
    let fx = real();
    let g = fx
        .raw
        .grants
        .iter()
        .find(|g| g.get("grant_provider_id").is_none())
        .expect("the data has grants without a named funding body");
    let d = fx
        .get_ok(&fx.full, &format!("/api/v1/grants/{}", id(g)))
        .await;
    assert_eq!(d["grant"]["grant_provider"], Value::Null);
    assert_eq!(d["grant"]["title"], g["title"]);
}

/// The synthetic catalogue fills every detail field; each must come through as stored.
#[tokio::test]
async fn grant_detail_every_field_of_a_full_record() {
    let fx = tiny();
    let g = fx.raw.grant("testprogramm-1");
    let d = fx.get_ok(&fx.full, "/api/v1/grants/testprogramm-1").await["grant"].clone();
    assert_eq!(keys(&d), detail_fields());
    for f in [
        "short_description",
        "description",
        "grant_type",
        "start_date",
        "end_date",
        "earliest_project_start",
        "ongoing_grant",
        "end_date_description",
        "funding_amount",
        "project_duration",
        "funding_rate",
        "funding_goal",
        "target_group_description",
        "company_size",
        "application_level",
        "non_profit_only",
        "contact_point",
        "eligibility_requirements",
        "eligible_expenditures",
        "non_eligible_expenditures",
        "eligible_expenditure_categories",
        "evaluation_criteria",
        "documents_needed",
        "application_links",
        "guideline_links",
        "reporting_and_claims_links",
        "attribution",
    ] {
        assert_eq!(d[f], g[f], "field {f}");
    }
    assert_eq!(d["max_funding_amount"].as_f64(), Some(50000.0));
    let p = &d["grant_provider"];
    assert_eq!(p["grant_provider_type"], "federal_ministry");
    assert_eq!(p["website"], "https://bund.example.org");
    assert_eq!(p["email"], "info@bund.example.org");
    assert_eq!(p["phone"], "+49 30 000000");
    assert_eq!(
        p["address"],
        json!({
            "street_and_number": "Teststraße 1",
            "postal_code": "10115",
            "city": "Berlin",
            "state": null,
            "country": "Deutschland"
        })
    );

    // non_profit_only = true comes through too.
    let d2 = fx.get_ok(&fx.full, "/api/v1/grants/testprogramm-2").await;
    assert_eq!(d2["grant"]["non_profit_only"], true);

    // A grant without provider and short description.
    let d10 = fx.get_ok(&fx.full, "/api/v1/grants/testprogramm-10").await;
    assert_eq!(d10["grant"]["grant_provider"], Value::Null);
    assert_eq!(d10["grant"]["short_description"], Value::Null);
}

// =================================================================================
// Grant providers
// =================================================================================

#[tokio::test]
async fn grant_providers_list_envelope_fields_and_counts() {
    let fx = real();
    let raw = &fx.raw;
    let body = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=100")
        .await;
    assert_eq!(keys(&body), fields(&["grant_providers", "meta"]));
    let meta = &body["meta"];
    assert_eq!(meta["current_page"], 1);
    assert_eq!(meta["page"], 1);
    assert_eq!(meta["per_page"], 100);
    assert_eq!(meta["total_count"], 137);
    assert_eq!(meta["total"], 137);
    assert_eq!(meta["total_pages"], 2);
    let page2 = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=100&page=2")
        .await;
    assert_eq!(page2["meta"]["current_page"], 2);
    assert_eq!(page2["meta"]["page"], 2);
    let mut all: Vec<Value> = body["grant_providers"].as_array().unwrap().clone();
    assert_eq!(all.len(), 100);
    all.extend(page2["grant_providers"].as_array().unwrap().iter().cloned());
    assert_eq!(all.len(), 137);
    assert_eq!(
        set_of(&all),
        raw.grant_providers.iter().map(id).collect::<BTreeSet<_>>()
    );
    for p in &all {
        // The fixtures have no address/geo/social data, so those objects are absent.
        assert_eq!(keys(p), fields(PROVIDER_FIELDS), "{p}");
        let rp = raw.provider(p["slug"].as_str().unwrap());
        assert_eq!(p["id"], rp["id"]);
        assert_eq!(p["name"], rp["name"]);
        assert_eq!(p["type"], rp["type"]);
        assert_eq!(p["grant_provider_type"], rp["type"]);
        assert!(!p["type_label"].as_str().unwrap().is_empty());
        let expected = raw
            .grants
            .iter()
            .filter(|g| g["grant_provider_id"] == rp["id"])
            .count();
        assert_eq!(
            p["grants_count"], expected,
            "grants_count of {}",
            rp["slug"]
        );
    }
    let total: u64 = all
        .iter()
        .map(|p| p["grants_count"].as_u64().unwrap())
        .sum();
    let with_provider = raw
        .grants
        .iter()
        .filter(|g| g.get("grant_provider_id").is_some())
        .count() as u64;
    assert_eq!(total, with_provider);
}

#[tokio::test]
async fn grant_providers_filters_and_paging() {
    let fx = real();
    let raw = &fx.raw;
    // grant_provider_type
    let body = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_providers?grant_provider_type=federal_ministry&per_page=100",
        )
        .await;
    let items = body["grant_providers"].as_array().unwrap();
    let expected = raw
        .grant_providers
        .iter()
        .filter(|p| p["type"] == "federal_ministry")
        .count();
    assert!(expected > 0);
    assert_eq!(items.len(), expected);
    assert_eq!(body["meta"]["total_count"], expected);
    assert!(items.iter().all(|p| p["type"] == "federal_ministry"));

    // q searches by name, case- and umlaut-insensitively.
    let a = fx
        .get_ok(
            &fx.full,
            &format!(
                "/api/v1/grant_providers?q={}&per_page=100",
                enc("Sächsisches")
            ),
        )
        .await;
    let b = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_providers?q=SACHSISCHES&per_page=100",
        )
        .await;
    assert_eq!(a["grant_providers"], b["grant_providers"]);
    let names: Vec<&str> = a["grant_providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let expected = raw
        .grant_providers
        .iter()
        .filter(|p| fold(p["name"].as_str().unwrap()).contains("sachsisches"))
        .count();
    assert!(expected > 0);
    assert_eq!(names.len(), expected, "{names:?}");
    // Substring match: "Niedersächsisches …" is found too.
    assert!(
        names.iter().all(|n| fold(n).contains("sachsisches")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("Sächsisches")),
        "{names:?}"
    );

    // Paging with small pages walks the same list in the same order.
    let big = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=10")
        .await;
    let p1 = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=5&page=1")
        .await;
    let p2 = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=5&page=2")
        .await;
    let mut joined = p1["grant_providers"].as_array().unwrap().clone();
    joined.extend(p2["grant_providers"].as_array().unwrap().iter().cloned());
    assert_eq!(&joined, big["grant_providers"].as_array().unwrap());
    assert_eq!(p2["meta"]["total_pages"], 28);
    // beyond the end
    let beyond = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=100&page=3")
        .await;
    assert_eq!(beyond["grant_providers"], json!([]));
    assert_eq!(beyond["meta"]["total_count"], 137);

    let r = fx
        .get(&fx.full, "/api/v1/grant_providers?grant_provider_type=bank")
        .await;
    let m = assert_error(&r, 400, "bad_request");
    assert!(m.contains("grant_provider_type"), "{m}");
}

#[tokio::test]
async fn grant_provider_detail_by_uuid_and_slug() {
    let fx = real();
    let rp = fx
        .raw
        .provider("bundesministerium-fuer-wirtschaft-und-energie-bmwe");
    let by_id = fx
        .get_ok(&fx.full, &format!("/api/v1/grant_providers/{}", id(rp)))
        .await;
    let by_slug = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_providers/bundesministerium-fuer-wirtschaft-und-energie-bmwe",
        )
        .await;
    assert_eq!(by_id, by_slug);
    assert_eq!(keys(&by_id), fields(&["grant_provider"]));
    let p = &by_id["grant_provider"];
    assert_eq!(keys(p), fields(PROVIDER_FIELDS));
    assert_eq!(
        p["name"],
        "Bundesministerium für Wirtschaft und Energie (BMWE)"
    );
    assert_eq!(p["type"], "federal_ministry");
    let expected = fx
        .raw
        .grants
        .iter()
        .filter(|g| g["grant_provider_id"] == rp["id"])
        .count();
    assert_eq!(p["grants_count"], expected);
    assert!(expected > 100);

    // The same record as in the list.
    let list = fx
        .get_ok(&fx.full, "/api/v1/grant_providers?per_page=100&q=BMWE")
        .await;
    assert_eq!(list["grant_providers"][0], *p);

    let r = fx
        .get(&fx.full, "/api/v1/grant_providers/no-such-provider")
        .await;
    assert_error(&r, 404, "not_found");
    let r = fx
        .get(
            &fx.full,
            &format!("/api/v1/grant_providers/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_error(&r, 404, "not_found");
}

/// address / geo_location / social_media are present only when a value is set.
#[tokio::test]
async fn grant_provider_optional_objects() {
    let fx = tiny();
    let p = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_providers/testministerium-des-bundes-fuer-digitales",
        )
        .await["grant_provider"]
        .clone();
    assert_eq!(p["address"]["street_and_number"], "Teststraße 1");
    assert_eq!(p["address"]["postal_code"], "10115");
    assert_eq!(p["city"], "Berlin");
    assert_eq!(p["description"], "Synthetischer Fördergeber für Tests.");
    assert!(p.get("geo_location").is_none());
    assert!(p.get("social_media").is_none());
    let q = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_providers/testministerium-des-freistaats-bayern",
        )
        .await["grant_provider"]
        .clone();
    assert!(q.get("address").is_none(), "{q}");
    assert_eq!(q["city"], "München");
    assert_eq!(q["website"], Value::Null);
}

// =================================================================================
// Regions
// =================================================================================

#[tokio::test]
async fn regions_hierarchical() {
    let fx = real();
    let raw = &fx.raw;
    let body = fx.get_ok(&fx.full, "/api/v1/regions").await;
    assert_eq!(keys(&body), fields(&["regions", "meta"]));
    assert_eq!(
        body["meta"],
        json!({ "total_continents": 7, "total_countries": 249, "total_states": 16 })
    );
    let continents = body["regions"].as_array().unwrap();
    assert_eq!(continents.len(), 7);
    let mut n_countries = 0;
    let mut n_states = 0;
    for c in continents {
        assert_eq!(
            keys(c),
            fields(&[
                "id",
                "name",
                "name_de",
                "name_en",
                "region_type",
                "countries"
            ])
        );
        assert_eq!(c["region_type"], "continent");
        let rc = raw.region_by_id(&id(c));
        assert_eq!(c["name"], rc["name_de"]);
        assert_eq!(c["name_en"], rc["name_en"]);
        let expected: BTreeSet<String> = raw
            .regions
            .iter()
            .filter(|r| r["parent_id"] == rc["id"])
            .map(id)
            .collect();
        assert_eq!(ids_of(&c["countries"]), expected);
        for k in c["countries"].as_array().unwrap() {
            n_countries += 1;
            assert_eq!(k["region_type"], "country");
            assert!(k["states"].is_array(), "{k}");
            for s in k["states"].as_array().unwrap() {
                n_states += 1;
                assert_eq!(s["region_type"], "state");
                assert_eq!(raw.region_by_id(&id(s))["parent_id"], k["id"]);
            }
        }
    }
    assert_eq!((n_countries, n_states), (249, 16));
    let europe = continents
        .iter()
        .find(|c| c["id"] == raw.region_id("europe"))
        .unwrap();
    let germany = europe["countries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == raw.region_id("germany"))
        .unwrap();
    assert_eq!(germany["name"], "Deutschland");
    assert_eq!(germany["name_en"], "Germany");
    assert_eq!(germany["states"].as_array().unwrap().len(), 16);
    assert!(germany["states"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "Bayern" && s["name_en"] == "Bavaria"));
}

#[tokio::test]
async fn regions_flat_type_and_country_id() {
    let fx = real();
    let raw = &fx.raw;
    let flat = fx.get_ok(&fx.full, "/api/v1/regions?flat=true").await;
    assert_eq!(keys(&flat), fields(&["regions", "meta"]));
    assert_eq!(
        flat["meta"],
        json!({ "total_count": 272, "by_type": { "continent": 7, "country": 249, "state": 16 } })
    );
    let items = flat["regions"].as_array().unwrap();
    assert_eq!(items.len(), 272);
    for r in items {
        assert_eq!(
            keys(r),
            fields(&[
                "id",
                "name",
                "name_de",
                "name_en",
                "region_type",
                "parent_id",
                "parent_name"
            ])
        );
        let rr = raw.region_by_id(&id(r));
        assert_eq!(r["parent_id"], opt(rr, "parent_id"));
        match rr["parent_id"].as_str() {
            None => assert_eq!(r["parent_name"], Value::Null),
            Some(p) => assert_eq!(r["parent_name"], raw.region_by_id(p)["name_de"]),
        }
    }
    let bayern = items
        .iter()
        .find(|r| r["id"] == raw.region_id("bayern"))
        .unwrap();
    assert_eq!(bayern["parent_name"], "Deutschland");
    assert_eq!(bayern["region_type"], "state");

    let states = fx.get_ok(&fx.full, "/api/v1/regions?type=state").await;
    assert_eq!(states["meta"]["total_count"], 16);
    assert_eq!(
        states["meta"]["by_type"],
        json!({ "continent": 0, "country": 0, "state": 16 })
    );
    assert!(states["regions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["region_type"] == "state" && r["parent_id"] == raw.region_id("germany")));

    let countries = fx
        .get_ok(&fx.full, "/api/v1/regions?flat=true&type=country")
        .await;
    assert_eq!(countries["regions"].as_array().unwrap().len(), 249);

    let de_states = fx
        .get_ok(
            &fx.full,
            &format!("/api/v1/regions?country_id={}", raw.region_id("germany")),
        )
        .await;
    assert_eq!(ids_of(&de_states["regions"]), ids_of(&states["regions"]));
    let at_states = fx
        .get_ok(
            &fx.full,
            &format!("/api/v1/regions?country_id={}", raw.region_id("austria")),
        )
        .await;
    assert_eq!(at_states["regions"], json!([]));
    assert_eq!(at_states["meta"]["total_count"], 0);

    // flat=false is the hierarchical default
    let h = fx.get_ok(&fx.full, "/api/v1/regions?flat=false").await;
    assert_eq!(h["meta"]["total_continents"], 7);
}

#[tokio::test]
async fn region_detail_with_parent_and_subregions() {
    let fx = real();
    let raw = &fx.raw;
    let de = fx
        .get_ok(
            &fx.full,
            &format!("/api/v1/regions/{}", raw.region_id("germany")),
        )
        .await;
    assert_eq!(keys(&de), fields(&["region"]));
    let r = &de["region"];
    assert_eq!(r["name"], "Deutschland");
    assert_eq!(r["name_de"], "Deutschland");
    assert_eq!(r["name_en"], "Germany");
    assert_eq!(r["region_type"], "country");
    assert_eq!(
        r["parent"],
        json!({
            "id": raw.region_id("europe"),
            "name": "Europa",
            "name_de": "Europa",
            "name_en": "Europe",
            "region_type": "continent"
        })
    );
    let subs = r["subregions"].as_array().unwrap();
    assert_eq!(subs.len(), 16);
    for s in subs {
        assert_eq!(s["region_type"], "state");
        assert_eq!(s["parent_id"], raw.region_id("germany"));
        assert_eq!(s["parent_name"], "Deutschland");
        assert!(s["name_en"].is_string());
    }

    let by = fx
        .get_ok(
            &fx.full,
            &format!("/api/v1/regions/{}", raw.region_id("bayern")),
        )
        .await;
    assert_eq!(by["region"]["parent"]["id"], raw.region_id("germany"));
    assert_eq!(by["region"]["parent"]["region_type"], "country");
    assert_eq!(by["region"]["subregions"], json!([]));

    let eu = fx
        .get_ok(
            &fx.full,
            &format!("/api/v1/regions/{}", raw.region_id("europe")),
        )
        .await;
    assert_eq!(eu["region"]["parent"], Value::Null);
    assert!(eu["region"]["subregions"].as_array().unwrap().len() > 40);

    let r = fx
        .get(
            &fx.full,
            &format!("/api/v1/regions/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_error(&r, 404, "not_found");
}

// =================================================================================
// Grant areas
// =================================================================================

#[tokio::test]
async fn grant_areas_hierarchical() {
    let fx = real();
    let raw = &fx.raw;
    let body = fx.get_ok(&fx.full, "/api/v1/grant_areas").await;
    assert_eq!(keys(&body), fields(&["grant_areas", "meta"]));
    let n_parents = raw
        .grant_areas
        .iter()
        .filter(|a| a.get("parent_id").is_none())
        .count();
    let n_subs = raw.grant_areas.len() - n_parents;
    assert_eq!(n_parents, 23);
    assert_eq!(
        body["meta"],
        json!({ "total_parent_areas": n_parents, "total_subareas": n_subs })
    );
    let parents = body["grant_areas"].as_array().unwrap();
    assert_eq!(parents.len(), n_parents);
    let mut seen = 0;
    for p in parents {
        assert_eq!(p["is_parent"], true);
        assert_eq!(p["parent_id"], Value::Null);
        for f in ["id", "name", "name_de", "name_en", "subareas"] {
            assert!(p.get(f).is_some(), "{f} missing in {p}");
        }
        let rp = raw.area_by_id(&id(p));
        assert_eq!(p["name"], rp["name_de"]);
        assert_eq!(p["name_en"], rp["name_en"]);
        let expected: BTreeSet<String> = raw.subareas(&id(p)).into_iter().map(id).collect();
        assert_eq!(ids_of(&p["subareas"]), expected);
        for s in p["subareas"].as_array().unwrap() {
            seen += 1;
            assert_eq!(s["is_parent"], false);
            assert_eq!(s["parent_id"], p["id"]);
            assert_eq!(s["parent_name"], p["name"]);
        }
    }
    assert_eq!(seen, n_subs);
}

#[tokio::test]
async fn grant_areas_flat_and_include_parent() {
    let fx = real();
    let raw = &fx.raw;
    let flat = fx.get_ok(&fx.full, "/api/v1/grant_areas?flat=true").await;
    assert_eq!(keys(&flat), fields(&["grant_areas", "meta"]));
    assert_eq!(
        keys(&flat["meta"]),
        fields(&["total_count", "filterable_count"])
    );
    let items = flat["grant_areas"].as_array().unwrap();
    assert_eq!(flat["meta"]["total_count"], items.len());
    let all_subs: BTreeSet<String> = raw
        .grant_areas
        .iter()
        .filter(|a| a.get("parent_id").is_some())
        .map(id)
        .collect();
    let listed = ids_of(&flat["grant_areas"]);
    // Every sub-area is listed; no parent that has sub-areas is (parents without
    // sub-areas are leaves and stay filterable).
    assert!(all_subs.is_subset(&listed));
    for a in items {
        assert_eq!(
            keys(a),
            fields(&[
                "id",
                "name",
                "name_de",
                "name_en",
                "parent_id",
                "parent_name",
                "is_parent"
            ])
        );
        if a["is_parent"] == true {
            assert!(
                raw.subareas(&id(a)).is_empty(),
                "parent with sub-areas listed: {a}"
            );
        } else {
            let parent = raw.area_by_id(a["parent_id"].as_str().unwrap());
            assert_eq!(a["parent_name"], parent["name_de"]);
        }
    }
    // filterable_count: areas with at least one grant (in or below the area).
    let filterable = items
        .iter()
        .filter(|a| !raw.in_area(&id(a)).is_empty())
        .count();
    assert_eq!(flat["meta"]["filterable_count"], filterable);
    assert!(filterable > 0 && filterable < items.len());

    let with_parents = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_areas?flat=true&include_parent=true",
        )
        .await;
    assert_eq!(with_parents["meta"]["total_count"], raw.grant_areas.len());
    assert_eq!(
        ids_of(&with_parents["grant_areas"]),
        raw.grant_areas.iter().map(id).collect::<BTreeSet<_>>()
    );
    let n_parent_flags = with_parents["grant_areas"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["is_parent"] == true)
        .count();
    assert_eq!(n_parent_flags, 23);
}

#[tokio::test]
async fn grant_area_detail_parent_and_subarea() {
    let fx = real();
    let raw = &fx.raw;
    let parent = raw.area("energieeffizienz-erneuerbare-energien");
    let d = fx
        .get_ok(&fx.full, &format!("/api/v1/grant_areas/{}", id(parent)))
        .await;
    assert_eq!(keys(&d), fields(&["grant_area"]));
    let a = &d["grant_area"];
    assert_eq!(a["is_parent"], true);
    assert_eq!(a["name"], parent["name_de"]);
    assert_eq!(a["name_en"], parent["name_en"]);
    assert!(a.get("parent").is_none(), "{a}");
    let subs = raw.subareas(&id(parent));
    assert!(!subs.is_empty());
    assert_eq!(
        ids_of(&a["subareas"]),
        subs.iter().map(|s| id(s)).collect::<BTreeSet<_>>()
    );

    let sub = subs[0];
    let d = fx
        .get_ok(&fx.full, &format!("/api/v1/grant_areas/{}", id(sub)))
        .await;
    let s = &d["grant_area"];
    assert_eq!(s["is_parent"], false);
    assert_eq!(s["name"], sub["name_de"]);
    assert_eq!(s["parent_id"], parent["id"]);
    assert_eq!(
        s["parent"],
        json!({
            "id": parent["id"],
            "name": parent["name_de"],
            "name_de": parent["name_de"],
            "name_en": parent["name_en"],
        })
    );
    assert!(s.get("subareas").is_none(), "{s}");

    let r = fx
        .get(
            &fx.full,
            &format!("/api/v1/grant_areas/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_error(&r, 404, "not_found");
}

// =================================================================================
// Eligible entities and target groups
// =================================================================================

#[tokio::test]
async fn eligible_entities_list_and_detail() {
    let fx = real();
    let raw = &fx.raw;
    let body = fx.get_ok(&fx.full, "/api/v1/eligible_entities").await;
    assert_eq!(keys(&body), fields(&["eligible_entities", "meta"]));
    assert_eq!(
        body["meta"],
        json!({ "total_count": raw.eligible_entities.len() })
    );
    let items = body["eligible_entities"].as_array().unwrap();
    assert_eq!(items.len(), raw.eligible_entities.len());
    let list_fields = fields(&[
        "id",
        "name",
        "name_de",
        "name_en",
        "description",
        "description_de",
        "description_en",
    ]);
    for e in items {
        assert_eq!(keys(e), list_fields, "{e}");
        let re = raw
            .eligible_entities
            .iter()
            .find(|x| x["id"] == e["id"])
            .unwrap();
        assert_eq!(e["name"], re["name_de"]);
        assert_eq!(e["name_en"], re["name_en"]);
        assert_eq!(e["description"], re["description_de"]);
        assert_eq!(e["description_en"], re["description_en"]);
    }
    assert!(items.iter().any(|e| e["name"] == "GmbH"));

    let gmbh = raw
        .eligible_entities
        .iter()
        .find(|e| e["code"] == "gmbh")
        .unwrap();
    let d = fx
        .get_ok(&fx.full, &format!("/api/v1/eligible_entities/{}", id(gmbh)))
        .await;
    assert_eq!(keys(&d), fields(&["eligible_entity"]));
    let e = &d["eligible_entity"];
    let mut detail_fields: Vec<&str> = vec![
        "id",
        "name",
        "name_de",
        "name_en",
        "description",
        "description_de",
        "description_en",
    ];
    detail_fields.extend([
        "name_plural",
        "name_plural_de",
        "name_plural_en",
        "grants_count",
    ]);
    assert_eq!(keys(e), fields(&detail_fields));
    assert_eq!(e["name_plural"], gmbh["name_plural_de"]);
    assert_eq!(e["name_plural_de"], "GmbHs");
    assert_eq!(e["name_plural_en"], gmbh["name_plural_en"]);
    let expected = raw
        .grant_ids(|g| strs(g, "eligible_entity_ids").contains(&id(gmbh)))
        .len();
    assert!(expected > 0);
    assert_eq!(e["grants_count"], expected);

    let r = fx
        .get(
            &fx.full,
            &format!("/api/v1/eligible_entities/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_error(&r, 404, "not_found");
}

#[tokio::test]
async fn target_groups_list_and_detail() {
    let fx = real();
    let raw = &fx.raw;
    let body = fx.get_ok(&fx.full, "/api/v1/target_groups").await;
    assert_eq!(keys(&body), fields(&["target_groups", "meta"]));
    assert_eq!(
        body["meta"],
        json!({ "total_count": raw.target_groups.len() })
    );
    let items = body["target_groups"].as_array().unwrap();
    assert_eq!(
        ids_of(&body["target_groups"]),
        raw.target_groups.iter().map(id).collect()
    );
    for t in items {
        assert_eq!(keys(t), fields(&["id", "name", "name_de", "name_en"]));
        let rt = raw
            .target_groups
            .iter()
            .find(|x| x["id"] == t["id"])
            .unwrap();
        assert_eq!(t["name"], rt["name_de"]);
        assert_eq!(t["name_en"], rt["name_en"]);
    }
    // Every target group's detail count matches the data.
    for rt in &raw.target_groups {
        let d = fx
            .get_ok(&fx.full, &format!("/api/v1/target_groups/{}", id(rt)))
            .await;
        assert_eq!(keys(&d), fields(&["target_group"]));
        let t = &d["target_group"];
        assert_eq!(
            keys(t),
            fields(&["id", "name", "name_de", "name_en", "grants_count"])
        );
        let expected = raw
            .grant_ids(|g| strs(g, "target_group_ids").contains(&id(rt)))
            .len();
        assert_eq!(t["grants_count"], expected, "{}", rt["slug"]);
    }
    let r = fx
        .get(
            &fx.full,
            &format!("/api/v1/target_groups/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_error(&r, 404, "not_found");
}

// =================================================================================
// Paging
// =================================================================================

#[tokio::test]
async fn paging_is_consistent() {
    let fx = real();
    // Last page and a page beyond the end (default per_page 25: 57 full pages + 9).
    let last = fx.get_ok(&fx.full, "/api/v1/grants?page=58").await;
    assert_eq!(last["grants"].as_array().unwrap().len(), 1434 - 57 * 25);
    assert_eq!(
        last["meta"],
        json!({ "current_page": 58, "per_page": 25, "total_pages": 58, "total_count": 1434 })
    );
    let beyond = fx.get_ok(&fx.full, "/api/v1/grants?page=59").await;
    assert_eq!(beyond["grants"], json!([]));
    assert_eq!(beyond["meta"]["total_count"], 1434);
    assert_eq!(beyond["meta"]["current_page"], 59);
    assert_eq!(beyond["meta"]["total_pages"], 58);
    let far = fx.get_ok(&fx.full, "/api/v1/grants?page=1000000").await;
    assert_eq!(far["grants"], json!([]));

    // per_page 100 is the maximum and allowed; 1 is the minimum.
    let max = fx.get_ok(&fx.full, "/api/v1/grants?per_page=100").await;
    assert_eq!(max["grants"].as_array().unwrap().len(), 100);
    assert_eq!(max["meta"]["total_pages"], 15);
    let one = fx.get_ok(&fx.full, "/api/v1/grants?per_page=1").await;
    assert_eq!(one["grants"].as_array().unwrap().len(), 1);
    assert_eq!(one["meta"]["total_pages"], 1434);

    // Pages are slices of one stable order.
    let p14 = fx.get_ok(&fx.full, "/api/v1/grants?per_page=14").await;
    let p7a = fx
        .get_ok(&fx.full, "/api/v1/grants?per_page=7&page=1")
        .await;
    let p7b = fx
        .get_ok(&fx.full, "/api/v1/grants?per_page=7&page=2")
        .await;
    let mut joined = p7a["grants"].as_array().unwrap().clone();
    joined.extend(p7b["grants"].as_array().unwrap().iter().cloned());
    assert_eq!(&joined, p14["grants"].as_array().unwrap());
    // Empty values count as absent (defaults).
    let d = fx.get_ok(&fx.full, "/api/v1/grants?page=&per_page=").await;
    assert_eq!(d["meta"]["per_page"], 25);
    assert_eq!(d["meta"]["current_page"], 1);

    // Walking all pages yields every grant exactly once (all_grants checks the meta
    // of every page).
    let ids = fx.grant_id_set(&fx.full, "").await;
    assert_eq!(ids, fx.raw.grant_ids(|_| true));
}

// =================================================================================
// Filters
// =================================================================================

#[tokio::test]
async fn region_filter_respects_hierarchy() {
    let fx = real();
    let raw = &fx.raw;
    let de = raw.region_id("germany");
    let by = raw.region_id("bayern");
    let sn = raw.region_id("sachsen");
    let germany = fx
        .grant_id_set(&fx.full, &format!("region_ids[]={de}"))
        .await;
    assert_eq!(germany, raw.in_region(&de));
    // A country's filter includes its states' grants.
    let bayern_only = grants_only_in(fx, "DE-BY");
    assert!(!bayern_only.is_empty());
    assert!(bayern_only.iter().all(|g| germany.contains(&id(g))));
    let national = grants_only_in(fx, "DE");
    assert!(germany.len() > national.len());

    let bayern = fx
        .grant_id_set(&fx.full, &format!("region_ids%5B%5D={by}"))
        .await;
    assert_eq!(bayern, raw.in_region(&by));
    assert_eq!(bayern.len(), bayern_only.len());
    // A state's filter does not include national programmes.
    assert!(national.iter().all(|g| !bayern.contains(&id(g))));

    // Several values combine with OR.
    let both = fx
        .grant_id_set(&fx.full, &format!("region_ids[]={by}&region_ids[]={sn}"))
        .await;
    let expected: BTreeSet<String> = raw
        .in_region(&by)
        .union(&raw.in_region(&sn))
        .cloned()
        .collect();
    assert_eq!(both, expected);
    // The continent includes everything below it.
    let europe = fx
        .grant_total(
            &fx.full,
            &format!("region_ids[]={}", raw.region_id("europe")),
        )
        .await;
    assert_eq!(europe, 1434);
    // A region without grants gives an empty list, not an error.
    let at = fx
        .get_ok(
            &fx.full,
            &format!("/api/v1/grants?region_ids[]={}", raw.region_id("austria")),
        )
        .await;
    assert_eq!(at["grants"], json!([]));
    assert_eq!(at["meta"]["total_count"], 0);
    assert_eq!(at["meta"]["total_pages"], 0);
}

#[tokio::test]
async fn area_filter_of_parent_includes_subareas() {
    let fx = real();
    let raw = &fx.raw;
    let parent = raw.area_id("forschung-innovation-themenspezifisch");
    let subs = raw.subareas(&parent);
    assert!(subs.len() > 1);
    let all = fx
        .grant_id_set(&fx.full, &format!("grant_area_ids[]={parent}"))
        .await;
    assert_eq!(all, raw.in_area(&parent));
    let mut union = BTreeSet::new();
    for s in &subs {
        let sub = fx
            .grant_id_set(&fx.full, &format!("grant_area_ids[]={}", id(s)))
            .await;
        assert_eq!(sub, raw.in_area(&id(s)));
        assert!(
            sub.is_subset(&all),
            "sub-area {} not within parent",
            s["slug"]
        );
        union.extend(sub);
    }
    assert!(!union.is_empty());
}

/// The real data tags every sub-area's parent too; the synthetic catalogue has grants
/// tagged only with a sub-area, which a parent filter must still find.
#[tokio::test]
async fn area_filter_finds_subarea_only_grants() {
    let fx = tiny();
    let raw = &fx.raw;
    let digital = raw.area_id("digitalisierung");
    let items = fx
        .all_grants(&fx.full, &format!("grant_area_ids[]={digital}"))
        .await;
    assert_eq!(
        slugs(&items),
        slug_set(&[
            "testprogramm-1",
            "testprogramm-3",
            "testprogramm-5",
            "testprogramm-6"
        ])
    );
    // testprogramm-5 and -6 carry only a sub-area.
    for s in ["testprogramm-5", "testprogramm-6"] {
        assert!(!strs(raw.grant(s), "grant_area_ids").contains(&digital));
    }
    let ki = fx
        .all_grants(
            &fx.full,
            &format!("grant_area_ids[]={}", raw.area_id("digitalisierung-ki")),
        )
        .await;
    assert_eq!(slugs(&ki), slug_set(&["testprogramm-1", "testprogramm-5"]));
    // Region hierarchy on the synthetic data: the EU grant is in Europe but not in DE.
    let de = fx
        .all_grants(
            &fx.full,
            &format!("region_ids[]={}", raw.region_id("germany")),
        )
        .await;
    assert_eq!(slugs(&de).len(), 10);
    assert!(!slugs(&de).contains("testprogramm-9"));
    assert!(!slugs(&de).contains("testprogramm-10"));
    let by = fx
        .all_grants(
            &fx.full,
            &format!("region_ids[]={}", raw.region_id("bayern")),
        )
        .await;
    assert_eq!(
        slugs(&by),
        slug_set(&["testprogramm-2", "testprogramm-3", "testprogramm-7"])
    );
}

#[tokio::test]
async fn filters_combine_with_and() {
    let fx = real();
    let raw = &fx.raw;
    let by = raw.region_id("bayern");
    let area = raw.area_id("unternehmensfinanzierung");
    let q = format!("region_ids[]={by}&grant_area_ids[]={area}&grant_type=loan");
    let items = fx.all_grants(&fx.full, &q).await;
    let expected: BTreeSet<String> = raw
        .in_region(&by)
        .intersection(&raw.in_area(&area))
        .filter(|g| raw.grant_by_id(g)["grant_type"] == "loan")
        .cloned()
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(set_of(&items), expected);
    for g in &items {
        assert_eq!(g["grant_type"], "loan");
        assert!(g["regions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == by));
    }
    let only_region = fx
        .grant_total(&fx.full, &format!("region_ids[]={by}"))
        .await;
    let only_area = fx
        .grant_total(&fx.full, &format!("grant_area_ids[]={area}"))
        .await;
    assert!((items.len() as u64) < only_region.min(only_area));
}

#[tokio::test]
async fn grant_type_filter() {
    let fx = real();
    let raw = &fx.raw;
    for t in ["subsidy", "loan", "guarantee", "equity"] {
        let items = fx.all_grants(&fx.full, &format!("grant_type={t}")).await;
        let expected = raw.grant_ids(|g| g["grant_type"] == t);
        assert!(!expected.is_empty(), "{t}");
        assert_eq!(set_of(&items), expected, "{t}");
        assert!(items.iter().all(|g| g["grant_type"] == t));
    }
}

#[tokio::test]
async fn grant_provider_filter() {
    let fx = real();
    let raw = &fx.raw;
    let p = raw.provider("bundesministerium-fuer-wirtschaft-und-energie-bmwe");
    let items = fx
        .all_grants(&fx.full, &format!("grant_provider_id={}", id(p)))
        .await;
    let expected = raw.grant_ids(|g| g["grant_provider_id"] == p["id"]);
    assert_eq!(set_of(&items), expected);
    assert!(items.iter().all(|g| g["grant_provider"]["id"] == p["id"]));
    // Combined with q.
    let digital = fx
        .all_grants(
            &fx.full,
            &format!("grant_provider_id={}&q=Digitalisierung", id(p)),
        )
        .await;
    assert!(!digital.is_empty());
    assert!(set_of(&digital).is_subset(&expected));
    // Unknown provider id: 400 naming the parameter.
    let r = fx
        .get(
            &fx.full,
            &format!("/api/v1/grants?grant_provider_id={}", uuid::Uuid::new_v4()),
        )
        .await;
    let m = assert_error(&r, 400, "bad_request");
    assert!(m.contains("grant_provider_id"), "{m}");
}

// =================================================================================
// German full-text search
// =================================================================================

#[tokio::test]
async fn search_digitalisierung_finds_digitale() {
    let fx = real();
    let raw = &fx.raw;
    let items = fx.all_grants(&fx.full, "q=Digitalisierung").await;
    assert!(items.len() >= 20, "{} results", items.len());
    let found = set_of(&items);
    // Every programme with "Digitalisierung" or the word "digitale" in its title is found.
    let titled = raw.grant_ids(|g| {
        let t = fold(g["title"].as_str().unwrap());
        t.contains("digitalisierung")
            || t.split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "digitale")
    });
    assert!(titled.len() >= 5);
    let missing: Vec<_> = titled.difference(&found).collect();
    assert!(missing.is_empty(), "not found: {missing:?}");
    let digitale = items.iter().find(|g| {
        fold(g["title"].as_str().unwrap())
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "digitale")
    });
    assert!(digitale.is_some(), "no title with `digitale`");
    // Ranked: the first result has the term (or its stem) in its title.
    let first = fold(items[0]["title"].as_str().unwrap());
    assert!(first.contains("digital"), "first: {first}");
    // Real programmes, not everything.
    assert!(items.len() < 1434 / 2);
}

#[tokio::test]
async fn search_is_ranked_by_relevance() {
    let fx = real();
    for (q, stem) in [
        ("Breitband", "breitband"),
        ("Wasserstoff", "wasserstoff"),
        ("Digitalisierung", "digital"),
        ("Existenzgründung", "existenzgr"),
    ] {
        let body = fx
            .get_ok(&fx.full, &format!("/api/v1/grants?q={}", enc(q)))
            .await;
        let items = body["grants"].as_array().unwrap();
        assert!(!items.is_empty(), "no results for {q}");
        let first = fold(items[0]["title"].as_str().unwrap());
        assert!(first.contains(stem), "q={q}: first result `{first}`");
        // Title hits come before body-only hits on the first page.
        let title_hit: Vec<bool> = items
            .iter()
            .map(|g| fold(g["title"].as_str().unwrap()).contains(stem))
            .collect();
        let n_title = fx
            .raw
            .grants
            .iter()
            .filter(|g| fold(g["title"].as_str().unwrap()).contains(stem))
            .count();
        assert!(n_title > 0, "{q}");
        if n_title >= 3 {
            assert!(title_hit[..3].iter().all(|h| *h), "q={q}: {title_hit:?}");
        }
    }
    // Without q, the order does not depend on relevance: the list is stable.
    let a = fx.get_ok(&fx.full, "/api/v1/grants").await;
    let b = fx.get_ok(&fx.full, "/api/v1/grants").await;
    assert_eq!(a, b);
}

#[tokio::test]
async fn search_folds_case_umlauts_and_sharp_s() {
    let fx = real();
    let reference = fx
        .all_grants(&fx.full, &format!("q={}", enc("förderung")))
        .await;
    assert!(!reference.is_empty());
    let ref_ids: Vec<String> = reference.iter().map(id).collect();
    for q in ["FÖRDERUNG", "Förderung", "Forderung", "FORDERUNG"] {
        let other = fx.all_grants(&fx.full, &format!("q={}", enc(q))).await;
        let ids: Vec<String> = other.iter().map(id).collect();
        assert_eq!(ids, ref_ids, "q={q} differs from q=förderung");
    }
    // ß folds to ss.
    let with_sz = fx
        .grant_id_set(&fx.full, &format!("q={}", enc("Maßnahmen")))
        .await;
    assert!(!with_sz.is_empty());
    for q in ["Massnahmen", "MASSNAHMEN", "maßnahme"] {
        let other = fx.grant_id_set(&fx.full, &format!("q={}", enc(q))).await;
        assert_eq!(other, with_sz, "q={q}");
    }
    // Upper-case umlauts in a search term.
    let a = fx
        .grant_id_set(&fx.full, &format!("q={}", enc("Gründung")))
        .await;
    let b = fx
        .grant_id_set(&fx.full, &format!("q={}", enc("GRÜNDUNGEN")))
        .await;
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

#[tokio::test]
async fn search_folds_umlaut_transliterations() {
    let fx = real();
    let a = fx
        .grant_id_set(&fx.full, &format!("q={}", enc("Förderung")))
        .await;
    let b = fx.grant_id_set(&fx.full, "q=Foerderung").await;
    assert_eq!(a, b);
}

#[tokio::test]
async fn search_edge_cases() {
    let fx = real();
    // No match: empty list, not an error.
    let none = fx.get_ok(&fx.full, "/api/v1/grants?q=xyzzyplughquux").await;
    assert_eq!(none["grants"], json!([]));
    assert_eq!(none["meta"]["total_count"], 0);
    // Only stop words / punctuation: no error, no crash.
    for q in [
        "und",
        "der die das",
        "!!!",
        "*",
        "\"",
        "AND OR",
        "title:foo",
        "a~2",
    ] {
        let r = fx
            .get(&fx.full, &format!("/api/v1/grants?q={}", enc(q)))
            .await;
        assert_eq!(r.status, StatusCode::OK, "q={q}: {}", r.text);
        assert!(r.json["grants"].is_array());
    }
    // All terms must match (AND): two terms are at most as many as one.
    let one = fx.grant_total(&fx.full, "q=Digitalisierung").await;
    let two = fx
        .grant_total(
            &fx.full,
            &format!("q={}", enc("Digitalisierung Landwirtschaft")),
        )
        .await;
    assert!(two > 0 && two < one, "{two} vs {one}");
    // q combined with a region filter.
    let by = fx.raw.region_id("bayern");
    let items = fx
        .all_grants(&fx.full, &format!("q=Digitalisierung&region_ids[]={by}"))
        .await;
    assert!(!items.is_empty());
    let all = fx.grant_id_set(&fx.full, "q=Digitalisierung").await;
    for g in &items {
        assert!(all.contains(&id(g)));
        assert_eq!(g["regions"][0]["id"], by);
    }
    // Overlong q: 400 naming q.
    let long = "a".repeat(600);
    let r = fx.get(&fx.full, &format!("/api/v1/grants?q={long}")).await;
    let m = assert_error(&r, 400, "bad_request");
    assert!(m.starts_with("q"), "{m}");
}

// =================================================================================
// Partner scope
// =================================================================================

#[tokio::test]
async fn bayern_scope_grants_list() {
    let fx = real();
    let raw = &fx.raw;
    let by = raw.region_id("bayern");
    let expected = raw.visible(std::slice::from_ref(&by), &[]);
    let items = fx.all_grants(&fx.bayern, "").await;
    assert_eq!(set_of(&items), expected);
    let full_total = fx.grant_total(&fx.full, "").await as usize;
    assert!(items.len() < full_total);
    let mut national = 0;
    let mut bavarian = 0;
    for g in &items {
        let codes = raw.region_codes(raw.grant_by_id(&id(g)));
        assert!(
            codes.iter().any(|c| c == "DE-BY" || c == "DE"),
            "{} is visible with regions {codes:?}",
            g["slug"]
        );
        national += codes.contains(&"DE".to_string()) as usize;
        bavarian += codes.contains(&"DE-BY".to_string()) as usize;
    }
    // National programmes are visible to a state-scoped partner.
    assert_eq!(national, grants_only_in(fx, "DE").len());
    assert_eq!(bavarian, grants_only_in(fx, "DE-BY").len());
    // Search and filters stay within the scope.
    let sachsen_ids: BTreeSet<String> = grants_only_in(fx, "DE-SN").iter().map(|g| id(g)).collect();
    let searched = fx.grant_id_set(&fx.bayern, "q=Digitalisierung").await;
    assert!(!searched.is_empty());
    assert!(searched.is_subset(&expected));
    assert!(searched.is_disjoint(&sachsen_ids));
    let full_search = fx.grant_id_set(&fx.full, "q=Digitalisierung").await;
    assert_eq!(
        searched,
        full_search
            .intersection(&expected)
            .cloned()
            .collect::<BTreeSet<_>>()
    );
    // A filter by the country (contains Bayern) is allowed and stays within scope.
    let de = fx
        .grant_id_set(
            &fx.bayern,
            &format!("region_ids[]={}", raw.region_id("germany")),
        )
        .await;
    assert_eq!(de, expected);
    let by_only = fx
        .grant_id_set(&fx.bayern, &format!("region_ids[]={by}"))
        .await;
    assert_eq!(by_only, raw.in_region(&by));
    // A provider filter for a Saxon ministry: nothing visible.
    let smwa =
        raw.provider("saechsisches-staatsministerium-fuer-wirtschaft-arbeit-und-verkehr-smwa");
    let none = fx
        .get_ok(
            &fx.bayern,
            &format!("/api/v1/grants?grant_provider_id={}", id(smwa)),
        )
        .await;
    assert_eq!(none["grants"], json!([]));
    assert_eq!(none["meta"]["total_count"], 0);
}

#[tokio::test]
async fn bayern_scope_grant_details() {
    let fx = real();
    let sachsen = grants_only_in(fx, "DE-SN");
    assert!(sachsen.len() > 100);
    for g in sachsen.iter().take(20) {
        for path in [id(g), g["slug"].as_str().unwrap().to_string()] {
            let r = fx.get(&fx.bayern, &format!("/api/v1/grants/{path}")).await;
            assert_error(&r, 404, "not_found");
            // The same grant exists for the unrestricted partner.
            fx.get_ok(&fx.full, &format!("/api/v1/grants/{path}")).await;
        }
    }
    // The 404 of an out-of-scope grant is indistinguishable from an unknown one.
    let out = fx
        .get(&fx.bayern, &format!("/api/v1/grants/{}", id(sachsen[0])))
        .await;
    let unknown = fx
        .get(
            &fx.bayern,
            &format!("/api/v1/grants/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_eq!(out.status, unknown.status);
    assert_eq!(keys(&out.json["error"]), keys(&unknown.json["error"]));
    assert!(!out.text.contains(sachsen[0]["title"].as_str().unwrap()));

    let bavarian = grants_only_in(fx, "DE-BY")[0];
    let d = fx
        .get_ok(&fx.bayern, &format!("/api/v1/grants/{}", id(bavarian)))
        .await;
    assert_eq!(d["grant"]["title"], bavarian["title"]);
    let national = grants_only_in(fx, "DE")[0];
    let d = fx
        .get_ok(
            &fx.bayern,
            &format!("/api/v1/grants/{}", national["slug"].as_str().unwrap()),
        )
        .await;
    assert_eq!(d["grant"]["title"], national["title"]);
}

#[tokio::test]
async fn bayern_scope_out_of_scope_filter_is_403() {
    let fx = real();
    let sn = fx.raw.region_id("sachsen");
    for q in [
        format!("region_ids[]={sn}"),
        format!("region_ids%5B%5D={sn}"),
        format!(
            "region_ids[]={}&region_ids[]={sn}",
            fx.raw.region_id("bayern")
        ),
        format!("region_ids[]={}", fx.raw.region_id("austria")),
    ] {
        let r = fx.get(&fx.bayern, &format!("/api/v1/grants?{q}")).await;
        let m = assert_error(&r, 403, "out_of_scope");
        assert!(m.contains("region_ids"), "{m}");
    }
    // The unrestricted partner may filter by Sachsen.
    let n = fx
        .grant_total(&fx.full, &format!("region_ids[]={sn}"))
        .await;
    assert_eq!(n as usize, fx.raw.in_region(&sn).len());
}

#[tokio::test]
async fn bayern_scope_counts_everywhere() {
    let fx = real();
    let raw = &fx.raw;
    let by = raw.region_id("bayern");
    let visible = raw.visible(std::slice::from_ref(&by), &[]);

    // meta.total_count
    let full_total = fx.grant_total(&fx.full, "").await;
    let by_total = fx.grant_total(&fx.bayern, "").await;
    assert_eq!(by_total as usize, visible.len());
    assert!(by_total < full_total);

    // Providers: list and detail counts are taken within the scope.
    let list = fx
        .get_ok(&fx.bayern, "/api/v1/grant_providers?per_page=100")
        .await;
    let list2 = fx
        .get_ok(&fx.bayern, "/api/v1/grant_providers?per_page=100&page=2")
        .await;
    let mut providers = list["grant_providers"].as_array().unwrap().clone();
    providers.extend(list2["grant_providers"].as_array().unwrap().iter().cloned());
    let mut sum = 0;
    for p in &providers {
        let expected = visible
            .iter()
            .filter(|g| raw.grant_by_id(g)["grant_provider_id"] == p["id"])
            .count();
        assert_eq!(p["grants_count"], expected, "{}", p["slug"]);
        sum += expected;
    }
    let visible_with_provider = visible
        .iter()
        .filter(|g| raw.grant_by_id(g).get("grant_provider_id").is_some())
        .count();
    assert_eq!(sum, visible_with_provider);
    let smwa = "saechsisches-staatsministerium-fuer-wirtschaft-arbeit-und-verkehr-smwa";
    let full_d = fx
        .get_ok(&fx.full, &format!("/api/v1/grant_providers/{smwa}"))
        .await;
    let by_d = fx
        .get_ok(&fx.bayern, &format!("/api/v1/grant_providers/{smwa}"))
        .await;
    assert!(full_d["grant_provider"]["grants_count"].as_u64().unwrap() > 0);
    assert_eq!(by_d["grant_provider"]["grants_count"], 0);
    let bmwe = "bundesministerium-fuer-wirtschaft-und-energie-bmwe";
    let full_d = fx
        .get_ok(&fx.full, &format!("/api/v1/grant_providers/{bmwe}"))
        .await;
    let by_d = fx
        .get_ok(&fx.bayern, &format!("/api/v1/grant_providers/{bmwe}"))
        .await;
    // Federal programmes stay visible.
    assert_eq!(
        by_d["grant_provider"]["grants_count"],
        full_d["grant_provider"]["grants_count"]
    );

    // Eligible entities and target groups: grants_count within the scope.
    let mut smaller = 0;
    for e in &raw.eligible_entities {
        let path = format!("/api/v1/eligible_entities/{}", id(e));
        let f = fx.get_ok(&fx.full, &path).await["eligible_entity"]["grants_count"]
            .as_u64()
            .unwrap();
        let b = fx.get_ok(&fx.bayern, &path).await["eligible_entity"]["grants_count"]
            .as_u64()
            .unwrap();
        let expected = visible
            .iter()
            .filter(|g| strs(raw.grant_by_id(g), "eligible_entity_ids").contains(&id(e)))
            .count() as u64;
        assert_eq!(b, expected, "{}", e["slug"]);
        assert!(b <= f);
        smaller += (b < f) as usize;
    }
    assert!(smaller > 0);
    let mut smaller = 0;
    for t in &raw.target_groups {
        let path = format!("/api/v1/target_groups/{}", id(t));
        let f = fx.get_ok(&fx.full, &path).await["target_group"]["grants_count"]
            .as_u64()
            .unwrap();
        let b = fx.get_ok(&fx.bayern, &path).await["target_group"]["grants_count"]
            .as_u64()
            .unwrap();
        let expected = visible
            .iter()
            .filter(|g| strs(raw.grant_by_id(g), "target_group_ids").contains(&id(t)))
            .count() as u64;
        assert_eq!(b, expected, "{}", t["slug"]);
        smaller += (b < f) as usize;
    }
    assert!(smaller > 0);

    // Grant areas: filterable_count within the scope.
    let flat = fx
        .get_ok(
            &fx.bayern,
            "/api/v1/grant_areas?flat=true&include_parent=true",
        )
        .await;
    let expected = raw
        .grant_areas
        .iter()
        .filter(|a| !raw.in_area(&id(a)).is_disjoint(&visible))
        .count();
    assert_eq!(flat["meta"]["filterable_count"], expected);
    let full_flat = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_areas?flat=true&include_parent=true",
        )
        .await;
    assert!(
        flat["meta"]["filterable_count"].as_u64() <= full_flat["meta"]["filterable_count"].as_u64()
    );
}

/// Reference vocabularies are the same for every partner (only counts differ).
#[tokio::test]
async fn bayern_scope_reference_lists() {
    let fx = real();
    for path in [
        "/api/v1/regions",
        "/api/v1/regions?flat=true",
        "/api/v1/grant_areas",
        "/api/v1/eligible_entities",
        "/api/v1/target_groups",
    ] {
        let a = fx.get_ok(&fx.full, path).await;
        let b = fx.get_ok(&fx.bayern, path).await;
        assert_eq!(a, b, "{path}");
    }
    let path = format!("/api/v1/regions/{}", fx.raw.region_id("sachsen"));
    assert_eq!(
        fx.get_ok(&fx.full, &path).await,
        fx.get_ok(&fx.bayern, &path).await
    );
}

#[tokio::test]
async fn area_scope_isolation() {
    let fx = real();
    let raw = &fx.raw;
    let scope_area = raw.area_id(fx.area_slug);
    let visible = raw.visible(&[], std::slice::from_ref(&scope_area));
    assert!(!visible.is_empty() && visible.len() < raw.grants.len());
    let items = fx.all_grants(&fx.area, "").await;
    assert_eq!(set_of(&items), visible);
    for g in &items {
        assert!(
            g["grant_areas"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| raw.area_within(&id(a), &scope_area)),
            "{} outside the area scope",
            g["slug"]
        );
    }
    // A grant outside the area scope: 404.
    let outside = raw
        .grants
        .iter()
        .find(|g| !visible.contains(&id(g)))
        .unwrap();
    let r = fx
        .get(&fx.area, &format!("/api/v1/grants/{}", id(outside)))
        .await;
    assert_error(&r, 404, "not_found");
    // A filter by another parent area: 403 out_of_scope naming the parameter.
    let other = raw.area_id("digitalisierung");
    let r = fx
        .get(
            &fx.area,
            &format!("/api/v1/grants?grant_area_ids[]={other}"),
        )
        .await;
    let m = assert_error(&r, 403, "out_of_scope");
    assert!(m.contains("grant_area_ids"), "{m}");
    // A filter by a sub-area of the assigned area is fine.
    let sub = raw.subareas(&scope_area)[0];
    let got = fx
        .grant_id_set(&fx.area, &format!("grant_area_ids[]={}", id(sub)))
        .await;
    assert_eq!(got, raw.in_area(&id(sub)));
    // Counts within the area scope.
    let total = fx.grant_total(&fx.area, "").await;
    assert_eq!(total as usize, visible.len());
    let flat = fx.get_ok(&fx.area, "/api/v1/grant_areas?flat=true").await;
    let full_flat = fx.get_ok(&fx.full, "/api/v1/grant_areas?flat=true").await;
    assert!(
        flat["meta"]["filterable_count"].as_u64().unwrap()
            < full_flat["meta"]["filterable_count"].as_u64().unwrap()
    );
    let bmwe = "bundesministerium-fuer-wirtschaft-und-energie-bmwe";
    let d = fx
        .get_ok(&fx.area, &format!("/api/v1/grant_providers/{bmwe}"))
        .await;
    let expected = visible
        .iter()
        .filter(|g| raw.grant_by_id(g)["grant_provider_id"] == raw.provider(bmwe)["id"])
        .count();
    assert_eq!(d["grant_provider"]["grants_count"], expected);
}

/// Scope semantics on the synthetic data: a Bayern partner sees EU-wide, national and
/// Bavarian grants (also multi-region ones), nothing else.
#[tokio::test]
async fn scope_on_synthetic_catalogue() {
    let fx = tiny();
    let raw = &fx.raw;
    let items = fx.all_grants(&fx.bayern, "").await;
    let expected = slug_set(&[
        "testprogramm-1",
        "testprogramm-2",
        "testprogramm-3",
        "testprogramm-6",
        "testprogramm-7",
        "testprogramm-8",
        "testprogramm-10",
        "testprogramm-11",
    ]);
    assert_eq!(slugs(&items), expected);
    assert_eq!(set_of(&items), raw.visible(&[raw.region_id("bayern")], &[]));
    for s in [
        "testprogramm-4",
        "testprogramm-5",
        "testprogramm-9",
        "testprogramm-12",
    ] {
        let r = fx.get(&fx.bayern, &format!("/api/v1/grants/{s}")).await;
        assert_error(&r, 404, "not_found");
    }
    fx.get_ok(&fx.bayern, "/api/v1/grants/testprogramm-10")
        .await;
    // Berlin filter is outside a Bayern scope.
    let r = fx
        .get(
            &fx.bayern,
            &format!("/api/v1/grants?region_ids[]={}", raw.region_id("berlin")),
        )
        .await;
    assert_error(&r, 403, "out_of_scope");
    // Europe contains Bayern: allowed.
    let eu = fx
        .all_grants(
            &fx.bayern,
            &format!("region_ids[]={}", raw.region_id("europe")),
        )
        .await;
    assert_eq!(slugs(&eu), expected);

    // Sub-area scope (digitalisierung-ki): the sub-area, its parent, not its sibling.
    let items = fx.all_grants(&fx.area, "").await;
    assert_eq!(
        slugs(&items),
        slug_set(&["testprogramm-1", "testprogramm-3", "testprogramm-5"])
    );
    let digital = fx
        .all_grants(
            &fx.area,
            &format!("grant_area_ids[]={}", raw.area_id("digitalisierung")),
        )
        .await;
    assert_eq!(slugs(&digital), slugs(&items));
    let r = fx
        .get(
            &fx.area,
            &format!(
                "/api/v1/grants?grant_area_ids[]={}",
                raw.area_id("digitalisierung-breitband")
            ),
        )
        .await;
    assert_error(&r, 403, "out_of_scope");
    let r = fx.get(&fx.area, "/api/v1/grants/testprogramm-6").await;
    assert_error(&r, 404, "not_found");
    // Provider counts in the area scope.
    let p = fx
        .get_ok(
            &fx.area,
            "/api/v1/grant_providers/testministerium-des-bundes-fuer-digitales",
        )
        .await;
    let full = fx
        .get_ok(
            &fx.full,
            "/api/v1/grant_providers/testministerium-des-bundes-fuer-digitales",
        )
        .await;
    assert!(
        p["grant_provider"]["grants_count"].as_u64().unwrap()
            < full["grant_provider"]["grants_count"].as_u64().unwrap()
    );
}

// =================================================================================
// Authentication and authorisation
// =================================================================================

#[tokio::test]
async fn missing_or_malformed_authorization_is_401_everywhere() {
    let fx = real();
    for path in endpoints(fx) {
        for auth in [
            None,
            Some("".to_string()),
            Some("Bearer".to_string()),
            Some("Bearer ".to_string()),
            Some(format!("Basic {}", fx.full)),
            Some(format!("Token {}", fx.full)),
            Some(fx.full.clone()),
            Some(
                "Bearer gm_0000000000000000000000000000000000000000000000000000000000000000"
                    .to_string(),
            ),
            Some("Bearer not-a-token".to_string()),
            Some(format!("Bearer {}x", fx.full)),
        ] {
            let r = fx.send("GET", &path, auth.as_deref()).await;
            assert_error(&r, 401, "unauthorized");
        }
    }
    // The scheme is case-insensitive.
    let r = fx
        .send(
            "GET",
            "/api/v1/grants",
            Some(&format!("bearer {}", fx.full)),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    // Authentication comes before lookups: an unknown grant without a token is 401.
    let r = fx
        .send(
            "GET",
            &format!("/api/v1/grants/{}", uuid::Uuid::new_v4()),
            None,
        )
        .await;
    assert_error(&r, 401, "unauthorized");
}

#[tokio::test]
async fn revoked_token_is_401() {
    let fx = real();
    let (row, token) = crate::common::off_runtime(|| {
        fx.db
            .create_token(fx.unrestricted_partner, &["grants:read".to_string()])
    })
    .unwrap();
    for path in endpoints(fx) {
        fx.get_ok(&token, &path).await;
    }
    assert!(crate::common::off_runtime(|| fx.db.revoke_token(row.id)).unwrap());
    for path in endpoints(fx) {
        let r = fx.get(&token, &path).await;
        let m = assert_error(&r, 401, "unauthorized");
        assert!(!m.contains(&token), "the message echoes the token: {m}");
    }
    // Other tokens of the partner keep working.
    fx.get_ok(&fx.full, "/api/v1/grants").await;
}

#[tokio::test]
async fn token_without_grants_read_is_403_everywhere() {
    let fx = real();
    for path in endpoints(fx) {
        let r = fx.get(&fx.no_read, &path).await;
        let m = assert_error(&r, 403, "insufficient_scope");
        assert!(m.contains("grants:read"), "{m}");
    }
}

// =================================================================================
// 404, 405 and 400
// =================================================================================

#[tokio::test]
async fn unknown_resources_and_paths_are_404() {
    let fx = real();
    for path in [
        format!("/api/v1/grants/{}", uuid::Uuid::new_v4()),
        "/api/v1/grants/no-such-programme".to_string(),
        "/api/v1/grants/%C3%84%C3%96%C3%9C".to_string(),
        format!("/api/v1/grants/{}", "x".repeat(300)),
        "/api/v1/grant_providers/no-such-provider".to_string(),
        "/api/v1/regions/atlantis".to_string(),
        "/api/v1/grant_areas/no-such-area".to_string(),
        "/api/v1/eligible_entities/no-such-entity".to_string(),
        "/api/v1/target_groups/no-such-group".to_string(),
        "/api/v1/nope".to_string(),
        "/api/v1/grants/a/b".to_string(),
        "/api/v2/grants".to_string(),
        "/nope".to_string(),
        "/".to_string(),
    ] {
        let r = fx.get(&fx.full, &path).await;
        assert_error(&r, 404, "not_found");
    }
    // Unknown paths are 404 without a token too.
    let r = fx.send("GET", "/api/v1/nope", None).await;
    assert_error(&r, 404, "not_found");
}

#[tokio::test]
async fn malformed_path_segments_get_a_json_error() {
    let fx = real();
    // Percent-encoded bytes that are not UTF-8.
    for path in [
        "/api/v1/grants/%FF%FE",
        "/api/v1/grant_providers/%C3%28",
        "/api/v1/regions/%80",
    ] {
        let r = fx.get(&fx.full, path).await;
        assert!(
            r.status.is_client_error(),
            "{path}: {} {}",
            r.status,
            r.text
        );
        let code = r.json["error"]["code"].as_str().unwrap_or("").to_string();
        assert!(
            !code.is_empty(),
            "{path}: body is not the error JSON: {}",
            r.text
        );
        assert_error(&r, r.status.as_u16(), &code);
    }
}

#[tokio::test]
async fn other_methods_are_405_with_error_body() {
    let fx = real();
    let auth = format!("Bearer {}", fx.full);
    for (method, path) in [
        ("POST", "/api/v1/grants"),
        ("DELETE", "/api/v1/grants/abc"),
        ("PUT", "/api/v1/regions"),
    ] {
        let r = fx.send(method, path, Some(&auth)).await;
        assert_error(&r, 405, "method_not_allowed");
    }
}

#[tokio::test]
async fn invalid_parameters_are_400_naming_the_parameter() {
    let fx = real();
    let by = fx.raw.region_id("bayern");
    let cases: Vec<(String, &str)> = vec![
        (
            "/api/v1/grants?region_ids[]=not-a-uuid".into(),
            "region_ids",
        ),
        ("/api/v1/grants?region_ids%5B%5D=123".into(), "region_ids"),
        (
            format!("/api/v1/grants?region_ids[]={by},nope"),
            "region_ids",
        ),
        (
            format!("/api/v1/grants?region_ids[]={}", uuid::Uuid::new_v4()),
            "region_ids",
        ),
        (
            "/api/v1/grants?grant_area_ids[]=xyz".into(),
            "grant_area_ids",
        ),
        (
            format!("/api/v1/grants?grant_area_ids[]={by}"),
            "grant_area_ids",
        ),
        (
            "/api/v1/grants?grant_provider_id=bmwe".into(),
            "grant_provider_id",
        ),
        ("/api/v1/grants?page=0".into(), "page"),
        ("/api/v1/grants?page=-1".into(), "page"),
        ("/api/v1/grants?page=abc".into(), "page"),
        ("/api/v1/grants?page=1.5".into(), "page"),
        ("/api/v1/grants?page=99999999999999999999999".into(), "page"),
        ("/api/v1/grants?page=1&page=2".into(), "page"),
        ("/api/v1/grants?per_page=1000".into(), "per_page"),
        ("/api/v1/grants?per_page=101".into(), "per_page"),
        ("/api/v1/grants?per_page=0".into(), "per_page"),
        ("/api/v1/grants?per_page=ten".into(), "per_page"),
        ("/api/v1/grants?grant_type=donation".into(), "grant_type"),
        ("/api/v1/grants?grant_type=Subsidy".into(), "grant_type"),
        (
            "/api/v1/grants?grant_type=loan&grant_type=subsidy".into(),
            "grant_type",
        ),
        ("/api/v1/grants?q=a&q=b".into(), "q"),
        ("/api/v1/grant_providers?page=0".into(), "page"),
        ("/api/v1/grant_providers?per_page=1000".into(), "per_page"),
        (
            "/api/v1/grant_providers?grant_provider_type=nope".into(),
            "grant_provider_type",
        ),
        ("/api/v1/regions?flat=maybe".into(), "flat"),
        ("/api/v1/regions?flat=true&flat=false".into(), "flat"),
        ("/api/v1/regions?type=planet".into(), "type"),
        ("/api/v1/regions?country_id=germany".into(), "country_id"),
        (format!("/api/v1/regions?country_id={by}"), "country_id"),
        ("/api/v1/grant_areas?flat=maybe".into(), "flat"),
        (
            "/api/v1/grant_areas?flat=true&include_parent=maybe".into(),
            "include_parent",
        ),
    ];
    for (path, param) in cases {
        let r = fx.get(&fx.full, &path).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.text);
        let m = assert_error(&r, 400, "bad_request");
        assert!(
            m.contains(param),
            "{path}: message `{m}` does not name `{param}`"
        );
    }
}

/// Odd but well-formed requests never produce a 5xx.
#[tokio::test]
async fn odd_requests_never_5xx() {
    let fx = real();
    for path in [
        "/api/v1/grants?%",
        "/api/v1/grants?=&&=",
        "/api/v1/grants?region_ids[]=",
        "/api/v1/grants?region_ids[]=,,,",
        "/api/v1/grants?q=%00",
        "/api/v1/grants?q=%E2%80%8B",
        "/api/v1/grants?q=%F0%9F%92%B6",
        "/api/v1/grants?q=%FF",
        "/api/v1/grants?unknown=1",
        "/api/v1/grants?page=%20",
        "/api/v1/grants?q=%5B%5D%7B%7D%28%29%3A%5E",
        "/api/v1/grant_providers?q=%25%25",
        "/api/v1/grant_providers?q=-",
        "/api/v1/regions?country_id=",
        "/api/v1/grant_areas?flat=1&include_parent=0",
    ] {
        let r = fx.get(&fx.full, path).await;
        assert!(
            r.status.is_success() || r.status.is_client_error(),
            "{path}: {} {}",
            r.status,
            r.text
        );
        assert!(r.json.is_object(), "{path}: {}", r.text);
        if !r.status.is_success() {
            let code = r.json["error"]["code"].as_str().unwrap_or("").to_string();
            assert_error(&r, r.status.as_u16(), &code);
        }
    }
}

#[tokio::test]
async fn health_needs_no_token() {
    let fx = real();
    let r = fx.send("GET", "/health", None).await;
    assert_eq!(r.status, StatusCode::OK);
    // No model and no embeddings in this fixture: the service answers, but degraded.
    assert_eq!(r.json["status"], "ok", "{}", r.text);
    assert_eq!(r.json["state"], "degraded", "{}", r.text);
    assert_eq!(r.json["catalogue"]["embeddings"], false);
    let r = fx.send("GET", "/health/ready", None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text);
}
