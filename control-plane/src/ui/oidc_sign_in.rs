//! OpenID Connect sign-in in the browser: `GET /auth/oidc/login` (to the provider, with the state in a
//! short-lived cookie) and `GET /auth/oidc/callback` (the provider's answer: the identity verified by
//! [`crate::oidc`], the user found or created and their groups synced by `domain::sso_sign_in` in one write,
//! then the same session cookie as a password sign-in). A refused or failed sign-in is a page saying why,
//! with the way back to the sign-in page, and sets no session.

use super::controls::local_path;
use super::page::{see_other, Page, Shell};
use super::session::{cookie_value, ui_cookie};
use crate::domain::sso_flows::TTL;
use crate::domain::sso_sign_in;
use crate::domain::users::{self, SESSION_HOURS};
use crate::http::admin::ui_config::request_origin;
use crate::http::extract::{is_https, SESSION_COOKIE};
use crate::http::state::AppState;
use crate::store::Actor;
use axum::extract::{Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// The cookie holding the state of the sign-in this browser started.
pub const STATE_COOKIE: &str = "vexil-oidc-state";

/// The redirect URI to register at the provider: `<origin><base>/auth/oidc/callback`.
pub fn callback_uri(headers: &HeaderMap, base: &str) -> String {
    format!("{}{base}/auth/oidc/callback", request_origin(headers))
}

#[derive(Debug, Default, Deserialize)]
pub struct Start {
    next: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// This module's routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/auth/oidc/login", get(start))
        .route("/auth/oidc/callback", get(callback))
}

/// The page of a sign-in that did not happen: why, and the way back; the sign-in's state cookie
/// (`state_cookie`) goes.
pub(super) fn refused_page(
    state: &AppState,
    error: &ApiError,
    state_cookie: &'static str,
) -> Response {
    let shell = Shell {
        base: state.base_path.clone(),
        ..Shell::default()
    };
    let status =
        StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let markup = shell.render(
        "Single sign-on failed",
        html! {
            section.sign-in.card aria-labelledby="sso-error-title" {
                h1 #sso-error-title { "Single sign-on failed" }
                p.error-box role="alert" { (error.message) }
                p { "You are not signed in." }
                p { a.button href=(shell.link("/login")) { "Back to sign in" } }
            }
        },
    );
    let mut response = Page { status, markup }.into_response();
    // The state is spent: its cookie goes too.
    response.headers_mut().append(
        SET_COOKIE,
        ui_cookie(
            state_cookie,
            String::new(),
            &state.base_path,
            false,
            Some(cookie::time::Duration::ZERO),
        ),
    );
    response
}

/// A single sign-on started: to the provider at `url`, with the sign-in's state in its short-lived cookie
/// (`state_cookie`).
pub(super) fn to_provider(
    state: &AppState,
    headers: &HeaderMap,
    url: &str,
    sign_in_state: String,
    state_cookie: &'static str,
) -> Response {
    let mut response = see_other(url);
    let max_age = cookie::time::Duration::seconds(TTL.as_secs() as i64);
    response.headers_mut().append(
        SET_COOKIE,
        ui_cookie(
            state_cookie,
            sign_in_state,
            &state.base_path,
            is_https(headers),
            Some(max_age),
        ),
    );
    response
}

/// A single sign-on done: the session cookie (as a password sign-in sets it), the sign-in's state cookie
/// (`state_cookie`) gone, and to `next`.
pub(super) fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
    session: String,
    next: &str,
    state_cookie: &'static str,
) -> Response {
    let https = is_https(headers);
    let mut response = see_other(next);
    response.headers_mut().append(
        SET_COOKIE,
        ui_cookie(
            SESSION_COOKIE,
            session,
            &state.base_path,
            https,
            Some(cookie::time::Duration::hours(SESSION_HOURS)),
        ),
    );
    response.headers_mut().append(
        SET_COOKIE,
        ui_cookie(
            state_cookie,
            String::new(),
            &state.base_path,
            https,
            Some(cookie::time::Duration::ZERO),
        ),
    );
    response
}

/// `GET /auth/oidc/login`: discovery, then to the provider's authorization endpoint.
pub async fn start(
    State(state): State<Arc<AppState>>,
    Query(query): Query<Start>,
    headers: HeaderMap,
) -> Response {
    let next = local_path(&state.base_path, query.next.as_deref());
    let started = async {
        let settings = state.oidc_settings().await?;
        state
            .oidc
            .start(
                &state.store,
                &settings,
                &callback_uri(&headers, &state.base_path),
                next,
            )
            .await
    }
    .await;
    match started {
        Ok(started) => to_provider(
            &state,
            &headers,
            &started.authorize_url,
            started.state,
            STATE_COOKIE,
        ),
        Err(error) => refused_page(&state, &error, STATE_COOKIE),
    }
}

/// `GET /auth/oidc/callback`: the provider's answer.
pub async fn callback(
    State(state): State<Arc<AppState>>,
    Query(query): Query<Callback>,
    headers: HeaderMap,
) -> Response {
    match finish(&state, query, &headers).await {
        Ok((session, next)) => signed_in(&state, &headers, session, &next, STATE_COOKIE),
        Err(error) => refused_page(&state, &error, STATE_COOKIE),
    }
}

/// The verified identity → the user (found, created, groups synced) → a new session.
async fn finish(
    state: &AppState,
    query: Callback,
    headers: &HeaderMap,
) -> Result<(String, String), ApiError> {
    let refused = |message: String| ApiError::new(ErrorKind::AuthenticationRequired, message);
    if let Some(error) = query.error {
        let description = query.error_description.unwrap_or_default();
        return Err(refused(format!(
            "The identity provider refused the sign-in: {error} {description}"
        )));
    }
    let (Some(code), Some(flow_state)) = (query.code, query.state) else {
        return Err(ApiError::validation(
            "The callback carries no code and state: start again from the sign-in page",
        ));
    };
    let settings = state.oidc_settings().await?;
    let browser_state = cookie_value(headers, STATE_COOKIE);
    let finished = state
        .oidc
        .finish(
            &state.store,
            &settings,
            &callback_uri(headers, &state.base_path),
            &flow_state,
            browser_state.as_deref(),
            &code,
        )
        .await?;
    let actor = Actor::token(&format!(
        "OpenID Connect sign-in of {}",
        finished.identity.email
    ));
    let mut tx = state.store.begin_write(&actor).await?;
    let row = sso_sign_in::resolve(&mut tx, &settings.provisioning(), &finished.identity).await?;
    state.commit(tx).await?;
    // With single sign-out, the ID token stays with the session (server side) for the provider's sign-out.
    let (_, session) =
        users::open_provider_session(&state.store, row, finished.provider_session.as_ref()).await?;
    Ok((session, local_path(&state.base_path, Some(&finished.next))))
}
