//! The OpenAPI 3 document, generated from the handlers' annotations as the routers register them.

use super::{scim, AppState};
use crate::domain::maintenance;
use axum::extract::State;
use axum::Json;
use std::collections::HashMap;
use std::sync::Arc;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::server::Server;
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The document's route, as stated in its handler's `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(document))
}

/// The document's info and security scheme; its paths come from the routers ([`render`]).
#[derive(OpenApi)]
#[openapi(
    info(title = "Vexil control plane", description = "Admin API, wire-compatible with Unleash."),
    modifiers(&TokenSecurity)
)]
pub struct ApiDoc;

/// The `Authorization: <secret>` scheme of admin tokens and personal access tokens, the SCIM token's and a
/// signal endpoint's tokens'.
struct TokenSecurity;

impl Modify for TokenSecurity {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiToken",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("Authorization"))),
        );
        // `/scim/v2`: the SCIM token as a bearer token.
        components.add_security_scheme(
            "scimToken",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        // `/api/signal-endpoint/:name`: one of the endpoint's tokens as a bearer token.
        components.add_security_scheme(
            "signalToken",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document for a server under `base_path`: [`ApiDoc`] with the paths and schemas of `routes` (those
/// of the routers that serve them, [`super::routes`]) and of `vexil-serving`'s routers.
pub fn render(routes: utoipa::openapi::OpenApi, base_path: &str) -> serde_json::Value {
    let mut openapi = ApiDoc::openapi().merge_from(routes);
    let serving = vexil_serving::openapi();
    let sdk_paths: Vec<String> = serving.paths.paths.keys().cloned().collect();
    openapi.merge(serving);
    if !base_path.is_empty() {
        openapi.servers = Some(vec![Server::new(base_path)]);
    }
    let mut document = serde_json::to_value(&openapi).unwrap_or(serde_json::Value::Null);
    make_operation_ids_unique(&mut document);
    document_shared_refusals(&mut document, &sdk_paths);
    document
}

/// The refusals every operation of a kind can answer, whatever its handler says: 400 for a URL the router
/// refuses before any handler (a `%00`, `refuse_nul_in_url`; a path parameter beyond its type's range) on
/// every route but the SDK routes (`sdk_paths`, served as the edges serve them), and 503 for a change to the
/// admin API while maintenance mode is on (its switch itself excepted).
fn document_shared_refusals(document: &mut serde_json::Value, sdk_paths: &[String]) {
    let Some(paths) = document
        .get_mut("paths")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut().filter(|_| !sdk_paths.contains(path)) else {
            continue;
        };
        // A SCIM Error below `/scim/v2` (as the SCIM routes document theirs), else an `ErrorBody`.
        let refusal = |description: &str| {
            let content = if path.starts_with(scim::PATH) {
                serde_json::json!({(scim::SCIM_JSON): {}})
            } else {
                serde_json::json!({"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}})
            };
            serde_json::json!({"description": description, "content": content})
        };
        for (method, operation) in item.iter_mut() {
            let Some(responses) = operation
                .get_mut("responses")
                .and_then(serde_json::Value::as_object_mut)
            else {
                continue;
            };
            responses.entry("400").or_insert_with(|| {
                refusal("A URL holding a NUL character (`%00`), or a path parameter out of its type's range")
            });
            let change = !matches!(method.as_str(), "get" | "head" | "options");
            if change && path.starts_with("/api/admin/") && path != maintenance::SWITCH_PATH {
                responses
                    .entry("503")
                    .or_insert_with(|| refusal("Maintenance mode is on: changes are paused"));
            }
        }
    }
}

/// utoipa names an operation after its handler, and handlers of different resources share names (`get`,
/// `create`, `list`…). OpenAPI requires the ids to be unique: tools that follow a link by `operationId`
/// (schemathesis's stateful phase) would land on another resource's operation. A shared id gets its path
/// appended (`get` of `/api/admin/groups/{groupId}` → `get_groups_groupId`); unique ones stay as they are.
fn make_operation_ids_unique(document: &mut serde_json::Value) {
    let Some(paths) = document
        .get_mut("paths")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    let mut uses: HashMap<String, usize> = HashMap::new();
    for operation in paths
        .values()
        .filter_map(serde_json::Value::as_object)
        .flat_map(|item| item.values())
    {
        if let Some(id) = operation
            .get("operationId")
            .and_then(serde_json::Value::as_str)
        {
            *uses.entry(id.to_owned()).or_default() += 1;
        }
    }
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for operation in item.values_mut() {
            let Some(id) = operation
                .get("operationId")
                .and_then(serde_json::Value::as_str)
            else {
                continue;
            };
            if uses.get(id).copied().unwrap_or(0) > 1 {
                let unique = format!("{id}_{}", path_words(path));
                operation["operationId"] = serde_json::Value::String(unique);
            }
        }
    }
}

/// A path as identifier words: `/api/admin/user-admin/{id}` → `user_admin_id`.
fn path_words(path: &str) -> String {
    let mut segments = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .peekable();
    for prefix in ["api", "admin"] {
        segments.next_if_eq(&prefix);
    }
    segments
        .map(|segment| {
            segment
                .chars()
                .filter(|c| !matches!(c, '{' | '}'))
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// This document.
#[utoipa::path(get, path = "/docs/openapi.json", tag = "Health", responses((status = 200, description = "OpenAPI 3 document", content_type = "application/json")))]
pub async fn document(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(state.openapi.clone())
}
