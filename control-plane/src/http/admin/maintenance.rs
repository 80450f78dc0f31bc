//! `/api/admin/maintenance`: reading and switching maintenance mode (`domain::maintenance`).

use crate::domain::maintenance::{self, Maintenance};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The maintenance routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(get, toggle))
}

#[utoipa::path(
    get, path = "/api/admin/maintenance", tag = "Maintenance", security(("apiToken" = [])),
    responses((status = 200, body = Maintenance), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<Maintenance>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(Maintenance {
        enabled: maintenance::is_on(&mut conn).await?,
    }))
}

#[utoipa::path(
    post, path = "/api/admin/maintenance", tag = "Maintenance", security(("apiToken" = [])),
    request_body = Maintenance,
    responses(
        (status = 204, description = "Maintenance mode is as asked"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn toggle(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<Maintenance>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    maintenance::set(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}
