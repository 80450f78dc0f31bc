//! `/api/admin/features-batch/…`: export, validate and import in Unleash's format. The export only reads,
//! so it is mounted where Viewers may post ([`router_reads`]); validate and import are configuration writes.

use crate::domain::import_export::bodies::{
    ExportQuery, ExportResult, ImportToggles, ImportValidation,
};
use crate::domain::import_export::{export, validate, write};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The export route, as stated in its handler's `#[utoipa::path]`.
pub fn router_reads() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(export_features))
}

/// The validate and import routes, as stated in their handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(validate_import))
        .routes(routes!(import_toggles))
}

#[utoipa::path(
    post, path = "/api/admin/features-batch/export", tag = "Import/Export", security(("apiToken" = [])),
    request_body = ExportQuery,
    responses(
        (status = 200, body = ExportResult, description = "The flags and their configuration in the environment"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn export_features(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(query): JsonBody<ExportQuery>,
) -> Result<Json<ExportResult>, ApiError> {
    let result = {
        let mut conn = state.store.read().await?;
        export::export(&mut conn, &query).await?
    };
    let mut tx = state.store.begin_write(&actor).await?;
    export::record(&mut tx, &query, &result).await?;
    tx.commit().await?;
    Ok(Json(result))
}

#[utoipa::path(
    post, path = "/api/admin/features-batch/validate", tag = "Import/Export", security(("apiToken" = [])),
    request_body = ImportToggles,
    responses(
        (status = 200, body = ImportValidation, description = "Errors stop an import, warnings do not"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_import(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    JsonBody(input): JsonBody<ImportToggles>,
) -> Result<Json<ImportValidation>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        validate::validate(&mut conn, &input, &state.limits).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/features-batch/import", tag = "Import/Export", security(("apiToken" = [])),
    request_body = ImportToggles,
    responses(
        (status = 200, description = "Imported, all of it, in one write (no body)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn import_toggles(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<ImportToggles>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    write::import(&mut tx, input, &state.limits).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
