//! `/api/admin/projects/:projectId/context…`: a project's own context fields (Unleash's project context
//! fields): the same model and domain functions as `/api/admin/context…`, with the project of the path. An
//! unknown project, or a field the project does not own, is 404. Writes need `UPDATE_PROJECT` in the project
//! (`http::admin::PERMISSIONS`).

use super::context_fields::IncludeQuery;
use crate::domain::context_fields::{self, ContextField, ContextFieldInput, ContextFieldName};
use crate::domain::strategy_usage::{self, StrategyReferences};
use crate::http::extract::{AdminActor, JsonBody, PathParams, QueryParams};
use crate::http::AppState;
use crate::model::context_field::LegalValue;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The project context-field routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(strategies))
        .routes(routes!(validate_name))
        .routes(routes!(put_legal_value))
        .routes(routes!(delete_legal_value))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectPath {
    pub project_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectFieldPath {
    pub project_id: String,
    pub context_field: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ProjectLegalValuePath {
    pub project_id: String,
    pub context_field: String,
    pub legal_value: String,
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/context", tag = "Context fields", security(("apiToken" = [])),
    params(ProjectPath, IncludeQuery),
    responses(
        (status = 200, body = Vec<ContextField>,
            description = "The project's fields by sortOrder; with include=root the instance's fields too"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such project")
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    QueryParams(query): QueryParams<IncludeQuery>,
) -> Result<Json<Vec<ContextField>>, ApiError> {
    let mut conn = state.store.read().await?;
    let fields = context_fields::list_of_project(&mut conn, &path.project_id).await?;
    if query.is("root") {
        return Ok(Json(
            context_fields::usable_in(&mut conn, Some(&path.project_id)).await?,
        ));
    }
    Ok(Json(fields))
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/context/{contextField}", tag = "Context fields",
    security(("apiToken" = [])), params(ProjectFieldPath),
    responses(
        (status = 200, body = ContextField), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such project, or the project owns no such field")
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectFieldPath>,
) -> Result<Json<ContextField>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        context_fields::get(&mut conn, Some(&path.project_id), &path.context_field).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/context", tag = "Context fields", security(("apiToken" = [])),
    params(ProjectPath), request_body = ContextFieldInput,
    responses(
        (status = 201, body = ContextField), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody, description = "No such project"),
        (status = 409, body = ErrorBody, description = "A field of the instance or of any project has the name"),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<ContextFieldInput>,
) -> Result<(StatusCode, Json<ContextField>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let field = context_fields::create_in_project(&mut tx, &path.project_id, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(field)))
}

#[utoipa::path(
    put, path = "/api/admin/projects/{projectId}/context/{contextField}", tag = "Context fields",
    security(("apiToken" = [])), params(ProjectFieldPath), request_body = ContextFieldInput,
    responses(
        (status = 200, body = ContextField), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectFieldPath>,
    JsonBody(input): JsonBody<ContextFieldInput>,
) -> Result<Json<ContextField>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let field =
        context_fields::update(&mut tx, Some(&path.project_id), &path.context_field, input).await?;
    state.commit(tx).await?;
    Ok(Json(field))
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/context/{contextField}", tag = "Context fields",
    security(("apiToken" = [])), params(ProjectFieldPath),
    responses(
        (status = 200, description = "Deleted"), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "In use by a strategy or a segment")
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectFieldPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    context_fields::delete(&mut tx, Some(&path.project_id), &path.context_field).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/projects/{projectId}/context/{contextField}/strategies", tag = "Context fields",
    security(("apiToken" = [])), params(ProjectFieldPath),
    responses(
        (status = 200, body = StrategyReferences), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn strategies(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectFieldPath>,
) -> Result<Json<StrategyReferences>, ApiError> {
    let mut conn = state.store.read().await?;
    context_fields::get(&mut conn, Some(&path.project_id), &path.context_field).await?;
    Ok(Json(
        strategy_usage::of_context_field(&mut conn, &path.context_field).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/context/validate", tag = "Context fields",
    security(("apiToken" = [])), params(ProjectPath), request_body = ContextFieldName,
    responses(
        (status = 200, description = "The name is free"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A field of the instance or of any project has the name"),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_name(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ProjectPath>,
    JsonBody(input): JsonBody<ContextFieldName>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    context_fields::validate_name(&mut conn, Some(&path.project_id), input).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/projects/{projectId}/context/{contextField}/legal-values", tag = "Context fields",
    security(("apiToken" = [])), params(ProjectFieldPath), request_body = LegalValue,
    responses(
        (status = 200, description = "Added (or its description replaced)"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn put_legal_value(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectFieldPath>,
    JsonBody(input): JsonBody<LegalValue>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    context_fields::put_legal_value(&mut tx, Some(&path.project_id), &path.context_field, input)
        .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/projects/{projectId}/context/{contextField}/legal-values/{legalValue}",
    tag = "Context fields", security(("apiToken" = [])), params(ProjectLegalValuePath),
    responses(
        (status = 200, description = "Removed (or it was not there)"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_legal_value(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ProjectLegalValuePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    context_fields::delete_legal_value(
        &mut tx,
        Some(&path.project_id),
        &path.context_field,
        &path.legal_value,
    )
    .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
