//! The audit trail: `/api/admin/events`.

use super::features::FeatureNamePath;
use crate::domain::events::{self, EventList, EventQuery, FeatureEventList};
use crate::http::extract::{AdminActor, PathParams, QueryParams};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The audit-trail routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(of_feature))
}

#[utoipa::path(
    get, path = "/api/admin/events", tag = "Events", security(("apiToken" = [])), params(EventQuery),
    responses(
        (status = 200, body = EventList, description = "Newest first"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    QueryParams(query): QueryParams<EventQuery>,
) -> Result<Json<EventList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(events::list(&mut conn, query).await?))
}

#[utoipa::path(
    get, path = "/api/admin/events/{featureName}", tag = "Events", security(("apiToken" = [])),
    params(FeatureNamePath),
    responses(
        (status = 200, body = FeatureEventList, description = "Newest first; an unknown flag has no events"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn of_feature(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeatureNamePath>,
) -> Result<Json<FeatureEventList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        events::of_feature(&mut conn, &path.feature_name).await?,
    ))
}
