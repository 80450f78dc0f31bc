//! The audit trail: `/api/admin/events`.

use super::features::FeatureNamePath;
use super::projects::ProjectPath;
use crate::domain::access;
use crate::domain::events::{self, Creator, EventList, EventQuery, FeatureEventList};
use crate::http::extract::{AdminActor, AdminCaller, PathParams, QueryParams};
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
        .routes(routes!(creators))
        .routes(routes!(flag_creators))
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
    caller: AdminCaller,
    QueryParams(query): QueryParams<EventQuery>,
) -> Result<Json<EventList>, ApiError> {
    let personal = access::personal_fields(caller.credential);
    let mut conn = state.store.read().await?;
    Ok(Json(events::list(&mut conn, query, personal).await?))
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
    caller: AdminCaller,
    PathParams(path): PathParams<FeatureNamePath>,
) -> Result<Json<FeatureEventList>, ApiError> {
    let personal = access::personal_fields(caller.credential);
    let mut conn = state.store.read().await?;
    Ok(Json(
        events::of_feature(&mut conn, &path.feature_name, personal).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/event-creators", tag = "Events", security(("apiToken" = [])),
    responses(
        (status = 200, body = Vec<Creator>, description = "Everyone who recorded an event, by name"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn creators(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<Vec<Creator>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(events::creators(&mut conn, None).await?))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/flag-creators", tag = "Events", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, body = Vec<Creator>, description = "Everyone who created a flag of the project, by name"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn flag_creators(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<Vec<Creator>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        events::creators(&mut conn, Some(&path.project_id)).await?,
    ))
}
