//! The OpenAPI 3.1 description of the API, generated from code with `utoipa`, and the
//! interactive documentation (Swagger UI, assets bundled in the binary).
//!
//! - Responses are the types the handlers return (`crate::views`, built around the
//!   engine's record views `grantmatch_engine::views`), so the document is generated
//!   from what is serialised; `schemas` gathers them with the request bodies.
//!   `tests/api/openapi.rs` still validates the real responses of every endpoint
//!   against the document.
//! - Operations: `#[utoipa::path]` on each handler (`crate::routes`, `crate::health` …)
//!   with parameters, bodies, success responses and scopes; the routes the Swagger UI
//!   library serves are described by `LibraryRoutes`.
//! - [`document`] completes the generated document in one pass: responses composed of
//!   parts (`#[serde(flatten)]`, e.g. the engine's grant view and the partner's
//!   annotations) become one closed object each; and from the properties of each
//!   operation: the error responses every authenticated operation can give
//!   (401, 403, 429, 500, 503), 400 for operations with parameters or a body, 404 for
//!   paths with an `{id}`, 413/415 for request bodies, the rate-limit headers, the
//!   required scope in each description, and the examples (real responses over
//!   `fixtures/catalogue`, stored in `openapi/examples/`).
//!
//! Served without authentication: `GET /api/v1/openapi.json` and `GET /api/v1/docs`
//! ([`router`], merged into `app()` outside the authenticated `/api/v1` layer).
//! Route coverage is checked by the tests against the router itself (see
//! `tests/api/openapi.rs`): every route of `app()` must be documented here.

pub mod schemas;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use axum::Router;
use serde_json::{json, Map, Value};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use crate::error::{ApiError, ErrorCode};

/// Path of the OpenAPI document.
pub const OPENAPI_PATH: &str = "/api/v1/openapi.json";
/// Path of the interactive documentation (redirects to `DOCS_PATH/`).
pub const DOCS_PATH: &str = "/api/v1/docs";

const DESCRIPTION: &str = r#"Read-only database of German public funding programmes (grants), their providers and filter vocabularies, matching of organisation profiles to grants, and usage and quota reporting, for API partners.

**Authentication.** Every `/api/v1` endpoint except this document and the docs needs `Authorization: Bearer <token>`. A token carries scopes: `grants:read` (grants, providers, all reference lists), `matching:use` (start a matching and read its results), `usage:read` (usage endpoints). The scope of each operation is named in its description and in its security requirement. A missing or invalid token is 401 `unauthorized`; a valid token without the scope is 403 `insufficient_scope`.

**Partner scope.** A partner can be restricted to regions and grant areas; grants outside are invisible (404 on details), counts are scoped, and a filter value outside the scope is 403 `out_of_scope`.

**Errors.** Always `{"error": {"code", "message"}}`; 429 adds `retry_after` (seconds, also the `Retry-After` header). Codes: `bad_request` (400), `unauthorized` (401), `insufficient_scope`/`out_of_scope` (403), `not_found` (404, also unknown paths), `method_not_allowed` (405, another method on an existing path), `payload_too_large` (413), `unsupported_media_type` (415), `rate_limit_exceeded` (429), `internal_error` (500), `service_unavailable`/`timeout` (503).

**Query parameters.** Unknown parameters are ignored; a single-valued parameter given twice is 400. Lists accept `name[]=a&name[]=b`, `name=a` and `a,b` (at most 100 values). Booleans are `true`/`false` (or `1`/`0`). Invalid values are 400 naming the parameter.

