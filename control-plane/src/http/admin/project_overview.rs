//! A project at a glance (Unleash 8.2): `GET /api/admin/projects/:projectId/overview`, `…/health-report`,
//! `…/status`, `…/insights` and `…/dora`. Reads, so Viewers too.

use super::projects::ProjectPath;
use crate::domain::project_overview::{
    self, DoraMetrics, HealthReport, ProjectInsights, ProjectOverview, ProjectStatus,
};
use crate::http::extract::{AdminActor, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The overview routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(overview))
        .routes(routes!(health_report))
        .routes(routes!(status))
        .routes(routes!(insights))
        .routes(routes!(dora))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/overview", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ProjectOverview), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn overview(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ProjectOverview>, ApiError> {
    let mut conn = state.store.read().await?;
    let now_ms = (state.clock)();
    Ok(Json(
        project_overview::overview(&mut conn, &path.project_id, actor.user_id, now_ms).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/health-report", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = HealthReport), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn health_report(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<HealthReport>, ApiError> {
    let mut conn = state.store.read().await?;
    let now_ms = (state.clock)();
    Ok(Json(
        project_overview::health_report(&mut conn, &path.project_id, actor.user_id, now_ms).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/status", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ProjectStatus), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn status(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ProjectStatus>, ApiError> {
    let mut conn = state.store.read().await?;
    let now_ms = (state.clock)();
    Ok(Json(
        project_overview::status(&mut conn, &path.project_id, now_ms).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/insights", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ProjectInsights), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn insights(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ProjectInsights>, ApiError> {
    let mut conn = state.store.read().await?;
    let now_ms = (state.clock)();
    Ok(Json(
        project_overview::insights(&mut conn, &path.project_id, now_ms).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/dora", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = DoraMetrics), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn dora(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<DoraMetrics>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        project_overview::dora(&mut conn, &path.project_id).await?,
    ))
}
