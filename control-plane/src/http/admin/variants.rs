//! Flag-level variants of a flag in an environment: `…/environments/:environment/variants`.

use super::features::{FeatureEnvironmentPath, FeaturePath};
use crate::domain::variants::{self, FlagVariants, PushVariants};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use crate::model::variant::FlagVariant;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The routes of a flag's variants in an environment, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get, put, patch))
        .routes(routes!(put_in_environments))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "Variants", security(("apiToken" = [])), params(FeatureEnvironmentPath),
    responses(
        (status = 200, body = FlagVariants), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
) -> Result<Json<FlagVariants>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        variants::get(
            &mut conn,
            &path.project_id,
            &path.feature_name,
            &path.environment,
        )
        .await?,
    ))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "Variants", security(("apiToken" = [])), params(FeatureEnvironmentPath), request_body = Vec<FlagVariant>,
    responses(
        (status = 200, body = FlagVariants, description = "Sorted by name, weights normalised"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn put(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
    JsonBody(input): JsonBody<Vec<FlagVariant>>,
) -> Result<Json<FlagVariants>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let variants = variants::set(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        input,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(variants))
}

#[utoipa::path(
    patch, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "Variants", security(("apiToken" = [])), params(FeatureEnvironmentPath),
    request_body(content = Vec<Object>, description = "JSON Patch (RFC 6902) over the variants array"),
    responses(
        (status = 200, body = FlagVariants), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn patch(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
    JsonBody(operations): JsonBody<json_patch::Patch>,
) -> Result<Json<FlagVariants>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let variants = variants::patch(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        operations,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(variants))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/features/{featureName}/variants-batch",
    tag = "Variants", security(("apiToken" = [])), params(FeaturePath), request_body = PushVariants,
    responses(
        (status = 200, body = FlagVariants, description = "The variants now set in every listed environment"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn put_in_environments(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(input): JsonBody<PushVariants>,
) -> Result<Json<FlagVariants>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let variants =
        variants::set_in_environments(&mut tx, &path.project_id, &path.feature_name, input).await?;
    state.commit(tx).await?;
    Ok(Json(variants))
}
