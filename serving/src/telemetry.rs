//! Request metrics and logs, recorded the same way by both binaries.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// Histogram buckets of `http_request_duration_seconds`.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// How a request went, once it is answered.
pub struct Answered {
    pub route: String,
    pub method: String,
    pub status: u16,
    pub elapsed_ms: f64,
}

/// Counts the request by route template and status and times it; the caller logs what it returns (at its
/// own level: the SDK routes are the hot path, the admin API is not).
pub async fn measure(request: Request, next: Next) -> (Response, Answered) {
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
    let answered = Answered {
        route,
        method,
        status,
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
    };
    (response, answered)
}

/// [`measure`], logged at debug level (never the headers).
pub async fn record_request(request: Request, next: Next) -> Response {
    let (response, a) = measure(request, next).await;
    tracing::debug!(method = %a.method, route = %a.route, status = a.status, elapsed_ms = a.elapsed_ms, "request");
    response
}
