//! Request metrics and logs, and the Prometheus endpoint.

use super::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;

/// Histogram buckets of `http_request_duration_seconds`.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Counts the request by route template and status, times it, and logs it (never its headers).
pub async fn record_request(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    metrics::counter!("http_requests_total", "route" => route.clone(), "method" => method.clone(), "status" => status.to_string())
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "route" => route.clone(), "method" => method.clone())
        .record(elapsed.as_secs_f64());
    tracing::info!(%method, %route, status, elapsed_ms = elapsed.as_secs_f64() * 1000.0, "request");
    response
}

/// Counts a request no route matched (404) or whose method the route lacks (405).
pub fn record_unrouted(method: &axum::http::Method, status: u16) {
    metrics::counter!("http_requests_total", "route" => "unmatched", "method" => method.to_string(), "status" => status.to_string())
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
