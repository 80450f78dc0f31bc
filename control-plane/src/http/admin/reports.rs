//! Reports: outdated SDKs (`GET /api/admin/metrics/sdks/outdated`, `GET /api/admin/projects/:p/sdks/outdated`,
//! read by everyone signed in) and the instance statistics as CSV
//! (`GET /api/admin/instance-admin/statistics/csv`, Admins only).

use super::projects::ProjectPath;
use crate::domain::instance_csv;
use crate::domain::outdated_sdks::{self, OutdatedSdks};
use crate::http::extract::{AdminActor, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The outdated-SDK routes (the Configuration area).
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(outdated))
        .routes(routes!(outdated_in_project))
}

/// The CSV statistics (the Access area: Admins only, as Unleash's ADMIN).
pub fn admin_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(statistics_csv))
}

#[utoipa::path(
    get, path = "/api/admin/metrics/sdks/outdated", tag = "Metrics", security(("apiToken" = [])),
    responses(
        (status = 200, body = OutdatedSdks,
         description = "Each reported sdkVersion older than its SDK's minimum (domain::outdated_sdks::MINIMUM_VERSIONS), with the applications using it"),
        (status = 401, body = ErrorBody)
    )
)]
pub async fn outdated(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<OutdatedSdks>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(outdated_sdks::all(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/sdks/outdated", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = OutdatedSdks,
         description = "The outdated SDK versions of the applications that reported a flag of the project"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn outdated_in_project(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<OutdatedSdks>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        outdated_sdks::of_project(&mut conn, &path.project_id).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/instance-admin/statistics/csv", tag = "Instance", security(("apiToken" = [])),
    responses(
        (status = 200, content_type = "text/csv", body = String,
         description = "A header naming instanceAdminStatsSchema's properties and one row of values"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "Admins only")
    )
)]
pub async fn statistics_csv(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<impl IntoResponse, ApiError> {
    let mut conn = state.store.read().await?;
    let body = instance_csv::csv(&mut conn).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"instance-statistics.csv\"",
            ),
        ],
        body,
    ))
}
