//! `POST /api/admin/playground` and `POST /api/admin/playground/advanced`.

use crate::domain::playground::{self, PlaygroundRequest, PlaygroundResponse};
use crate::domain::playground_advanced::{
    self, AdvancedPlaygroundRequest, AdvancedPlaygroundResponse,
};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The playground routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(evaluate))
        .routes(routes!(advanced))
}

#[utoipa::path(
    post, path = "/api/admin/playground", tag = "Playground", security(("apiToken" = [])),
    request_body = PlaygroundRequest,
    responses(
        (status = 200, body = PlaygroundResponse, description = "Every live flag in scope, by name"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn evaluate(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(request): JsonBody<PlaygroundRequest>,
) -> Result<Json<PlaygroundResponse>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        playground::evaluate(&mut conn, &state.playground, request).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/playground/advanced", tag = "Playground", security(("apiToken" = [])),
    request_body = AdvancedPlaygroundRequest,
    responses(
        (status = 200, body = AdvancedPlaygroundResponse,
         description = "Every live flag in scope, by name, per environment, one answer per combination of the context's values"),
        (status = 400, body = ErrorBody,
         description = "Bad body, an unknown environment, or more than 1,000 contexts × environments"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn advanced(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(request): JsonBody<AdvancedPlaygroundRequest>,
) -> Result<Json<AdvancedPlaygroundResponse>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        playground_advanced::evaluate(&mut conn, &state.playground, request).await?,
    ))
}
