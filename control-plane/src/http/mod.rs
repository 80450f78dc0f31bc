//! The HTTP layer: each module states its routes once (`#[utoipa::path]`, utoipa-axum); here they are
//! mounted, admin ones in their permission area, with the serving routes, fallbacks, base path, body limit.

pub mod change_requests;
pub mod context_fields;
pub mod environments;
pub mod events;
pub mod extract;
pub mod fallback;
pub mod features;
pub mod groups;
pub mod health;
pub mod metrics;
pub mod openapi;
pub mod playground;
pub mod projects;
pub mod segments;
pub mod state;
pub mod strategies;
pub mod strategy_definitions;
pub mod telemetry;
pub mod tokens;
pub mod ui_config;
pub mod users;
pub mod variants;

pub use state::AppState;

use crate::domain::access::Area::{Access, Configuration, OwnAccount, Settings};
use axum::{extract::DefaultBodyLimit, Router};
use extract::area;
use fallback::{unknown_route, wrong_method};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use vexil_serving::ServingState;

/// The control plane's routes with their OpenAPI paths, all measured; `split_for_parts` gives the router (to
/// which the [`AppState`] is given) and the paths of the document ([`openapi::render`]).
pub fn routes() -> OpenApiRouter<Arc<AppState>> {
    health::router()
        .merge(telemetry::router())
        .merge(openapi::router())
        .merge(users::sign_in_router())
        .merge(area(OwnAccount, users::account_router()))
        .merge(area(Access, users::router()))
        .merge(area(Access, groups::router()))
        .merge(area(Access, tokens::router()))
        .merge(area(Settings, ui_config::router()))
        .merge(area(Configuration, projects::router()))
        .merge(area(Configuration, environments::router()))
        .merge(area(Configuration, features::router()))
        .merge(area(Configuration, strategies::router()))
        .merge(area(Configuration, variants::router()))
        .merge(area(Configuration, segments::router()))
        .merge(area(Configuration, strategy_definitions::router()))
        .merge(area(Configuration, context_fields::router()))
        .merge(area(Configuration, playground::router()))
        .merge(area(Configuration, events::router()))
        .merge(area(Configuration, metrics::router()))
        .merge(area(Configuration, change_requests::router()))
        .route_layer(axum::middleware::from_fn(telemetry::record_request))
}

/// Every route under `base_path` ("" or "/x"): `routes` (from [`routes`], with its state) and the serving
/// routes, with JSON errors for unknown routes and wrong methods; bodies up to `limit` bytes; a tracing span
/// per request.
pub fn router(routes: Router, serving: Arc<ServingState>, base_path: &str, limit: usize) -> Router {
    let api = routes
        .merge(vexil_serving::routes(serving))
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method);
    let app = match base_path {
        "" => api,
        _ => Router::new().nest(base_path, api).fallback(unknown_route),
    };
    app.layer(DefaultBodyLimit::max(limit))
        .layer(vexil_serving::telemetry::http_trace_layer())
}
