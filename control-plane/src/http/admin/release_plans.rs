//! Release plans of a flag in an environment: `…/environments/:environment/release-plans…` and
//! `…/environments/:environment/progressions…` (Unleash Enterprise's routes, statuses and bodies; `GET` of
//! one plan is Vexil's). Each write's permission is in `PERMISSIONS`, in the flag's project and environment.

use super::features::FeatureEnvironmentPath;
use crate::domain::release_plans::plans;
use crate::domain::release_plans::progressions::{
    self, ChangeMilestoneProgression, MilestoneProgression,
};
use crate::domain::release_plans::{Milestone, ReleasePlan, TemplateId};
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

/// The release-plan routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, add))
        .routes(routes!(get, remove))
        .routes(routes!(start_milestone))
        .routes(routes!(set_progression, delete_progression))
        .routes(routes!(resume))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct PlanPath {
    pub project_id: String,
    pub feature_name: String,
    pub environment: String,
    pub plan_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct MilestonePath {
    pub project_id: String,
    pub feature_name: String,
    pub environment: String,
    pub plan_id: String,
    pub milestone_id: String,
}

/// `…/progressions/{id}`: the source milestone's id, or (`…/resume`) the plan's.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProgressionPath {
    pub project_id: String,
    pub feature_name: String,
    pub environment: String,
    pub id: String,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans", tag = "Release plans", security(("apiToken" = [])),
    params(FeatureEnvironmentPath),
    responses((status = 200, body = Vec<ReleasePlan>), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
) -> Result<Json<Vec<ReleasePlan>>, ApiError> {
    let mut conn = state.store.read().await?;
    let plans = plans::list(
        &mut conn,
        &path.project_id,
        &path.feature_name,
        &path.environment,
    )
    .await?;
    Ok(Json(plans))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans", tag = "Release plans", security(("apiToken" = [])),
    params(FeatureEnvironmentPath), request_body = TemplateId,
    responses((status = 200, body = ReleasePlan, description = "The template applied; no milestone started yet"), (status = 400, body = ErrorBody, description = "Invalid, or change requests are on in the environment"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "The flag has a release plan in this environment"), (status = 415, body = ErrorBody))
)]
pub async fn add(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<FeatureEnvironmentPath>,
    JsonBody(body): JsonBody<TemplateId>,
) -> Result<Json<ReleasePlan>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let plan = plans::add(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &body.template_id,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(plan))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans/{planId}", tag = "Release plans", security(("apiToken" = [])),
    params(PlanPath),
    responses((status = 200, body = ReleasePlan), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<PlanPath>,
) -> Result<Json<ReleasePlan>, ApiError> {
    let mut conn = state.store.read().await?;
    let plan = plans::get(
        &mut conn,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &path.plan_id,
    )
    .await?;
    Ok(Json(plan))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans/{planId}", tag = "Release plans", security(("apiToken" = [])),
    params(PlanPath),
    responses((status = 200, description = "Removed; the flag keeps its strategies"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn remove(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<PlanPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    plans::remove(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &path.plan_id,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans/{planId}/milestones/{milestoneId}/start", tag = "Release plans", security(("apiToken" = [])),
    params(MilestonePath),
    responses((status = 200, body = Milestone, description = "Started: the flag's strategies in the environment are the milestone's"), (status = 400, body = ErrorBody, description = "Invalid, or change requests are on in the environment"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn start_milestone(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<MilestonePath>,
) -> Result<Json<Milestone>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let milestone = plans::start_milestone(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &path.plan_id,
        &path.milestone_id,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(milestone))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/progressions/{id}", tag = "Release plans", security(("apiToken" = [])),
    params(ProgressionPath), request_body = ChangeMilestoneProgression,
    responses((status = 200, body = MilestoneProgression), (status = 400, body = ErrorBody, description = "Invalid, or change requests are on in the environment"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn set_progression(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProgressionPath>,
    JsonBody(body): JsonBody<ChangeMilestoneProgression>,
) -> Result<Json<MilestoneProgression>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let progression = progressions::set(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &path.id,
        body,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(progression))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/progressions/{id}", tag = "Release plans", security(("apiToken" = [])),
    params(ProgressionPath),
    responses((status = 204, description = "The milestone no longer progresses by itself"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn delete_progression(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProgressionPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    progressions::delete(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &path.id,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/progressions/{id}/resume", tag = "Release plans", security(("apiToken" = [])),
    params(ProgressionPath),
    responses((status = 200, description = "The plan's paused progression is due again"), (status = 400, body = ErrorBody, description = "Invalid, or change requests are on in the environment"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn resume(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProgressionPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    progressions::resume(
        &mut tx,
        &path.project_id,
        &path.feature_name,
        &path.environment,
        &path.id,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
