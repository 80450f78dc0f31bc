//! Action sets: `/api/admin/projects/:projectId/actions…` (Unleash's Enterprise schemas), Admin only as in
//! Unleash (mounted in the `Access` area): a set's actions run with its service account's permissions, which
//! only an Admin may hand out.

use crate::domain::action_sets::{
    self, ActionSet, ActionSetEvents, ActionSetList, CreateActionSet,
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

/// The action-set routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
        .routes(routes!(events))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct ProjectPath {
    #[param(rename = "projectId")]
    pub project_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct ActionSetPath {
    #[param(rename = "projectId")]
    pub project_id: String,
    /// The action set's id.
    pub id: i64,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/actions", tag = "Actions", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ActionSetList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ActionSetList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(action_sets::list(&mut conn, &path.project_id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/actions", tag = "Actions", security(("apiToken" = [])),
    params(ProjectPath), request_body = CreateActionSet,
    responses(
        (status = 201, body = ActionSet),
        (status = 400, body = ErrorBody, description = "A bad body (unknown operator or action, a missing \
          parameter, an actorId that is no service account, a sourceId that is no signal endpoint), or past \
          actionSetsPerProject, actionSetActions, actionSetFilters or actionSetFilterValues"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<CreateActionSet>,
) -> Result<(StatusCode, Json<ActionSet>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let set = action_sets::create(&mut tx, &path.project_id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(set)))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/actions/{id}", tag = "Actions", security(("apiToken" = [])),
    params(ActionSetPath), request_body = CreateActionSet,
    responses(
        (status = 200, body = ActionSet), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ActionSetPath>,
    JsonBody(input): JsonBody<CreateActionSet>,
) -> Result<Json<ActionSet>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let set = action_sets::update(&mut tx, &path.project_id, path.id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok(Json(set))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/actions/{id}", tag = "Actions",
    security(("apiToken" = [])), params(ActionSetPath),
    responses(
        (status = 200, description = "Deleted with its execution log"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ActionSetPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    action_sets::delete(&mut tx, &path.project_id, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/actions/{id}/events", tag = "Actions",
    security(("apiToken" = [])), params(ActionSetPath),
    responses(
        (status = 200, body = ActionSetEvents, description = "The latest 50 executions, the newest first"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn events(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ActionSetPath>,
) -> Result<Json<ActionSetEvents>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        action_sets::executions(&mut conn, &path.project_id, path.id).await?,
    ))
}