**Rate limits.** 100 requests/min per token, 1,000/min per partner, 10/s for `POST /matching` per partner. Authenticated responses carry `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`."#;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "grantmatch API",
        version = "1",
        description = DESCRIPTION,
    ),
    servers((url = "/", description = "This server")),
    paths(
        crate::routes::grants::list,
        crate::routes::grants::detail,
        crate::routes::providers::list,
        crate::routes::providers::detail,
        crate::routes::reference::regions,
        crate::routes::reference::region,
        crate::routes::reference::grant_areas,
        crate::routes::reference::grant_area,
        crate::routes::reference::eligible_entities,
        crate::routes::reference::eligible_entity,
        crate::routes::reference::target_groups,
        crate::routes::reference::target_group,
        crate::routes::matching::create,
        crate::routes::matching::status,
        crate::routes::matching::results,
        crate::routes::usage::get_stats,
        crate::routes::usage::get_quota,
        crate::health,
        crate::ready,
        crate::metrics_text,
    ),
    // Schemas that only the generic grant fields refer to (utoipa does not register
    // the schemas of type arguments), and the error body of the common responses.
    components(schemas(
        schemas::ErrorBody,
        schemas::ErrorCode,
        schemas::GrantProviderRef,
        schemas::GrantProviderSummary,
        schemas::GrantRegion,
        schemas::GrantAreaRef,
        schemas::NamedRef,
    )),
    modifiers(&BearerScheme, &LibraryRoutes),
    tags(
        (name = "Grants", description = "Funding programmes in the partner's scope (scope `grants:read`)."),
        (name = "Grant providers", description = "Funding bodies (scope `grants:read`)."),
        (name = "Reference lists", description = "Filter vocabularies: regions, grant areas, eligible entities, target groups (scope `grants:read`)."),
        (name = "Matching", description = "Ranked grants for an organisation profile (scope `matching:use`)."),
        (name = "Usage", description = "Usage statistics and fair-use quota (scope `usage:read`)."),
        (name = "Service", description = "Health, this document and the interactive docs (no authentication)."),
    )
)]
struct ApiDoc;

struct BearerScheme;

/// The routes the Swagger UI library serves (`utoipa_swagger_ui`): this document and the
/// documentation pages. They have no handler of ours to annotate, so their operations
/// are built here; every other route is documented on its handler.
struct LibraryRoutes;

impl Modify for LibraryRoutes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::header::HeaderBuilder;
        use utoipa::openapi::path::{HttpMethod, OperationBuilder};
        use utoipa::openapi::security::SecurityRequirement;
        use utoipa::openapi::{ContentBuilder, ObjectBuilder, ResponseBuilder, Type};

        let body = |content_type: &str, description: &str, schema_type: Type| {
            ResponseBuilder::new().description(description).content(
                content_type,
                ContentBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(schema_type)))
                    .build(),
            )
        };
        let operation = |id: &str, summary: &str, description: Option<&str>, status, response| {
            OperationBuilder::new()
                .tag("Service")
                .summary(Some(summary))
                .description(description)
                .operation_id(Some(id))
                .response(status, response)
                .security(SecurityRequirement::default())
                .build()
        };
        let paths = &mut openapi.paths;
        paths.add_path_operation(
            OPENAPI_PATH,
            vec![HttpMethod::Get],
            operation(
                "getOpenApi",
                "This OpenAPI document",
                None,
                "200",
                body(
                    "application/json",
                    "The OpenAPI 3.1 description of the API.",
                    Type::Object,
                )
                .build(),
            ),
        );
        let location = HeaderBuilder::new()
            .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
            .description(Some(format!("`{DOCS_PATH}/`")))
            .build();
        paths.add_path_operation(
            DOCS_PATH,
            vec![HttpMethod::Get],
            operation(
                "getDocs",
                "Interactive documentation",
                Some("Redirects to `/api/v1/docs/`, the Swagger UI over this document; all assets are\nbundled in the binary (no CDN)."),
                "303",
                ResponseBuilder::new()
                    .description(format!("Redirect to `{DOCS_PATH}/`."))
                    .header("Location", location)
                    .build(),
            ),
        );
        paths.add_path_operation(
            format!("{DOCS_PATH}/"),
            vec![HttpMethod::Get],
            operation(
                "getDocsPage",
                "Interactive documentation (page)",
                None,
                "200",
                body("text/html", "The Swagger UI page.", Type::String).build(),
            ),
        );
    }
}

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut http = Http::new(HttpAuthScheme::Bearer);
        http.bearer_format = Some("opaque token (gm_…)".to_string());
        http.description = Some(
            "API token created with `grantmatch token create`; scopes `grants:read`, `matching:use`, `usage:read`."
                .to_string(),
        );
        components.add_security_scheme("bearer", SecurityScheme::Http(http));
    }
}

