//! The OpenAPI 3 document, generated from the handlers' annotations as the routers register them.

use super::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
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

/// The `Authorization: <secret>` scheme of admin tokens and personal access tokens.
struct TokenSecurity;

impl Modify for TokenSecurity {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiToken",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("Authorization"))),
        );
    }
}

/// The document for a server under `base_path`: [`ApiDoc`] with the paths and schemas of `routes` (those
/// of the routers that serve them, [`super::routes`]) and of `vexil-serving`'s routers.
pub fn render(routes: utoipa::openapi::OpenApi, base_path: &str) -> serde_json::Value {
    let mut openapi = ApiDoc::openapi().merge_from(routes);
    openapi.merge(vexil_serving::openapi());
    if !base_path.is_empty() {
        openapi.servers = Some(vec![Server::new(base_path)]);
    }
    serde_json::to_value(&openapi).unwrap_or(serde_json::Value::Null)
}

/// This document.
#[utoipa::path(get, path = "/docs/openapi.json", tag = "Health", responses((status = 200, description = "OpenAPI 3 document", content_type = "application/json")))]
pub async fn document(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(state.openapi.clone())
}
