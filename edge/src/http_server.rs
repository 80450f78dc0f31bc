//! The edge's HTTP server: the SDK-facing routes of `vexil-serving`, `/health`, `/ready` (503 until a
//! snapshot is loaded) and Prometheus text at `/internal-backstage/prometheus`.

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use axum::extract::{OriginalUri, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::Method;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::PrometheusHandle;
use vexil_serving::serve::{self, HttpTimeouts};
use vexil_serving::{shutdown, telemetry, ServingState};
use vexil_shared::time::now_ms;
use vexil_shared::{ApiError, ErrorKind};

/// The upstream link's state, for `/internal-backstage/prometheus`.
#[derive(Default)]
pub struct UpstreamStatus {
    pub connected: AtomicBool,
    /// Unix milliseconds of the last snapshot update or heartbeat confirming it; 0: never.
    pub last_update_ms: AtomicI64,
}

impl UpstreamStatus {
    pub fn touch(&self) {
        self.last_update_ms.store(now_ms(), Ordering::Relaxed);
    }
}

struct EdgeState {
    serving: Arc<ServingState>,
    status: Arc<UpstreamStatus>,
    prometheus: PrometheusHandle,
}

/// Installs the metrics recorder, binds, prints `listening on ADDR` and serves until SIGTERM or SIGINT, within
/// `timeouts`.
pub async fn serve(
    listen: SocketAddr,
    serving: Arc<ServingState>,
    status: Arc<UpstreamStatus>,
    timeouts: HttpTimeouts,
) -> Result<(), String> {
    let prometheus = install_prometheus()?;
    let app = app(serving.clone(), status, prometheus);
    serve_app(listen, app, serving, timeouts).await
}

/// The process's Prometheus recorder.
pub fn install_prometheus() -> Result<PrometheusHandle, String> {
    telemetry::install_prometheus()
        .map_err(|error| format!("cannot install the metrics recorder: {error}"))
}

/// `/health`, `/ready`, `/internal-backstage/prometheus` and the SDK routes of `serving`.
pub fn app(
    serving: Arc<ServingState>,
    status: Arc<UpstreamStatus>,
    prometheus: PrometheusHandle,
) -> Router {
    let state = Arc::new(EdgeState {
        serving: serving.clone(),
        status,
        prometheus,
    });
    Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/internal-backstage/prometheus", get(prometheus_text))
        .with_state(state)
        .merge(vexil_serving::routes(serving))
}

/// Serves `app` (with a 404 for unknown routes and the request bounds), printing `listening on ADDR`,
/// until SIGTERM or SIGINT.
pub async fn serve_app(
    listen: SocketAddr,
    app: Router,
    serving: Arc<ServingState>,
    timeouts: HttpTimeouts,
) -> Result<(), String> {
    let app = serve::with_request_bounds(app.fallback(unknown_route), timeouts.request_timeout);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|error| format!("cannot listen on {listen}: {error}"))?;
    let address = listener
        .local_addr()
        .map_err(|error| format!("cannot read the bound address: {error}"))?;
    println!("listening on {address}");
    let _ = std::io::stdout().flush();
    tracing::info!(%address, "listening");
    serve::serve(listener, app, timeouts.header_read_timeout, async {
        // A signal that cannot be listened for is never received; the other one still stops the edge.
        shutdown::signal(|_, _| {}).await;
        tracing::info!("shutting down");
        // The change streams never end on their own: end them, so that the requests drain.
        serving.close_streams();
    })
    .await
    .map_err(|error| format!("the HTTP server failed: {error}"))
}

/// Renders the Prometheus text of `prometheus` with the upstream gauges of `status` and `serving`.
pub fn prometheus_answer(
    serving: &ServingState,
    status: &UpstreamStatus,
    prometheus: &PrometheusHandle,
) -> axum::response::Response {
    let revision = serving.current.load().as_ref().map_or(0, |s| s.revision);
    metrics::gauge!("snapshot_revision").set(revision as f64);
    let last = status.last_update_ms.load(Ordering::Relaxed);
    if last > 0 {
        metrics::gauge!("seconds_since_last_update").set((now_ms() - last) as f64 / 1000.0);
    }
    let connected = status.connected.load(Ordering::Relaxed);
    metrics::gauge!("upstream_connected").set(if connected { 1.0 } else { 0.0 });
    prometheus.run_upkeep();
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        prometheus.render(),
    )
        .into_response()
}

#[derive(serde::Serialize)]
struct Health {
    health: &'static str,
}

async fn health() -> Json<Health> {
    Json(Health { health: "GOOD" })
}

async fn ready(State(state): State<Arc<EdgeState>>) -> Result<Json<Health>, ApiError> {
    state.serving.loaded()?;
    Ok(Json(Health { health: "GOOD" }))
}

async fn prometheus_text(State(state): State<Arc<EdgeState>>) -> axum::response::Response {
    prometheus_answer(&state.serving, &state.status, &state.prometheus)
}

async fn unknown_route(method: Method, OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::new(
        ErrorKind::NotFound,
        format!("No route for {method} {}", uri.path()),
    )
}
