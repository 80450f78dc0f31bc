//! `/api/admin/projects` and a project's environments.

use crate::domain::project_admin;
use crate::domain::projects::{
    self, AddProjectEnvironment, CreateProject, Project, ProjectList, UpdateProject,
};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The project routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(add_environment))
        .routes(routes!(remove_environment))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectPath {
    pub project_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectEnvironmentPath {
    pub project_id: String,
    pub environment: String,
}

#[utoipa::path(
    get, path = "/api/admin/projects", tag = "Projects", security(("apiToken" = [])),
    responses((status = 200, body = ProjectList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<Json<ProjectList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(projects::list_for(&mut conn, actor.user_id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/projects", tag = "Projects", security(("apiToken" = [])),
    request_body = CreateProject,
    responses(
        (status = 201, body = Project), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<CreateProject>,
) -> Result<(StatusCode, Json<Project>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let project = projects::create(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(project)))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = Project), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<Project>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(projects::get(&mut conn, &path.project_id).await?))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath), request_body = UpdateProject,
    responses(
        (status = 200, body = Project), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<UpdateProject>,
) -> Result<Json<Project>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let project = projects::update(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(Json(project))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody, description = "default or not empty"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    projects::delete(&mut tx, &path.project_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/environments", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath), request_body = AddProjectEnvironment,
    responses(
        (status = 200, description = "Added"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn add_environment(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<AddProjectEnvironment>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_admin::add_environment(&mut tx, &path.project_id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/environments/{environment}", tag = "Projects",
    security(("apiToken" = [])), params(ProjectEnvironmentPath),
    responses(
        (status = 200, description = "Removed"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn remove_environment(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectEnvironmentPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    projects::remove_environment(&mut tx, &path.project_id, &path.environment).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
