//! The qualification and categories page: the partner's qualification prompt (edit,
//! remove), how the engine read it and how far the assessment is (the same
//! [`crate::qualification::status`] as `grantmatch partner status`), and the custom
//! categories (add, remove) — all through [`crate::qualification`], like the CLI.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use grantmatch_engine::qualify::QualificationPrompt;
use serde_json::Value;
use uuid::Uuid;

use super::auth::{csrf_refused, field, SignedIn};
use super::context::{internal, Ctx};
use super::page::{esc, form_fields, Lang};
use crate::error::ServerError;
use crate::qualification::NewCategory;
use crate::AppState;

const PAGE: &str = "/dashboard/qualification";

fn progress(lang: Lang, label: &str, part: &Value) -> String {
    if part.is_null() {
        return String::new();
    }
    let (done, total) = (
        part["assessed"].as_u64().unwrap_or(0),
        part["total"].as_u64().unwrap_or(0),
    );
    format!(
        r#"<p><label>{label}: {done} / {total} {assessed}<br><meter min="0" max="{total}" value="{done}">{done} / {total}</meter></label></p>"#,
        label = esc(label),
        assessed = lang.t("programmes assessed", "Programme bewertet"),
    )
}

fn render(ctx: &Ctx, status: &Value, prompt_draft: Option<&str>) -> String {
    let lang = ctx.lang;
    let csrf = ctx.csrf();
    let prompt = prompt_draft
        .or(status["prompt"].as_str())
        .unwrap_or_default();
    let reading: String = status["reading_description"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|l| format!("<li>{}</li>", esc(l)))
        .collect();
    let reading = if status["prompt"].is_null() {
        format!(
            "<p>{}</p>",
            lang.t(
                "No prompt set: ai_qualified is null for every programme.",
                "Kein Prompt gesetzt: ai_qualified ist für jedes Programm null."
            )
        )
    } else if reading.is_empty() {
        format!(
            "<p>{}</p>",
            lang.t(
                "The prompt names no region, applicant, topic or programme kind the engine recognises.",
                "Der Prompt nennt keine Region, keinen Antragsteller, kein Thema und keine Programmart, die die Engine erkennt."
            )
        )
    } else {
        format!(r#"<ul class="reading">{reading}</ul>"#)
    };
    let qualified = status["qualified"]
        .as_i64()
        .map(|n| {
            format!(
                "<p>{}: {n}</p>",
                lang.t("Programmes that fit", "Passende Programme")
            )
        })
        .unwrap_or_default();
    let clear = if status["prompt"].is_null() {
        String::new()
    } else {
        format!(
            r#"<form method="post" action="{PAGE}/clear" class="inline"><input type="hidden" name="csrf" value="{csrf}"><button type="submit">{}</button></form>"#,
            lang.t("Remove prompt", "Prompt entfernen")
        )
    };
    let cats: String = category_list(status)
        .iter()
        .map(|c| {
            format!(
                r#"<tr data-category="{id}"><td>{name}</td><td>{name_en}</td><td>{kw}</td><td><form method="post" action="/dashboard/categories/{id}/remove" class="inline"><input type="hidden" name="csrf" value="{csrf}"><button type="submit">{rm}</button></form></td></tr>"#,
                id = esc(c["id"].as_str().unwrap_or("")),
                name = esc(c["name"].as_str().unwrap_or("")),
                name_en = esc(c["name_en"].as_str().unwrap_or("")),
                kw = esc(&c["keywords"].as_array().into_iter().flatten().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")),
                rm = lang.t("Remove", "Entfernen"),
            )
        })
        .collect();
    format!(
        r#"<h2>{prompt_h}</h2>
<form method="post" action="{PAGE}"><input type="hidden" name="csrf" value="{csrf}">
<p><label>{prompt_l}<br><textarea name="prompt" rows="5" maxlength="5000" required>{prompt}</textarea></label></p>
<p><button type="submit">{save}</button></p></form>{clear}
<h2>{read_h}</h2>{reading}
<h2>{progress_h}</h2><p>{in_scope}: {total}</p>{qp}{qualified}{cp}
<h2>{cats_h}</h2>
<table><thead><tr><th>{name_l}</th><th>{name_en_l}</th><th>{kw_l}</th><th></th></tr></thead><tbody>{cats}</tbody></table>
<form method="post" action="/dashboard/categories"><input type="hidden" name="csrf" value="{csrf}">
<p><label>{name_l}<br><input name="name" required maxlength="100"></label></p>
<p><label>{name_en_l}<br><input name="name_en" required maxlength="100"></label></p>
<p><label>{kw_l} ({comma})<br><input name="keywords" maxlength="500"></label></p>
<p><label>{desc_l}<br><textarea name="description" rows="2" maxlength="1000"></textarea></label></p>
<p><button type="submit">{add}</button></p></form>"#,
        prompt_h = lang.t("Qualification prompt", "Qualifizierungs-Prompt"),
        prompt_l = lang.t(
            "Which programmes fit your users? (German or English, up to 5,000 characters)",
            "Welche Programme passen zu Ihren Nutzern? (Deutsch oder Englisch, bis 5.000 Zeichen)"
        ),
        prompt = esc(prompt),
        save = lang.t("Save prompt", "Prompt speichern"),
        read_h = lang.t("How the prompt was read", "So wurde der Prompt gelesen"),
        progress_h = lang.t("Assessment", "Bewertung"),
        in_scope = lang.t("Programmes in your scope", "Programme in Ihrem Bereich"),
        total = status["grants_in_scope"].as_u64().unwrap_or(0),
        qp = progress(
            lang,
            lang.t("Qualification", "Qualifizierung"),
            &status["qualification"]
        ),
        cp = progress(
            lang,
            lang.t("Categories", "Kategorien"),
            &status["categorization"]
        ),
        cats_h = lang.t("Custom categories", "Eigene Kategorien"),
        name_l = lang.t("Name (German)", "Name (Deutsch)"),
        name_en_l = lang.t("Name (English)", "Name (Englisch)"),
        kw_l = lang.t("Keywords", "Schlagwörter"),
        comma = lang.t("comma-separated", "durch Komma getrennt"),
        desc_l = lang.t("Description (optional)", "Beschreibung (optional)"),
        add = lang.t("Add category", "Kategorie hinzufügen"),
    )
}

fn category_list(status: &Value) -> Vec<Value> {
    status["category_list"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The assessment status with the category list (off the async threads: the status
/// fingerprints every programme).
async fn load(state: &Arc<AppState>, ctx: &Ctx) -> Result<Value, String> {
    state
        .store
        .qualification_status(state.engine(), ctx.partner.partner.clone())
        .await
        .map_err(|e| e.to_string())
}

fn title(lang: Lang) -> &'static str {
    lang.t(
        "Qualification and categories",
        "Qualifizierung und Kategorien",
    )
}

async fn page(
    state: &Arc<AppState>,
    ctx: Ctx,
    error: Option<&str>,
    draft: Option<&str>,
) -> Response {
    let status = match load(state, &ctx).await {
        Ok(s) => s,
        Err(e) => return internal(e),
    };
    let body = render(&ctx, &status, draft);
    match error {
        Some(m) => ctx.page_with_error(StatusCode::BAD_REQUEST, title(ctx.lang), m, &body),
        None => ctx.page(title(ctx.lang), &body),
    }
}

pub async fn show(State(state): State<Arc<AppState>>, lang: Lang, signed: SignedIn) -> Response {
    match Ctx::new(&state, lang, signed).await {
        Some(ctx) => page(&state, ctx, None, None).await,
        None => internal("the session's partner"),
    }
}

/// Why a post is not handled.
enum Refused {
    Csrf,
    NoPartner,
}

impl Refused {
    fn response(self) -> Response {
        match self {
            Refused::Csrf => csrf_refused(),
            Refused::NoPartner => internal("the session's partner"),
        }
    }
}

/// The signed-in context and the fields of a posted form with a valid CSRF token.
async fn posted(
    state: &Arc<AppState>,
    lang: Lang,
    signed: SignedIn,
    body: &[u8],
) -> Result<(Ctx, Vec<(String, String)>), Refused> {
    let form = form_fields(body);
    if !signed.csrf_ok(&form) {
        return Err(Refused::Csrf);
    }
    let ctx = Ctx::new(state, lang, signed)
        .await
        .ok_or(Refused::NoPartner)?;
    Ok((ctx, form))
}

pub async fn set_prompt(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    body: axum::body::Bytes,
) -> Response {
    let (ctx, form) = match posted(&state, lang, signed, &body).await {
        Ok(v) => v,
        Err(r) => return r.response(),
    };
    let text = field(&form, "prompt").unwrap_or("");
    let partner = ctx.partner_id();
    let rules = match state.store.qualification_config(partner).await {
        Ok(c) => c.rules,
        Err(e) => return internal(e),
    };
    // The operator's corrections of the reading stay; they must still fit the catalogue.
    if let Err(e) = QualificationPrompt::read(&state.engine().catalogue, text, rules.as_ref()) {
        return page(&state, ctx, Some(&e.to_string()), Some(text)).await;
    }
    match state
        .store
        .set_prompt(partner, text.to_string(), rules)
        .await
    {
        Ok(_) => Redirect::to(PAGE).into_response(),
        Err(ServerError::Invalid(m)) => page(&state, ctx, Some(&m), Some(text)).await,
        Err(e) => internal(e),
    }
}

pub async fn clear_prompt(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    body: axum::body::Bytes,
) -> Response {
    let ctx = match posted(&state, lang, signed, &body).await {
        Ok((ctx, _)) => ctx,
        Err(r) => return r.response(),
    };
    let partner = ctx.partner_id();
    match state.store.clear_prompt(partner).await {
        Ok(_) => Redirect::to(PAGE).into_response(),
        Err(e) => internal(e),
    }
}

pub async fn add_category(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    body: axum::body::Bytes,
) -> Response {
    let (ctx, form) = match posted(&state, lang, signed, &body).await {
        Ok(v) => v,
        Err(r) => return r.response(),
    };
    let text = |k| field(&form, k).unwrap_or("").trim().to_string();
    let c = NewCategory {
        name: text("name"),
        name_en: text("name_en"),
        description: Some(text("description")).filter(|d| !d.is_empty()),
        keywords: text("keywords")
            .split(',')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect(),
    };
    let partner = ctx.partner_id();
    match state.store.add_category(partner, c).await {
        Ok(_) => Redirect::to(PAGE).into_response(),
        Err(ServerError::Invalid(m)) => page(&state, ctx, Some(&m), None).await,
        Err(e) => internal(e),
    }
}

pub async fn remove_category(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    signed: SignedIn,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let ctx = match posted(&state, lang, signed, &body).await {
        Ok((ctx, _)) => ctx,
        Err(r) => return r.response(),
    };
    let partner = ctx.partner_id();
    let removed = match id.parse::<Uuid>() {
        Ok(id) => state.store.remove_category(partner, id).await,
        Err(_) => Ok(false),
    };
    match removed {
        Ok(true) => Redirect::to(PAGE).into_response(),
        Ok(false) => (
            StatusCode::NOT_FOUND,
            "404 Not Found: no such category of yours",
        )
            .into_response(),
        Err(e) => internal(e),
    }
}
