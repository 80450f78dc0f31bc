//! Request metrics and logs, recorded the same way by both binaries, and the Prometheus recorder they go to.

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use rustc_hash::{FxHashMap, FxHasher};
use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::time::Instant;

/// Histogram buckets of `http_request_duration_seconds`.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Installs the process's metrics recorder: Prometheus, with [`LATENCY_BUCKETS`] for
/// `http_request_duration_seconds`. The handle renders the text exposition; the caller runs its upkeep.
pub fn install_prometheus() -> Result<PrometheusHandle, BuildError> {
    PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("http_request_duration_seconds".to_owned()),
            &LATENCY_BUCKETS,
        )?
        .install_recorder()
}

/// How a request went, once it is answered.
pub struct Answered {
    pub route: Option<MatchedPath>,
    pub method: Method,
    pub status: u16,
    pub elapsed_ms: f64,
}

impl Answered {
    /// The route template, or `unmatched`.
    pub fn route(&self) -> &str {
        self.route.as_ref().map_or("unmatched", MatchedPath::as_str)
    }
}

/// The counter and histogram of one route, method and status. Obtaining them from the recorder builds and
/// hashes their label set (several allocations), which would cost more per request than recording; each
/// thread does it once per combination and keeps the handles.
struct RouteMetrics {
    route: Box<str>,
    method: Method,
    status: u16,
    requests: metrics::Counter,
    latency: metrics::Histogram,
}

thread_local! {
    static ROUTE_METRICS: RefCell<FxHashMap<u64, Vec<RouteMetrics>>> = RefCell::new(FxHashMap::default());
}

fn record(route: &str, method: &Method, status: u16, seconds: f64) {
    let key = {
        let mut hasher = FxHasher::default();
        route.hash(&mut hasher);
        method.as_str().hash(&mut hasher);
        status.hash(&mut hasher);
        hasher.finish()
    };
    ROUTE_METRICS.with_borrow_mut(|known| {
        let entries = known.entry(key).or_default();
        let position = entries
            .iter()
            .position(|m| m.status == status && m.method == method && &*m.route == route);
        let metrics = match position {
            Some(i) => &entries[i],
            None => {
                let requests = metrics::counter!("http_requests_total", "route" => route.to_owned(), "method" => method.to_string(), "status" => status.to_string());
                let latency = metrics::histogram!("http_request_duration_seconds", "route" => route.to_owned(), "method" => method.to_string());
                entries.push(RouteMetrics {
                    route: route.into(),
                    method: method.clone(),
                    status,
                    requests,
                    latency,
                });
                &entries[entries.len() - 1]
            }
        };
        metrics.requests.increment(1);
        metrics.latency.record(seconds);
    });
}

/// Counts the request by route template and status and times it; the caller logs what it returns (at its
/// own level: the SDK routes are the hot path, the admin API is not).
pub async fn measure(request: Request, next: Next) -> (Response, Answered) {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let method = request.method().clone();
    let started = Instant::now();
    let response = next.run(request).await;
    let elapsed = started.elapsed();
    let answered = Answered {
        route,
        method,
        status: response.status().as_u16(),
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
    };
    record(
        answered.route(),
        &answered.method,
        answered.status,
        elapsed.as_secs_f64(),
    );
    (response, answered)
}

/// [`measure`], logged at debug level (never the headers).
pub async fn record_request(request: Request, next: Next) -> Response {
    let (response, a) = measure(request, next).await;
    tracing::debug!(method = %a.method, route = a.route(), status = a.status, elapsed_ms = a.elapsed_ms, "request");
    response
}
