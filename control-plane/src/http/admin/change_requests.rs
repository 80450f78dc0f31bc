//! Change requests: `…/projects/:projectId/change-requests…` and the per-environment configuration.

use super::projects::{ProjectEnvironmentPath, ProjectPath};
use crate::domain::access::Who;
use crate::domain::change_requests::{
    self, ChangeInput, ChangeInputs, ChangeRequest, ChangeRequestConfigInput, CommentInput,
    EnvironmentChangeRequestConfig, ScheduledChangeRequest, ScheduledQuery, StateInput,
};
use crate::http::extract::{AdminActor, AdminCaller, JsonBody, PathParams, QueryParams};
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

/// The change-request routes, as stated in the handlers' `#[utoipa::path]` (the configuration's write:
/// [`configuration_router`]).
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(configuration))
        .routes(routes!(add_changes))
        .routes(routes!(list))
        .routes(routes!(scheduled))
        .routes(routes!(get, discard))
        .routes(routes!(edit_change, discard_change))
        .routes(routes!(change_state))
        .routes(routes!(comment))
}

/// Switching change requests on or off in an environment: mounted where only Admins may write.
pub fn configuration_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(configure))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ChangeRequestPath {
    pub project_id: String,
    /// An integer; anything else is 400.
    pub id: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ChangePath {
    pub project_id: String,
    /// An integer; anything else is 400.
    pub id: i64,
    /// An integer; anything else is 400.
    pub change_id: i64,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/change-requests/config", tag = "Change requests",
    security(("apiToken" = [])), params(ProjectPath),
    responses(
        (status = 200, body = Vec<EnvironmentChangeRequestConfig>), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn configuration(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<Vec<EnvironmentChangeRequestConfig>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        change_requests::configuration(&mut conn, &path.project_id).await?,
    ))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/environments/{environment}/change-requests/config",
    tag = "Change requests", security(("apiToken" = [])), params(ProjectEnvironmentPath),
    request_body = ChangeRequestConfigInput,
    responses(
        (status = 200, description = "Set; requiredApprovals clamped into 1..10"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn configure(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectEnvironmentPath>,
    JsonBody(input): JsonBody<ChangeRequestConfigInput>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    change_requests::configure(&mut tx, &path.project_id, &path.environment, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/environments/{environment}/change-requests",
    tag = "Change requests", security(("apiToken" = [])), params(ProjectEnvironmentPath),
    request_body(content = ChangeInput, description = "A change, or an array of changes"),
    responses(
        (status = 200, body = ChangeRequest, description = "The caller's Draft, with the changes added"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn add_changes(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectEnvironmentPath>,
    JsonBody(input): JsonBody<ChangeInputs>,
) -> Result<Json<ChangeRequest>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let request =
        change_requests::add_changes(&mut tx, &path.project_id, &path.environment, input).await?;
    state.commit(tx).await?;
    Ok(Json(request))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/change-requests", tag = "Change requests",
    security(("apiToken" = [])), params(ProjectPath),
    responses(
        (status = 200, body = Vec<ChangeRequest>, description = "Newest first, at most 300"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<Vec<ChangeRequest>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        change_requests::list(&mut conn, &path.project_id).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/change-requests/scheduled", tag = "Change requests",
    security(("apiToken" = [])), params(ProjectPath, ScheduledQuery),
    responses(
        (status = 200, body = Vec<ScheduledChangeRequest>,
         description = "The Scheduled requests still pending that match any parameter, the earliest first; \
                        without parameters all of them (Unleash answers none)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn scheduled(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    QueryParams(pairs): QueryParams<Vec<(String, String)>>,
) -> Result<Json<Vec<ScheduledChangeRequest>>, ApiError> {
    let query = ScheduledQuery::from_pairs(pairs);
    let mut conn = state.store.read().await?;
    Ok(Json(
        change_requests::scheduled(&mut conn, &path.project_id, &query).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/change-requests/{id}", tag = "Change requests",
    security(("apiToken" = [])), params(ChangeRequestPath),
    responses(
        (status = 200, body = ChangeRequest), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ChangeRequestPath>,
) -> Result<Json<ChangeRequest>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        change_requests::get(&mut conn, &path.project_id, path.id).await?,
    ))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/change-requests/{id}", tag = "Change requests",
    security(("apiToken" = [])), params(ChangeRequestPath),
    responses(
        (status = 200, description = "The Draft is deleted"),
        (status = 400, body = ErrorBody, description = "Not a Draft"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn discard(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ChangeRequestPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    change_requests::discard(&mut tx, &path.project_id, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}",
    tag = "Change requests", security(("apiToken" = [])), params(ChangePath), request_body = ChangeInput,
    responses(
        (status = 200, body = ChangeRequest, description = "An Approved request goes back to In review"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn edit_change(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ChangePath>,
    JsonBody(input): JsonBody<ChangeInput>,
) -> Result<Json<ChangeRequest>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let request =
        change_requests::edit_change(&mut tx, &path.project_id, path.id, path.change_id, input)
            .await?;
    state.commit(tx).await?;
    Ok(Json(request))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}",
    tag = "Change requests", security(("apiToken" = [])), params(ChangePath),
    responses(
        (status = 200, body = ChangeRequest, description = "An Approved request goes back to In review"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn discard_change(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ChangePath>,
) -> Result<Json<ChangeRequest>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let request =
        change_requests::discard_change(&mut tx, &path.project_id, path.id, path.change_id).await?;
    state.commit(tx).await?;
    Ok(Json(request))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/change-requests/{id}/state", tag = "Change requests",
    security(("apiToken" = [])), params(ChangeRequestPath), request_body = StateInput,
    responses(
        (status = 200, body = ChangeRequest),
        (status = 400, body = ErrorBody, description = "Not allowed from the current state, a change failed to apply (nothing applied), or Scheduled without a scheduledAt in the future"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Also: the author approving their own request"),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn change_state(
    State(state): State<Arc<AppState>>,
    caller: AdminCaller,
    PathParams(path): PathParams<ChangeRequestPath>,
    JsonBody(input): JsonBody<StateInput>,
) -> Result<Json<ChangeRequest>, ApiError> {
    let who = Who {
        credential: caller.credential,
        grants: &caller.grants,
    };
    let mut tx = state.store.begin_write(&caller.actor).await?;
    let request = change_requests::change_state(
        &mut tx,
        &path.project_id,
        path.id,
        input,
        &state.limits,
        who,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(request))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/change-requests/{id}/comments", tag = "Change requests",
    security(("apiToken" = [])), params(ChangeRequestPath), request_body = CommentInput,
    responses(
        (status = 204, description = "Added"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn comment(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ChangeRequestPath>,
    JsonBody(input): JsonBody<CommentInput>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.bookkeeping().await?;
    change_requests::comment(&mut conn, &path.project_id, path.id, input, &actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
