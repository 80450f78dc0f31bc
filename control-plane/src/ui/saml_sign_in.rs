//! SAML 2.0 sign-in in the browser: `GET /auth/saml/login` (to the identity provider with an AuthnRequest,
//! the state in a short-lived cookie), `POST /auth/saml/callback` (the provider's response, verified by
//! [`crate::saml`]; a cross-site POST carries no `SameSite=Lax` cookie, so it only verifies and sends the
//! browser on), `GET /auth/saml/callback?state=` (in the browser that started it: the user found or created
//! and their groups synced by `domain::sso_sign_in` in one write, then the same session cookie as a password
//! sign-in) and `GET /auth/saml/metadata` (this instance's service provider metadata). Single logout's
//! answer (`/auth/saml/logout/done`) is `single_sign_out`'s. A refused or failed
//! sign-in is a page saying why, with the way back to the sign-in page, and sets no session.

use super::controls::local_path;
use super::oidc_sign_in::{refused_page, signed_in, to_provider};
use super::page::see_other;
use super::session::{cookie_value, FormFields};
use crate::domain::single_sign_out::ProviderSession;
use crate::domain::sso_sign_in;
use crate::domain::users;
use crate::http::admin::ui_config::request_origin;
use crate::http::state::AppState;
use crate::saml::{self, ServiceProviderUrls};
use crate::store::Actor;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// The cookie holding the state of the SAML sign-in this browser started.
pub const STATE_COOKIE: &str = "vexil-saml-state";

/// This instance's service provider URLs as the request reached it.
pub fn service_provider_urls(headers: &HeaderMap, base: &str) -> ServiceProviderUrls {
    ServiceProviderUrls::at(&request_origin(headers), base)
}

#[derive(Debug, Default, Deserialize)]
pub struct Start {
    next: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Verified {
    state: Option<String>,
}

/// This module's routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/auth/saml/login", get(start))
        .route("/auth/saml/callback", get(finish).post(callback))
        .route("/auth/saml/metadata", get(metadata))
}

/// `GET /auth/saml/login`: to the identity provider with an AuthnRequest.
pub async fn start(
    State(state): State<Arc<AppState>>,
    Query(query): Query<Start>,
    headers: HeaderMap,
) -> Response {
    let next = local_path(&state.base_path, query.next.as_deref());
    let started = async {
        let settings = state.saml_settings().await?;
        saml::start(
            &state.store,
            &settings,
            &service_provider_urls(&headers, &state.base_path),
            next,
        )
        .await
    }
    .await;
    match started {
        Ok(started) => to_provider(
            &state,
            &headers,
            &started.redirect_url,
            started.state,
            STATE_COOKIE,
        ),
        Err(error) => refused_page(&state, &error, STATE_COOKIE),
    }
}

/// `POST /auth/saml/callback`: the provider's response (HTTP-POST binding), verified, then on to the GET
/// that carries the browser's cookies.
pub async fn callback(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = FormFields::parse(&body);
    let verified = async {
        form.refuse_nul()?;
        let (Some(response), Some(relay_state)) = (form.get("SAMLResponse"), form.get("RelayState"))
        else {
            return Err(ApiError::validation(
                "The callback carries no SAMLResponse and RelayState: start again from the sign-in page \
                 (sign-ins started at the identity provider are not accepted)",
            ));
        };
        let settings = state.saml_settings().await?;
        saml::verify(
            &state.store,
            &settings,
            &service_provider_urls(&headers, &state.base_path),
            relay_state,
            response,
        )
        .await?;
        Ok(relay_state.to_owned())
    }
    .await;
    match verified {
        Ok(relay_state) => {
            let query: String =
                url::form_urlencoded::byte_serialize(relay_state.as_bytes()).collect();
            see_other(&format!(
                "{}/auth/saml/callback?state={query}",
                state.base_path
            ))
        }
        Err(error) => refused_page(&state, &error, STATE_COOKIE),
    }
}

/// `GET /auth/saml/callback?state=`: the verified sign-in, in the browser that started it.
pub async fn finish(
    State(state): State<Arc<AppState>>,
    Query(query): Query<Verified>,
    headers: HeaderMap,
) -> Response {
    let done = async {
        let flow = query.state.unwrap_or_default();
        let browser_state = cookie_value(&headers, STATE_COOKIE);
        let finished = saml::finish(&state.store, &flow, browser_state.as_deref()).await?;
        let settings = state.saml_settings().await?;
        if !settings.usable() {
            return Err(ApiError::not_found(
                "SAML 2.0 sign-in is not configured on this instance",
            ));
        }
        let actor = Actor::token(&format!("SAML sign-in of {}", finished.identity.email));
        let mut tx = state.store.begin_write(&actor).await?;
        let row =
            sso_sign_in::resolve(&mut tx, &settings.provisioning(), &finished.identity).await?;
        state.commit(tx).await?;
        // The assertion's subject stays with the session (server side) for single logout.
        let provider = finished.subject.clone().map(ProviderSession::Saml);
        let (_, session) =
            users::open_provider_session(&state.store, row, provider.as_ref()).await?;
        Ok::<_, ApiError>((session, local_path(&state.base_path, Some(&finished.next))))
    }
    .await;
    match done {
        Ok((session, next)) => signed_in(&state, &headers, session, &next, STATE_COOKIE),
        Err(error) => refused_page(&state, &error, STATE_COOKIE),
    }
}

/// `GET /auth/saml/metadata`: this instance as a SAML service provider (entity ID, assertion consumer
/// service), for identity providers that import metadata.
pub async fn metadata(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    match saml::metadata(&service_provider_urls(&headers, &state.base_path)) {
        Ok(xml) => ([(CONTENT_TYPE, "application/samlmetadata+xml")], xml).into_response(),
        Err(error) => refused_page(&state, &error, STATE_COOKIE),
    }
}
