//! Liveness and readiness.

use super::AppState;
use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorKind};

/// The liveness and readiness routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(ready))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `GOOD`.
    pub health: String,
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/health", tag = "Health", responses((status = 200, body = Health)))]
pub async fn health() -> Json<Health> {
    Json(Health {
        health: "GOOD".to_owned(),
    })
}

/// The longest `/ready` waits for the database: it answers within a second, before a probe's timeout (1 s
/// by default in Kubernetes) would make the answer a failure of its own.
const READY_TIMEOUT: Duration = Duration::from_millis(800);

/// Readiness: the store answers, within [`READY_TIMEOUT`].
#[utoipa::path(
    get, path = "/ready", tag = "Health",
    responses((status = 200, body = Health), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn ready(State(state): State<Arc<AppState>>) -> Result<Json<Health>, ApiError> {
    let error = match tokio::time::timeout(READY_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => {
            return Ok(Json(Health {
                health: "GOOD".to_owned(),
            }))
        }
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("no answer within {READY_TIMEOUT:?}"),
    };
    tracing::warn!(%error, "store not reachable");
    metrics::counter!("store_errors_total").increment(1);
    Err(ApiError::new(
        ErrorKind::Unavailable,
        "The database is not answering",
    ))
}