/// Real responses over `fixtures/catalogue` (arrays cut to at most three elements),
/// by operation id and status; several for one response become named `examples`.
/// `tests/api/openapi.rs` checks that each validates against its schema and that the
/// deterministic ones still equal what the server answers.
pub const EXAMPLES: &[(&str, u16, &str, &str)] = &[
    (
        "listGrants",
        200,
        "page",
        include_str!("openapi/examples/listGrants.json"),
    ),
    (
        "getGrant",
        200,
        "grant",
        include_str!("openapi/examples/getGrant.json"),
    ),
    (
        "listGrantProviders",
        200,
        "page",
        include_str!("openapi/examples/listGrantProviders.json"),
    ),
    (
        "getGrantProvider",
        200,
        "provider",
        include_str!("openapi/examples/getGrantProvider.json"),
    ),
    (
        "listRegions",
        200,
        "hierarchical",
        include_str!("openapi/examples/listRegions.json"),
    ),
    (
        "listRegions",
        200,
        "flat",
        include_str!("openapi/examples/listRegions.flat.json"),
    ),
    (
        "getRegion",
        200,
        "region",
        include_str!("openapi/examples/getRegion.json"),
    ),
    (
        "listGrantAreas",
        200,
        "hierarchical",
        include_str!("openapi/examples/listGrantAreas.json"),
    ),
    (
        "listGrantAreas",
        200,
        "flat",
        include_str!("openapi/examples/listGrantAreas.flat.json"),
    ),
    (
        "getGrantArea",
        200,
        "sub-area",
        include_str!("openapi/examples/getGrantArea.json"),
    ),
    (
        "listEligibleEntities",
        200,
        "entities",
        include_str!("openapi/examples/listEligibleEntities.json"),
    ),
    (
        "getEligibleEntity",
        200,
        "entity",
        include_str!("openapi/examples/getEligibleEntity.json"),
    ),
    (
        "listTargetGroups",
        200,
        "groups",
        include_str!("openapi/examples/listTargetGroups.json"),
    ),
    (
        "getTargetGroup",
        200,
        "group",
        include_str!("openapi/examples/getTargetGroup.json"),
    ),
    (
        "createMatching",
        200,
        "completed",
        include_str!("openapi/examples/createMatching.json"),
    ),
    (
        "createMatching",
        202,
        "accepted",
        include_str!("openapi/examples/createMatching.202.json"),
    ),
    (
        "getMatching",
        200,
        "completed",
        include_str!("openapi/examples/getMatching.json"),
    ),
    (
        "getMatchingResults",
        200,
        "completed",
        include_str!("openapi/examples/getMatchingResults.json"),
    ),
    (
        "getUsageStats",
        200,
        "quarter",
        include_str!("openapi/examples/getUsageStats.json"),
    ),
    (
        "getUsageQuota",
        200,
        "quota",
        include_str!("openapi/examples/getUsageQuota.json"),
    ),
];

/// Example request bodies, by operation id.
pub const REQUEST_EXAMPLES: &[(&str, &str, &str)] = &[(
    "createMatching",
    "verein",
    include_str!("openapi/examples/createMatching.request.json"),
)];

/// Example errors of a status: (code, message); every code's status is the status of
/// its entry (checked by a test).
type ErrorExamples = &'static [(ErrorCode, &'static str)];

