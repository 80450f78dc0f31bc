//! A flag's lifecycle (`…/features/:featureName/lifecycle`, complete, uncomplete), the count of flags per
//! stage (`/api/admin/lifecycle/count`) and the flag types' lifetimes (`/api/admin/feature-types/:id/lifetime`,
//! Admins only: not in `PERMISSIONS`).

use crate::domain::feature_types::{self, FeatureTypeInfo, UpdateFeatureTypeLifetime};
use crate::domain::lifecycle::{
    self, FeatureLifecycleCompleted, FeatureLifecycleCount, FeatureLifecycleStage,
};
use crate::http::admin::features::FeaturePath;
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

/// The lifecycle routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get))
        .routes(routes!(complete))
        .routes(routes!(uncomplete))
        .routes(routes!(count))
        .routes(routes!(set_lifetime))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct FeatureTypePath {
    /// The flag type (`release`, `experiment`, `operational`, `kill-switch`, `permission`, `sunset`).
    pub id: String,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, body = Vec<FeatureLifecycleStage>, description = "The stages the flag entered, in order"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Unknown project or flag")
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<Json<Vec<FeatureLifecycleStage>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        lifecycle::get(&mut conn, &path.project_id, &path.feature_name).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath), request_body = FeatureLifecycleCompleted,
    responses(
        (status = 200, description = "The flag is completed (also when it was, with the same status)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Unknown project or flag"), (status = 415, body = ErrorBody)
    )
)]
pub async fn complete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(input): JsonBody<FeatureLifecycleCompleted>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    lifecycle::complete(&mut tx, &path.project_id, &path.feature_name, &input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, description = "The flag is not completed (also when it was not)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Unknown project or flag")
    )
)]
pub async fn uncomplete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    lifecycle::uncomplete(&mut tx, &path.project_id, &path.feature_name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/lifecycle/count", tag = "Features", security(("apiToken" = [])),
    responses(
        (status = 200, body = FeatureLifecycleCount, description = "How many flags are in each stage now"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn count(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<FeatureLifecycleCount>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(lifecycle::count(&mut conn, None).await?))
}

#[utoipa::path(
    put, path = "/api/admin/feature-types/{id}/lifetime", tag = "Feature Types", security(("apiToken" = [])),
    params(FeatureTypePath), request_body = UpdateFeatureTypeLifetime,
    responses(
        (status = 200, body = FeatureTypeInfo, description = "The flag type with its new lifetime"),
        (status = 400, body = ErrorBody, description = "lifetimeDays missing, negative or above 2147483647"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "Not an Admin"),
        (status = 404, body = ErrorBody, description = "Unknown flag type"), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_lifetime(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureTypePath>,
    JsonBody(input): JsonBody<UpdateFeatureTypeLifetime>,
) -> Result<Json<FeatureTypeInfo>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let updated = feature_types::set_lifetime(&mut tx, &path.id, &input).await?;
    state.commit(tx).await?;
    Ok(Json(updated))
}
