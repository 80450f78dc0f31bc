//! Signal endpoints: `/api/admin/signal-endpoints…` (Unleash's Enterprise schemas), Admin only as in Unleash
//! (mounted in the `Access` area), and the public receiver `POST /api/signal-endpoint/:name`, which takes
//! one of the endpoint's tokens instead of a credential of the admin API.

use crate::domain::signal_endpoints::{
    self, CreateSignalEndpoint, CreateSignalEndpointToken, SignalEndpoint, SignalEndpointSignals,
    SignalEndpointToken, SignalEndpointTokens, SignalEndpoints, SIGNAL_BODY_LIMIT,
};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The admin routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(update_token, delete_token))
        .routes(routes!(signals))
}

/// The receiver (no area: it authenticates with the endpoint's tokens), its bodies bounded.
pub fn receiver_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(receive))
        .layer(DefaultBodyLimit::max(SIGNAL_BODY_LIMIT))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IdPath {
    /// The signal endpoint's id.
    pub id: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct TokenPath {
    /// The signal endpoint's id.
    pub id: i64,
    /// The token's id.
    #[param(rename = "tokenId")]
    pub token_id: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct NamePath {
    /// The signal endpoint's name.
    pub name: String,
}

#[utoipa::path(
    get, path = "/api/admin/signal-endpoints", tag = "Signals", security(("apiToken" = [])),
    responses(
        (status = 200, body = SignalEndpoints), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    headers: HeaderMap,
) -> Result<Json<SignalEndpoints>, ApiError> {
    let mut conn = state.store.read().await?;
    let site = state.site(&headers);
    let mut endpoints = signal_endpoints::list(&mut conn).await?;
    endpoints.signal_endpoints = (endpoints.signal_endpoints.into_iter())
        .map(|endpoint| endpoint.at(&site))
        .collect();
    Ok(Json(endpoints))
}

#[utoipa::path(
    post, path = "/api/admin/signal-endpoints", tag = "Signals", security(("apiToken" = [])),
    request_body = CreateSignalEndpoint,
    responses(
        (status = 201, body = SignalEndpoint),
        (status = 400, body = ErrorBody, description = "A bad name, or past the signalEndpoints limit"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "An endpoint has this name"), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    headers: HeaderMap,
    JsonBody(input): JsonBody<CreateSignalEndpoint>,
) -> Result<(StatusCode, Json<SignalEndpoint>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let endpoint = signal_endpoints::create(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((
        StatusCode::CREATED,
        Json(endpoint.at(&state.site(&headers))),
    ))
}

#[utoipa::path(
    put, path = "/api/admin/signal-endpoints/{id}", tag = "Signals", security(("apiToken" = [])),
    params(IdPath), request_body = CreateSignalEndpoint,
    responses(
        (status = 200, body = SignalEndpoint), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    headers: HeaderMap,
    JsonBody(input): JsonBody<CreateSignalEndpoint>,
) -> Result<Json<SignalEndpoint>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let endpoint = signal_endpoints::update(&mut tx, path.id, input).await?;
    state.commit(tx).await?;
    Ok(Json(endpoint.at(&state.site(&headers))))
}

#[utoipa::path(
    delete, path = "/api/admin/signal-endpoints/{id}", tag = "Signals", security(("apiToken" = [])),
    params(IdPath),
    responses(
        (status = 200, description = "Deleted with its tokens and signals"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    signal_endpoints::delete(&mut tx, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/signal-endpoints/{id}/tokens", tag = "Signals", security(("apiToken" = [])),
    params(IdPath),
    responses(
        (status = 200, body = SignalEndpointTokens, description = "Without their secrets"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn list_tokens(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<Json<SignalEndpointTokens>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(signal_endpoints::tokens(&mut conn, path.id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/signal-endpoints/{id}/tokens", tag = "Signals", security(("apiToken" = [])),
    params(IdPath), request_body = CreateSignalEndpointToken,
    responses(
        (status = 201, body = SignalEndpointToken, description = "The token with its secret, shown this once"),
        (status = 400, body = ErrorBody, description = "A bad name, or past the signalTokensPerEndpoint limit"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create_token(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    JsonBody(input): JsonBody<CreateSignalEndpointToken>,
) -> Result<(StatusCode, Json<SignalEndpointToken>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let token = signal_endpoints::create_token(&mut tx, path.id, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

#[utoipa::path(
    put, path = "/api/admin/signal-endpoints/{id}/tokens/{tokenId}", tag = "Signals",
    security(("apiToken" = [])), params(TokenPath), request_body = CreateSignalEndpointToken,
    responses(
        (status = 200, description = "Renamed"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update_token(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TokenPath>,
    JsonBody(input): JsonBody<CreateSignalEndpointToken>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    signal_endpoints::rename_token(&mut tx, path.id, path.token_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/signal-endpoints/{id}/tokens/{tokenId}", tag = "Signals",
    security(("apiToken" = [])), params(TokenPath),
    responses(
        (status = 200, description = "Deleted: it stops working at once"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_token(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TokenPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    signal_endpoints::delete_token(&mut tx, path.id, path.token_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/signal-endpoints/{id}/signals", tag = "Signals", security(("apiToken" = [])),
    params(IdPath),
    responses(
        (status = 200, body = SignalEndpointSignals, description = "The latest 50 signals, the newest first"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn signals(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<Json<SignalEndpointSignals>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(signal_endpoints::signals(&mut conn, path.id).await?))
}

#[utoipa::path(
    post, path = "/api/signal-endpoint/{name}", tag = "Signals", security(("signalToken" = [])),
    params(NamePath),
    request_body(content = serde_json::Value, description = "Any JSON, at most 64 KiB"),
    responses(
        (status = 200, description = "Kept as a signal; the action sets listening to the endpoint run within seconds"),
        (status = 400, body = ErrorBody, description = "Not JSON"),
        (status = 401, body = ErrorBody, description = "No token, or not one of the endpoint's"),
        (status = 403, body = ErrorBody, description = "The endpoint is disabled"),
        (status = 404, body = ErrorBody, description = "No endpoint has this name"),
        (status = 413, body = ErrorBody, description = "Larger than 64 KiB"), (status = 415, body = ErrorBody)
    )
)]
pub async fn receive(
    State(state): State<Arc<AppState>>,
    PathParams(path): PathParams<NamePath>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<Value>,
) -> Result<StatusCode, ApiError> {
    let authorization = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let mut conn = state.store.bookkeeping().await?;
    signal_endpoints::receive(&mut conn, &path.name, authorization, &body).await?;
    state.signal_received.notify_one();
    Ok(StatusCode::OK)
}
