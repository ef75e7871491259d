//! The usage page: the figures of `GET /usage/stats` (the same [`crate::usage::stats`])
//! for a day, week, month, quarter or year, by endpoint and by day, and as CSV.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::auth::SignedIn;
use super::context::{internal, Ctx};
use super::page::{esc, Lang};
use crate::usage::{parse_period, period_start};
use crate::views::UsageStats;
use crate::AppState;

const PERIODS: [&str; 5] = ["day", "week", "month", "quarter", "year"];

fn period_name(lang: Lang, p: &str) -> &'static str {
    match p {
        "day" => lang.t("Today", "Heute"),
        "week" => lang.t("This week", "Diese Woche"),
        "month" => lang.t("This month", "Dieser Monat"),
        "year" => lang.t("This year", "Dieses Jahr"),
        _ => lang.t("This quarter", "Dieses Quartal"),
    }
}

enum LoadError {
    /// A bad `?period=`, with the API's message.
    BadPeriod(String),
    /// A store failure (logged, answered 500).
    Failed(String),
}

/// The period of `?period=` (default quarter) and the stats since its start, read as
/// the API reads them (pending ledger rows flushed first).
async fn load(
    state: &Arc<AppState>,
    query: Option<&str>,
    partner: uuid::Uuid,
) -> Result<(String, UsageStats), LoadError> {
    let period = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "period")
        .map(|(_, v)| v.into_owned());
    let period =
        parse_period(period.as_deref()).map_err(|e| LoadError::BadPeriod(e.to_string()))?;
    let since = period_start(period, state.clock.now())
        .ok_or_else(|| LoadError::Failed("no start of the period".into()))?;
    let stats = state
        .store
        .usage_stats(partner, since)
        .await
        .map_err(|e| LoadError::Failed(e.to_string()))?;
    Ok((period.as_str().to_string(), stats))
}

pub async fn show(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(ctx) = Ctx::new(&state, lang, signed).await else {
        return internal("the session's partner");
    };
    let title = ctx.t("Usage", "Nutzung");
    let (period, s) = match load(&state, query.as_deref(), ctx.partner_id()).await {
        Ok(v) => v,
        Err(LoadError::BadPeriod(m)) => {
            return ctx.page_with_error(StatusCode::BAD_REQUEST, title, &m, "")
        }
        Err(LoadError::Failed(e)) => return internal(e),
    };
    let tabs: String = PERIODS
        .iter()
        .map(|p| {
            if *p == period {
                format!("<strong>{}</strong>", period_name(lang, p))
            } else {
                format!(
                    r#"<a href="/dashboard/usage?period={p}">{}</a>"#,
                    period_name(lang, p)
                )
            }
        })
        .collect::<Vec<_>>()
        .join(" · ");
    let figures = [
        ("total_requests", lang.t("Requests", "Anfragen")),
        (
            "successful_requests",
            lang.t("Successful (2xx)", "Erfolgreich (2xx)"),
        ),
        (
            "failed_requests",
            lang.t("Failed (4xx, 5xx)", "Fehlgeschlagen (4xx, 5xx)"),
        ),
        (
            "matching_requests",
            lang.t("Matching requests", "Matching-Anfragen"),
        ),
        (
            "grants_requests",
            lang.t("Grant requests", "Förderprogramm-Anfragen"),
        ),
        (
            "active_organizations",
            lang.t("Active organisations", "Aktive Organisationen"),
        ),
        (
            "average_response_time_ms",
            lang.t("Average response time (ms)", "Mittlere Antwortzeit (ms)"),
        ),
    ];
    let values = s.figures();
    let figures: String = figures
        .iter()
        .map(|(k, label)| {
            let value = values.iter().find(|(name, _)| name == k).map_or(0, |f| f.1);
            format!(r#"<tr data-figure="{k}"><th>{label}</th><td>{value}</td></tr>"#)
        })
        .collect();
    let endpoints: String = s
        .by_endpoint
        .iter()
        .map(|(e, n)| format!("<tr><td><code>{}</code></td><td>{n}</td></tr>", esc(e)))
        .collect();
    let days: String = s
        .by_day
        .iter()
        .map(|d| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                d.date, d.requests, d.matching_requests
            )
        })
        .collect();
    let none = |cols: usize| {
        format!(
            r#"<tr><td colspan="{cols}">{}</td></tr>"#,
            lang.t("No requests.", "Keine Anfragen.")
        )
    };
    let body = format!(
        r#"<p>{tabs}</p>
<table class="figures"><tbody>{figures}</tbody></table>
<p><a href="/dashboard/usage.csv?period={period}" download>{csv}</a></p>
<h2>{by_endpoint}</h2>
<table><thead><tr><th>{endpoint}</th><th>{requests}</th></tr></thead><tbody>{endpoints}</tbody></table>
<h2>{by_day}</h2>
<table><thead><tr><th>{date}</th><th>{requests}</th><th>{matching}</th></tr></thead><tbody>{days}</tbody></table>"#,
        csv = lang.t("Download as CSV", "Als CSV herunterladen"),
        by_endpoint = lang.t("By endpoint", "Nach Endpunkt"),
        endpoint = lang.t("Endpoint", "Endpunkt"),
        requests = lang.t("Requests", "Anfragen"),
        by_day = lang.t("By day", "Nach Tag"),
        date = lang.t("Date", "Datum"),
        matching = lang.t("Matching requests", "Matching-Anfragen"),
        endpoints = if endpoints.is_empty() {
            none(2)
        } else {
            endpoints
        },
        days = if days.is_empty() { none(3) } else { days },
    );
    ctx.page(title, &body)
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The period's figures as CSV in long form: `section,name,value`, one row per figure,
/// per endpoint and per day (requests and matching requests).
pub fn csv(period: &str, s: &UsageStats) -> String {
    let mut out = String::from("period,section,name,value\r\n");
    let mut row = |section: &str, name: &str, value: u64| {
        out.push_str(&format!("{period},{section},{},{value}\r\n", field(name)));
    };
    for (k, value) in s.figures() {
        row("total", k, value);
    }
    for (e, n) in &s.by_endpoint {
        row("endpoint", e, *n);
    }
    for d in &s.by_day {
        let date = d.date.to_string();
        row("day_requests", &date, d.requests);
        row("day_matching_requests", &date, d.matching_requests);
    }
    out
}

pub async fn download(
    State(state): State<Arc<AppState>>,
    signed: SignedIn,
    RawQuery(query): RawQuery,
) -> Response {
    let (period, s) = match load(&state, query.as_deref(), signed.0.user.partner_id).await {
        Ok(v) => v,
        Err(LoadError::BadPeriod(m)) => return (StatusCode::BAD_REQUEST, m).into_response(),
        Err(LoadError::Failed(e)) => return internal(e),
    };
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"grantmatch-usage-{period}.csv\""),
            ),
        ],
        csv(&period, &s),
    )
        .into_response()
}