/// Reusable error responses: component name, status, description, example errors
/// taken from the server's messages.
const ERROR_RESPONSES: &[(&str, u16, &str, ErrorExamples)] = &[
    ("BadRequest", 400, "Invalid parameter value or request body; the message names the parameter or field.", &[
        (ErrorCode::BadRequest, "per_page: must be between 1 and 100"),
        (ErrorCode::BadRequest, "region_ids[]: `bayern` is not a UUID"),
        (ErrorCode::BadRequest, "organization_profile.description is required"),
    ]),
    ("Unauthorized", 401, "Missing, malformed, unknown or revoked bearer token.", &[
        (ErrorCode::Unauthorized, "missing Authorization header (expected `Bearer <token>`)"),
        (ErrorCode::Unauthorized, "invalid or revoked token"),
    ]),
    ("Forbidden", 403, "The token lacks the scope of the endpoint (`insufficient_scope`), or a filter value lies outside the partner's regions or grant areas (`out_of_scope`).", &[
        (ErrorCode::InsufficientScope, "this token lacks the scope `grants:read`"),
        (ErrorCode::OutOfScope, "region_ids[]: 1b0c5c0e-8f3e-4a36-9d43-4c1c2f1e7a10 is outside the partner's scope"),
    ]),
    ("NotFound", 404, "No such resource (or outside the partner scope).", &[
        (ErrorCode::NotFound, "no grant `no-such-programme`"),
    ]),
    ("MethodNotAllowed", 405, "The path exists, but not with this method.", &[
        (ErrorCode::MethodNotAllowed, "this method is not allowed on this endpoint"),
    ]),
    ("PayloadTooLarge", 413, "The request body is larger than the limit (64 KiB by default).", &[
        (ErrorCode::PayloadTooLarge, "the request body is larger than the limit (64 KiB by default)"),
    ]),
    ("UnsupportedMediaType", 415, "The request body is not sent as `Content-Type: application/json`.", &[
        (ErrorCode::UnsupportedMediaType, "the request body must be JSON with Content-Type: application/json"),
    ]),
    ("TooManyRequests", 429, "A rate limit was exceeded; wait `retry_after` seconds.", &[
        (ErrorCode::RateLimitExceeded, "rate limit exceeded: retry in 12 s"),
    ]),
    ("InternalError", 500, "An internal error; details are only in the server log.", &[
        (ErrorCode::InternalError, "an internal error occurred; it has been logged"),
    ]),
    ("ServiceUnavailable", 503, "The request took longer than the server's time limit (`timeout`), or a service is temporarily unavailable (`service_unavailable`).", &[
        (ErrorCode::Timeout, "the request took too long and was aborted; retry later"),
        (ErrorCode::ServiceUnavailable, "matching is starting: the embedding model is being loaded, retry in a few seconds"),
    ]),
];

fn error_example(status: u16, code: &str, message: &str) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if status == 429 {
        error["retry_after"] = json!(12);
    }
    json!({ "error": error })
}

fn named_examples(items: impl Iterator<Item = (String, Value)>) -> Value {
    let mut m = Map::new();
    for (name, value) in items {
        m.insert(name, json!({ "value": value }));
    }
    Value::Object(m)
}

fn error_examples(status: u16) -> Option<Value> {
    let (_, _, _, examples) = ERROR_RESPONSES.iter().find(|e| e.1 == status)?;
    Some(named_examples(examples.iter().map(|(code, message)| {
        (
            code.as_str().to_string(),
            error_example(status, code.as_str(), message),
        )
    })))
}

fn header_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/headers/{name}") })
}

/// The complete OpenAPI document (built once).
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| finish(serde_json::to_value(ApiDoc::openapi()).expect("serializable")))
}

fn parse_example(name: &str, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("openapi example {name}: {e}"))
}

