//! One programme as the partner's API sees it (`GET /grants/:id`: the same scope check,
//! view and the partner's own qualification and categories), for the links of the
//! matching history. A programme outside the partner's scope is 404.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::auth::SignedIn;
use super::context::{internal, Ctx};
use super::page::{esc, Lang};
use crate::qualification::PartnerAnnotations;
use crate::views;
use crate::AppState;

/// A JSON value as text: strings as they are, numbers and booleans printed, else "–".
fn text(v: &Value) -> String {
    match v {
        Value::String(s) if !s.trim().is_empty() => esc(s),
        Value::Number(n) => n.to_string(),
        _ => "–".into(),
    }
}

fn names(v: &Value) -> String {
    let list: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["name"].as_str().map(esc))
        .collect();
    if list.is_empty() {
        "–".into()
    } else {
        list.join(", ")
    }
}

fn qualified(lang: Lang, g: &Value) -> String {
    let verdict = match g["ai_qualified"].as_bool() {
        Some(true) => lang.t("fits your criteria", "passt zu Ihren Kriterien"),
        Some(false) => lang.t(
            "does not fit your criteria",
            "passt nicht zu Ihren Kriterien",
        ),
        None => lang.t("not assessed", "nicht bewertet"),
    };
    match g["ai_qualification_reasoning"].as_str() {
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
    let Some(ctx) = Ctx::new(&state, lang, signed) else {
        return internal("the session's partner");
    };
    let engine = &state.engine;
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
    let ann = match PartnerAnnotations::load(&state.db, ctx.partner_id(), Some(&[grant_id])) {
        Ok(a) => a,
        Err(e) => return internal(e),
    };
    let v = views::grant_detail(&engine.catalogue, g, &ann);
    let deadline = if v["ongoing_grant"].as_bool() == Some(true) {
        lang.t("ongoing", "laufend").to_string()
    } else {
        text(&v["end_date"])
    };
    let rows = [
        (
            lang.t("Provider", "Fördergeber"),
            text(&v["grant_provider"]["name"]),
        ),
        (lang.t("Type", "Art"), text(&v["grant_type"])),
        (lang.t("Deadline", "Frist"), deadline),
        (lang.t("Funding", "Förderung"), text(&v["funding_amount"])),
        (lang.t("Regions", "Regionen"), names(&v["regions"])),
        (
            lang.t("Grant areas", "Förderbereiche"),
            names(&v["grant_areas"]),
        ),
        (
            lang.t("Your categories", "Ihre Kategorien"),
            names(&v["custom_categories"]),
        ),
        (
            lang.t("Qualification", "Qualifizierung"),
            qualified(lang, &v),
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
        short = text(&v["short_description"]),
        desc_l = lang.t("Description", "Beschreibung"),
        desc = text(&v["description"]),
        id = grant_id,
        back = lang.t(
            "Back to the matching history",
            "Zurück zum Matching-Verlauf"
        ),
    );
    ctx.page(v["title"].as_str().unwrap_or("–"), &body)
}
