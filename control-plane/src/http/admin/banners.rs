//! `/api/admin/banners` (Unleash Enterprise's banners; `domain::banners`): everyone signed in reads, Admins
//! write (mounted in the Settings area).

use crate::domain::banners::{self, Banner, BannerInput, BannerList};
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

/// The banner routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
        .routes(routes!(on))
        .routes(routes!(off))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct BannerPath {
    /// The banner's id (a positive integer).
    pub id: String,
}

impl BannerPath {
    fn id(&self) -> Result<i64, ApiError> {
        self.id
            .parse::<i64>()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| ApiError::not_found(format!("There is no banner with id {}", self.id)))
    }
}

#[utoipa::path(
    get, path = "/api/admin/banners", tag = "Banners", security(("apiToken" = [])),
    responses(
        (status = 200, body = BannerList, description = "Every banner, oldest first"),
        (status = 401, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<BannerList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(banners::list(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/banners", tag = "Banners", security(("apiToken" = [])),
    request_body = BannerInput,
    responses(
        (status = 201, body = Banner), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Admins only"), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<BannerInput>,
) -> Result<(StatusCode, Json<Banner>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let banner = banners::create(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(banner)))
}

#[utoipa::path(
    put, path = "/api/admin/banners/{id}", tag = "Banners", security(("apiToken" = [])),
    params(BannerPath), request_body = BannerInput,
    responses(
        (status = 200, body = Banner), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Admins only"), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<BannerPath>,
    JsonBody(input): JsonBody<BannerInput>,
) -> Result<Json<Banner>, ApiError> {
    let id = path.id()?;
    let mut tx = state.store.begin_write(&actor).await?;
    let banner = banners::update(&mut tx, id, input).await?;
    state.commit(tx).await?;
    Ok(Json(banner))
}

#[utoipa::path(
    delete, path = "/api/admin/banners/{id}", tag = "Banners", security(("apiToken" = [])),
    params(BannerPath),
    responses(
        (status = 200, description = "Deleted"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Admins only"), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<BannerPath>,
) -> Result<StatusCode, ApiError> {
    let id = path.id()?;
    let mut tx = state.store.begin_write(&actor).await?;
    banners::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

async fn switch(
    state: &AppState,
    actor: &crate::store::Actor,
    path: &BannerPath,
    enabled: bool,
) -> Result<Json<Banner>, ApiError> {
    let id = path.id()?;
    let mut tx = state.store.begin_write(actor).await?;
    let banner = banners::set_enabled(&mut tx, id, enabled).await?;
    state.commit(tx).await?;
    Ok(Json(banner))
}

#[utoipa::path(
    post, path = "/api/admin/banners/{id}/on", tag = "Banners", security(("apiToken" = [])),
    params(BannerPath),
    responses(
        (status = 200, body = Banner), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Admins only"), (status = 404, body = ErrorBody)
    )
)]
pub async fn on(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<BannerPath>,
) -> Result<Json<Banner>, ApiError> {
    switch(&state, &actor, &path, true).await
}

#[utoipa::path(
    post, path = "/api/admin/banners/{id}/off", tag = "Banners", security(("apiToken" = [])),
    params(BannerPath),
    responses(
        (status = 200, body = Banner), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Admins only"), (status = 404, body = ErrorBody)
    )
)]
pub async fn off(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<BannerPath>,
) -> Result<Json<Banner>, ApiError> {
    switch(&state, &actor, &path, false).await
}
