//! The OpenAPI 3 document, generated from the handlers' annotations.

use super::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::server::Server;
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "Vexil control plane", description = "Admin API, wire-compatible with Unleash."),
    modifiers(&TokenSecurity),
    paths(
        super::health::health,
        super::health::ready,
        super::telemetry::prometheus,
        document,
        super::projects::list,
        super::projects::create,
        super::projects::get,
        super::projects::update,
        super::projects::delete,
        super::projects::add_environment,
        super::projects::remove_environment,
        super::environments::list,
        super::environments::get,
        super::environments::create,
        super::environments::update,
        super::environments::delete,
        super::environments::turn_on,
        super::environments::turn_off,
        super::features::list,
        super::features::create,
        super::features::get,
        super::features::update,
        super::features::patch,
        super::features::archive,
        super::features::archive_many,
        super::features::validate,
        super::features::turn_on,
        super::features::turn_off,
        super::features::archived,
        super::features::archived_of_project,
        super::features::revive,
        super::features::delete_archived,
        super::strategies::list,
        super::strategies::add,
        super::strategies::get,
        super::strategies::update,
        super::strategies::patch,
        super::strategies::delete,
        super::strategies::set_sort_order,
        super::variants::get,
        super::variants::put,
        super::variants::patch,
        super::segments::list,
        super::segments::get,
        super::segments::create,
        super::segments::update,
        super::segments::delete,
        super::strategy_definitions::list,
        super::strategy_definitions::get,
        super::strategy_definitions::create,
        super::strategy_definitions::update,
        super::strategy_definitions::delete,
        super::strategy_definitions::deprecate,
        super::strategy_definitions::reactivate,
        super::context_fields::list,
        super::context_fields::get,
        super::context_fields::create,
        super::context_fields::update,
        super::context_fields::delete,
        super::playground::evaluate,
        super::events::list,
        super::events::of_feature,
        super::tokens::list,
        super::tokens::create,
        super::tokens::update,
        super::tokens::delete,
        super::users::list,
        super::users::get,
        super::users::create,
        super::users::update,
        super::users::delete,
        super::users::current,
        super::users::list_pats,
        super::users::create_pat,
        super::users::delete_pat,
        super::users::login,
        super::groups::list,
        super::groups::create,
        super::groups::get,
        super::groups::replace,
        super::groups::delete,
        super::metrics::seen_toggles,
        super::metrics::feature_toggles,
        super::metrics::feature_toggle,
        super::metrics::applications,
        super::metrics::application,
        super::metrics::set_metadata,
        super::metrics::seen_apps,
        super::metrics::feature_usage,
        super::metrics::edges,
        super::change_requests::configuration,
        super::change_requests::configure,
        super::change_requests::add_changes,
        super::change_requests::list,
        super::change_requests::get,
        super::change_requests::discard,
        super::change_requests::edit_change,
        super::change_requests::discard_change,
        super::change_requests::change_state,
        super::change_requests::comment,
        super::ui_config::get,
        super::ui_config::set,
        super::ui_config::set_cors,
        vexil_serving::frontend::evaluate_query,
        vexil_serving::frontend::evaluate_body,
        vexil_serving::preflight,
        vexil_serving::frontend::evaluate_one,
        vexil_serving::preflight_feature,
        vexil_serving::client_api::features,
        vexil_serving::client_api::feature,
        vexil_serving::client_api::client_register,
        vexil_serving::client_api::client_metrics,
        vexil_serving::client_api::client_metrics_bulk,
        vexil_serving::frontend::frontend_metrics,
        vexil_serving::frontend::frontend_register,
    )
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

/// The document for a server under `base_path`.
pub fn render(base_path: &str) -> serde_json::Value {
    let mut openapi = ApiDoc::openapi();
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
