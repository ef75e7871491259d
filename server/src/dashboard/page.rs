//! The page frame: language choice, HTML escaping, the layout with its navigation and
//! form parsing.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use axum::response::Html;

use crate::AppState;

/// The language of a page: `?lang=`, else the `gm_lang` cookie, else Accept-Language
/// (German when it prefers German), else English.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    De,
}

impl Lang {
    pub fn t(self, en: &'static str, de: &'static str) -> &'static str {
        match self {
            Lang::En => en,
            Lang::De => de,
        }
    }

    pub fn code(self) -> &'static str {
        self.t("en", "de")
    }

    fn parse(s: &str) -> Option<Lang> {
        match s.trim().get(..2)?.to_ascii_lowercase().as_str() {
            "de" => Some(Lang::De),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    pub fn of(parts: &Parts) -> Lang {
        let query = parts.uri.query().unwrap_or("");
        let from_query = form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "lang")
            .and_then(|(_, v)| Lang::parse(&v));
        from_query
            .or_else(|| {
                super::auth::cookie(&parts.headers, "gm_lang").and_then(|v| Lang::parse(&v))
            })
            .or_else(|| {
                parts
                    .headers
                    .get(header::ACCEPT_LANGUAGE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.split(',').next())
                    .and_then(Lang::parse)
            })
            .unwrap_or(Lang::En)
    }
}

impl FromRequestParts<Arc<AppState>> for Lang {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        Ok(Lang::of(parts))
    }
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The fields of a url-encoded form body.
pub fn form_fields(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Navigation and sign-out of a signed-in page: (partner name, CSRF token).
pub struct Nav<'a> {
    pub partner: &'a str,
    pub csrf: &'a str,
}

/// A whole page. `body` is HTML (escaped by the caller).
pub fn page(lang: Lang, title: &str, nav: Option<Nav<'_>>, body: &str) -> Html<String> {
    let nav = nav
        .map(|n| {
            format!(
                r#"<nav><strong>{partner}</strong> ·
<a href="/dashboard">{overview}</a> · <a href="/dashboard/tokens">{tokens}</a> · <a href="/dashboard/usage">{usage}</a> ·
<a href="/dashboard/matching">{history}</a> · <a href="/dashboard/qualification">{criteria}</a> · <a href="/api/v1/docs">{docs}</a> ·
<a href="?lang=en">EN</a> <a href="?lang=de">DE</a>
<form method="post" action="/dashboard/sign-out" class="inline"><input type="hidden" name="csrf" value="{csrf}"><button type="submit">{out}</button></form></nav>"#,
                partner = esc(n.partner),
                csrf = esc(n.csrf),
                overview = lang.t("Overview", "Übersicht"),
                tokens = lang.t("API tokens", "API-Tokens"),
                usage = lang.t("Usage", "Nutzung"),
                history = lang.t("Matching history", "Matching-Verlauf"),
                criteria = lang.t("Qualification", "Qualifizierung"),
                docs = lang.t("API docs", "API-Dokumentation"),
                out = lang.t("Sign out", "Abmelden"),
            )
        })
        .unwrap_or_else(|| r#"<nav><a href="?lang=en">EN</a> <a href="?lang=de">DE</a></nav>"#.into());
    Html(format!(
        r#"<!doctype html>
<html lang="{code}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · grantmatch</title><link rel="stylesheet" href="/dashboard/style.css"><script src="/dashboard/copy.js" defer></script></head>
<body>{nav}<main><h1>{title}</h1>
{body}</main></body></html>"#,
        code = lang.code(),
        title = esc(title),
    ))
}

pub const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;line-height:1.4}
nav{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;border-bottom:1px solid #ccc;padding-bottom:.5rem}
form.inline{display:inline}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left}
.notice{background:#fff3cd;border:1px solid #e0b000;padding:.6rem}.exceeded{background:#f8d7da;border-color:#c00}
meter{width:100%;height:1.4rem}code{word-break:break-all}textarea,input:not([type=checkbox]){width:100%;box-sizing:border-box;font:inherit}
table.figures th{font-weight:normal}table.figures td{text-align:right}.prose{white-space:pre-line}ol{margin:0;padding-left:1.2rem}
@media(max-width:40rem){table{font-size:.85rem;display:block;overflow-x:auto}td,th{padding:.2rem}}";

/// The copy button of the new token (`/dashboard/copy.js`): buttons with `data-copy`
/// are hidden until the script shows them, so the page works without script.
pub const COPY_JS: &str = r#"// grantmatch dashboard: copy buttons (the pages work without this script).
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  button.hidden = false;
  button.addEventListener("click", function () {
    var done = function () { button.textContent = button.getAttribute("data-done"); };
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, function () {
        document.execCommand("copy");
        done();
      });
    } else {
      document.execCommand("copy");
      done();
    }
  });
});
"#;
