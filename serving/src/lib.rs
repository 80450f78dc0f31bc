//! The SDK-facing HTTP API of Vexil, shared by the edge and the control plane (single-binary installs):
//! the frontend API (`/api/frontend*`) and the client API (`/api/client/features*`), answered from the
//! current [`ServingSnapshot`] held in an `ArcSwapOption`, so requests never lock.
//!
//! [`snapshot`] builds and advances snapshots from the `vexil.v1` messages; [`extract`] holds the
//! extractors (context, client IP, token scope); [`frontend`] and [`client_api`] the thin handlers;
//! [`telemetry`] the request metrics both binaries record.

pub mod client_api;
pub mod extract;
pub mod frontend;
pub mod snapshot;
pub mod telemetry;
pub mod usage;

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use vexil_shared::{ApiError, ErrorKind};

pub use snapshot::{ServingSnapshot, Settings, TokenGrant};

/// What the SDK-facing handlers read: the current snapshot (none until one is loaded), whether to trust
/// `X-Forwarded-For`, where the SDKs' usage goes (none: accepted and dropped) and whether the frontend
/// API counts the evaluations it answers.
#[derive(Default)]
pub struct ServingState {
    pub current: ArcSwapOption<ServingSnapshot>,
    pub trust_proxy: bool,
    pub usage: Option<Arc<dyn usage::UsageSink>>,
    pub count_evaluations: bool,
    /// Authentication `none` (API.md §2): a call without an `Authorization` header acts as a token for
    /// every project in `development`.
    pub anonymous: bool,
}

impl ServingState {
    pub fn new(trust_proxy: bool) -> ServingState {
        ServingState {
            current: ArcSwapOption::empty(),
            trust_proxy,
            usage: None,
            count_evaluations: false,
            anonymous: false,
        }
    }

    /// The SDKs' register and metrics posts go to `sink`.
    pub fn with_usage(mut self, sink: Arc<dyn usage::UsageSink>) -> ServingState {
        self.usage = Some(sink);
        self
    }

    /// The frontend API counts its evaluations per flag ([`usage::EvaluationCounters`]).
    pub fn counting_evaluations(mut self, on: bool) -> ServingState {
        self.count_evaluations = on;
        self
    }

    /// The current snapshot; 503 while none is loaded.
    pub fn loaded(&self) -> Result<Arc<ServingSnapshot>, ApiError> {
        self.current.load_full().ok_or_else(|| {
            ApiError::new(
                ErrorKind::Unavailable,
                "No configuration snapshot is loaded yet",
            )
        })
    }
}

/// The header every evaluation answer carries: the revision it was computed at.
pub const REVISION_HEADER: &str = "x-vexil-revision";

/// `/api/frontend`, `/api/frontend/features/{name}`, `/api/frontend/client/{metrics,register}`,
/// `/api/client/features`, `/api/client/features/{name}`, `/api/client/{register,metrics,metrics/bulk}`.
pub fn routes(state: Arc<ServingState>) -> Router {
    let frontend = Router::new()
        .route(
            "/api/frontend",
            get(frontend::evaluate_query)
                .post(frontend::evaluate_body)
                .options(preflight),
        )
        .route(
            "/api/frontend/features/{name}",
            get(frontend::evaluate_one).options(preflight_feature),
        )
        .route(
            "/api/frontend/client/metrics",
            post(usage::frontend_metrics).options(preflight),
        )
        .route(
            "/api/frontend/client/register",
            post(usage::frontend_register).options(preflight),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            frontend::cors,
        ));
    let client = Router::new()
        .route("/api/client/features", get(client_api::features))
        .route("/api/client/features/{name}", get(client_api::feature))
        .route("/api/client/register", post(usage::client_register))
        .route("/api/client/metrics", post(usage::client_metrics))
        .route("/api/client/metrics/bulk", post(usage::client_metrics_bulk));
    frontend
        .merge(client)
        .route_layer(axum::middleware::from_fn(telemetry::record_request))
        .with_state(state)
}

/// CORS preflight, answered by the CORS layer without a token; present so that the routes accept `OPTIONS`.
#[cfg_attr(feature = "openapi", utoipa::path(
    options, path = "/api/frontend", tag = "Frontend API",
    responses((status = 204, description = "CORS preflight"))
))]
pub async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// CORS preflight of one flag's route.
#[cfg_attr(feature = "openapi", utoipa::path(
    options, path = "/api/frontend/features/{name}", tag = "Frontend API",
    params(("name" = String, Path, description = "Flag name")),
    responses((status = 204, description = "CORS preflight"))
))]
pub async fn preflight_feature() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// A 200 (or other) JSON answer from an already serialized body, with `X-Vexil-Revision`.
pub fn json_response(status: StatusCode, body: Vec<u8>, revision: u64) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    revision_header(&mut response, revision);
    response
}

pub fn revision_header(response: &mut Response, revision: u64) {
    response
        .headers_mut()
        .insert(REVISION_HEADER, HeaderValue::from(revision));
}
