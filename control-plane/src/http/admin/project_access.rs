//! Who has which role in a project: `/api/admin/projects/:p/access`, `…/users/:userId/roles`,
//! `…/groups/:groupId/roles` (Unleash's project access). Each write needs `PROJECT_USER_ACCESS_WRITE` in the
//! project (`http::admin::PERMISSIONS`): Admins and the project's Owners.

use crate::domain::project_access::{self, AddAccess, ProjectAccess, SetAccess, SetRoles};
use crate::http::extract::{integer_param, AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use crate::store::roles::Subject;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get, add, set))
        .routes(routes!(set_user_roles, remove_user))
        .routes(routes!(set_group_roles, remove_group))
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
pub struct UserRolesPath {
    pub project_id: String,
    /// An integer.
    #[param(value_type = i64)]
    pub user_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct GroupRolesPath {
    pub project_id: String,
    /// An integer.
    #[param(value_type = i64)]
    pub group_id: String,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/access", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ProjectAccess), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ProjectAccess>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        project_access::get(&mut conn, &path.project_id).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/access", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath), request_body = AddAccess,
    responses(
        (status = 200, description = "Every listed user and group has every listed role"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn add(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<AddAccess>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_access::add(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/access", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath), request_body = SetAccess,
    responses(
        (status = 200, description = "The project's access is exactly the body's"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<SetAccess>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_access::set(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/users/{userId}/roles", tag = "Projects",
    security(("apiToken" = [])), params(UserRolesPath), request_body = SetRoles,
    responses(
        (status = 200, description = "The user's roles in the project are the body's"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_user_roles(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<UserRolesPath>,
    JsonBody(input): JsonBody<SetRoles>,
) -> Result<StatusCode, ApiError> {
    let id = integer_param("userId", &path.user_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    project_access::set_roles(&mut tx, &path.project_id, Subject::User, id, &input.roles).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/users/{userId}/roles", tag = "Projects",
    security(("apiToken" = [])), params(UserRolesPath),
    responses(
        (status = 200, description = "The user has no role in the project"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn remove_user(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<UserRolesPath>,
) -> Result<StatusCode, ApiError> {
    let id = integer_param("userId", &path.user_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    project_access::set_roles(&mut tx, &path.project_id, Subject::User, id, &[]).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/groups/{groupId}/roles", tag = "Projects",
    security(("apiToken" = [])), params(GroupRolesPath), request_body = SetRoles,
    responses(
        (status = 200, description = "The group's roles in the project are the body's"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_group_roles(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<GroupRolesPath>,
    JsonBody(input): JsonBody<SetRoles>,
) -> Result<StatusCode, ApiError> {
    let id = integer_param("groupId", &path.group_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    project_access::set_roles(&mut tx, &path.project_id, Subject::Group, id, &input.roles).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/groups/{groupId}/roles", tag = "Projects",
    security(("apiToken" = [])), params(GroupRolesPath),
    responses(
        (status = 200, description = "The group has no role in the project"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn remove_group(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<GroupRolesPath>,
) -> Result<StatusCode, ApiError> {
    let id = integer_param("groupId", &path.group_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    project_access::set_roles(&mut tx, &path.project_id, Subject::Group, id, &[]).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
