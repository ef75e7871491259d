//! The overview page: the quarter's quota as gauges with the warning and exceeded
//! notices (the same [`crate::usage::QuotaView`] as `GET /usage/quota`), requests per day and scope.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::auth::SignedIn;
use super::page::{esc, page, Lang, Nav};
use crate::views::QuotaStatus;
use crate::AppState;

fn gauge(label: &str, (current, limit): (i64, i64)) -> String {
    format!(
        r#"<p><label>{label}: {current} / {limit}<br><meter min="0" max="{limit}" low="{low}" high="{high}" optimum="0" value="{current}">{current} / {limit}</meter></label></p>"#,
        label = esc(label),
        low = limit * 9 / 10,
        high = limit * 9 / 10,
    )
}

/// An SVG bar chart of requests per day (drawn by the server, no script).
fn chart(days: &[(String, i64)]) -> String {
    let max = days.iter().map(|d| d.1).max().unwrap_or(0).max(1);
    let (w, h) = (600, 120);
    let bw = w / days.len().max(1) as i64;
    let bars: String = days
        .iter()
        .enumerate()
        .map(|(i, (day, n))| {
            let bh = n * (h - 20) / max;
            format!(
                r##"<rect x="{x}" y="{y}" width="{bw2}" height="{bh}" fill="#3a6ea5"><title>{day}: {n}</title></rect>"##,
                x = i as i64 * bw,
                y = h - 20 - bh,
                bw2 = (bw - 2).max(1),
                day = esc(day),
            )
        })
        .collect();
    let first = days.first().map(|d| d.0.as_str()).unwrap_or("");
    let last = days.last().map(|d| d.0.as_str()).unwrap_or("");
    format!(
        r#"<svg viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="requests per day">{bars}<text x="0" y="{ty}" font-size="11">{first}</text><text x="{w}" y="{ty}" font-size="11" text-anchor="end">{last} (max {max})</text></svg>"#,
        ty = h - 4,
    )
}

pub async fn show(State(state): State<Arc<AppState>>, lang: Lang, signed: SignedIn) -> Response {
    let SignedIn(session, _) = signed;
    let now = state.clock.now();
    let loaded = state
        .store
        .overview(session.user.partner_id, now, state.quota_policy)
        .await;
    let Ok(Some(crate::store::Overview {
        partner,
        quota,
        days,
    })) = loaded
    else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let notice = match quota.status() {
        QuotaStatus::Exceeded => format!(
            r#"<p class="notice exceeded" role="alert">{}</p>"#,
            lang.t(
                "Quota exceeded: requests are still answered; the overage is billed later.",
                "Kontingent überschritten: Anfragen werden weiter beantwortet, der Mehrverbrauch wird später abgerechnet."
            )
        ),
        QuotaStatus::Warning => format!(
            r#"<p class="notice" role="alert">{}</p>"#,
            lang.t(
                "Warning: 90 % of a quota is reached. Contact your operator to upgrade.",
                "Warnung: 90 % eines Kontingents sind erreicht. Wenden Sie sich für ein Upgrade an Ihren Betreiber."
            )
        ),
        _ => String::new(),
    };
    let scope = if partner.region_ids.is_empty() && partner.grant_area_ids.is_empty() {
        lang.t("the whole catalogue", "der gesamte Katalog")
            .to_string()
    } else {
        format!(
            "{} {}, {} {}",
            partner.region_ids.len(),
            lang.t("region(s)", "Region(en)"),
            partner.grant_area_ids.len(),
            lang.t("grant area(s)", "Förderbereich(e)")
        )
    };
    let body = format!(
        r#"{notice}<h2>{quarter_l} {quarter} · {tier_l} {tier}</h2>
{g1}{g2}
<h2>{per_day}</h2>{chart}
<h2>{scope_l}</h2><p>{scope}</p>
<p><a href="/api/v1/docs">{docs}</a></p>"#,
        quarter_l = lang.t("Quarter", "Quartal"),
        quarter = esc(&quota.quarter),
        tier_l = lang.t("tier", "Tarif"),
        tier = esc(&quota.tier),
        g1 = gauge(
            lang.t("Matching requests", "Matching-Anfragen"),
            quota.matching
        ),
        g2 = gauge(
            lang.t("Active organisations", "Aktive Organisationen"),
            quota.orgs
        ),
        per_day = lang.t(
            "API requests per day (30 days)",
            "API-Anfragen pro Tag (30 Tage)"
        ),
        chart = chart(&days),
        scope_l = lang.t("Scope", "Sichtbarkeit"),
        docs = lang.t("API documentation", "API-Dokumentation"),
    );
    let nav = Nav {
        partner: &partner.name,
        csrf: &session.csrf,
    };
    page(lang, lang.t("Overview", "Übersicht"), Some(nav), &body).into_response()
}
