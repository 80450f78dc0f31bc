//! A project's everyday administration (`domain::project_admin`, `domain::feature_move`): default strategies,
//! tags on several flags, archive validation, archiving and reviving the project, moving a flag.

use super::projects::{ProjectEnvironmentPath, ProjectPath};
use crate::domain::access::{self, Area, Need, Scope};
use crate::domain::feature_batches::BatchFeatures;
use crate::domain::feature_move::{self, ChangeProject};
use crate::domain::permissions::Permission;
use crate::domain::project_admin::{self, ArchiveValidation, TagsBulkAdd};
use crate::http::extract::{AdminActor, AdminCaller, JsonBody, PathParams};
use crate::http::AppState;
use crate::model::strategy::StrategyInput;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The writes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(set_default_strategy))
        .routes(routes!(tag_features))
        .routes(routes!(archive_project))
        .routes(routes!(revive_project))
        .routes(routes!(change_project))
}

/// The read asked with a body (archive validation).
pub fn query_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(validate_archive))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectFeaturePath {
    pub project_id: String,
    pub feature_name: String,
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/environments/{environment}/default-strategy",
    tag = "Projects", security(("apiToken" = [])), params(ProjectEnvironmentPath),
    request_body(content = StrategyInput, description = "A defined strategy; `environment` `*` sets every \
        environment of the project. Title at most 100 characters; constraints, segments (global or of \
        this project) and variants as a flag's strategy; `disabled` must not be true; an empty `groupId` \
        means the flag's name."),
    responses(
        (status = 200, body = StrategyInput, description = "The default strategy as stored"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_default_strategy(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectEnvironmentPath>,
    JsonBody(input): JsonBody<StrategyInput>,
) -> Result<Json<StrategyInput>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let strategy = project_admin::set_default_strategy(
        &mut tx,
        &path.project_id,
        &path.environment,
        input,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(strategy))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/tags", tag = "Tags", security(("apiToken" = [])),
    params(ProjectPath),
    request_body(content = TagsBulkAdd, description = "Flags of this project; each tag's value 2 to 50 \
        characters once trimmed, its type an existing tag type. Added first, then removed; all or nothing."),
    responses(
        (status = 200, description = "Tagged"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn tag_features(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<TagsBulkAdd>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_admin::tag_features(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/archive/validate", tag = "Features",
    security(("apiToken" = [])), params(ProjectPath), request_body = BatchFeatures,
    responses(
        (status = 200, body = ArchiveValidation), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_archive(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<BatchFeatures>,
) -> Result<Json<ArchiveValidation>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        project_admin::validate_archive(&mut conn, &path.project_id, input).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/archive/{projectId}", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, description = "Archived (or already archived)"),
        (status = 400, body = ErrorBody, description = "the default project, or live flags remain"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn archive_project(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_admin::archive(&mut tx, &path.project_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/revive/{projectId}", tag = "Projects", security(("apiToken" = [])),
    params(ProjectPath),
    responses(
        (status = 200, description = "Revived (or not archived)"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn revive_project(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    project_admin::revive(&mut tx, &path.project_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/changeProject", tag = "Features",
    security(("apiToken" = [])), params(ProjectFeaturePath),
    request_body(content = ChangeProject, description = "An existing, active project other than the flag's, \
        where the caller holds MOVE_FEATURE_TOGGLE too. Refused while change requests not yet applied, \
        cancelled or rejected change the flag, while it has dependencies, or while a strategy uses a segment \
        of its project."),
    responses(
        (status = 200, description = "Moved"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn change_project(
    State(state): State<Arc<AppState>>,
    caller: AdminCaller,
    PathParams(path): PathParams<ProjectFeaturePath>,
    JsonBody(input): JsonBody<ChangeProject>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&caller.actor).await?;
    let may_move_into = |target: &str| {
        access::authorize(
            caller.credential,
            &caller.grants,
            &Need {
                read: false,
                area: Area::Configuration,
                permission: Some(Permission::MoveFeatureToggle),
                scope: Scope::project(target),
            },
        )
    };
    feature_move::change_project(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        input,
        may_move_into,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
