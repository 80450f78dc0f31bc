//! Users: `/api/admin/user-admin` (management), `/api/admin/user` (the caller and their personal access
//! tokens) and password sign-in `POST /auth/simple/login`.

use crate::domain::password_resets::{self, LinkKind};
use crate::domain::users::{
    self, CreatePat, CreateUser, CreatedUser, CurrentUser, Login, Pat, PatList, SignInBounds,
    UpdateUser, User, UserList, SESSION_HOURS,
};
use crate::http::extract::{
    is_https, AdminActor, ClientAddress, JsonBody, PathParams, SESSION_COOKIE,
};
use crate::http::AppState;
use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{AppendHeaders, IntoResponse};
use axum::Json;
use cookie::{Cookie, SameSite};
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The user-management routes (`/api/admin/user-admin…`), as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
}

/// The caller's own account and personal access tokens (`/api/admin/user…`), as stated in the handlers'
/// `#[utoipa::path]`.
pub fn account_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(current))
        .routes(routes!(list_pats, create_pat))
        .routes(routes!(delete_pat))
}

/// Password sign-in (`POST /auth/simple/login`), as stated in its handler's `#[utoipa::path]`.
pub fn sign_in_router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new().routes(routes!(login))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct IdPath {
    pub id: i64,
}

#[utoipa::path(
    get, path = "/api/admin/user-admin", tag = "Users", security(("apiToken" = [])),
    responses((status = 200, body = UserList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
pub async fn list(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
) -> Result<Json<UserList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(users::list(&mut conn).await?))
}

#[utoipa::path(
    get, path = "/api/admin/user-admin/{id}", tag = "Users", security(("apiToken" = [])), params(IdPath),
    responses(
        (status = 200, body = User), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn get(
    State(state): State<Arc<AppState>>,
    _: AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<Json<User>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(users::get(&mut conn, path.id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/user-admin", tag = "Users", security(("apiToken" = [])), request_body = CreateUser,
    responses(
        (status = 201, body = CreatedUser, description = "A user created without a password comes with `inviteLink`, where they set one (valid 7 days, once), e-mailed to them (`emailSent`) when the instance sends e-mail and `sendEmail` is not false"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 415, body = ErrorBody)
    )
)]
pub async fn create(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    headers: HeaderMap,
    JsonBody(mut input): JsonBody<CreateUser>,
) -> Result<(StatusCode, Json<CreatedUser>), ApiError> {
    // Hashing is slow on purpose: done before the write starts.
    let password_hash = match input.password.take() {
        Some(password) => Some(users::hash_password(&state.password_work, password).await?),
        None => None,
    };
    let send_email = input.send_email.unwrap_or(true);
    let without_password = password_hash.is_none();
    let mut tx = state.store.begin_write(&actor).await?;
    let user = users::create(&mut tx, input, password_hash).await?;
    state.commit(tx).await?;
    let mut created = CreatedUser {
        user,
        invite_link: None,
        email_sent: false,
    };
    if without_password {
        let row = {
            let mut conn = state.store.read().await?;
            users::require(&mut conn, created.user.id).await?
        };
        let issued = {
            let mut conn = state.store.bookkeeping().await?;
            password_resets::issue(&mut conn, row, LinkKind::Welcome, &state.site(&headers)).await?
        };
        if send_email {
            created.email_sent = state
                .mail_link(&issued.user, LinkKind::Welcome, &issued.url)
                .await;
        }
        created.invite_link = Some(issued.url);
    }
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(
    put, path = "/api/admin/user-admin/{id}", tag = "Users", security(("apiToken" = [])), params(IdPath),
    request_body = UpdateUser,
    responses(
        (status = 200, body = User), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn update(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
    JsonBody(input): JsonBody<UpdateUser>,
) -> Result<Json<User>, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let user = users::update(&mut tx, path.id, input).await?;
    state.commit(tx).await?;
    Ok(Json(user))
}

#[utoipa::path(
    delete, path = "/api/admin/user-admin/{id}", tag = "Users", security(("apiToken" = [])), params(IdPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    users::delete(&mut tx, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get, path = "/api/admin/user", tag = "Users", security(("apiToken" = [])),
    responses(
        (status = 200, body = CurrentUser), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user")
    )
)]
pub async fn current(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<Json<CurrentUser>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(users::current(&mut conn, &actor).await?))
}

#[utoipa::path(
    get, path = "/api/admin/user/tokens", tag = "Users", security(("apiToken" = [])),
    responses(
        (status = 200, body = PatList, description = "The caller's tokens; `secret` is always null"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)
    )
)]
pub async fn list_pats(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<Json<PatList>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(users::pats(&mut conn, actor.user_id).await?))
}

#[utoipa::path(
    post, path = "/api/admin/user/tokens", tag = "Users", security(("apiToken" = [])), request_body = CreatePat,
    responses(
        (status = 201, body = Pat, description = "The token with its secret, shown only here"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody)
    )
)]
pub async fn create_pat(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    JsonBody(input): JsonBody<CreatePat>,
) -> Result<(StatusCode, Json<Pat>), ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    let pat = users::create_pat(&mut tx, actor.user_id, input).await?;
    state.commit(tx).await?;
    Ok((StatusCode::CREATED, Json(pat)))
}

#[utoipa::path(
    delete, path = "/api/admin/user/tokens/{id}", tag = "Users", security(("apiToken" = [])), params(IdPath),
    responses(
        (status = 200, description = "Deleted"), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn delete_pat(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    PathParams(path): PathParams<IdPath>,
) -> Result<StatusCode, ApiError> {
    let mut tx = state.store.begin_write(&actor).await?;
    users::delete_pat(&mut tx, actor.user_id, path.id).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post, path = "/auth/simple/login", tag = "Users", request_body = Login,
    responses(
        (status = 200, body = User, description = "Signed in; the session cookie is set (HttpOnly, SameSite=Lax, Secure behind https)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody, description = "Wrong username or password"),
        (status = 404, body = ErrorBody, description = "Password sign-in is disabled"), (status = 415, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many failed attempts for this login or from this address, or too many sign-ins at once",
            headers(("Retry-After" = u64, description = "Seconds to wait")))
    )
)]
pub async fn login(
    State(state): State<Arc<AppState>>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
    JsonBody(input): JsonBody<Login>,
) -> Result<impl IntoResponse, ApiError> {
    if !state.password_sign_in().await? {
        return Err(ApiError::not_found("Password sign-in is disabled"));
    }
    let bounds = SignInBounds {
        throttle: &state.sign_in,
        work: &state.password_work,
    };
    let (user, session) = users::login(&state.store, bounds, client, input).await?;
    let path = if state.base_path.is_empty() {
        "/".to_owned()
    } else {
        state.base_path.clone()
    };
    let cookie = Cookie::build((SESSION_COOKIE, session))
        .path(path)
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(is_https(&headers))
        .max_age(cookie::time::Duration::hours(SESSION_HOURS))
        .build();
    Ok((
        AppendHeaders([(SET_COOKIE, cookie.to_string())]),
        Json(user),
    ))
}
