//! Service accounts: `/api/admin/service-account…` (Unleash's Enterprise routes and schemas), Admin only
//! (mounted in the `Access` area).

use crate::domain::service_accounts::{
    self, CreateServiceAccount, ServiceAccount, ServiceAccountList, ServiceAccountPermissions,
    UpdateServiceAccount,
};
use crate::domain::users::{CreatePat, Pat, PatList};
use crate::http::extract::{AdminActor, JsonBody, PathParams, QueryParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::header::LOCATION;
use axum::http::StatusCode;
use axum::response::AppendHeaders;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The service-account routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(delete_token))
        .routes(routes!(permissions))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IdPath {
    /// The service account's id.
    pub id: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct TokenPath {
    /// The service account's id.
    pub id: i64,
    /// The token's id.
    #[param(rename = "tokenId")]
    pub token_id: i64,
}

/// `project` and `environment` of a permissions query: Vexil has root roles only, so they change nothing.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PermissionsQuery {
    pub project: Option<String>,
    pub environment: Option<String>,
}

type Created<T> = (
    StatusCode,
    AppendHeaders<[(axum::http::HeaderName, String); 1]>,
    Json<T>,
);

fn account_location(state: &AppState, id: i64) -> String {
    format!("{}/api/admin/service-account/{id}", state.base_path)
}

#[utoipa::path(
    get, path = "/api/admin/service-account", tag = "Service Accounts", security(("apiToken" = [])),
    responses(
        (status = 200, body = ServiceAccountList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<ServiceAccountList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(service_accounts::list(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/service-account", tag = "Service Accounts", security(("apiToken" = [])),
    request_body = CreateServiceAccount,
    responses(
        (status = 201, body = ServiceAccount, headers(("location" = String, description = "The new account"))),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A user or service account has this username"),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<CreateServiceAccount>,
) -> Result<Created<ServiceAccount>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let account = service_accounts::create(&mut tx, input).await?;
    state.commit(tx).await?;
    let location = account_location(&state, account.id);
    Ok((
        StatusCode::CREATED,
        AppendHeaders([(LOCATION, location)]),
        Json(account),
    ))
}

#[utoipa::path(
    put, path = "/api/admin/service-account/{id}", tag = "Service Accounts", security(("apiToken" = [])),
    params(IdPath), request_body = UpdateServiceAccount,
    responses(
        (status = 200, body = ServiceAccount), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    JsonBody(input): JsonBody<UpdateServiceAccount>,
) -> Result<Json<ServiceAccount>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let account = service_accounts::update(&mut tx, path.id, input).await?;
    state.commit(tx).await?;
    Ok(Json(account))
}

#[utoipa::path(
    delete, path = "/api/admin/service-account/{id}", tag = "Service Accounts", security(("apiToken" = [])),
    params(IdPath),
    responses(
        (status = 200, description = "Deleted, with its tokens"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    service_accounts::delete(&mut tx, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/service-account/{id}/token", tag = "Service Accounts", security(("apiToken" = [])),
    params(IdPath),
    responses(
        (status = 200, body = PatList, description = "The account's tokens; `secret` is always null"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn list_tokens(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<Json<PatList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(service_accounts::tokens(&mut conn, path.id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/service-account/{id}/token", tag = "Service Accounts", security(("apiToken" = [])),
    params(IdPath), request_body = CreatePat,
    responses(
        (status = 201, body = Pat, description = "The token with its secret, shown only here",
            headers(("location" = String, description = "The account's tokens"))),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create_token(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    JsonBody(input): JsonBody<CreatePat>,
) -> Result<Created<Pat>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let pat = service_accounts::create_token(&mut tx, path.id, input).await?;
    state.commit(tx).await?;
    let location = format!("{}/token", account_location(&state, path.id));
    Ok((
        StatusCode::CREATED,
        AppendHeaders([(LOCATION, location)]),
        Json(pat),
    ))
}

#[utoipa::path(
    delete, path = "/api/admin/service-account/{id}/token/{tokenId}", tag = "Service Accounts",
    security(("apiToken" = [])), params(TokenPath),
    responses(
        (status = 200, description = "Deleted: the token stops working at once"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_token(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TokenPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    service_accounts::delete_token(&mut tx, path.id, path.token_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/service-account/{id}/permissions", tag = "Service Accounts",
    security(("apiToken" = [])), params(IdPath, PermissionsQuery),
    responses(
        (status = 200, body = ServiceAccountPermissions), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn permissions(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<IdPath>,
    QueryParams(_query): QueryParams<PermissionsQuery>,
) -> Result<Json<ServiceAccountPermissions>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        service_accounts::permissions(&mut conn, path.id).await?,
    ))
}
