//! A project's API tokens: `/api/admin/projects/:projectId/api-tokens[/:token]`.

use super::projects::ProjectPath;
use crate::domain::project_tokens::{self, CreateProjectApiToken};
use crate::domain::tokens::{ApiToken, ApiTokenList};
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

/// The project-token routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(delete))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectTokenPath {
    pub project_id: String,
    /// The token's secret.
    pub token: String,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/api-tokens", tag = "API tokens", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ApiTokenList, description = "Secrets are null"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ApiTokenList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        project_tokens::list(&mut conn, &path.project_id).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/api-tokens", tag = "API tokens", security(("apiToken" = [])),
    params(ProjectPath), request_body = CreateProjectApiToken,
    responses(
        (status = 201, body = ApiToken, description = "With its secret, shown this once"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<CreateProjectApiToken>,
) -> Result<(StatusCode, Json<ApiToken>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let token = project_tokens::create(&mut tx, &path.project_id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/api-tokens/{token}", tag = "API tokens",
    security(("apiToken" = [])), params(ProjectTokenPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectTokenPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_tokens::delete(&mut tx, &path.project_id, &path.token).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
