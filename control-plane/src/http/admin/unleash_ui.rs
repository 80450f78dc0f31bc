//! What Unleash's own web UI posts: feedback, splash screens seen, its errors (`domain::unleash_ui`).

use crate::domain::unleash_ui::{
    self, FeedbackCreate, FeedbackResponse, FeedbackUpdate, SplashResponse, UiErrorReport,
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

/// The routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(create_feedback))
        .routes(routes!(update_feedback))
        .routes(routes!(splash_seen))
        .routes(routes!(record_ui_error))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IdPath {
    /// A feedback questionnaire's or splash screen's id.
    pub id: String,
}

#[utoipa::path(
    post, path = "/api/admin/feedback", tag = "Unleash UI", security(("apiToken" = [])),
    request_body = FeedbackCreate,
    responses(
        (status = 200, body = FeedbackResponse),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user"), (status = 415, body = ErrorBody)
    )
)]
pub async fn create_feedback(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<FeedbackCreate>,
) -> Result<Json<FeedbackResponse>, ApiError> {
    let mut conn = state.store.bookkeeping().await?;
    Ok(Json(
        unleash_ui::create_feedback(&mut conn, &actor, input).await?,
    ))
}

#[utoipa::path(
    put, path = "/api/admin/feedback/{id}", tag = "Unleash UI", security(("apiToken" = [])),
    params(IdPath), request_body = FeedbackUpdate,
    responses(
        (status = 200, body = FeedbackResponse),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user"), (status = 415, body = ErrorBody)
    )
)]
pub async fn update_feedback(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    JsonBody(input): JsonBody<FeedbackUpdate>,
) -> Result<Json<FeedbackResponse>, ApiError> {
    let mut conn = state.store.bookkeeping().await?;
    Ok(Json(
        unleash_ui::update_feedback(&mut conn, &actor, &path.id, input).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/splash/{id}", tag = "Unleash UI", security(("apiToken" = [])),
    params(IdPath),
    responses(
        (status = 200, body = SplashResponse),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user")
    )
)]
pub async fn splash_seen(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<Json<SplashResponse>, ApiError> {
    let mut conn = state.store.bookkeeping().await?;
    Ok(Json(
        unleash_ui::splash_seen(&mut conn, &actor, &path.id).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/record-ui-error", tag = "Unleash UI", security(("apiToken" = [])),
    request_body = UiErrorReport,
    responses(
        (status = 204, description = "Logged"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn record_ui_error(
    AdminActor(actor): AdminActor,
    JsonBody(report): JsonBody<UiErrorReport>,
) -> StatusCode {
    unleash_ui::record_ui_error(&actor, &report);
    StatusCode::NO_CONTENT
}
