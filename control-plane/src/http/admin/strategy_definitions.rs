//! `/api/admin/strategies`: strategy definitions, deprecate and reactivate.

use crate::domain::strategy_definitions::{
    self, CreateStrategyDefinition, StrategyDefinition, StrategyDefinitionList,
    UpdateStrategyDefinition,
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

/// The strategy-definition routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(deprecate))
        .routes(routes!(reactivate))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct StrategyNamePath {
    pub strategy_name: String,
}

#[utoipa::path(
    get, path = "/api/admin/strategies", tag = "Strategy definitions", security(("apiToken" = [])),
    responses(
        (status = 200, body = StrategyDefinitionList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<StrategyDefinitionList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(strategy_definitions::list(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/strategies/{strategyName}", tag = "Strategy definitions", security(("apiToken" = [])),
    params(StrategyNamePath),
    responses(
        (status = 200, body = StrategyDefinition), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<StrategyNamePath>,
) -> Result<Json<StrategyDefinition>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        strategy_definitions::get(&mut conn, &path.strategy_name).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/strategies", tag = "Strategy definitions", security(("apiToken" = [])),
    request_body = CreateStrategyDefinition,
    responses(
        (status = 201, body = StrategyDefinition), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<CreateStrategyDefinition>,
) -> Result<(StatusCode, Json<StrategyDefinition>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let definition = strategy_definitions::create(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(definition)))
}

#[utoipa::path(
    put, path = "/api/admin/strategies/{strategyName}", tag = "Strategy definitions", security(("apiToken" = [])),
    params(StrategyNamePath), request_body = UpdateStrategyDefinition,
    responses(
        (status = 200, body = StrategyDefinition), (status = 400, body = ErrorBody, description = "Invalid, or built in"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyNamePath>,
    JsonBody(input): JsonBody<UpdateStrategyDefinition>,
) -> Result<Json<StrategyDefinition>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let definition = strategy_definitions::update(&mut tx, &path.strategy_name, input).await?;
    state.commit(tx).await?;
    Ok(Json(definition))
}

#[utoipa::path(
    delete, path = "/api/admin/strategies/{strategyName}", tag = "Strategy definitions", security(("apiToken" = [])),
    params(StrategyNamePath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody, description = "Built in, or in use"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyNamePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    strategy_definitions::delete(&mut tx, &path.strategy_name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/strategies/{strategyName}/deprecate", tag = "Strategy definitions",
    security(("apiToken" = [])), params(StrategyNamePath),
    responses(
        (status = 200, description = "Deprecated (already deprecated: nothing to do)"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn deprecate(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyNamePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    strategy_definitions::set_deprecated(&mut tx, &path.strategy_name, true).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/strategies/{strategyName}/reactivate", tag = "Strategy definitions",
    security(("apiToken" = [])), params(StrategyNamePath),
    responses(
        (status = 200, description = "Active (not deprecated: nothing to do)"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn reactivate(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<StrategyNamePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    strategy_definitions::set_deprecated(&mut tx, &path.strategy_name, false).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
