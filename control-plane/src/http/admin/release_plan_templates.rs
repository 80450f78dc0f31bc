//! Release templates: `/api/admin/release-plan-templates…` (Unleash Enterprise's routes, statuses and
//! bodies). Writes are the Admins' (no row in `PERMISSIONS`: Vexil has no RELEASE_PLAN_TEMPLATE permission).

use crate::domain::release_plans::templates;
use crate::domain::release_plans::{
    Milestone, MilestoneInput, MilestoneStrategyInput, ReleasePlanTemplate, TemplateInput,
};
use crate::http::extract::{AdminActor, JsonBody, PathParams};
use crate::http::AppState;
use crate::model::release_plan::MilestoneStrategy;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The template routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(archive))
        .routes(routes!(add_milestone))
        .routes(routes!(update_milestone, delete_milestone))
        .routes(routes!(add_strategy))
        .routes(routes!(update_strategy, delete_strategy))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct TemplatePath {
    pub template_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct MilestonePath {
    pub template_id: String,
    pub milestone_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct MilestoneStrategyPath {
    pub template_id: String,
    pub milestone_id: String,
    pub strategy_id: String,
}

#[utoipa::path(
    get, path = "/api/admin/release-plan-templates", tag = "Release templates", security(("apiToken" = [])),
    responses((status = 200, body = Vec<ReleasePlanTemplate>, description = "The templates not archived, by name"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<Vec<ReleasePlanTemplate>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(templates::list(&mut conn).await?))
}

#[utoipa::path(
    post, path = "/api/admin/release-plan-templates", tag = "Release templates", security(("apiToken" = [])), request_body = TemplateInput,
    responses((status = 200, body = ReleasePlanTemplate), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody, description = "The name is taken"), (status = 415, body = ErrorBody))
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<TemplateInput>,
) -> Result<Json<ReleasePlanTemplate>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let template = templates::create(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok(Json(template))
}

#[utoipa::path(
    get, path = "/api/admin/release-plan-templates/{templateId}", tag = "Release templates", security(("apiToken" = [])), params(TemplatePath),
    responses((status = 200, body = ReleasePlanTemplate), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<TemplatePath>,
) -> Result<Json<ReleasePlanTemplate>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(templates::get(&mut conn, &path.template_id).await?))
}

#[utoipa::path(
    put, path = "/api/admin/release-plan-templates/{templateId}", tag = "Release templates", security(("apiToken" = [])), params(TemplatePath), request_body = TemplateInput,
    responses((status = 200, body = ReleasePlanTemplate, description = "Absent milestones stay; given ones replace every milestone"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TemplatePath>,
    JsonBody(input): JsonBody<TemplateInput>,
) -> Result<Json<ReleasePlanTemplate>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let template = templates::update(&mut tx, &path.template_id, input).await?;
    state.commit(tx).await?;
    Ok(Json(template))
}

#[utoipa::path(
    delete, path = "/api/admin/release-plan-templates/{templateId}", tag = "Release templates", security(("apiToken" = [])), params(TemplatePath),
    responses((status = 200, description = "Deleted; plans made from it stay"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TemplatePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    templates::delete(&mut tx, &path.template_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/release-plan-templates/archive/{templateId}", tag = "Release templates", security(("apiToken" = [])), params(TemplatePath),
    responses((status = 200, description = "Archived: no longer listed nor applicable"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn archive(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TemplatePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    templates::archive(&mut tx, &path.template_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/release-plan-templates/{templateId}/milestones", tag = "Release templates", security(("apiToken" = [])), params(TemplatePath), request_body = MilestoneInput,
    responses((status = 200, body = Milestone), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn add_milestone(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TemplatePath>,
    JsonBody(input): JsonBody<MilestoneInput>,
) -> Result<Json<Milestone>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let milestone = templates::add_milestone(&mut tx, &path.template_id, input).await?;
    state.commit(tx).await?;
    Ok(Json(milestone))
}

#[utoipa::path(
    put, path = "/api/admin/release-plan-templates/{templateId}/milestones/{milestoneId}", tag = "Release templates", security(("apiToken" = [])), params(MilestonePath), request_body = MilestoneInput,
    responses((status = 200, body = Milestone, description = "Absent strategies stay"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn update_milestone(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<MilestonePath>,
    JsonBody(input): JsonBody<MilestoneInput>,
) -> Result<Json<Milestone>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let milestone =
        templates::update_milestone(&mut tx, &path.template_id, &path.milestone_id, input).await?;
    state.commit(tx).await?;
    Ok(Json(milestone))
}

#[utoipa::path(
    delete, path = "/api/admin/release-plan-templates/{templateId}/milestones/{milestoneId}", tag = "Release templates", security(("apiToken" = [])), params(MilestonePath),
    responses((status = 200, description = "Deleted with its strategies"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn delete_milestone(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<MilestonePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    templates::delete_milestone(&mut tx, &path.template_id, &path.milestone_id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/release-plan-templates/{templateId}/milestones/{milestoneId}/strategies", tag = "Release templates", security(("apiToken" = [])), params(MilestonePath), request_body = MilestoneStrategyInput,
    responses((status = 200, body = Milestone), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn add_strategy(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<MilestonePath>,
    JsonBody(input): JsonBody<MilestoneStrategyInput>,
) -> Result<Json<Milestone>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let milestone =
        templates::add_strategy(&mut tx, &path.template_id, &path.milestone_id, input).await?;
    state.commit(tx).await?;
    Ok(Json(milestone))
}

#[utoipa::path(
    put, path = "/api/admin/release-plan-templates/{templateId}/milestones/{milestoneId}/strategies/{strategyId}", tag = "Release templates", security(("apiToken" = [])), params(MilestoneStrategyPath), request_body = MilestoneStrategyInput,
    responses((status = 200, body = MilestoneStrategy), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn update_strategy(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<MilestoneStrategyPath>,
    JsonBody(input): JsonBody<MilestoneStrategyInput>,
) -> Result<Json<MilestoneStrategy>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let strategy = templates::update_strategy(
        &mut tx,
        &path.template_id,
        &path.milestone_id,
        &path.strategy_id,
        input,
    )
    .await?;
    state.commit(tx).await?;
    Ok(Json(strategy))
}

#[utoipa::path(
    delete, path = "/api/admin/release-plan-templates/{templateId}/milestones/{milestoneId}/strategies/{strategyId}", tag = "Release templates", security(("apiToken" = [])), params(MilestoneStrategyPath),
    responses((status = 200, description = "Deleted"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
pub async fn delete_strategy(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<MilestoneStrategyPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    templates::delete_strategy(
        &mut tx,
        &path.template_id,
        &path.milestone_id,
        &path.strategy_id,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
