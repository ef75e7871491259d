//! The dashboard's usage, matching history, programme, qualification and categories
//! pages over HTTP (no browser): figures against what the API and the store hold,
//! CSV download, links, partner isolation, CSRF and bad input. The sign-in helpers are
//! those of `dashboard.rs`.

use axum::http::StatusCode;
use chrono::Duration;
use grantmatch_server::db::NewPartner;
use grantmatch_server::matching_store::{MatchingRecord, MatchingStatus};
use grantmatch_server::qualification;
use grantmatch_server::views::MatchResult;
use uuid::Uuid;

use crate::common::send_with;
use crate::dashboard::{
    cookie_value, csrf_field, get, post, sign_in, state, user, user_of, PASSWORD,
};

/// The number in the figure row `name` of the usage page.
fn figure(html: &str, name: &str) -> i64 {
    let at = html
        .find(&format!(r#"data-figure="{name}""#))
        .unwrap_or_else(|| panic!("no figure {name}: {html}"));
    let td = html[at..].find("<td>").unwrap() + at + 4;
    html[td..].split('<').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn dashboard_usage_page_shows_the_stats_figures_and_csv() {
    let s = state(0.25);
    let (p, session) = user(&s, "A", "a@example.org").await;
    let (_, token) =
        crate::common::off_runtime(|| s.store.db().create_token(p, &["grants:read".into()]))
            .unwrap();
    let bearer = format!("Bearer {token}");
    for uri in [
        "/api/v1/grants",
        "/api/v1/grants?q=Klima",
        "/api/v1/grants/no-such-programme",
    ] {
        send_with(&s, "GET", uri, &[("authorization", &bearer)], vec![]).await;
    }
    // Another partner's traffic is not counted.
    let (b, other) = user(&s, "B", "b@example.org").await;
    let (_, b_token) =
        crate::common::off_runtime(|| s.store.db().create_token(b, &["grants:read".into()]))
            .unwrap();
    send_with(
        &s,
        "GET",
        "/api/v1/grants",
        &[("authorization", &format!("Bearer {b_token}"))],
        vec![],
    )
    .await;

    for period in ["day", "week", "month", "quarter", "year"] {
        let r = get(&s, &format!("/dashboard/usage?period={period}"), &session).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(figure(&r.text, "total_requests"), 3, "{period}");
        assert_eq!(figure(&r.text, "successful_requests"), 2);
        assert_eq!(figure(&r.text, "failed_requests"), 1);
        assert_eq!(figure(&r.text, "grants_requests"), 3);
        assert_eq!(figure(&r.text, "matching_requests"), 0);
        assert!(
            r.text
                .contains("<code>GET /api/v1/grants</code></td><td>2</td>"),
            "{}",
            r.text
        );
        assert!(r
            .text
            .contains("<code>GET /api/v1/grants/{id}</code></td><td>1</td>"));
        assert!(r.text.contains("<td>2026-11-20</td><td>3</td><td>0</td>"));
    }
    // The default period is the quarter; the page is the same as ?period=quarter.
    let r = get(&s, "/dashboard/usage", &session).await;
    assert!(
        r.text.contains("<strong>This quarter</strong>"),
        "{}",
        r.text
    );
    let r = get(&s, "/dashboard/usage?lang=de", &session).await;
    assert!(r.text.contains("<h1>Nutzung</h1>") && r.text.contains("Nach Endpunkt"));
    // Next year (signed in anew: sessions last 12 h), nothing is counted for the year.
    s.clock.set(s.clock.now() + Duration::days(60));
    let r = sign_in(&s, "a@example.org", PASSWORD).await;
    let next_year = format!("gm_session={}", cookie_value(&r, "gm_session"));
    let r = get(&s, "/dashboard/usage?period=year", &next_year).await;
    assert_eq!(figure(&r.text, "total_requests"), 0);
    assert!(
        r.text.contains(r#"<td colspan="2">No requests.</td>"#),
        "{}",
        r.text
    );
    assert!(r.text.contains(r#"<td colspan="3">No requests.</td>"#));
    s.clock.set(s.clock.now() - Duration::days(60));
    // A bad period: 400 naming the parameter and the allowed values.
    let r = get(&s, "/dashboard/usage?period=decade", &session).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.text
            .contains("period: `decade` is not one of day, week, month, quarter, year"),
        "{}",
        r.text
    );

    let csv = get(&s, "/dashboard/usage.csv?period=month", &session).await;
    assert_eq!(csv.status, StatusCode::OK);
    assert_eq!(csv.headers["content-type"], "text/csv; charset=utf-8");
    assert_eq!(
        csv.headers["content-disposition"],
        "attachment; filename=\"grantmatch-usage-month.csv\""
    );
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(lines[0], "period,section,name,value");
    for row in [
        "month,total,total_requests,3",
        "month,total,failed_requests,1",
        "month,endpoint,GET /api/v1/grants,2",
        "month,endpoint,GET /api/v1/grants/{id},1",
        "month,day_requests,2026-11-20,3",
        "month,day_matching_requests,2026-11-20,0",
    ] {
        assert!(lines.contains(&row), "{row} missing: {}", csv.text);
    }
    let r = get(&s, "/dashboard/usage.csv?period=x", &session).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // B sees its own single request.
    let r = get(&s, "/dashboard/usage?period=day", &other).await;
    assert_eq!(figure(&r.text, "total_requests"), 1);
    // Signed out: the sign-in page.
    let r = get(&s, "/dashboard/usage.csv", "").await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
}

fn matching(
    p: Uuid,
    org: &str,
    status: MatchingStatus,
    results: Option<Vec<MatchResult>>,
) -> MatchingRecord {
    let at = chrono::Utc::now();
    MatchingRecord {
        id: Uuid::new_v4(),
        partner_id: p,
        token_id: Uuid::new_v4(),
        organization_id: org.into(),
        request: serde_json::json!({}),
        status,
        results_count: results.as_ref().map(|r| r.len() as i64),
        results,
        error: None,
        created_at: at,
        completed_at: None,
    }
}

#[tokio::test]
async fn dashboard_matching_history_lists_requests_and_links_the_grants() {
    let s = state(0.25);
    let (p, session) = user(&s, "A", "a@example.org").await;
    let r = get(&s, "/dashboard/matching", &session).await;
    assert!(r.text.contains("No matching requests yet"), "{}", r.text);
    let engine = s.engine();
    let cat = &engine.catalogue;
    let results: Vec<MatchResult> = cat.grants[..5]
        .iter()
        .enumerate()
        .map(|(i, g)| {
            serde_json::from_value(serde_json::json!({
                "id": Uuid::new_v4(), "rank": i + 1, "grant_id": g.id, "title": g.title,
                "relevance_score": 90 - i, "match_category": "very_suitable", "match_reason": "-",
            }))
            .expect("a match result")
        })
        .collect();
    let completed = matching(p, "org-<1>", MatchingStatus::Completed, Some(results));
    crate::common::off_runtime(|| s.store.db().insert_matching(&completed)).unwrap();
    crate::common::off_runtime(|| {
        s.store
            .db()
            .insert_matching(&matching(p, "org-2", MatchingStatus::Pending, None))
    })
    .unwrap();
    let mut failed = matching(p, "org-3", MatchingStatus::Failed, None);
    failed.error = Some("the model is <unavailable>".into());
    crate::common::off_runtime(|| s.store.db().insert_matching(&failed)).unwrap();
    let r = get(&s, "/dashboard/matching", &session).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains("<code>org-&lt;1&gt;</code>"), "{}", r.text);
    assert!(r.text.contains("<td>completed</td>") && r.text.contains("<td>pending</td>"));
    assert!(
        r.text
            .contains("<td>failed: the model is &lt;unavailable&gt;</td>"),
        "{}",
        r.text
    );
    // The top three results link to their programme, in rank order; not the fourth.
    let mut at = 0;
    for g in &cat.grants[..3] {
        let link = format!(r#"<a href="/dashboard/grants/{}">"#, g.id);
        let found = r.text[at..].find(&link).expect("a link per top result") + at;
        assert!(r.text[found..].starts_with(&format!("{link}{}", g.title)));
        at = found;
    }
    assert!(!r.text.contains(&cat.grants[3].id.to_string()));
    let r = get(&s, "/dashboard/matching?lang=de", &session).await;
    assert!(r.text.contains("Matching-Verlauf") && r.text.contains("abgeschlossen"));

    // The programme page shows the grant as the API has it.
    let g = &cat.grants[0];
    let page = get(&s, &format!("/dashboard/grants/{}", g.id), &session).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(
        page.text.contains(&format!("<h1>{}</h1>", g.title)),
        "{}",
        page.text
    );
    assert!(page.text.contains("not assessed"));
    let r = get(&s, "/dashboard/grants/no-such-programme", &session).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // Another partner sees none of it.
    let (_, other) = user(&s, "B", "b@example.org").await;
    let r = get(&s, "/dashboard/matching", &other).await;
    assert!(!r.text.contains("org-2") && r.text.contains("No matching requests yet"));
}

#[tokio::test]
async fn dashboard_grant_page_keeps_to_the_partners_scope() {
    let s = state(0.25);
    let bayern = s
        .engine()
        .catalogue
        .regions
        .iter()
        .find(|r| r.slug == "bayern")
        .unwrap()
        .id;
    let p = crate::common::off_runtime(|| {
        s.store.db().create_partner(&NewPartner {
            name: "Bayern".into(),
            tier: "starter".into(),
            region_ids: vec![bayern],
            ..Default::default()
        })
    })
    .unwrap()
    .id;
    let session = user_of(&s, p, "by@example.org").await;
    // testprogramm-4 is Saxon only, testprogramm-3 Bavarian (see the scope tests).
    let r = get(&s, "/dashboard/grants/testprogramm-4", &session).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = get(&s, "/dashboard/grants/testprogramm-3", &session).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains("Bayerischer Innovationskredit"));
}

#[tokio::test]
async fn dashboard_qualification_prompt_reading_progress_and_categories() {
    let s = state(0.25);
    let (p, session) = user(&s, "A", "a@example.org").await;
    let page = get(&s, "/dashboard/qualification", &session).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("No prompt set"), "{}", page.text);
    assert!(page.text.contains("Programmes in your scope: 12"));
    let csrf = csrf_field(&page.text);

    // Without the CSRF token nothing is stored.
    let r = post(&s, "/dashboard/qualification", &session, "prompt=Vereine").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        crate::common::off_runtime(|| qualification::config(s.store.db(), p))
            .unwrap()
            .prompt
            .is_none()
    );
    // An empty prompt: 400 with the reason, nothing stored.
    let r = post(
        &s,
        "/dashboard/qualification",
        &session,
        &format!("csrf={csrf}&prompt=+++"),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.text.contains("the qualification prompt is empty"),
        "{}",
        r.text
    );

    let prompt = "Programme, die gemeinnützige Vereine in Sachsen für Jugendarbeit und soziale Projekte nutzen können; keine Kredite.";
    let form: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("csrf", &csrf)
        .append_pair("prompt", prompt)
        .finish();
    let r = post(&s, "/dashboard/qualification", &session, &form).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        crate::common::off_runtime(|| qualification::config(s.store.db(), p))
            .unwrap()
            .prompt
            .as_deref(),
        Some(prompt)
    );
    let page = get(&s, "/dashboard/qualification", &session).await;
    assert!(
        page.text.contains(&format!(">{prompt}</textarea>")),
        "{}",
        page.text
    );
    // The reading is the engine's (as `grantmatch partner status` prints it).
    let partner = crate::common::off_runtime(|| s.store.db().partner(p))
        .unwrap()
        .unwrap();
    let status =
        crate::common::off_runtime(|| qualification::status(&s.engine(), s.store.db(), &partner))
            .unwrap();
    let lines: Vec<&str> = status["reading_description"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(lines.iter().any(|l| l.contains("Sachsen")), "{lines:?}");
    for l in &lines {
        let escaped = l
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(page.text.contains(&format!("<li>{escaped}</li>")), "{l}");
    }
    // Nothing is assessed yet (no assessor runs here).
    assert!(page
        .text
        .contains("Qualification: 0 / 12 programmes assessed"));
    assert!(page.text.contains("Programmes that fit: 0"));

    // Categories: add, refuse a duplicate and a missing English name, remove.
    let add = |name: &str, en: &str| {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("csrf", &csrf)
            .append_pair("name", name)
            .append_pair("name_en", en)
            .append_pair("keywords", "Klima, CO2 ,")
            .finish()
    };
    let r = post(
        &s,
        "/dashboard/categories",
        &session,
        &add("Klimaschutz", "Climate"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let cats = crate::common::off_runtime(|| qualification::categories(s.store.db(), p)).unwrap();
    assert_eq!(cats.len(), 1);
    assert_eq!(
        cats[0].keywords,
        vec!["Klima".to_string(), "CO2".to_string()]
    );
    let r = post(
        &s,
        "/dashboard/categories",
        &session,
        &add("Klimaschutz", "Climate"),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.text.contains("already has a category named"),
        "{}",
        r.text
    );
    let r = post(&s, "/dashboard/categories", &session, &add("Sport", "")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text.contains("role=\"alert\""), "{}", r.text);
    let page = get(&s, "/dashboard/qualification", &session).await;
    assert!(page
        .text
        .contains(&format!(r#"data-category="{}""#, cats[0].id)));
    assert!(page
        .text
        .contains("<td>Klimaschutz</td><td>Climate</td><td>Klima, CO2</td>"));
    assert!(page.text.contains("Categories: 0 / 12 programmes assessed"));

    // Another partner can neither see nor remove it.
    let (_, other) = user(&s, "B", "b@example.org").await;
    let theirs = get(&s, "/dashboard/qualification", &other).await;
    assert!(!theirs.text.contains(&cats[0].id.to_string()));
    let r = post(
        &s,
        &format!("/dashboard/categories/{}/remove", cats[0].id),
        &other,
        &format!("csrf={}", csrf_field(&theirs.text)),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(
        crate::common::off_runtime(|| qualification::categories(s.store.db(), p))
            .unwrap()
            .len(),
        1
    );

    let r = post(
        &s,
        &format!("/dashboard/categories/{}/remove", cats[0].id),
        &session,
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(
        crate::common::off_runtime(|| qualification::categories(s.store.db(), p))
            .unwrap()
            .is_empty()
    );
    // Removing the prompt.
    let r = post(
        &s,
        "/dashboard/qualification/clear",
        &session,
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(
        crate::common::off_runtime(|| qualification::config(s.store.db(), p))
            .unwrap()
            .prompt
            .is_none()
    );
    let page = get(&s, "/dashboard/qualification?lang=de", &session).await;
    assert!(page.text.contains("Kein Prompt gesetzt"), "{}", page.text);
}

#[tokio::test]
async fn dashboard_copy_button_is_a_served_script_allowed_by_the_csp() {
    let s = state(0.25);
    let (_, session) = user(&s, "A", "a@example.org").await;
    let js = get(&s, "/dashboard/copy.js", "").await;
    assert_eq!(js.status, StatusCode::OK);
    assert_eq!(js.headers["content-type"], "text/javascript; charset=utf-8");
    assert!(js.text.contains("data-copy"));
    let tokens = get(&s, "/dashboard/tokens", &session).await;
    let csp = tokens.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
    let created = post(
        &s,
        "/dashboard/tokens",
        &session,
        &format!("csrf={}&scope=grants%3Aread", csrf_field(&tokens.text)),
    )
    .await;
    // The button is hidden until the script shows it: without script the page works.
    assert!(
        created.text.contains(
            r#"<button type="button" data-copy="new-token" data-done="Copied" hidden>Copy</button>"#
        ),
        "{}",
        created.text
    );
    // No inline script on any page: only the served file.
    for uri in [
        "/dashboard",
        "/dashboard/tokens",
        "/dashboard/usage",
        "/dashboard/matching",
        "/dashboard/qualification",
    ] {
        let r = get(&s, uri, &session).await;
        assert_eq!(r.status, StatusCode::OK, "{uri}");
        assert_eq!(r.text.matches("<script").count(), 1, "{uri}");
        assert!(r
            .text
            .contains(r#"<script src="/dashboard/copy.js" defer></script>"#));
        for link in [
            "/dashboard/usage",
            "/dashboard/matching",
            "/dashboard/qualification",
            "/api/v1/docs",
        ] {
            assert!(
                r.text.contains(&format!(r#"href="{link}""#)),
                "{uri} lacks {link}"
            );
        }
    }
}
