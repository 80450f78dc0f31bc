//! A flag's links (`domain::feature_links`): `POST …/features/:f/link`, `PUT/DELETE …/link/:linkId`.

use crate::domain::feature_links::{self, LinkInput};
use crate::http::admin::features::FeaturePath;
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(update, delete))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct LinkPath {
    pub project_id: String,
    pub feature_name: String,
    pub link_id: String,
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/link", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath), request_body = LinkInput,
    responses(
        (status = 204, description = "Linked"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(input): JsonBody<LinkInput>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    feature_links::create(&mut tx, &path.project_id, &path.feature_name, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}", tag = "Features",
    security(("apiToken" = [])), params(LinkPath), request_body = LinkInput,
    responses(
        (status = 204, description = "Changed"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<LinkPath>,
    JsonBody(input): JsonBody<LinkInput>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let place = (
        path.project_id.as_str(),
        path.feature_name.as_str(),
        path.link_id.as_str(),
    );
    feature_links::update(&mut tx, place, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}", tag = "Features",
    security(("apiToken" = [])), params(LinkPath),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<LinkPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let place = (
        path.project_id.as_str(),
        path.feature_name.as_str(),
        path.link_id.as_str(),
    );
    feature_links::delete(&mut tx, place).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}
