//! The HTTP layer: the router, the shared state and thin handlers that extract, call the domain and answer.

pub mod change_requests;
pub mod context_fields;
pub mod environments;
pub mod events;
pub mod extract;
pub mod features;
pub mod groups;
pub mod health;
pub mod metrics;
pub mod openapi;
pub mod playground;
pub mod projects;
pub mod segments;
pub mod strategies;
pub mod strategy_definitions;
pub mod telemetry;
pub mod tokens;
pub mod ui_config;
pub mod users;
pub mod variants;

use crate::domain::limits::Limits;
use crate::store::Store;
use axum::extract::DefaultBodyLimit;
use axum::extract::OriginalUri;
use axum::http::Method;
use axum::routing::{delete, get, post, put};
use axum::Router;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// What every handler can reach.
pub struct AppState {
    pub store: Store,
    /// False with `--auth-type none`.
    pub auth_enabled: bool,
    /// False with `--disable-password-auth`.
    pub password_auth: bool,
    /// "" or "/x".
    pub base_path: String,
    pub prometheus: PrometheusHandle,
    /// The OpenAPI document, rendered once.
    pub openapi: serde_json::Value,
    pub limits: Limits,
    /// Unix milliseconds now: the metrics views' windows are relative to it (tests inject their own).
    pub clock: Clock,
}

