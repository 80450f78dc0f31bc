//! `POST /edge/issue-token` (`domain::edge_tokens`): Unleash Edge asking for client tokens, with a credential
//! that may create API tokens (an admin token, or an Admin's personal access token or service-account
//! token: Unleash Edge's `--service-account-token`). Mounted in the Access area.

use crate::domain::edge_tokens::{self, EdgeTokenRequest, EdgeTokens};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The route, as stated in its handler's `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(issue))
}

#[utoipa::path(
    post, path = "/edge/issue-token", tag = "Unleash Edge", security(("apiToken" = [])),
    request_body = EdgeTokenRequest,
    responses(
        (status = 200, body = EdgeTokens,
         description = "A new client token per pair, in the request's order; each secret is shown only here"),
        (status = 400, body = ErrorBody, description = "No pairs, more than 50, an unknown environment or project"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "Admins only"),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn issue(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(request): JsonBody<EdgeTokenRequest>,
) -> Result<Json<EdgeTokens>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let tokens = edge_tokens::issue(&mut tx, request, &state.limits).await?;
    state.commit(tx).await?;
    Ok(Json(tokens))
}
