//! `/api/admin/user-admin/search`, `/admin-count`, `/validate-password`, `/:id/change-password`.

use super::users::IdPath;
use crate::domain::user_admin::{
    self, AdminCount, InactiveUsers, NewPassword, UserIds, UsersAndGroups,
};
use crate::domain::users::{self, User};
use crate::http::extract::{AdminActor, JsonBody, PathParams, QueryParams};
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

/// The user-administration routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(search))
        .routes(routes!(admin_count))
        .routes(routes!(validate_password))
        .routes(routes!(change_password))
        .routes(routes!(inactive))
        .routes(routes!(delete_inactive))
        .routes(routes!(access_overview))
        .routes(routes!(delete_scim_users))
}

#[utoipa::path(
    delete, path = "/api/admin/user-admin/scim-users", tag = "Users", security(("apiToken" = [])),
    responses(
        (status = 200, description = "Every user SCIM provisioned is deleted with their sessions and tokens (a user-deleted event each)"),
        (status = 400, body = ErrorBody, description = "One of them is the last active Admin user"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn delete_scim_users(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    crate::domain::scim::users::delete_all(&mut tx).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Part of a name, username or e-mail (case-insensitive); absent: every user.
    pub q: Option<String>,
}

#[utoipa::path(
    get, path = "/api/admin/user-admin/search", tag = "Users", security(("apiToken" = [])), params(SearchQuery),
    responses(
        (status = 200, body = Vec<User>, description = "At most 100, by id"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn search(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    QueryParams(query): QueryParams<SearchQuery>,
) -> Result<Json<Vec<User>>, ApiError> {
    let mut conn = state.store.read().await?;
    let q = query.q.unwrap_or_default();
    Ok(Json(user_admin::search(&mut conn, &q).await?))
}

#[utoipa::path(
    get, path = "/api/admin/user-admin/admin-count", tag = "Users", security(("apiToken" = [])),
    responses((status = 200, body = AdminCount), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn admin_count(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<AdminCount>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(user_admin::admin_count(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/user-admin/validate-password", tag = "Users", security(("apiToken" = [])),
    request_body = NewPassword,
    responses(
        (status = 200, description = "Acceptable"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_password(
    _: AdminActor,
    JsonBody(input): JsonBody<NewPassword>,
) -> Result<StatusCode, ApiError> {
    user_admin::validate_password(&input)?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/user-admin/{id}/change-password", tag = "Users", security(("apiToken" = [])),
    params(IdPath), request_body = NewPassword,
    responses(
        (status = 200, description = "Changed; every session of the user ends"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn change_password(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    JsonBody(input): JsonBody<NewPassword>,
) -> Result<StatusCode, ApiError> {
    user_admin::validate_password(&input)?;
    let hash = users::hash_password(&state.password_work, input.password).await?;
    let mut tx = state.store.begin_write(&actor).await?;
    user_admin::set_password(&mut tx, path.id, &hash).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/user-admin/inactive", tag = "Users", security(("apiToken" = [])),
    responses(
        (status = 200, body = InactiveUsers, description = "Not signed in for 180 days"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn inactive(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<InactiveUsers>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        user_admin::inactive(&mut conn, (state.clock)()).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/user-admin/inactive/delete", tag = "Users", security(("apiToken" = [])),
    request_body = UserIds,
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody, description = "A user is not inactive"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn delete_inactive(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<UserIds>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    user_admin::delete_inactive(&mut tx, input, (state.clock)()).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/user-admin/access", tag = "Users", security(("apiToken" = [])),
    responses((status = 200, body = UsersAndGroups), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn access_overview(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<UsersAndGroups>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(user_admin::access_overview(&mut conn).await?))
}
