//! Single sign-on settings, Unleash's routes: `/api/admin/auth/oidc/settings` (oidcSettingsSchema; the
//! client secret is taken, never answered), `/api/admin/auth/saml/settings` (samlSettingsSchema; the
//! sign-out signing key likewise) and `/api/admin/auth/simple/settings` (passwordAuthSchema).
//! Mounted in the Access area: Admins only, reads included.

use crate::domain::saml_settings::{self, SamlSettings};
use crate::domain::sso_settings::{self, OidcSettings, PasswordAuth};
use crate::http::extract::{AdminActor, JsonBody};
use crate::http::AppState;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The single sign-on settings routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get_oidc, set_oidc))
        .routes(routes!(get_saml, set_saml))
        .routes(routes!(get_simple, set_simple))
}

#[utoipa::path(
    get, path = "/api/admin/auth/oidc/settings", tag = "Auth", security(("apiToken" = [])),
    responses(
        (status = 200, body = OidcSettings, description = "The settings in force (from OIDC_* variables when set), without the secret"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn get_oidc(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<OidcSettings>, ApiError> {
    Ok(Json(state.oidc_settings().await?.shown()))
}

#[utoipa::path(
    post, path = "/api/admin/auth/oidc/settings", tag = "Auth", security(("apiToken" = [])),
    request_body = OidcSettings,
    responses(
        (status = 200, body = OidcSettings, description = "Stored (a missing secret keeps the stored one); answered without the secret"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an Admin, or the OIDC_* variables configure OpenID Connect"),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn set_oidc(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<OidcSettings>,
) -> Result<Json<OidcSettings>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let settings = sso_settings::set_oidc(&mut tx, &state.sign_in_config, input).await?;
    state.commit(tx).await?;
    Ok(Json(settings))
}

#[utoipa::path(
    get, path = "/api/admin/auth/saml/settings", tag = "Auth", security(("apiToken" = [])),
    responses(
        (status = 200, body = SamlSettings, description = "The settings in force (from SAML_* variables when set), without the sign-out signing key"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn get_saml(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<SamlSettings>, ApiError> {
    Ok(Json(state.saml_settings().await?.shown()))
}

#[utoipa::path(
    post, path = "/api/admin/auth/saml/settings", tag = "Auth", security(("apiToken" = [])),
    request_body = SamlSettings,
    responses(
        (status = 200, body = SamlSettings, description = "Stored (a missing spCertificate keeps the stored one); answered without the sign-out signing key"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an Admin, or the SAML_* variables configure SAML"),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn set_saml(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<SamlSettings>,
) -> Result<Json<SamlSettings>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let settings =
        saml_settings::set_saml(&mut tx, state.sign_in_config.saml_env.as_ref(), input).await?;
    state.commit(tx).await?;
    Ok(Json(settings))
}

#[utoipa::path(
    get, path = "/api/admin/auth/simple/settings", tag = "Auth", security(("apiToken" = [])),
    responses(
        (status = 200, body = PasswordAuth, description = "Whether password sign-in is off now (it stays on while no single sign-on is configured)"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn get_simple(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<PasswordAuth>, ApiError> {
    Ok(Json(PasswordAuth {
        disabled: !state.password_sign_in().await?,
    }))
}

#[utoipa::path(
    post, path = "/api/admin/auth/simple/settings", tag = "Auth", security(("apiToken" = [])),
    request_body = PasswordAuth,
    responses(
        (status = 200, body = PasswordAuth, description = "Stored; the answer is whether password sign-in is off now"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn set_simple(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<PasswordAuth>,
) -> Result<Json<PasswordAuth>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    sso_settings::set_password(&mut tx, input).await?;
    state.commit(tx).await?;
    Ok(Json(PasswordAuth {
        disabled: !state.password_sign_in().await?,
    }))
}
