//! `/api/admin/environments`.

use crate::domain::environments::{
    self, CreateEnvironment, Environment, EnvironmentList, UpdateEnvironment,
};
use crate::domain::project_environments::{self, ProjectEnvironments};
use crate::http::admin::projects::ProjectPath;
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The environment routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, delete))
        .routes(routes!(update))
        .routes(routes!(turn_on))
        .routes(routes!(turn_off))
        .routes(routes!(sort_order))
        .routes(routes!(of_project))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EnvironmentPath {
    pub name: String,
}

#[utoipa::path(
    get, path = "/api/admin/environments", tag = "Environments", security(("apiToken" = [])),
    responses((status = 200, body = EnvironmentList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<EnvironmentList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(environments::list(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/environments/{name}", tag = "Environments", security(("apiToken" = [])),
    params(EnvironmentPath),
    responses(
        (status = 200, body = Environment), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<EnvironmentPath>,
) -> Result<Json<Environment>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(environments::get(&mut conn, &path.name).await?))
}

#[utoipa::path(
    post, path = "/api/admin/environments", tag = "Environments", security(("apiToken" = [])),
    request_body = CreateEnvironment,
    responses(
        (status = 201, body = Environment), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<CreateEnvironment>,
) -> Result<(StatusCode, Json<Environment>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let environment = environments::create(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(environment)))
}

#[utoipa::path(
    put, path = "/api/admin/environments/update/{name}", tag = "Environments", security(("apiToken" = [])),
    params(EnvironmentPath), request_body = UpdateEnvironment,
    responses(
        (status = 200, body = Environment), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<EnvironmentPath>,
    JsonBody(input): JsonBody<UpdateEnvironment>,
) -> Result<Json<Environment>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let environment = environments::update(&mut tx, &path.name, input).await?;
    state.commit(tx).await?;
    Ok(Json(environment))
}

#[utoipa::path(
    delete, path = "/api/admin/environments/{name}", tag = "Environments", security(("apiToken" = [])),
    params(EnvironmentPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody, description = "protected"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<EnvironmentPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    environments::delete(&mut tx, &path.name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/environments/{name}/on", tag = "Environments", security(("apiToken" = [])),
    params(EnvironmentPath),
    responses(
        (status = 204, description = "On"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn turn_on(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<EnvironmentPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    environments::set_enabled(&mut tx, &path.name, true).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/api/admin/environments/{name}/off", tag = "Environments", security(("apiToken" = [])),
    params(EnvironmentPath),
    responses(
        (status = 204, description = "Off"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn turn_off(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<EnvironmentPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    environments::set_enabled(&mut tx, &path.name, false).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    put, path = "/api/admin/environments/sort-order", tag = "Environments", security(("apiToken" = [])),
    request_body(content = BTreeMap<String, i64>, description = "environment name → sortOrder"),
    responses(
        (status = 200, description = "Sorted (all or none)"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn sort_order(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<BTreeMap<String, i64>>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    environments::set_sort_orders(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/environments/project/{projectId}", tag = "Environments", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ProjectEnvironments), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn of_project(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ProjectEnvironments>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        project_environments::list(&mut conn, &path.project_id).await?,
    ))
}
