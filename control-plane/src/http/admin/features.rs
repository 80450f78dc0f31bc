//! Feature flags: `/api/admin/projects/:projectId/features…`, on/off, validate, archive, revive, delete.

use super::projects::ProjectPath;
use crate::domain::feature_clone::{self, CloneFeature};
use crate::domain::feature_types::{self, FeatureTypes};
use crate::domain::features::{
    self, ArchiveFeatures, ArchivedFeatureList, CreateFeature, Feature, FeatureEnvironmentDetails,
    FeatureList, FeatureSummary, UpdateFeature, ValidateFeatureName,
};
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

/// The feature-flag routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, patch, archive))
        .routes(routes!(archive_many))
        .routes(routes!(validate))
        .routes(routes!(turn_on))
        .routes(routes!(turn_off))
        .routes(routes!(archived))
        .routes(routes!(archived_of_project))
        .routes(routes!(revive))
        .routes(routes!(delete_archived))
        .routes(routes!(clone))
        .routes(routes!(environment))
        .routes(routes!(feature_types))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct FeaturePath {
    pub project_id: String,
    pub feature_name: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct FeatureEnvironmentPath {
    pub project_id: String,
    pub feature_name: String,
    pub environment: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct FeatureNamePath {
    pub feature_name: String,
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TurnOnQuery {
    /// Re-enable the disabled strategies instead of adding a default one.
    pub should_activate_disabled_strategies: Option<bool>,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features", tag = "Features", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = FeatureList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<FeatureList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(features::list(&mut conn, &path.project_id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features", tag = "Features", security(("apiToken" = [])),
    params(ProjectPath), request_body = CreateFeature,
    responses(
        (status = 201, body = FeatureSummary), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<CreateFeature>,
) -> Result<(StatusCode, Json<FeatureSummary>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let feature = features::create(&mut tx, &path.project_id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(feature)))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, body = Feature), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "unknown or archived")
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<Json<Feature>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        features::get(&mut conn, &path.project_id, &path.feature_name).await?,
    ))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/features/{featureName}", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath), request_body = UpdateFeature,
    responses(
        (status = 200, body = Feature), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(input): JsonBody<UpdateFeature>,
) -> Result<Json<Feature>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let feature = features::update(&mut tx, &path.project_id, &path.feature_name, input).await?;
    state.commit(tx).await?;
    Ok(Json(feature))
}

#[utoipa::path(
    patch, path = "/api/admin/projects/{projectId}/features/{featureName}", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath),
    request_body(content = Vec<Object>, description = "JSON Patch (RFC 6902) over {name, type, description, stale, impressionData}"),
    responses(
        (status = 200, body = Feature), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn patch(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(operations): JsonBody<json_patch::Patch>,
) -> Result<Json<Feature>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let feature =
        features::patch(&mut tx, &path.project_id, &path.feature_name, operations).await?;
    state.commit(tx).await?;
    Ok(Json(feature))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 202, description = "Archived"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn archive(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    features::archive(&mut tx, &path.project_id, &path.feature_name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::ACCEPTED)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/archive", tag = "Features", security(("apiToken" = [])),
    params(ProjectPath), request_body = ArchiveFeatures,
    responses(
        (status = 202, description = "Archived"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn archive_many(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<ArchiveFeatures>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    features::archive_many(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::ACCEPTED)
}

#[utoipa::path(
    post, path = "/api/admin/features/validate", tag = "Features", security(("apiToken" = [])),
    request_body = ValidateFeatureName,
    responses(
        (status = 200, description = "The name is free"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "The given projectId does not exist"),
        (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn validate(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(input): JsonBody<ValidateFeatureName>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    features::validate_name(&mut conn, input).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on",
    tag = "Features", security(("apiToken" = [])), params(FeatureEnvironmentPath, TurnOnQuery),
    responses(
        (status = 200, description = "On"), (status = 400, body = ErrorBody, description = "archived"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn turn_on(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
    QueryParams(query): QueryParams<TurnOnQuery>,
) -> Result<StatusCode, ApiError> {
    let activate_disabled = query.should_activate_disabled_strategies.unwrap_or(false);
    let mut tx = state.store.begin_write(&actor).await?;
    features::set_enabled(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        true,
        activate_disabled,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
    tag = "Features", security(("apiToken" = [])), params(FeatureEnvironmentPath),
    responses(
        (status = 200, description = "Off"), (status = 400, body = ErrorBody, description = "archived"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn turn_off(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    features::set_enabled(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        false,
        false,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/archive/features", tag = "Archive", security(("apiToken" = [])),
    responses(
        (status = 200, body = ArchivedFeatureList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn archived(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<ArchivedFeatureList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(features::archived(&mut conn, None).await?))
}

#[utoipa::path(
    get, path = "/api/admin/archive/features/{projectId}", tag = "Archive", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = ArchivedFeatureList, description = "Unknown project: an empty list"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn archived_of_project(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<ArchivedFeatureList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        features::archived(&mut conn, Some(&path.project_id)).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/archive/revive/{featureName}", tag = "Archive", security(("apiToken" = [])),
    params(FeatureNamePath),
    responses(
        (status = 200, description = "Revived, off everywhere (not archived: nothing to do)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn revive(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureNamePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    features::revive(&mut tx, &path.feature_name, &state.limits).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/archive/{featureName}", tag = "Archive", security(("apiToken" = [])),
    params(FeatureNamePath),
    responses(
        (status = 200, description = "Deleted for good (only archived flags; otherwise nothing to do)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn delete_archived(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureNamePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    features::delete_archived(&mut tx, &path.feature_name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/clone", tag = "Features",
    security(("apiToken" = [])), params(FeaturePath), request_body = CloneFeature,
    responses(
        (status = 200, body = Feature, description = "The new flag"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn clone(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(input): JsonBody<CloneFeature>,
) -> Result<Json<Feature>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let feature = feature_clone::clone(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        input,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(feature))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}",
    tag = "Features", security(("apiToken" = [])), params(FeatureEnvironmentPath),
    responses(
        (status = 200, body = FeatureEnvironmentDetails), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn environment(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
) -> Result<Json<FeatureEnvironmentDetails>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        features::environment(
            &mut conn,
            &path.project_id,
            &path.feature_name,
            &path.environment,
        )
        .await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/feature-types", tag = "Features", security(("apiToken" = [])),
    responses(
        (status = 200, body = FeatureTypes), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn feature_types(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<FeatureTypes>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(feature_types::list(&mut conn).await?))
}
