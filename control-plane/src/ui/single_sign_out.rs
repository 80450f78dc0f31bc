//! Single sign-out in the browser. After `POST /logout` has ended the Vexil session (in the store, with what
//! it kept for its identity provider: `domain::single_sign_out`) and cleared the cookies, [`at_provider`]
//! says where the browser goes next: for an OpenID Connect sign-in with `enableSingleSignOut` on, the
//! provider's `end_session_endpoint` (back to `/login` after); for a SAML sign-in with the identity
//! provider's logout URL configured, that URL with a LogoutRequest, answered at
//! `GET|POST /auth/saml/logout/done` (checked by [`crate::saml_logout`]), which shows the sign-in page with
//! "You are signed out". The browser leaves for the provider from a page ([`leaving`]), not by a redirect of
//! the sign-out form's post, which the UI's `form-action 'self'` policy would stop. Otherwise (a password sign-in, or nothing configured) the sign-in page, as always.

use super::page::{Page, Shell};
use super::saml_sign_in::service_provider_urls;
use super::scope::Done;
use super::session::FormFields;
use crate::domain::single_sign_out::ProviderSession;
use crate::http::admin::ui_config::request_origin;
use crate::http::state::AppState;
use crate::oidc;
use crate::saml_logout::{self, Answer};
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::header::{HeaderName, HeaderValue};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;
use std::sync::Arc;
use vexil_shared::ApiError;

/// The notice of a sign-out the identity provider confirmed.
pub const SIGNED_OUT: &str = "You are signed out.";

/// This module's routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/auth/saml/logout/done", get(done).post(done_posted))
}

/// Where the browser goes to sign out at the identity provider of the session just ended (`provider`):
/// `Ok(None)` when that provider's sign-out is not configured (the sign-in page, as after a password
/// sign-in); an error when it is but could not be started.
pub(super) async fn at_provider(
    state: &AppState,
    headers: &HeaderMap,
    provider: ProviderSession,
) -> Result<Option<String>, ApiError> {
    match provider {
        ProviderSession::Oidc {
            id_token,
            end_session_endpoint,
        } => {
            let settings = state.oidc_settings().await?;
            let back = format!("{}{}/login", request_origin(headers), state.base_path);
            Ok(oidc::end_session_url(
                &settings,
                &id_token,
                &end_session_endpoint,
                &back,
            ))
        }
        ProviderSession::Saml(subject) => {
            let settings = state.saml_settings().await?;
            let urls = service_provider_urls(headers, &state.base_path);
            saml_logout::start(&state.store, &settings, &urls, &subject).await
        }
    }
}

/// The answer to `POST /logout` that sends the browser on to the identity provider at `url`: a page saying
/// so, with a `Refresh` header (and a link). Not a redirect: the UI's `form-action 'self'` policy covers the
/// redirects of a form's post, and browsers stop one that leaves for another origin.
pub(super) fn leaving(state: &AppState, url: &str) -> Response {
    let shell = Shell {
        base: state.base_path.clone(),
        ..Shell::default()
    };
    let markup = shell.render(
        "Signing out",
        html! {
            section.sign-in.card aria-labelledby="sign-out-title" {
                h1 #sign-out-title { "Signing you out at your identity provider…" }
                p { "You are signed out of Vexil." }
                p { a.button href=(url) { "Continue to the identity provider" } }
            }
        },
    );
    let mut response = Page {
        status: StatusCode::OK,
        markup,
    }
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("0; url={url}")) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("refresh"), value);
    }
    response
}

/// `GET /auth/saml/logout/done`: the identity provider's LogoutResponse, HTTP-Redirect binding.
pub async fn done(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let query = query.unwrap_or_default();
    let checked = finish(&state, &headers, Answer::Redirect { query: &query }).await;
    answer(&state, checked)
}

/// `POST /auth/saml/logout/done`: the identity provider's LogoutResponse, HTTP-POST binding.
pub async fn done_posted(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = FormFields::parse(&body);
    let checked = match (form.refuse_nul(), form.get("SAMLResponse")) {
        (Err(error), _) => Err(error),
        (Ok(()), None) => Err(ApiError::validation(
            "The sign-out answer carries no SAMLResponse",
        )),
        (Ok(()), Some(response)) => finish(&state, &headers, Answer::Post { response }).await,
    };
    answer(&state, checked)
}

async fn finish(state: &AppState, headers: &HeaderMap, answer: Answer<'_>) -> Result<(), ApiError> {
    let settings = state.saml_settings().await?;
    let urls = service_provider_urls(headers, &state.base_path);
    saml_logout::finish(&state.store, &settings, &urls, answer).await
}

/// Confirmed: the sign-in page with "You are signed out". Not confirmed: a page saying why (the Vexil
/// session ended before the browser left, whatever the identity provider answers).
fn answer(state: &AppState, checked: Result<(), ApiError>) -> Response {
    let error = match checked {
        Ok(()) => {
            return Done::to(format!("{}/login", state.base_path), SIGNED_OUT).into_response()
        }
        Err(error) => error,
    };
    let shell = Shell {
        base: state.base_path.clone(),
        ..Shell::default()
    };
    let status =
        StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let markup = shell.render(
        "Sign-out not confirmed",
        html! {
            section.sign-in.card aria-labelledby="sign-out-error-title" {
                h1 #sign-out-error-title { "Sign-out not confirmed" }
                p.error-box role="alert" { (error.message) }
                p { "You are signed out of Vexil. The identity provider's own session may still be open: sign out there too, or close the browser." }
                p { a.button href=(shell.link("/login")) { "Back to sign in" } }
            }
        },
    );
    Page { status, markup }.into_response()
}
