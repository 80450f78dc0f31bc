//! `/api/admin/segments`.

use crate::domain::segments::{self, Segment, SegmentInput, SegmentList, SegmentName};
use crate::domain::strategy_usage::{self, StrategyReferences, StrategySegments};
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

/// The segment routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(strategies))
        .routes(routes!(validate_name))
        .routes(routes!(segments_of_strategy))
        .routes(routes!(set_segments_of_strategy))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct StrategyIdPath {
    pub strategy_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SegmentPath {
    /// An integer; anything else is 400.
    pub id: i64,
}

#[utoipa::path(
    get, path = "/api/admin/segments", tag = "Segments", security(("apiToken" = [])),
    responses((status = 200, body = SegmentList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<SegmentList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(segments::list(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/segments/{id}", tag = "Segments", security(("apiToken" = [])),
    params(SegmentPath),
    responses(
        (status = 200, body = Segment), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<SegmentPath>,
) -> Result<Json<Segment>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(segments::get(&mut conn, path.id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/segments", tag = "Segments", security(("apiToken" = [])),
    request_body = SegmentInput,
    responses(
        (status = 201, body = Segment), (status = 400, body = ErrorBody, description = "Invalid, or ExceedsLimitError"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<SegmentInput>,
) -> Result<(StatusCode, Json<Segment>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let segment = segments::create(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(segment)))
}

#[utoipa::path(
    put, path = "/api/admin/segments/{id}", tag = "Segments", security(("apiToken" = [])),
    params(SegmentPath), request_body = SegmentInput,
    responses(
        (status = 204, description = "Replaced"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<SegmentPath>,
    JsonBody(input): JsonBody<SegmentInput>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    segments::update(&mut tx, path.id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete, path = "/api/admin/segments/{id}", tag = "Segments", security(("apiToken" = [])),
    params(SegmentPath),
    responses(
        (status = 204, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Used by flag strategies")
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<SegmentPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    segments::delete(&mut tx, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get, path = "/api/admin/segments/{id}/strategies", tag = "Segments", security(("apiToken" = [])),
    params(SegmentPath),
    responses(
        (status = 200, body = StrategyReferences), (status = 400, body = ErrorBody, description = "An id that is not a number"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn strategies(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<SegmentPath>,
) -> Result<Json<StrategyReferences>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(strategy_usage::of_segment(&mut conn, path.id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/segments/validate", tag = "Segments", security(("apiToken" = [])),
    request_body = SegmentName,
    responses(
        (status = 204, description = "The name is free"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_name(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(input): JsonBody<SegmentName>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    segments::validate_name(&mut conn, input).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get, path = "/api/admin/segments/strategies/{strategyId}", tag = "Segments", security(("apiToken" = [])),
    params(StrategyIdPath),
    responses(
        (status = 200, body = SegmentList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn segments_of_strategy(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<StrategyIdPath>,
) -> Result<Json<SegmentList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        strategy_usage::segments_of_strategy(&mut conn, &path.strategy_id).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/segments/strategies", tag = "Segments", security(("apiToken" = [])),
    request_body = StrategySegments,
    responses(
        (status = 201, body = StrategySegments), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_segments_of_strategy(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<StrategySegments>,
) -> Result<(StatusCode, Json<StrategySegments>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let answer = strategy_usage::set_segments_of_strategy(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(answer)))
}
