//! Request metrics and logs, and the Prometheus endpoint.

use super::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The Prometheus route, as stated in its handler's `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(prometheus))
}

/// Logs an admin API request at info level when it is answered (never the headers); its metrics and its
/// DEBUG line are recorded for every request by `vexil_serving::serve::with_request_bounds`.
pub async fn log_request(request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let method = request.method().clone();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::info!(
        method = %method,
        route = vexil_serving::telemetry::route_label(route.as_ref()),
        status = response.status().as_u16(),
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    response
}

/// Prometheus text exposition.
#[utoipa::path(
    get, path = "/internal-backstage/prometheus", tag = "Health",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain"))
)]
pub async fn prometheus(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.prometheus.render(),
    )
}
