//! `/api/admin/addons`: webhook addons and their delivery log. Mounted in the settings area: everyone reads,
//! only admins write (Unleash's addon permissions are admin-only).

use crate::domain::access::personal_fields;
use crate::domain::addons::{self, Addon, AddonInput, AddonList, IntegrationEvents, LogQuery};
use crate::http::extract::{AdminActor, AdminCaller, JsonBody, PathParams, QueryParams};
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

/// The addon routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(delivery_log))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AddonPath {
    /// The addon's id.
    pub id: String,
}

#[utoipa::path(
    get, path = "/api/admin/addons", tag = "Addons", security(("apiToken" = [])),
    responses(
        (status = 200, body = AddonList, description = "Addons by id, sensitive parameters masked; the providers"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<AddonList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(addons::list(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/addons/{id}", tag = "Addons", security(("apiToken" = [])),
    params(AddonPath),
    responses(
        (status = 200, body = Addon), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<AddonPath>,
) -> Result<Json<Addon>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(addons::get(&mut conn, &path.id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/addons", tag = "Addons", security(("apiToken" = [])),
    request_body = AddonInput,
    responses(
        (status = 200, body = Addon, description = "Created (Unleash answers 200)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<AddonInput>,
) -> Result<Json<Addon>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let addon = addons::create(&mut tx, input, state.webhook_targets).await?;
    state.commit(tx).await?;
    Ok(Json(addon))
}

#[utoipa::path(
    put, path = "/api/admin/addons/{id}", tag = "Addons", security(("apiToken" = [])),
    params(AddonPath), request_body = AddonInput,
    responses(
        (status = 200, body = Addon), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<AddonPath>,
    JsonBody(input): JsonBody<AddonInput>,
) -> Result<Json<Addon>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let addon = addons::update(&mut tx, &path.id, input, state.webhook_targets).await?;
    state.commit(tx).await?;
    Ok(Json(addon))
}

#[utoipa::path(
    delete, path = "/api/admin/addons/{id}", tag = "Addons", security(("apiToken" = [])),
    params(AddonPath),
    responses(
        (status = 200, description = "Deleted, with its delivery log"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<AddonPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    addons::delete(&mut tx, &path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/addons/{id}/events", tag = "Addons", security(("apiToken" = [])),
    params(AddonPath, LogQuery),
    responses(
        (status = 200, body = IntegrationEvents, description = "Finished deliveries, newest first"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn delivery_log(
    State(state): State<Arc<AppState>>,
    caller: AdminCaller,
    PathParams(path): PathParams<AddonPath>,
    QueryParams(query): QueryParams<LogQuery>,
) -> Result<Json<IntegrationEvents>, ApiError> {
    let personal = personal_fields(caller.credential);
    let mut conn = state.store.read().await?;
    Ok(Json(
        addons::delivery_log(&mut conn, &path.id, query, personal).await?,
    ))
}
