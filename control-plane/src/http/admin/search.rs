//! Search: `/api/admin/search/features` and `/api/admin/search/events`.

use crate::domain::access::personal_fields;
use crate::domain::search::events::{self, EventSearchQuery, EventSearchResult};
use crate::domain::search::features::{self, FeatureSearchQuery, FeatureSearchResult};
use crate::http::extract::{AdminActor, AdminCaller, QueryParams};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The search routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(search_features))
        .routes(routes!(search_events))
}

#[utoipa::path(
    get, path = "/api/admin/search/features", tag = "Search", security(("apiToken" = [])),
    params(FeatureSearchQuery),
    responses(
        (status = 200, body = FeatureSearchResult, description = "The page of matching flags and their total"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn search_features(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    QueryParams(pairs): QueryParams<Vec<(String, String)>>,
) -> Result<Json<FeatureSearchResult>, ApiError> {
    let query = FeatureSearchQuery::from_pairs(pairs)?;
    let mut conn = state.store.read().await?;
    Ok(Json(
        features::search(&mut conn, &query, actor.user_id).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/search/events", tag = "Events", security(("apiToken" = [])),
    params(EventSearchQuery),
    responses(
        (status = 200, body = EventSearchResult, description = "The page of matching events, newest first, and their total"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn search_events(
    State(state): State<Arc<AppState>>,
    caller: AdminCaller,
    QueryParams(query): QueryParams<EventSearchQuery>,
) -> Result<Json<EventSearchResult>, ApiError> {
    let personal = personal_fields(caller.credential);
    let mut conn = state.store.read().await?;
    Ok(Json(events::search(&mut conn, &query, personal).await?))
}
