//! Liveness and readiness.

use super::AppState;
use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
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

/// Readiness: the store answers.
#[utoipa::path(
    get, path = "/ready", tag = "Health",
    responses((status = 200, body = Health), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn ready(State(state): State<Arc<AppState>>) -> Result<Json<Health>, ApiError> {
    match state.store.ping().await {
        Ok(()) => Ok(Json(Health {
            health: "GOOD".to_owned(),
        })),
        Err(error) => {
            tracing::warn!(%error, "store not reachable");
            metrics::counter!("store_errors_total").increment(1);
            Err(ApiError::new(
                ErrorKind::Unavailable,
                "The store is not reachable",
            ))
        }
    }
}
