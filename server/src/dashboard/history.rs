//! The matching history: the partner's recent matching requests (the rows the API
//! stores for `GET /matching/:id`) with status, organisation id and the top results,
//! each linking to its programme.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::auth::SignedIn;
use super::context::{internal, Ctx};
use super::page::{esc, Lang};
use crate::matching_store::{MatchingRecord, MatchingStatus};
use crate::AppState;

/// Requests listed.
pub const LIMIT: usize = 50;
/// Results shown per request.
pub const TOP: usize = 3;

fn status(lang: Lang, s: MatchingStatus) -> &'static str {
    match s {
        MatchingStatus::Completed => lang.t("completed", "abgeschlossen"),
        MatchingStatus::Pending => lang.t("pending", "in Arbeit"),
        MatchingStatus::Failed => lang.t("failed", "fehlgeschlagen"),
    }
}

fn top_results(m: &MatchingRecord) -> String {
    let items: String = m
        .results
        .iter()
        .flatten()
        .take(TOP)
        .map(|r| {
            let r = &r.result;
            format!(
                r#"<li><a href="/dashboard/grants/{id}">{title}</a> ({score})</li>"#,
                id = r.grant_id,
                title = esc(&r.title),
                score = r.relevance_score,
            )
        })
        .collect();
    if items.is_empty() {
        "–".into()
    } else {
        format!("<ol>{items}</ol>")
    }
}

pub async fn show(State(state): State<Arc<AppState>>, lang: Lang, signed: SignedIn) -> Response {
    let Some(ctx) = Ctx::new(&state, lang, signed).await else {
        return internal("the session's partner");
    };
    let partner = ctx.partner_id();
    let records = match state.store.recent_matchings(partner, LIMIT).await {
        Ok(r) => r,
        Err(e) => return internal(e),
    };
    let rows: String = records
        .iter()
        .map(|m| {
            format!(
                r#"<tr data-matching="{id}"><td>{created}</td><td>{status}</td><td><code>{org}</code></td><td>{count}</td><td>{top}</td></tr>"#,
                id = m.id,
                created = m.created_at.format("%Y-%m-%d %H:%M"),
                status = match &m.error {
                    Some(e) => format!("{}: {}", status(lang, m.status), esc(e)),
                    None => status(lang, m.status).to_string(),
                },
                org = esc(&m.organization_id),
                count = m.results_count.map(|n| n.to_string()).unwrap_or_else(|| "–".into()),
                top = top_results(m),
            )
        })
        .collect();
    let body = if rows.is_empty() {
        format!(
            "<p>{}</p>",
            lang.t(
                "No matching requests yet: they appear here once your system calls POST /api/v1/matching.",
                "Noch keine Matching-Anfragen: sie erscheinen hier, sobald Ihr System POST /api/v1/matching aufruft."
            )
        )
    } else {
        format!(
            r#"<p>{intro}</p><table><thead><tr><th>{when}</th><th>{status}</th><th>{org}</th><th>{count}</th><th>{top}</th></tr></thead><tbody>{rows}</tbody></table>"#,
            intro = match lang {
                Lang::En => format!("The {LIMIT} most recent matching requests, newest first."),
                Lang::De => format!("Die letzten {LIMIT} Matching-Anfragen, neueste zuerst."),
            },
            when = lang.t("Time (UTC)", "Zeit (UTC)"),
            status = lang.t("Status", "Status"),
            org = lang.t("Organisation id", "Organisations-ID"),
            count = lang.t("Results", "Treffer"),
            top = lang.t("Top results (score)", "Beste Treffer (Punkte)"),
        )
    };
    ctx.page(lang.t("Matching history", "Matching-Verlauf"), &body)
}
