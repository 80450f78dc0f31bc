//! API tokens: `/api/admin/api-tokens`.

use crate::domain::tokens::{self, ApiToken, ApiTokenList, CreateApiToken, UpdateApiToken};
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

/// The API-token routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(by_name, update, delete))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TokenPath {
    /// The token's secret.
    pub token: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TokenNamePath {
    /// The tokens' name (`tokenName`): this segment is a secret only for `PUT` and `DELETE`.
    pub token: String,
}

#[utoipa::path(
    get, path = "/api/admin/api-tokens/{token}", tag = "API tokens", security(("apiToken" = [])),
    params(TokenNamePath),
    responses(
        (status = 200, body = ApiTokenList, description = "The tokens with this name, without secrets"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn by_name(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<TokenNamePath>,
) -> Result<Json<ApiTokenList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(tokens::by_name(&mut conn, &path.token).await?))
}

#[utoipa::path(
    get, path = "/api/admin/api-tokens", tag = "API tokens", security(("apiToken" = [])),
    responses(
        (status = 200, body = ApiTokenList, description = "Every token; `secret` is always null"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<ApiTokenList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(tokens::list(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/api-tokens", tag = "API tokens", security(("apiToken" = [])),
    request_body = CreateApiToken,
    responses(
        (status = 201, body = ApiToken, description = "The token with its secret, shown only here"),
        (status = 400, body = ErrorBody, description = "Bad body or ExceedsLimitError"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<CreateApiToken>,
) -> Result<(StatusCode, Json<ApiToken>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let token = tokens::create(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

#[utoipa::path(
    put, path = "/api/admin/api-tokens/{token}", tag = "API tokens", security(("apiToken" = [])),
    params(TokenPath), request_body = UpdateApiToken,
    responses(
        (status = 200, description = "Updated"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TokenPath>,
    JsonBody(input): JsonBody<UpdateApiToken>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    tokens::update(&mut tx, &path.token, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/api-tokens/{token}", tag = "API tokens", security(("apiToken" = [])),
    params(TokenPath),
    responses(
        (status = 200, description = "Deleted, or there was no such token"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TokenPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    tokens::delete(&mut tx, &path.token).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
