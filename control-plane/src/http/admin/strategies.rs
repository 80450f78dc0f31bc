//! Strategies of a flag in an environment: `…/environments/:environment/strategies…`.

use super::features::FeatureEnvironmentPath;
use crate::domain::strategies::{self, Strategy};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use crate::model::strategy::{StrategyInput, StrategySortOrder};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use vexil_shared::{ApiError, ErrorBody};

/// The routes of a flag's strategies in an environment, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, add))
        .routes(routes!(set_sort_order))
        .routes(routes!(get, update, patch, delete))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct StrategyPath {
    pub project_id: String,
    pub feature_name: String,
    pub environment: String,
    /// A UUID; anything else is 400.
    #[param(value_type = String, format = Uuid)]
    pub strategy_id: StrategyId,
}

/// A strategy id in a path: a UUID, else 400 naming `strategyId`.
#[derive(Debug, Clone, Copy)]
pub struct StrategyId(pub Uuid);

impl<'de> Deserialize<'de> for StrategyId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Uuid::parse_str(&text).map(StrategyId).map_err(|_| {
            serde::de::Error::custom(format!("strategyId must be a UUID, got {text:?}"))
        })
    }
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
    tag = "Strategies", security(("apiToken" = [])), params(FeatureEnvironmentPath),
    responses(
        (status = 200, body = Vec<Strategy>, description = "By sortOrder, disabled ones included"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
) -> Result<Json<Vec<Strategy>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        strategies::list(
            &mut conn,
            &path.project_id,
            &path.feature_name,
            &path.environment,
        )
        .await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
    tag = "Strategies", security(("apiToken" = [])), params(FeatureEnvironmentPath), request_body = StrategyInput,
    responses(
        (status = 200, body = Strategy), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn add(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
    JsonBody(input): JsonBody<StrategyInput>,
) -> Result<Json<Strategy>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let strategy = strategies::add(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        input,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(strategy))
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Strategies", security(("apiToken" = [])), params(StrategyPath),
    responses(
        (status = 200, body = Strategy), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<StrategyPath>,
) -> Result<Json<Strategy>, ApiError> {
    let mut conn = state.store.read().await?;
    let strategy = strategies::get(
        &mut conn,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        path.strategy_id.0,
    )
    .await?;
    Ok(Json(strategy))
}

#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Strategies", security(("apiToken" = [])), params(StrategyPath), request_body = StrategyInput,
    responses(
        (status = 200, body = Strategy), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyPath>,
    JsonBody(input): JsonBody<StrategyInput>,
) -> Result<Json<Strategy>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let strategy = strategies::update(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        path.strategy_id.0,
        input,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(strategy))
}

#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Strategies", security(("apiToken" = [])), params(StrategyPath),
    request_body(content = Vec<Object>, description = "JSON Patch (RFC 6902) over the strategy's fields"),
    responses(
        (status = 200, body = Strategy), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn patch(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyPath>,
    JsonBody(operations): JsonBody<json_patch::Patch>,
) -> Result<Json<Strategy>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let strategy = strategies::patch(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        path.strategy_id.0,
        operations,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(strategy))
}

#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Strategies", security(("apiToken" = [])), params(StrategyPath),
    responses(
        (status = 200, description = "Removed"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    strategies::delete(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        path.strategy_id.0,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order",
    tag = "Strategies", security(("apiToken" = [])), params(FeatureEnvironmentPath),
    request_body = Vec<StrategySortOrder>,
    responses(
        (status = 200, description = "Reordered"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_sort_order(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
    JsonBody(entries): JsonBody<Vec<StrategySortOrder>>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    strategies::set_sort_order(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        entries,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
