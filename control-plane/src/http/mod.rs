//! The HTTP layer: each module states its routes once (`#[utoipa::path]`, utoipa-axum); [`admin`] mounts the
//! admin API's in their permission areas; here they are composed with the serving routes, the fallbacks,
//! the base path, the body limit, the request timeout and the per-request trace span. A URL holding a NUL
//! (`%00`), which no database stores in text, is refused here for every control-plane route
//! ([`refuse_nul_in_url`]); a JSON body holding one in [`extract::parse_json`].

pub mod admin;
pub mod extract;
pub mod fallback;
pub mod health;
pub mod openapi;
pub mod route_permissions;
pub mod scim;
pub mod state;
pub mod telemetry;

pub use state::AppState;

use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use fallback::{unknown_route, wrong_method};
use std::sync::Arc;
use std::time::Duration;
use utoipa_axum::router::OpenApiRouter;
use vexil_serving::ServingState;
use vexil_shared::ApiError;

/// The control plane's routes with their OpenAPI paths, each request logged at info level; `split_for_parts` gives the router (to
/// which the [`AppState`] is given) and the paths of the document ([`openapi::render`]).
pub fn routes() -> OpenApiRouter<Arc<AppState>> {
    health::router()
        .merge(telemetry::router())
        .merge(openapi::router())
        .merge(admin::routes())
        .merge(scim::router())
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
        .layer(axum::middleware::from_fn(refuse_nul_in_url))
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

/// 400 for a URL whose path or query decodes to a NUL character: PostgreSQL refuses NUL in text, and
/// SQLite's full-text search ends a phrase at it, so no path segment or query parameter may hold one (the
/// one check for every route that reaches the store: admin API, web UI, health; the SDK routes, served from
/// memory as on the edges, are left as the edges have them). Only `%00` decodes to NUL; a raw NUL byte never
/// gets past the HTTP parser. Below `/scim/v2` the refusal is a SCIM Error, as every SCIM answer is.
async fn refuse_nul_in_url(request: Request, next: Next) -> Response {
    let holds_nul = request
        .uri()
        .path_and_query()
        .is_some_and(|path| path.as_str().contains("%00"));
    if holds_nul {
        let refusal = ApiError::validation(
            "The URL holds a NUL character (%00), which no path segment or query parameter may contain",
        );
        if request.uri().path().starts_with(scim::PATH) {
            return scim::ScimFailure::from(refusal).into_response();
        }
        return refusal.into_response();
    }
    next.run(request).await
}
