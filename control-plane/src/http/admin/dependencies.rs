//! Flag dependencies: `/api/admin/projects/:projectId/features/:featureName/dependencies…`, the parent
//! options of a flag, and whether a project has any.

use super::features::FeaturePath;
use super::projects::ProjectPath;
use crate::domain::dependencies::{self, CreateDependency};
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

/// The dependency routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(add, remove_all))
        .routes(routes!(remove))
        .routes(routes!(parent_options))
        .routes(routes!(parent_variant_options))
        .routes(routes!(exist))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct DependencyPath {
    pub project_id: String,
    /// The child flag.
    pub feature_name: String,
    /// The parent flag.
    pub parent: String,
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies", tag = "Dependencies",
    security(("apiToken" = [])), params(FeaturePath), request_body = CreateDependency,
    responses(
        (status = 200, description = "The flag depends on the parent (a dependency on the same parent is replaced)"),
        (status = 400, body = ErrorBody, description = "Against the rules: the parent is unknown, archived, in another project, the flag itself or a child; the flag is a parent"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Viewer, or change requests are on in the project"),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn add(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
    JsonBody(input): JsonBody<CreateDependency>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    dependencies::add(&mut tx, &path.project_id, &path.feature_name, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}",
    tag = "Dependencies", security(("apiToken" = [])), params(DependencyPath),
    responses(
        (status = 200, description = "The flag no longer depends on the parent"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn remove(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<DependencyPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    dependencies::remove(&mut tx, &path.project_id, &path.feature_name, &path.parent).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies", tag = "Dependencies",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, description = "The flag depends on no flag"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn remove_all(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    dependencies::remove_all(&mut tx, &path.project_id, &path.feature_name).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/parents", tag = "Dependencies",
    security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, body = Vec<String>, description = "The flags that could be its parent, by name"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn parent_options(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<Json<Vec<String>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        dependencies::parent_options(&mut conn, &path.project_id, &path.feature_name).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/parent-variants",
    tag = "Dependencies", security(("apiToken" = [])), params(FeaturePath),
    responses(
        (status = 200, body = Vec<String>, description = "The names of the flag's strategy and flag variants in every environment, sorted"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn parent_variant_options(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeaturePath>,
) -> Result<Json<Vec<String>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        dependencies::parent_variant_options(&mut conn, &path.project_id, &path.feature_name)
            .await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/dependencies", tag = "Dependencies",
    security(("apiToken" = [])), params(ProjectPath),
    responses(
        (status = 200, body = bool, content_type = "application/json", description = "Whether any flag of the project depends on another"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn exist(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<Json<bool>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        dependencies::exist_in_project(&mut conn, &path.project_id).await?,
    ))
}
