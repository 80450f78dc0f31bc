//! What an Unleash Edge in front of this control plane posts besides the SDK routes `vexil-serving` answers
//! (`/api/client/features`, `/api/client/register`, `/api/client/metrics/bulk`, `/edge/validate`): its
//! instance data, `POST /api/client/metrics/edge`, every minute, with the first of its startup tokens.

use super::extract::{ClientTokenEnvironment, JsonBody};
use super::AppState;
use crate::domain::unleash_edges::{self, EdgeInstanceData};
use axum::extract::State;
use axum::http::StatusCode;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The Unleash Edge routes of the control plane, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(instance_data))
}

/// `POST /api/client/metrics/edge`: an Unleash Edge instance's report on itself and the Edges behind it,
/// kept as each one's latest (the Edges page, `GET /api/admin/metrics/edges`); 202 as Unleash answers.
#[utoipa::path(
    post, path = "/api/client/metrics/edge", tag = "Unleash Edge", security(("apiToken" = [])),
    request_body(content = serde_json::Value, content_type = "application/json",
        description = "Unleash's `edgeInstanceDataSchema`: `{identifier*, appName*, edgeVersion*, started*, \
            traffic*: {get, post, accessDenied, cachedResponses}, latencyUpstream*: {features, metrics, edge}, \
            connectedStreamingClients*, connectedEdges*: [same], region, hosting, processMetrics, \
            requestsSinceLastReport, edgeApiKeyRevisionIds}`"),
    responses((status = 202, description = "Kept"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody))
)]
pub async fn instance_data(
    State(state): State<Arc<AppState>>,
    ClientTokenEnvironment(environment): ClientTokenEnvironment,
    JsonBody(report): JsonBody<EdgeInstanceData>,
) -> Result<StatusCode, ApiError> {
    unleash_edges::record(&state.store, report, &environment, (state.clock)()).await?;
    Ok(StatusCode::ACCEPTED)
}
