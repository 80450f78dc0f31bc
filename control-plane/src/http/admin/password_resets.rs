//! Password reset: an Admin's `POST /api/admin/user-admin/reset-password` (mounted in the `Access` area) and
//! the anonymous `/auth/reset/validate`, `/auth/reset/password`, `/auth/reset/validate-password` and
//! `/auth/reset/password-email` (Unleash's routes and schemas).

use super::invite_links::sign_up_hash;
use crate::domain::password_resets::{
    self, ChangePassword, EmailAddress, LinkKind, PasswordToCheck, ResetFor, ResetLink, TokenUser,
};
use crate::http::extract::{AdminActor, ClientAddress, JsonBody, QueryParams};
use crate::http::AppState;
use crate::store::Actor;
use crate::time::Timestamp;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The Admin's route, as stated in its handler's `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(reset_password))
}

/// The anonymous routes of whoever holds a reset link, or asks for one.
pub fn public_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(validate))
        .routes(routes!(change_password))
        .routes(routes!(validate_password))
        .routes(routes!(password_email))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TokenQuery {
    /// The link's secret.
    pub token: String,
}

#[utoipa::path(
    post, path = "/api/admin/user-admin/reset-password", tag = "Users", security(("apiToken" = [])),
    request_body = ResetFor,
    responses(
        (status = 200, body = ResetLink, description = "The user's new reset link (valid 2 hours, once; their earlier one stops working), also e-mailed to them when the instance sends e-mail"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn reset_password(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    headers: HeaderMap,
    JsonBody(input): JsonBody<ResetFor>,
) -> Result<Json<ResetLink>, ApiError> {
    let user = {
        let mut conn = state.store.read().await?;
        password_resets::person(&mut conn, &input.id).await?
    };
    let issued = {
        let mut conn = state.store.bookkeeping().await?;
        password_resets::issue(&mut conn, user, LinkKind::Reset, &state.site(&headers)).await?
    };
    state
        .mail_link(&issued.user, LinkKind::Reset, &issued.url)
        .await;
    Ok(Json(ResetLink {
        reset_password_url: issued.url,
    }))
}

#[utoipa::path(
    get, path = "/auth/reset/validate", tag = "Auth", params(TokenQuery),
    responses(
        (status = 200, body = TokenUser, description = "The link can be used: whose password it sets"),
        (status = 400, body = ErrorBody, description = "No token given"),
        (status = 401, body = ErrorBody, description = "Unknown, expired or used")
    )
)]
pub async fn validate(
    State(state): State<Arc<AppState>>,
    QueryParams(query): QueryParams<TokenQuery>,
) -> Result<Json<TokenUser>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        password_resets::validate(&mut conn, &query.token, Timestamp::now()).await?,
    ))
}

#[utoipa::path(
    post, path = "/auth/reset/password", tag = "Auth", request_body = ChangePassword,
    responses(
        (status = 200, description = "The password is set, the user's sessions end and the link is used up"),
        (status = 400, body = ErrorBody, description = "A bad body, or a password that breaks the rules (the link stays usable)"),
        (status = 401, body = ErrorBody, description = "Unknown, expired or used"),
        (status = 404, body = ErrorBody, description = "Password sign-in is disabled"),
        (status = 415, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too much password work at once")
    )
)]
pub async fn change_password(
    State(state): State<Arc<AppState>>,
    JsonBody(input): JsonBody<ChangePassword>,
) -> Result<StatusCode, ApiError> {
    state.require_password_sign_in().await?;
    let user = {
        let mut conn = state.store.read().await?;
        password_resets::user_of(&mut conn, &input.token, Timestamp::now()).await?
    };
    let hash = sign_up_hash(&state, input.password).await?;
    let name = user
        .name
        .clone()
        .or(user.email.clone())
        .or(user.username.clone())
        .unwrap_or_default();
    let mut tx = state
        .store
        .begin_write(&Actor::user(&name, user.id))
        .await?;
    password_resets::use_link(&mut tx, &input.token, &hash).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/auth/reset/validate-password", tag = "Auth", request_body = PasswordToCheck,
    responses(
        (status = 200, description = "The password meets the rules"),
        (status = 400, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn validate_password(
    JsonBody(input): JsonBody<PasswordToCheck>,
) -> Result<StatusCode, ApiError> {
    password_resets::check_password(&input.password)?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/auth/reset/password-email", tag = "Auth", request_body = EmailAddress,
    responses(
        (status = 200, description = "The same answer whether or not a user has this e-mail: if one does and the instance sends e-mail, a reset link is on its way"),
        (status = 400, body = ErrorBody, description = "Not an e-mail address"),
        (status = 404, body = ErrorBody, description = "Password sign-in is disabled"), (status = 415, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many requests for this e-mail or from this address",
            headers(("Retry-After" = u64, description = "Seconds to wait")))
    )
)]
pub async fn password_email(
    State(state): State<Arc<AppState>>,
    ClientAddress(client): ClientAddress,
    JsonBody(input): JsonBody<EmailAddress>,
) -> Result<StatusCode, ApiError> {
    state.require_password_sign_in().await?;
    state.request_reset_mail(&input.email, client)?;
    Ok(StatusCode::OK)
}
