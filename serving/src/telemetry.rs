//! Request metrics and logs, recorded the same way by both binaries, the Prometheus recorder they go to, and
//! the line logged when a request is answered ([`log_answer`]). The labels of the request metrics take only
//! bounded values (a route template or `unmatched`, a method of HTTP or `other`, a status), so no request can
//! add a series of its own making.

use axum::extract::MatchedPath;
use axum::http::{self, Method};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use rustc_hash::{FxHashMap, FxHasher};
use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::time::Duration;

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

/// The `route` label of a request: the template of the route it matched, or [`UNMATCHED_ROUTE`].
pub fn route_label(route: Option<&MatchedPath>) -> &str {
    route.map_or(UNMATCHED_ROUTE, MatchedPath::as_str)
}

/// The `route` label of a request no route matched.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// The `method` label of any method but those HTTP defines.
pub const OTHER_METHOD: &str = "other";

/// The `method` label of a request: the method's name for the methods HTTP defines (RFC 9110 and PATCH),
/// [`OTHER_METHOD`] for any other. Clients may send any token as a method; each would otherwise be a new
/// series of every request metric, kept for the life of the process.
pub fn method_label(method: &Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "CONNECT" => "CONNECT",
        "OPTIONS" => "OPTIONS",
        "TRACE" => "TRACE",
        "PATCH" => "PATCH",
        _ => OTHER_METHOD,
    }
}

/// The counter and histogram of one route, method label and status. Obtaining them from the recorder builds
/// and hashes their label set (several allocations), which would cost more per request than recording; each
/// thread does it once per combination and keeps the handles.
struct RouteMetrics {
    route: Box<str>,
    method: &'static str,
    status: u16,
    requests: metrics::Counter,
    latency: metrics::Histogram,
}

thread_local! {
    static ROUTE_METRICS: RefCell<FxHashMap<u64, Vec<RouteMetrics>>> = RefCell::new(FxHashMap::default());
}

fn record(route: &str, method: &Method, status: u16, seconds: f64) {
    let method = method_label(method);
    let key = {
        let mut hasher = FxHasher::default();
        route.hash(&mut hasher);
        method.hash(&mut hasher);
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
                let requests = metrics::counter!("http_requests_total", "route" => route.to_owned(), "method" => method, "status" => status.to_string());
                let latency = metrics::histogram!("http_request_duration_seconds", "route" => route.to_owned(), "method" => method);
                entries.push(RouteMetrics {
                    route: route.into(),
                    method,
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

/// Counts and times an answered request (`http_requests_total`, `http_request_duration_seconds`), by route
/// template (or `unmatched`), method label and status: [`crate::serve::with_request_bounds`] calls it for
/// every request.
pub fn record_answer(route: Option<&MatchedPath>, method: &Method, status: u16, elapsed: Duration) {
    record(route_label(route), method, status, elapsed.as_secs_f64());
}

/// The line logged when a request is answered (inside its span, [`crate::serve::with_request_bounds`]):
/// `status` and `latency_ms`, at DEBUG, at WARN for a 5xx; never the headers.
pub fn log_answer(status: http::StatusCode, elapsed: Duration) {
    if status.is_server_error() {
        tracing::warn!(
            status = status.as_u16(),
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            "answered"
        );
    } else {
        tracing::debug!(
            status = status.as_u16(),
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            "answered"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::get;
    use axum::Router;
    use std::sync::{Arc, Mutex};
    use tower::ServiceExt as _;

    /// What the fmt subscriber writes, kept for the test to read.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    async fn logs_of(level: &str, paths: &[&str]) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(level)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);
        let app = Router::new()
            .route("/flags/{name}", get(|| async { "on" }))
            .route(
                "/broken",
                get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
            )
            .fallback(|| async { StatusCode::NOT_FOUND });
        let app = crate::serve::with_request_bounds(app, Duration::from_secs(5));
        for path in paths {
            let request = http::Request::get(*path).body(Body::empty()).unwrap();
            app.clone().oneshot(request).await.unwrap();
        }
        let bytes = captured.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[tokio::test]
    async fn the_span_names_the_route_template_and_the_answer_is_logged_at_debug() {
        let logs = logs_of("debug", &["/flags/secret-name", "/nowhere/else"]).await;
        let lines: Vec<&str> = logs.lines().collect();
        assert_eq!(lines.len(), 2, "{logs}");
        assert!(
            lines[0].contains(r#"DEBUG http_request{method=GET route="/flags/{name}"}"#),
            "{logs}"
        );
        assert!(lines[0].contains("answered status=200"), "{logs}");
        assert!(
            lines[1].contains(r#"route="unmatched""#) && lines[1].contains("status=404"),
            "{logs}"
        );
        assert!(
            !logs.contains("secret-name") && !logs.contains("nowhere"),
            "{logs}"
        );
    }

    #[test]
    fn made_up_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        for made_up in ["FOO", "get", "X-1234"] {
            let method = Method::from_bytes(made_up.as_bytes()).unwrap();
            assert_eq!(method_label(&method), OTHER_METHOD, "{made_up}");
        }
    }

    #[tokio::test]
    async fn at_info_only_server_errors_are_logged() {
        let logs = logs_of("info", &["/flags/a", "/nowhere", "/broken"]).await;
        let lines: Vec<&str> = logs.lines().collect();
        assert_eq!(lines.len(), 1, "{logs}");
        assert!(
            lines[0].contains("WARN") && lines[0].contains("status=500"),
            "{logs}"
        );
    }
}
