//! The SDK-facing HTTP API of Vexil, shared by the edge and the control plane (single-binary installs):
//! the frontend API (`/api/frontend*`) and the client API (`/api/client/features*`), answered from the
//! current [`ServingSnapshot`] held in an `ArcSwapOption`, so requests never lock.
//!
//! [`snapshot`] builds and advances snapshots from the `vexil.v1` messages, each with its [`change_feed`];
//! [`state`] holds what every request reads; [`change_stream`] and [`stream_events`] serve the open change
//! streams ([`client_delta`], [`ofrep`], its request bodies read by `ofrep_context`), answered by
//! `stream_response` and, on connections they open, written by `stream_connection` without hyper; [`extract`] holds the extractors (context, client IP, token scope: the token's hash remembered per thread by `secret_hashes`); [`frontend`] and
//! [`client_api`] the thin handlers (the frontend's CORS by `cors`), [`response`] how they write answers ([`answer_encoding`]: compressed by the client's `Accept-Encoding`); [`usage`] the SDKs' register and
//! metrics bodies; [`unleash_edge_report`] Unleash Edge's report on itself; [`edge_validate`] Unleash's `/edge/validate`; [`evaluation_counters`] the evaluations counted per flag; [`telemetry`] the request
//! metrics both binaries record and their Prometheus recorder; [`token_sightings`] the tokens used (their "last
//! used"); [`token_resolver`] the hook that learns tokens the snapshot lacks; [`shutdown`] the signals both stop on; [`serve`] the HTTP server loop both run, with its time
//! bounds (its header read timer in `connection_timer`).
//!
//! This root only assembles the routes: the modules never import from it.

pub mod answer_encoding;
pub mod change_feed;
pub mod change_stream;
pub mod client_api;
pub mod client_delta;
pub mod client_documents;
mod connection_timer;
mod cors;
pub mod edge_validate;
pub mod evaluation_counters;
pub mod extract;
pub mod frontend;
pub mod ofrep;
mod ofrep_context;
pub mod response;
mod secret_hashes;
pub mod serve;
pub mod shutdown;
pub mod snapshot;
pub mod state;
mod stream_connection;
pub mod stream_events;
mod stream_response;
pub mod telemetry;
pub mod token_resolver;
pub mod token_sightings;
pub mod unleash_edge_report;
pub mod usage;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::options;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use response::{json_response, revision_header, REVISION_HEADER};
pub use snapshot::{ServingSnapshot, Settings, TokenGrant};
pub use state::{
    AdvanceError, Advanced, ServingState, SnapshotChange, StreamArgs, DEFAULT_MAX_STREAMS,
};

/// `/api/frontend`, `/api/frontend/features/{name}`, `/api/frontend/client/{metrics,register}`,
/// `/api/client/features`, `/api/client/features/{name}`, `/api/client/{register,metrics,metrics/bulk,metrics/edge}`, with
/// their OpenAPI paths (the handlers' `utoipa::path`): the routes and their documentation come from the same
/// list. The frontend routes answer CORS (preflights included). A server mounting them measures and bounds
/// every request with [`serve::with_request_bounds`].
pub fn router(state: Arc<ServingState>) -> OpenApiRouter {
    let frontend = OpenApiRouter::new()
        .routes(routes!(
            frontend::evaluate_query,
            frontend::evaluate_body,
            preflight
        ))
        .routes(routes!(frontend::evaluate_one, preflight_feature))
        .routes(routes!(frontend::frontend_metrics))
        .routes(routes!(frontend::frontend_register))
        // Preflights the OpenAPI document does not list.
        .route("/api/frontend/client/metrics", options(preflight))
        .route("/api/frontend/client/register", options(preflight))
        .routes(routes!(ofrep::evaluate_flag))
        .routes(routes!(ofrep::evaluate_flags))
        .routes(routes!(ofrep::events))
        .layer(cors::CorsLayer::new(state.clone()));
    let client = OpenApiRouter::new()
        .routes(routes!(client_api::features))
        .routes(routes!(client_api::feature))
        .routes(routes!(client_api::client_register))
        .routes(routes!(client_api::client_metrics))
        .routes(routes!(client_api::client_metrics_bulk))
        .routes(routes!(client_api::unleash_edge_instance_data))
        .routes(routes!(client_delta::delta))
        .routes(routes!(client_delta::streaming))
        .routes(routes!(edge_validate::validate));
    frontend.merge(client).with_state(state)
}

/// The routes of [`router`] without their documentation, as a plain axum `Router`.
pub fn routes(state: Arc<ServingState>) -> Router {
    router(state).into()
}

/// The OpenAPI paths (and the schemas they name) of [`router`], for a document of a server that mounts it.
pub fn openapi() -> utoipa::openapi::OpenApi {
    router(Arc::new(ServingState::default())).into_openapi()
}

/// CORS preflight, answered by the CORS layer without a token; present so that the routes accept `OPTIONS`.
#[utoipa::path(
    options, path = "/api/frontend", tag = "Frontend API",
    responses((status = 204, description = "CORS preflight"))
)]
pub async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// CORS preflight of one flag's route.
#[utoipa::path(
    options, path = "/api/frontend/features/{name}", tag = "Frontend API",
    params(("name" = String, Path, description = "Flag name")),
    responses((status = 204, description = "CORS preflight"))
)]
pub async fn preflight_feature() -> StatusCode {
    StatusCode::NO_CONTENT
}
