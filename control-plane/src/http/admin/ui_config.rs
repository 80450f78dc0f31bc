//! `/api/admin/ui-config` (spec endpoints 7 and 8) and its 8.x alias `/api/admin/ui-config/cors`.

use crate::domain::ui_config::{self, FrontendSettings, Instance, SetUiConfig, UiConfig};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::http::header::HOST;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The UI-configuration routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get, set))
        .routes(routes!(set_cors))
}

/// `scheme://host` of the request: `X-Forwarded-Proto` (else http) and `Host`.
pub fn request_origin(headers: &HeaderMap) -> String {
    let text = |name| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .filter(|value| !value.is_empty())
    };
    let scheme = text("x-forwarded-proto")
        .filter(|scheme| matches!(*scheme, "http" | "https"))
        .unwrap_or("http");
    let host = text(HOST.as_str()).unwrap_or("localhost");
    format!("{scheme}://{host}")
}

#[utoipa::path(
    get, path = "/api/admin/ui-config", tag = "UI configuration", security(("apiToken" = [])),
    responses((status = 200, body = UiConfig), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    headers: HeaderMap,
) -> Result<Json<UiConfig>, ApiError> {
    let instance = Instance {
        origin: request_origin(&headers),
        base_path: &state.base_path,
        auth_enabled: state.auth_enabled,
        password_auth: state.password_sign_in().await?,
        oidc_configured_through_env: state.sign_in_config.oidc_env.is_some(),
        saml_configured_through_env: state.sign_in_config.saml_env.is_some(),
        email_enabled: state.mailer.is_some(),
        limits: &state.limits,
    };
    let mut conn = state.store.read().await?;
    Ok(Json(ui_config::get(&mut conn, &instance).await?))
}

#[utoipa::path(
    post, path = "/api/admin/ui-config", tag = "UI configuration", security(("apiToken" = [])),
    request_body = SetUiConfig,
    responses(
        (status = 200, description = "Stored; the edges follow"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<SetUiConfig>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    ui_config::set_frontend_api_origins(&mut tx, input.frontend_settings.frontend_api_origins)
        .await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/api/admin/ui-config/cors", tag = "UI configuration", security(("apiToken" = [])),
    request_body = FrontendSettings,
    responses(
        (status = 204, description = "Stored; the edges follow"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn set_cors(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<FrontendSettings>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    ui_config::set_frontend_api_origins(&mut tx, input.frontend_api_origins).await?;
    state.commit(tx).await?;
    Ok(StatusCode::NO_CONTENT)
}
