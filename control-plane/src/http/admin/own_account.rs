//! The caller's profile and password: `GET /api/admin/user/profile`, `POST /api/admin/user/change-password`.

use crate::domain::own_account::{self, ChangePassword, Profile};
use crate::domain::user_admin::{self, Roles};
use crate::domain::users::SignInBounds;
use crate::http::extract::{AdminActor, ClientAddress, JsonBody, QueryParams};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use vexil_shared::{ApiError, ErrorBody};

/// The own-account routes, as stated in the handlers' `#[utoipa::path]`.
pub fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(profile))
        .routes(routes!(change_password))
        .routes(routes!(roles))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RolesQuery {
    /// A project: Vexil has no project roles, so none.
    pub project_id: Option<String>,
}

#[utoipa::path(
    get, path = "/api/admin/user/roles", tag = "Users", security(("apiToken" = [])), params(RolesQuery),
    responses(
        (status = 200, body = Roles), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user")
    )
)]
pub async fn roles(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    QueryParams(query): QueryParams<RolesQuery>,
) -> Result<Json<Roles>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(
        user_admin::roles(&mut conn, &actor, query.project_id.as_deref()).await?,
    ))
}

#[utoipa::path(
    get, path = "/api/admin/user/profile", tag = "Users", security(("apiToken" = [])),
    responses(
        (status = 200, body = Profile), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "An API token has no user")
    )
)]
pub async fn profile(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
) -> Result<Json<Profile>, ApiError> {
    let password_sign_in = state.password_sign_in().await?;
    let mut conn = state.store.read().await?;
    Ok(Json(
        own_account::profile(&mut conn, &actor, password_sign_in).await?,
    ))
}

#[utoipa::path(
    post, path = "/api/admin/user/change-password", tag = "Users", security(("apiToken" = [])),
    request_body = ChangePassword,
    responses(
        (status = 200, description = "Changed; every session of the user ends"),
        (status = 400, body = ErrorBody, description = "Passwords do not match, or the new one is too short"),
        (status = 401, body = ErrorBody, description = "The old password is incorrect"),
        (status = 403, body = ErrorBody, description = "An API token has no user"), (status = 415, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many wrong old passwords",
            headers(("Retry-After" = u64, description = "Seconds to wait")))
    )
)]
pub async fn change_password(
    State(state): State<Arc<AppState>>,
    AdminActor(actor): AdminActor,
    ClientAddress(client): ClientAddress,
    JsonBody(input): JsonBody<ChangePassword>,
) -> Result<StatusCode, ApiError> {
    let bounds = SignInBounds {
        throttle: &state.sign_in,
        work: &state.password_work,
    };
    let hash = own_account::new_password_hash(&state.store, bounds, client, &actor, input).await?;
    let mut tx = state.store.begin_write(&actor).await?;
    own_account::set_password(&mut tx, actor.user_id, &hash).await?;
    state.commit(tx).await?;
    Ok(StatusCode::OK)
}
