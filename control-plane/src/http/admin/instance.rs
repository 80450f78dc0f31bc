//! `GET /api/admin/instance-admin/statistics` and `GET /api/admin/telemetry/settings`.

use crate::domain::instance::{self, InstanceStatistics, TelemetrySettings};
use crate::http::extract::AdminActor;
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The instance routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(statistics))
        .routes(routes!(telemetry_settings))
}

#[utoipa::path(
    get, path = "/api/admin/instance-admin/statistics", tag = "Instance", security(("apiToken" = [])),
    responses(
        (status = 200, body = InstanceStatistics), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn statistics(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<InstanceStatistics>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(instance::statistics(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/telemetry/settings", tag = "Instance", security(("apiToken" = [])),
    responses(
        (status = 200, body = TelemetrySettings, description = "Vexil collects and sends nothing: both off"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn telemetry_settings(_: AdminActor) -> Json<TelemetrySettings> {
    Json(instance::telemetry_settings())
}
