//! Request metrics and logs, and the Prometheus endpoint.

use super::AppState;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The Prometheus route, as stated in its handler's `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(prometheus))
}

/// [`vexil_serving::telemetry::measure`], logged at info level (never the headers).
pub async fn record_request(request: Request, next: Next) -> Response {
    let (response, a) = vexil_serving::telemetry::measure(request, next).await;
    tracing::info!(method = %a.method, route = a.route(), status = a.status, elapsed_ms = a.elapsed_ms, "request");
    response
}

/// Counts a request no route matched (404) or whose method the route lacks (405), under the bounded labels
/// of `vexil_serving::telemetry` (route `unmatched`, a made-up method as `other`).
pub fn record_unrouted(method: &axum::http::Method, status: u16) {
    use vexil_serving::telemetry::{method_label, UNMATCHED_ROUTE};
    metrics::counter!("http_requests_total", "route" => UNMATCHED_ROUTE, "method" => method_label(method), "status" => status.to_string())
        .increment(1);
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