/// Completes the generated document; see the module documentation.
fn finish(mut doc: Value) -> Value {
    merge_composed_objects(&mut doc);
    let components = doc["components"].as_object_mut().expect("components");
    let error_schema = json!({ "$ref": "#/components/schemas/ErrorBody" });
    let mut responses = Map::new();
    for (name, status, description, _) in ERROR_RESPONSES {
        let mut r = json!({
            "description": description,
            "content": { "application/json": {
                "schema": error_schema,
                "examples": error_examples(*status),
            } }
        });
        if matches!(*status, 429 | 503) {
            r["headers"] = json!({ "Retry-After": header_ref("Retry-After") });
        }
        responses.insert(name.to_string(), r);
    }
    components.insert("responses".into(), Value::Object(responses));
    let int_header =
        |d: &str| json!({ "description": d, "schema": { "type": "integer", "minimum": 0 } });
    components.insert(
        "headers".into(),
        json!({
            "X-RateLimit-Limit": int_header("Requests allowed per window by the tightest applicable limit."),
            "X-RateLimit-Remaining": int_header("Requests left in the window."),
            "X-RateLimit-Reset": int_header("Unix time when the full allowance is back."),
            "Retry-After": int_header("Seconds to wait before retrying."),
        }),
    );

    let paths = doc["paths"].as_object_mut().expect("paths");
    for (path, item) in paths.iter_mut() {
        let has_id = path.contains('{');
        for (method, op) in item.as_object_mut().expect("path item").iter_mut() {
            if !["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                continue;
            }
            complete_operation(op, has_id);
        }
    }
    doc
}

/// A response built from parts with `#[serde(flatten)]` (e.g. the engine's grant view
/// and the partner's annotations) is generated as an `allOf` of the parts' schemas.
/// Each such schema becomes one object with the union of the parts' properties, closed
/// (`additionalProperties: false`) like every other response object, so clients see
/// plain objects. Parts that nothing else refers to are dropped from the components.
fn merge_composed_objects(doc: &mut Value) {
    let paths = serde_json::to_string(&doc["paths"]).expect("serializable");
    let Some(Value::Object(schemas)) = doc.pointer_mut("/components/schemas") else {
        return;
    };
    let mut parts = BTreeSet::new();
    // A part may itself be composed: merge until no `allOf` is left (each round merges
    // at least the innermost ones; the type graph is finite and acyclic).
    while let Some(name) = schemas
        .iter()
        .filter(|(_, s)| s.get("allOf").is_some())
        .find(|(_, s)| {
            !s["allOf"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| ref_name(p).is_some_and(|n| schemas[n].get("allOf").is_some()))
        })
        .map(|(n, _)| n.clone())
    {
        let mut merged = json!({ "type": "object", "required": [], "properties": {} });
        for part in schemas[&name]["allOf"].as_array().expect("allOf").clone() {
            let part = match ref_name(&part) {
                Some(n) => {
                    parts.insert(n.to_string());
                    schemas[n].clone()
                }
                None => part,
            };
            for (k, v) in part["properties"].as_object().into_iter().flatten() {
                merged["properties"][k] = v.clone();
            }
            for r in part["required"].as_array().into_iter().flatten() {
                merged["required"]
                    .as_array_mut()
                    .expect("list")
                    .push(r.clone());
            }
        }
        if let Some(d) = schemas[&name].get("description") {
            merged["description"] = d.clone();
        }
        merged["additionalProperties"] = json!(false);
        schemas[&name] = merged;
    }
    let text = serde_json::to_string(&*schemas).expect("serializable") + &paths;
    for part in parts {
        if !text.contains(&format!("\"#/components/schemas/{part}\"")) {
            schemas.remove(&part);
        }
    }
}

/// The component name of a `$ref` to `#/components/schemas/…`.
fn ref_name(v: &Value) -> Option<&str> {
    v["$ref"].as_str()?.strip_prefix("#/components/schemas/")
}

