//! `POST /api/admin/playground`.

use crate::domain::playground::{self, PlaygroundRequest, PlaygroundResponse};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The playground route, as stated in its handler's `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(evaluate))
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
