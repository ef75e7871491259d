//! One programme as the partner's API sees it (`GET /grants/:id`: the same scope check,
//! view and the partner's own qualification and categories), for the links of the
//! matching history. A programme outside the partner's scope is 404.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::auth::SignedIn;
use super::context::{internal, Ctx};
use super::page::{esc, Lang};
use crate::views::{self, Annotations};
use crate::AppState;

/// An optional text, escaped, or "–".
fn text(v: Option<&str>) -> String {
    match v {
        Some(s) if !s.trim().is_empty() => esc(s),
        _ => "–".into(),
    }
}

fn names<'a>(list: impl Iterator<Item = &'a str>) -> String {
    let list: Vec<String> = list.map(esc).collect();
    if list.is_empty() {
        "–".into()
    } else {
        list.join(", ")
    }
}

fn qualified(lang: Lang, a: &Annotations) -> String {
    let verdict = match a.ai_qualified {
        Some(true) => lang.t("fits your criteria", "passt zu Ihren Kriterien"),
        Some(false) => lang.t(
            "does not fit your criteria",
            "passt nicht zu Ihren Kriterien",
        ),
        None => lang.t("not assessed", "nicht bewertet"),
    };
    match &a.ai_qualification_reasoning {
        Some(r) => format!("{verdict}: {}", esc(r)),
        None => verdict.to_string(),
    }
}

pub async fn show(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    Path(id): Path<String>,
) -> Response {
    let Some(ctx) = Ctx::new(&state, lang, signed).await else {
        return internal("the session's partner");
    };
    let engine = ctx.partner.engine.clone();
    let Some(g) = engine
        .find_grant(&id)
        .filter(|&g| ctx.partner.scope.is_visible(g))
    else {
        let title = lang.t("Programme not found", "Programm nicht gefunden");
        let msg = lang.t(
            "No programme with this id in your scope.",
            "Kein Programm mit dieser ID in Ihrem Bereich.",
        );
        return ctx.page_with_error(StatusCode::NOT_FOUND, title, msg, "");
    };
    let grant_id = engine.catalogue.grant(g).id;
    let partner = ctx.partner_id();
    let ann = match state.store.annotations(partner, Some(vec![grant_id])).await {
        Ok(a) => a,
        Err(e) => return internal(e),
    };
    let views::GrantDetail {
        grant: detail,
        annotations,
    } = views::grant_detail(&engine.catalogue, g, &ann);
    let v = &detail.grant;
    let deadline = match (v.ongoing_grant, v.end_date) {
        (true, _) => lang.t("ongoing", "laufend").to_string(),
        (false, Some(d)) => d.to_string(),
        (false, None) => "–".into(),
    };
    let grant_type = lang.t(v.grant_type.label_en(), v.grant_type.label_de());
    let rows = [
        (
            lang.t("Provider", "Fördergeber"),
            text(detail.grant_provider.as_ref().map(|p| p.name.as_str())),
        ),
        (lang.t("Type", "Art"), esc(grant_type)),
        (lang.t("Deadline", "Frist"), deadline),
        (
            lang.t("Funding", "Förderung"),
            text(v.funding_amount.as_deref()),
        ),
        (
            lang.t("Regions", "Regionen"),
            names(v.regions.iter().map(|r| r.name.as_str())),
        ),
        (
            lang.t("Grant areas", "Förderbereiche"),
            names(v.grant_areas.iter().map(|a| a.name.as_str())),
        ),
        (
            lang.t("Your categories", "Ihre Kategorien"),
            names(
                annotations
                    .custom_categories
                    .iter()
                    .map(|c| c.name.as_str()),
            ),
        ),
        (
            lang.t("Qualification", "Qualifizierung"),
            qualified(lang, &annotations),
        ),
    ];
    let rows: String = rows
        .iter()
        .map(|(k, val)| format!("<tr><th>{k}</th><td>{val}</td></tr>"))
        .collect();
    let body = format!(
        r#"<p>{short}</p><table class="figures"><tbody>{rows}</tbody></table>
<h2>{desc_l}</h2><p class="prose">{desc}</p>
<p><code>GET /api/v1/grants/{id}</code> · <a href="/dashboard/matching">{back}</a></p>"#,
        short = text(v.short_description.as_deref()),
        desc_l = lang.t("Description", "Beschreibung"),
        desc = text(detail.description.as_deref()),
        id = grant_id,
        back = lang.t(
            "Back to the matching history",
            "Zurück zum Matching-Verlauf"
        ),
    );
    ctx.page(&v.title, &body)
}