fn complete_operation(op: &mut Value, has_id: bool) {
    let op_id = op["operationId"].as_str().unwrap_or_default().to_string();
    let scopes: Vec<String> = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|req| req.get("bearer"))
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let authenticated = op["security"]
        .as_array()
        .is_some_and(|reqs| reqs.iter().any(|r| r.get("bearer").is_some()));
    if authenticated {
        let scope_line = format!("**Scope:** `{}` (bearer token).", scopes.join("`, `"));
        let description = match op["description"].as_str() {
            Some(d) if !d.is_empty() => format!("{scope_line}\n\n{d}"),
            _ => scope_line,
        };
        op["description"] = json!(description);
        op["x-required-scopes"] = json!(scopes);
    }
    let has_query = op["parameters"]
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
    let has_body = op.get("requestBody").is_some();

    let mut wanted: Vec<(u16, &str)> = Vec::new();
    if authenticated {
        if has_query || has_body || has_id {
            wanted.push((400, "BadRequest"));
        }
        wanted.push((401, "Unauthorized"));
        wanted.push((403, "Forbidden"));
        if has_id {
            wanted.push((404, "NotFound"));
        }
        if has_body {
            wanted.push((413, "PayloadTooLarge"));
            wanted.push((415, "UnsupportedMediaType"));
        }
        wanted.push((429, "TooManyRequests"));
    }
    wanted.push((500, "InternalError"));
    wanted.push((503, "ServiceUnavailable"));

    let responses = op["responses"].as_object_mut().expect("responses");
    for (status, component) in wanted {
        let key = status.to_string();
        match responses.get_mut(&key) {
            // Documented with an operation-specific description: keep it, add the
            // examples of the status.
            Some(r) => {
                if let Some(c) = r.pointer_mut("/content/application~1json") {
                    if c.get("examples").is_none() {
                        c["examples"] = error_examples(status).unwrap_or(Value::Null);
                    }
                }
                if matches!(status, 429 | 503) {
                    r["headers"] = json!({ "Retry-After": header_ref("Retry-After") });
                }
            }
            None => {
                responses.insert(
                    key,
                    json!({ "$ref": format!("#/components/responses/{component}") }),
                );
            }
        }
    }
    for (status, r) in responses.iter_mut() {
        let status: u16 = status.parse().unwrap_or(0);
        if authenticated && (200..300).contains(&status) {
            let headers = r
                .as_object_mut()
                .expect("response")
                .entry("headers")
                .or_insert_with(|| json!({}));
            for h in [
                "X-RateLimit-Limit",
                "X-RateLimit-Remaining",
                "X-RateLimit-Reset",
            ] {
                headers[h] = header_ref(h);
            }
        }
        let examples: Vec<(String, Value)> = EXAMPLES
            .iter()
            .filter(|(id, s, _, _)| *id == op_id && *s == status)
            .map(|(id, _, name, text)| (name.to_string(), parse_example(id, text)))
            .collect();
        if !examples.is_empty() {
            if let Some(c) = r.pointer_mut("/content/application~1json") {
                c["examples"] = named_examples(examples.into_iter());
            }
        }
    }
    let requests: Vec<(String, Value)> = REQUEST_EXAMPLES
        .iter()
        .filter(|(id, _, _)| *id == op_id)
        .map(|(id, name, text)| (name.to_string(), parse_example(id, text)))
        .collect();
    if !requests.is_empty() {
        if let Some(c) = op.pointer_mut("/requestBody/content/application~1json") {
            c["examples"] = named_examples(requests.into_iter());
        }
    }
}

/// `GET /api/v1/openapi.json` and the Swagger UI under `/api/v1/docs`, without
/// authentication. Other methods on these paths are 405 with the error body.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let ui = SwaggerUi::new(DOCS_PATH).external_url_unchecked(OPENAPI_PATH, document().clone());
    Router::<S>::from(ui).method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented error responses list every code under its own status.
    #[test]
    fn error_examples_follow_the_codes() {
        for (name, status, _, examples) in ERROR_RESPONSES {
            for (code, _) in *examples {
                assert_eq!(code.status().as_u16(), *status, "{name}: {code:?}");
            }
        }
        for code in ErrorCode::ALL {
            let shown = ERROR_RESPONSES
                .iter()
                .any(|(_, _, _, examples)| examples.iter().any(|(c, _)| *c == code));
            assert!(shown, "{code:?} has no example");
        }
    }
}
