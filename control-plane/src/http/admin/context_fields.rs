//! `/api/admin/context`: context fields.

use crate::domain::context_fields::{self, ContextField, ContextFieldInput, ContextFieldName};
use crate::domain::strategy_usage::{self, StrategyReferences};
use crate::http::extract::{AdminActor, JsonBody, PathParams, QueryParams};
use crate::http::AppState;
use crate::model::constraint::Constraint;
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

/// The context-field routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(strategies))
        .routes(routes!(validate_constraint))
        .routes(routes!(validate_name))
        .routes(routes!(put_legal_value))
        .routes(routes!(delete_legal_value))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct LegalValuePath {
    pub context_field: String,
    pub legal_value: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct ContextFieldPath {
    pub context_field: String,
}

/// `?include=project` on the instance's list: the projects' fields too (Unleash's parameter; any other value,
/// or none, lists the instance's fields only).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IncludeQuery {
    /// `project` (any case): list every project's fields as well, each with its `project`.
    pub include: Option<String>,
}

impl IncludeQuery {
    pub fn is(&self, value: &str) -> bool {
        self.include
            .as_deref()
            .is_some_and(|include| include.eq_ignore_ascii_case(value))
    }
}

#[utoipa::path(
    get, path = "/api/admin/context", tag = "Context fields", security(("apiToken" = [])),
    params(IncludeQuery),
    responses(
        (status = 200, body = Vec<ContextField>,
            description = "By sortOrder: the fields of no project; with include=project every project's too"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    QueryParams(query): QueryParams<IncludeQuery>,
) -> Result<Json<Vec<ContextField>>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(if query.is("project") {
        context_fields::list_including_projects(&mut conn).await?
    } else {
        context_fields::list(&mut conn).await?
    }))
}

#[utoipa::path(
    get, path = "/api/admin/context/{contextField}", tag = "Context fields", security(("apiToken" = [])),
    params(ContextFieldPath),
    responses(
        (status = 200, body = ContextField), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ContextFieldPath>,
) -> Result<Json<ContextField>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        context_fields::get(&mut conn, None, &path.context_field).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/context", tag = "Context fields", security(("apiToken" = [])),
    request_body = ContextFieldInput,
    responses(
        (status = 201, body = ContextField), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<ContextFieldInput>,
) -> Result<(StatusCode, Json<ContextField>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let field = context_fields::create(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(field)))
}

#[utoipa::path(
    put, path = "/api/admin/context/{contextField}", tag = "Context fields", security(("apiToken" = [])),
    params(ContextFieldPath), request_body = ContextFieldInput,
    responses(
        (status = 200, body = ContextField), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ContextFieldPath>,
    JsonBody(input): JsonBody<ContextFieldInput>,
) -> Result<Json<ContextField>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let field = context_fields::update(&mut tx, None, &path.context_field, input).await?;
    state.commit(tx).await?;
    Ok(Json(field))
}

#[utoipa::path(
    delete, path = "/api/admin/context/{contextField}", tag = "Context fields", security(("apiToken" = [])),
    params(ContextFieldPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody, description = "Built in"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ContextFieldPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    context_fields::delete(&mut tx, None, &path.context_field).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/context/{contextField}/strategies", tag = "Context fields", security(("apiToken" = [])),
    params(ContextFieldPath),
    responses(
        (status = 200, body = StrategyReferences), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn strategies(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<ContextFieldPath>,
) -> Result<Json<StrategyReferences>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        strategy_usage::of_context_field(&mut conn, &path.context_field).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/constraints/validate", tag = "Context fields", security(("apiToken" = [])),
    request_body = Constraint,
    responses(
        (status = 204, description = "The constraint is valid"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_constraint(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(constraint): JsonBody<Constraint>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    context_fields::validate_constraint(&mut conn, constraint).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/api/admin/context/validate", tag = "Context fields", security(("apiToken" = [])),
    request_body = ContextFieldName,
    responses(
        (status = 200, description = "The name is free"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_name(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(input): JsonBody<ContextFieldName>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    context_fields::validate_name(&mut conn, None, input).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/context/{contextField}/legal-values", tag = "Context fields",
    security(("apiToken" = [])), params(ContextFieldPath), request_body = LegalValue,
    responses(
        (status = 200, description = "Added (or its description replaced)"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn put_legal_value(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<ContextFieldPath>,
    JsonBody(input): JsonBody<LegalValue>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    context_fields::put_legal_value(&mut tx, None, &path.context_field, input).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete, path = "/api/admin/context/{contextField}/legal-values/{legalValue}", tag = "Context fields",
    security(("apiToken" = [])), params(LegalValuePath),
    responses(
        (status = 200, description = "Removed (or it was not there)"), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_legal_value(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<LegalValuePath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    context_fields::delete_legal_value(&mut tx, None, &path.context_field, &path.legal_value)
        .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
