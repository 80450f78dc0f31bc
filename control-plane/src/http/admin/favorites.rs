//! Favourite flags and projects of the signed-in user (Unleash's favorites routes).

use crate::domain::favorites;
use crate::http::admin::features::FeaturePath;
use crate::http::admin::projects::ProjectPath;
use crate::http::extract::{AdminActor, PathParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The favorites routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(add_feature, remove_feature))
        .routes(routes!(add_project, remove_project))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/favorites", tag = "Favorites",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, description = "The flag is one of the caller's favourites (also when it was already)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user, so no favourites"),
        (status = 404, body = ErrorBody, description = "Unknown project or flag")
    )
)]
pub async fn add_feature(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    favorites::set_feature(&mut tx, &path.project_id, &path.feature_name, true).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}/favorites", tag = "Favorites",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, description = "The flag is not one of the caller's favourites (also when it was not)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user, so no favourites"),
        (status = 404, body = ErrorBody, description = "Unknown project or flag")
    )
)]
pub async fn remove_feature(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    favorites::set_feature(&mut tx, &path.project_id, &path.feature_name, false).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/favorites", tag = "Favorites",
    security(("apiToken" = [])), params(ProjectPath),
    responses(
        (status = 200, description = "The project is one of the caller's favourites (also when it was already)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user, so no favourites"),
        (status = 404, body = ErrorBody, description = "Unknown project")
    )
)]
pub async fn add_project(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    favorites::set_project(&mut tx, &path.project_id, true).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/favorites", tag = "Favorites",
    security(("apiToken" = [])), params(ProjectPath),
    responses(
        (status = 200, description = "The project is not one of the caller's favourites (also when it was not)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user, so no favourites"),
        (status = 404, body = ErrorBody, description = "Unknown project")
    )
)]
pub async fn remove_project(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    favorites::set_project(&mut tx, &path.project_id, false).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
