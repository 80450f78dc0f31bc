//! Invite links: `/api/admin/invite-link/tokens…` (Unleash's public sign-up token routes, Admin only: mounted
//! in the `Access` area) and the anonymous `/invite/:token/validate` and `/invite/:token/signup`.

use crate::domain::invite_links::{
    self, CreateInviteLink, InviteLink, InviteLinks, SignUp, UpdateInviteLink,
};
use crate::domain::users::User;
use crate::http::extract::{AdminActor, JsonBody, PathParams};
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

/// The admin routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
}

/// The anonymous routes of whoever holds a link.
pub fn public_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(validate))
        .routes(routes!(sign_up))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TokenPath {
    /// The link's secret (`<selector>.<verifier>`).
    pub token: String,
}

#[utoipa::path(
    get, path = "/api/admin/invite-link/tokens", tag = "Public signup tokens", security(("apiToken" = [])),
    responses(
        (status = 200, body = InviteLinks, description = "Newest first; no secrets"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<InviteLinks>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(invite_links::list(&mut conn, Timestamp::now()).await?))
}

#[utoipa::path(
    post, path = "/api/admin/invite-link/tokens", tag = "Public signup tokens", security(("apiToken" = [])),
    request_body = CreateInviteLink,
    responses(
        (status = 201, body = InviteLink, description = "With its secret and URL, shown only here"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    headers: HeaderMap,
    JsonBody(input): JsonBody<CreateInviteLink>,
) -> Result<(StatusCode, Json<InviteLink>), ApiError> {
    let site = state.site(&headers);
    let mut tx = state.store.begin_write(&actor).await?;
    let link = invite_links::create(&mut tx, input, &site).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(link)))
}

#[utoipa::path(
    get, path = "/api/admin/invite-link/tokens/{token}", tag = "Public signup tokens",
    security(("apiToken" = [])), params(TokenPath),
    responses(
        (status = 200, body = InviteLink), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<TokenPath>,
) -> Result<Json<InviteLink>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        invite_links::get(&mut conn, &path.token, Timestamp::now()).await?,
    ))
}

#[utoipa::path(
    put, path = "/api/admin/invite-link/tokens/{token}", tag = "Public signup tokens",
    security(("apiToken" = [])), params(TokenPath), request_body = UpdateInviteLink,
    responses(
        (status = 200, body = InviteLink), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<TokenPath>,
    JsonBody(input): JsonBody<UpdateInviteLink>,
) -> Result<Json<InviteLink>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let link = invite_links::update(&mut tx, &path.token, input).await?;
    state.commit(tx).await?;
    Ok(Json(link))
}

#[utoipa::path(
    get, path = "/invite/{token}/validate", tag = "Public signup tokens", params(TokenPath),
    responses(
        (status = 200, description = "The link can be used"),
        (status = 400, body = ErrorBody, description = "Unknown, expired, used or disabled")
    )
)]
pub async fn validate(
    State(state): State<Arc<AppState>>,
    PathParams(path): PathParams<TokenPath>,
) -> Result<StatusCode, ApiError> {
    let mut conn = state.store.read().await?;
    invite_links::usable(&mut conn, &path.token, Timestamp::now()).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/invite/{token}/signup", tag = "Public signup tokens", params(TokenPath),
    request_body = SignUp,
    responses(
        (status = 200, body = User, description = "Created with the link's root role; the link is used up"),
        (status = 400, body = ErrorBody, description = "A bad body or password, or a link that cannot be used"),
        (status = 404, body = ErrorBody, description = "Password sign-in is disabled"),
        (status = 409, body = ErrorBody, description = "The username or e-mail is taken"),
        (status = 415, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too much password work at once")
    )
)]
pub async fn sign_up(
    State(state): State<Arc<AppState>>,
    PathParams(path): PathParams<TokenPath>,
    JsonBody(input): JsonBody<SignUp>,
) -> Result<Json<User>, ApiError> {
    state.require_password_sign_in().await?;
    let name = {
        let mut conn = state.store.read().await?;
        invite_links::usable(&mut conn, &path.token, Timestamp::now())
            .await?
            .name
    };
    invite_links::check_sign_up(&input)?;
    // Hashing is slow on purpose: done before the write starts, on the bounded sign-in turns.
    let hash = sign_up_hash(&state, input.password.clone()).await?;
    let actor = Actor::token(&format!("invite link {name}"));
    let mut tx = state.store.begin_write(&actor).await?;
    let user = invite_links::sign_up(&mut tx, &path.token, input, hash).await?;
    state.commit(tx).await?;
    Ok(Json(user))
}

/// The hash of an anonymous caller's new password: the password rules, then a sign-in's turn of password
/// work (429 when too many wait), so strangers cannot queue unbounded work.
pub async fn sign_up_hash(state: &AppState, password: String) -> Result<String, ApiError> {
    crate::domain::password_resets::check_password(&password)?;
    state.password_work.hash_anonymous(password).await
}
