//! SCIM provisioning settings, Unleash's Enterprise routes: `GET/POST /api/admin/scim-settings` (`{enabled}`)
//! and `POST /api/admin/scim-settings/generate-new-token` (the token, shown once). Mounted in the Access area:
//! Admins only, reads included.

use crate::domain::scim_settings::{self, ScimSettings, ScimToken, SetScimSettings};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The SCIM settings routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get_settings, set_settings))
        .routes(routes!(generate_token))
}

#[utoipa::path(
    get, path = "/api/admin/scim-settings", tag = "SCIM", security(("apiToken" = [])),
    responses(
        (status = 200, body = ScimSettings, description = "Whether /scim/v2 answers, and whether a token is set (never shown)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn get_settings(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<ScimSettings>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(scim_settings::get(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/scim-settings", tag = "SCIM", security(("apiToken" = [])),
    request_body = SetScimSettings,
    responses(
        (status = 200, description = "Stored; a change is a setting-updated event"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_settings(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<SetScimSettings>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    scim_settings::set(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/scim-settings/generate-new-token", tag = "SCIM", security(("apiToken" = [])),
    responses(
        (status = 200, body = ScimToken, description = "The new token, shown this once; the previous one stops working"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn generate_token(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<Json<ScimToken>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let token = scim_settings::generate_token(&mut tx).await?;
    state.commit(tx).await?;
    Ok(Json(token))
}
