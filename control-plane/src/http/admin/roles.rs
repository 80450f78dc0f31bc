//! Roles and permissions: `/api/admin/roles` (predefined and custom roles), `/api/admin/permissions`, how a
//! role is used (`/api/admin/projects/roles/:roleId/access`), one user's permissions
//! (`/api/admin/user-admin/:id/permissions`) and everyone's access (`/api/admin/access/overview`).

use crate::domain::access_overview::{self, AccessOverview, UserAccess, Where};
use crate::domain::permissions::{self, PermissionsBody};
use crate::domain::role_admin::{
    self, RoleInput, RoleUsage, RoleWithPermissions, RoleWithVersion, RolesBody,
};
use crate::http::extract::{integer_param, AdminActor, JsonBody, PathParams, QueryParams};
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

/// What every user may read: the roles and the permissions (a project's Owner picks roles from them).
pub fn read_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list_permissions))
        .routes(routes!(list))
        .routes(routes!(get))
}

/// Changing roles and reading who has them: Admins'.
pub fn admin_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(validate))
        .routes(routes!(update, delete))
        .routes(routes!(usage))
        .routes(routes!(user_permissions))
        .routes(routes!(overview))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct RolePath {
    /// An integer.
    #[param(value_type = i64)]
    pub role_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct UserPath {
    /// An integer.
    #[param(value_type = i64)]
    pub id: String,
}

#[utoipa::path(
    get, path = "/api/admin/permissions", tag = "Access", security(("apiToken" = [])),
    responses((status = 200, body = PermissionsBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list_permissions(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<PermissionsBody>, ApiError> {
    let mut conn = state.store.read().await?;
    let environments: Vec<String> = crate::store::environments::list(&mut conn)
        .await?
        .into_iter()
        .map(|row| row.name)
        .collect();
    Ok(Json(permissions::listing(&environments)))
}

#[utoipa::path(
    get, path = "/api/admin/roles", tag = "Access", security(("apiToken" = [])),
    responses((status = 200, body = RolesBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<RolesBody>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(role_admin::list(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/roles/{roleId}", tag = "Access", security(("apiToken" = [])), params(RolePath),
    responses(
        (status = 200, body = RoleWithPermissions), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<RolePath>,
) -> Result<Json<RoleWithPermissions>, ApiError> {
    let id = integer_param("roleId", &path.role_id)?;
    let mut conn = state.store.read().await?;
    Ok(Json(role_admin::get(&mut conn, id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/roles", tag = "Access", security(("apiToken" = [])), request_body = RoleInput,
    responses(
        (status = 200, body = RoleWithVersion), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<RoleInput>,
) -> Result<Json<RoleWithVersion>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let role = role_admin::create(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok(Json(role))
}

#[utoipa::path(
    post, path = "/api/admin/roles/validate", tag = "Access", security(("apiToken" = [])), request_body = RoleInput,
    responses(
        (status = 200, description = "The role could be created"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn validate(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(input): JsonBody<RoleInput>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    role_admin::validate(&mut conn, input).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    put, path = "/api/admin/roles/{roleId}", tag = "Access", security(("apiToken" = [])), params(RolePath),
    request_body = RoleInput,
    responses(
        (status = 200, body = RoleWithVersion), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<RolePath>,
    JsonBody(input): JsonBody<RoleInput>,
) -> Result<Json<RoleWithVersion>, ApiError> {
    let id = integer_param("roleId", &path.role_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    let role = role_admin::update(&mut tx, id, input).await?;
    state.commit(tx).await?;
    Ok(Json(role))
}

#[utoipa::path(
    delete, path = "/api/admin/roles/{roleId}", tag = "Access", security(("apiToken" = [])), params(RolePath),
    responses(
        (status = 200, description = "The role is gone"),
        (status = 400, body = ErrorBody, description = "A predefined role, or one in use"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<RolePath>,
) -> Result<StatusCode, ApiError> {
    let id = integer_param("roleId", &path.role_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    role_admin::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/projects/roles/{roleId}/access", tag = "Access", security(("apiToken" = [])),
    params(RolePath),
    responses(
        (status = 200, body = RoleUsage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn usage(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<RolePath>,
) -> Result<Json<RoleUsage>, ApiError> {
    let id = integer_param("roleId", &path.role_id)?;
    let mut conn = state.store.read().await?;
    Ok(Json(role_admin::usage(&mut conn, id).await?))
}

#[utoipa::path(
    get, path = "/api/admin/user-admin/{id}/permissions", tag = "Access", security(("apiToken" = [])),
    params(UserPath, Where),
    responses(
        (status = 200, body = UserAccess), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn user_permissions(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<UserPath>,
    QueryParams(at): QueryParams<Where>,
) -> Result<Json<UserAccess>, ApiError> {
    let id = integer_param("id", &path.id)?;
    let mut conn = state.store.read().await?;
    Ok(Json(access_overview::of_user(&mut conn, id, at).await?))
}

#[utoipa::path(
    get, path = "/api/admin/access/overview", tag = "Access", security(("apiToken" = [])),
    responses((status = 200, body = AccessOverview), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn overview(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<AccessOverview>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(access_overview::overview(&mut conn).await?))
}
