//! User groups: `/api/admin/groups` (spec endpoints 10 and 11).

use crate::domain::groups::{self, Group, GroupList, WriteGroup};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::header::LOCATION;
use axum::http::StatusCode;
use axum::response::{AppendHeaders, IntoResponse};
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The group routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, replace, delete))
        .routes(routes!(delete_scim_groups))
}

#[utoipa::path(
    delete, path = "/api/admin/groups/scim-groups", tag = "Groups", security(("apiToken" = [])),
    responses(
        (status = 200, description = "Every group SCIM provisioned is deleted (a group-deleted event each)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn delete_scim_groups(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    crate::domain::scim::groups::delete_all(&mut tx).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct GroupPath {
    /// An integer.
    #[param(value_type = i64)]
    pub group_id: String,
}

#[utoipa::path(
    get, path = "/api/admin/groups", tag = "Groups", security(("apiToken" = [])),
    responses((status = 200, body = GroupList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<GroupList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(groups::list(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/groups", tag = "Groups", security(("apiToken" = [])), request_body = WriteGroup,
    responses(
        (status = 201, body = Group, headers(("Location" = String, description = "The group's URL"))),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<WriteGroup>,
) -> Result<impl IntoResponse, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let group = groups::create(&mut tx, input).await?;
    state.commit(tx).await?;
    let location = format!("{}/api/admin/groups/{}", state.base_path, group.id);
    Ok((
        StatusCode::CREATED,
        AppendHeaders([(LOCATION, location)]),
        Json(group),
    ))
}

#[utoipa::path(
    get, path = "/api/admin/groups/{groupId}", tag = "Groups", security(("apiToken" = [])), params(GroupPath),
    responses(
        (status = 200, body = Group), (status = 400, body = ErrorBody, description = "groupId is not an integer"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<GroupPath>,
) -> Result<Json<Group>, ApiError> {
    let id = groups::parse_id(&path.group_id)?;
    let mut conn = state.store.read().await?;
    Ok(Json(groups::get(&mut conn, id).await?))
}

#[utoipa::path(
    put, path = "/api/admin/groups/{groupId}", tag = "Groups", security(("apiToken" = [])), params(GroupPath),
    request_body = WriteGroup,
    responses(
        (status = 200, body = Group, description = "The group after the full replace"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn replace(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<GroupPath>,
    JsonBody(input): JsonBody<WriteGroup>,
) -> Result<Json<Group>, ApiError> {
    let id = groups::parse_id(&path.group_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    let group = groups::replace(&mut tx, id, input).await?;
    state.commit(tx).await?;
    Ok(Json(group))
}

#[utoipa::path(
    delete, path = "/api/admin/groups/{groupId}", tag = "Groups", security(("apiToken" = [])), params(GroupPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<GroupPath>,
) -> Result<StatusCode, ApiError> {
    let id = groups::parse_id(&path.group_id)?;
    let mut tx = state.store.begin_write(&actor).await?;
    groups::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
