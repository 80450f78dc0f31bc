//! The HTTP layer: each module states its routes once (`#[utoipa::path]`, utoipa-axum); [`admin`] mounts the
//! admin API's in their permission areas; here they are composed with the serving routes, the fallbacks,
//! the base path, the body limit, the request timeout and the per-request trace span.

pub mod admin;
pub mod extract;
pub mod fallback;
pub mod health;
pub mod openapi;
pub mod state;
pub mod telemetry;

pub use state::AppState;

use axum::{extract::DefaultBodyLimit, Router};
use fallback::{unknown_route, wrong_method};
use std::sync::Arc;
use std::time::Duration;
use utoipa_axum::router::OpenApiRouter;
use vexil_serving::ServingState;

/// The control plane's routes with their OpenAPI paths, each request logged at info level; `split_for_parts` gives the router (to
/// which the [`AppState`] is given) and the paths of the document ([`openapi::render`]).
pub fn routes() -> OpenApiRouter<Arc<AppState>> {
    health::router()
        .merge(telemetry::router())
        .merge(openapi::router())
        .merge(admin::routes())
        .route_layer(axum::middleware::from_fn(telemetry::log_request))
}

/// Every route under `base_path` ("" or "/x"): `routes` (from [`routes`], with its state) and the serving
/// routes, with JSON errors for unknown routes and wrong methods; bodies up to `limit` bytes; each request
/// answered within `request_timeout` (else 503); a tracing span per request.
pub fn router(
    routes: Router,
    serving: Arc<ServingState>,
    base_path: &str,
    limit: usize,
    request_timeout: Duration,
) -> Router {
    let api = routes
        .merge(vexil_serving::routes(serving))
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method);
    let app = match base_path {
        "" => api,
        _ => {
            // `/x/` (with the slash people type) is the web UI's home, as `/x` is.
            let home = base_path.to_owned();
            Router::new()
                .nest(base_path, api)
                .route(
                    &format!("{base_path}/"),
                    axum::routing::get(move || async move { axum::response::Redirect::to(&home) }),
                )
                .fallback(unknown_route)
        }
    };
    let app = app.layer(DefaultBodyLimit::max(limit));
    vexil_serving::serve::with_request_bounds(app, request_timeout)
}