/// A source of the current time in Unix milliseconds.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Every route, under `base_path` ("" or "/x"), with JSON errors for unknown routes and wrong methods.
pub fn router(
    state: Arc<AppState>,
    serving: Arc<vexil_serving::ServingState>,
    base_path: &str,
    body_limit: usize,
) -> Router {
    let admin = "/api/admin";
    let project = "/api/admin/projects/{projectId}";
    let feature = "/api/admin/projects/{projectId}/features/{featureName}";
    let feature_environment =
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}";
    let api = Router::new()
        .route("/health", get(health::health))
        .route("/ready", get(health::ready))
        .route("/internal-backstage/prometheus", get(telemetry::prometheus))
        .route("/docs/openapi.json", get(openapi::document))
        .route(
            &format!("{admin}/projects"),
            get(projects::list).post(projects::create),
        )
        .route(
            project,
            get(projects::get)
                .put(projects::update)
                .delete(projects::delete),
        )
        .route(
            &format!("{project}/environments"),
            post(projects::add_environment),
        )
        .route(
            &format!("{project}/environments/{{environment}}"),
            delete(projects::remove_environment),
        )
        .route(
            &format!("{admin}/environments"),
            get(environments::list).post(environments::create),
        )
        .route(
            &format!("{admin}/environments/{{name}}"),
            get(environments::get).delete(environments::delete),
        )
        .route(
            &format!("{admin}/environments/update/{{name}}"),
            put(environments::update),
        )
        .route(
            &format!("{admin}/environments/{{name}}/on"),
            post(environments::turn_on),
        )
        .route(
            &format!("{admin}/environments/{{name}}/off"),
            post(environments::turn_off),
        )
        .route(
            &format!("{project}/features"),
            get(features::list).post(features::create),
        )
        .route(
            feature,
            get(features::get)
                .put(features::update)
                .patch(features::patch)
                .delete(features::archive),
        )
        .route(&format!("{project}/archive"), post(features::archive_many))
        .route(
            &format!("{admin}/features/validate"),
            post(features::validate),
        )
        .route(
            &format!("{feature_environment}/on"),
            post(features::turn_on),
        )
        .route(
            &format!("{feature_environment}/off"),
            post(features::turn_off),
        )
        .route(
            &format!("{admin}/archive/features"),
            get(features::archived),
        )
        .route(
            &format!("{admin}/archive/features/{{projectId}}"),
            get(features::archived_of_project),
        )
        .route(
            &format!("{admin}/archive/revive/{{featureName}}"),
            post(features::revive),
        )
        .route(
            &format!("{admin}/archive/{{featureName}}"),
            delete(features::delete_archived),
        )
        .route(
            &format!("{feature_environment}/strategies"),
            get(strategies::list).post(strategies::add),
        )
        .route(
            &format!("{feature_environment}/strategies/set-sort-order"),
            post(strategies::set_sort_order),
        )
        .route(
            &format!("{feature_environment}/strategies/{{strategyId}}"),
            get(strategies::get)
                .put(strategies::update)
                .patch(strategies::patch)
                .delete(strategies::delete),
        )
        .route(
            &format!("{feature_environment}/variants"),
            get(variants::get).put(variants::put).patch(variants::patch),
        )
        .route(
            &format!("{admin}/segments"),
            get(segments::list).post(segments::create),
        )
        .route(
            &format!("{admin}/segments/{{id}}"),
            get(segments::get)
                .put(segments::update)
                .delete(segments::delete),
        )
        .route(
            &format!("{admin}/strategies"),
            get(strategy_definitions::list).post(strategy_definitions::create),
        )
        .route(
            &format!("{admin}/strategies/{{strategyName}}"),
            get(strategy_definitions::get)
                .put(strategy_definitions::update)
                .delete(strategy_definitions::delete),
        )
        .route(
            &format!("{admin}/strategies/{{strategyName}}/deprecate"),
            post(strategy_definitions::deprecate),
        )
        .route(
            &format!("{admin}/strategies/{{strategyName}}/reactivate"),
            post(strategy_definitions::reactivate),
        )
        .route(
            &format!("{admin}/context"),
            get(context_fields::list).post(context_fields::create),
        )
        .route(
            &format!("{admin}/context/{{contextField}}"),
            get(context_fields::get)
                .put(context_fields::update)
                .delete(context_fields::delete),
        )
        .route(&format!("{admin}/playground"), post(playground::evaluate))
        .route(&format!("{admin}/events"), get(events::list))
        .route(
            &format!("{admin}/events/{{featureName}}"),
            get(events::of_feature),
        )
        .route(
            &format!("{admin}/api-tokens"),
            get(tokens::list).post(tokens::create),
        )
        .route(
            &format!("{admin}/api-tokens/{{token}}"),
            put(tokens::update).delete(tokens::delete),
        )
        .route(
            &format!("{admin}/user-admin"),
            get(users::list).post(users::create),
        )
        .route(
            &format!("{admin}/user-admin/{{id}}"),
            get(users::get).put(users::update).delete(users::delete),
        )
        .route(&format!("{admin}/user"), get(users::current))
        .route(
            &format!("{admin}/user/tokens"),
            get(users::list_pats).post(users::create_pat),
        )
        .route(
            &format!("{admin}/user/tokens/{{id}}"),
            delete(users::delete_pat),
        )
        .route("/auth/simple/login", post(users::login))
        .route(
            &format!("{admin}/groups"),
            get(groups::list).post(groups::create),
        )
        .route(
            &format!("{admin}/groups/{{groupId}}"),
            get(groups::get).put(groups::replace).delete(groups::delete),
        )
        .route(
            &format!("{admin}/metrics/seen-toggles"),
            get(metrics::seen_toggles),
        )
        .route(
            &format!("{admin}/metrics/feature-toggles"),
            get(metrics::feature_toggles),
        )
        .route(
            &format!("{admin}/metrics/feature-toggles/{{name}}"),
            get(metrics::feature_toggle),
        )
        .route(
            &format!("{admin}/metrics/applications"),
            get(metrics::applications),
        )
        .route(
            &format!("{admin}/metrics/applications/{{appName}}"),
            get(metrics::application).post(metrics::set_metadata),
        )
        .route(
            &format!("{admin}/metrics/seen-apps"),
            get(metrics::seen_apps),
        )
        .route(&format!("{admin}/metrics/edges"), get(metrics::edges))
        .route(
            &format!("{admin}/client-metrics/features/{{name}}"),
            get(metrics::feature_usage),
        )
        .route(
            &format!("{project}/change-requests/config"),
            get(change_requests::configuration),
        )
        .route(
            &format!("{project}/environments/{{environment}}/change-requests/config"),
            put(change_requests::configure),
        )
        .route(
            &format!("{project}/environments/{{environment}}/change-requests"),
            post(change_requests::add_changes),
        )
        .route(
            &format!("{project}/change-requests"),
            get(change_requests::list),
        )
        .route(
            &format!("{project}/change-requests/{{id}}"),
            get(change_requests::get).delete(change_requests::discard),
        )
        .route(
            &format!("{project}/change-requests/{{id}}/changes/{{changeId}}"),
            put(change_requests::edit_change).delete(change_requests::discard_change),
        )
        .route(
            &format!("{project}/change-requests/{{id}}/state"),
            put(change_requests::change_state),
        )
        .route(
            &format!("{project}/change-requests/{{id}}/comments"),
            post(change_requests::comment),
        )
        .route(
            &format!("{admin}/ui-config"),
            get(ui_config::get).post(ui_config::set),
        )
        .route(
            &format!("{admin}/ui-config/cors"),
            post(ui_config::set_cors),
        )
        .route_layer(axum::middleware::from_fn(telemetry::record_request))
        .with_state(state)
        .merge(vexil_serving::routes(serving))
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method);
    let app = if base_path.is_empty() {
        api
    } else {
        Router::new().nest(base_path, api).fallback(unknown_route)
    };
    app.layer(DefaultBodyLimit::max(body_limit))
}

async fn unknown_route(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    telemetry::record_unrouted(&method, 404);
    ApiError::not_found(format!("No route for {method} {}", uri.path()))
}

async fn wrong_method(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    telemetry::record_unrouted(&method, 405);
    ApiError::new(
        ErrorKind::MethodNotAllowed,
        format!("{method} is not allowed on {}", uri.path()),
    )
}
