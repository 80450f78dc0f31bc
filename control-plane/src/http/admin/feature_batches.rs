//! Batch operations on a project's flags: `/api/admin/projects/:projectId/bulk_features/environments/
//! :environment/on|off`, `…/revive`, `…/delete` and `…/stale`, each one transaction.

use super::projects::{ProjectEnvironmentPath, ProjectPath};
use crate::domain::feature_batches::{self, BatchFeatures, BatchStale};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The batch routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(bulk_on))
        .routes(routes!(bulk_off))
        .routes(routes!(revive))
        .routes(routes!(delete))
        .routes(routes!(stale))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/on",
    tag = "Features", security(("apiToken" = [])), params(ProjectEnvironmentPath),
    request_body = BatchFeatures,
    responses(
        (status = 200, description = "Every listed flag is on (none is, if one is refused)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn bulk_on(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectEnvironmentPath>,
    JsonBody(input): JsonBody<BatchFeatures>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    feature_batches::set_enabled(&mut tx, &path.project_id, &path.environment, input, true).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off",
    tag = "Features", security(("apiToken" = [])), params(ProjectEnvironmentPath),
    request_body = BatchFeatures,
    responses(
        (status = 200, description = "Every listed flag is off (none is, if one is refused)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn bulk_off(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectEnvironmentPath>,
    JsonBody(input): JsonBody<BatchFeatures>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    feature_batches::set_enabled(&mut tx, &path.project_id, &path.environment, input, false)
        .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/revive", tag = "Archive", security(("apiToken" = [])),
    params(ProjectPath), request_body = BatchFeatures,
    responses(
        (status = 200, description = "Revived, off everywhere"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn revive(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<BatchFeatures>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    feature_batches::revive(&mut tx, &path.project_id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/delete", tag = "Archive", security(("apiToken" = [])),
    params(ProjectPath), request_body = BatchFeatures,
    responses(
        (status = 200, description = "Deleted for good"), (status = 400, body = ErrorBody, description = "a flag is not archived"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<BatchFeatures>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    feature_batches::delete(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/stale", tag = "Features", security(("apiToken" = [])),
    params(ProjectPath), request_body = BatchStale,
    responses(
        (status = 202, description = "Marked"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn stale(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<BatchStale>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    feature_batches::set_stale(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::ACCEPTED)
}
