//! The SDK-facing HTTP API of Vexil, shared by the edge and the control plane (single-binary installs):
//! the frontend API (`/api/frontend*`) and the client API (`/api/client/features*`), answered from the
//! current [`ServingSnapshot`] held in an `ArcSwapOption`, so requests never lock.
//!
//! [`snapshot`] builds and advances snapshots from the `vexil.v1` messages; [`state`] holds what every
//! request reads; [`extract`] holds the extractors (context, client IP, token scope); [`frontend`] and
//! [`client_api`] the thin handlers, [`response`] how they write answers; [`usage`] the SDKs' register and
//! metrics bodies; [`evaluation_counters`] the evaluations counted per flag; [`telemetry`] the request
//! metrics both binaries record and their Prometheus recorder; [`shutdown`] the signals both stop on.
//!
//! This root only assembles the routes: the modules never import from it.

pub mod client_api;
pub mod evaluation_counters;
pub mod extract;
pub mod frontend;
pub mod response;
pub mod shutdown;
pub mod snapshot;
pub mod state;
pub mod telemetry;
pub mod usage;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

pub use response::{json_response, revision_header, REVISION_HEADER};
pub use snapshot::{ServingSnapshot, Settings, TokenGrant};
pub use state::{AdvanceError, Advanced, ServingState, SnapshotChange};

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
            post(frontend::frontend_metrics).options(preflight),
        )
        .route(
            "/api/frontend/client/register",
            post(frontend::frontend_register).options(preflight),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            frontend::cors,
        ));
    let client = Router::new()
        .route("/api/client/features", get(client_api::features))
        .route("/api/client/features/{name}", get(client_api::feature))
        .route("/api/client/register", post(client_api::client_register))
        .route("/api/client/metrics", post(client_api::client_metrics))
        .route(
            "/api/client/metrics/bulk",
            post(client_api::client_metrics_bulk),
        );
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
