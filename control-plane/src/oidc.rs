//! OpenID Connect sign-in, the protocol side: discovery, the authorization code flow with state, nonce and
//! PKCE (S256), and the ID token's verification (signature from the provider's JWKS, issuer, audience,
//! expiry, nonce), all by the `openidconnect` crate over the control plane's reqwest client (redirects not
//! followed, bounded in time). Nothing is fetched at start: a provider that cannot be reached makes only
//! the single sign-on fail, with a message saying so.
//!
//! Each sign-in in flight is kept in the database (`domain::sso_flows`, so any control plane may receive
//! the callback) under its state: its nonce, its PKCE verifier, the provider's metadata and the page to go
//! to after; it is used once and forgotten after ten minutes. Its state is also set in a short-lived cookie
//! of the browser that started it, and the callback must carry both: a callback from another browser (login
//! CSRF) or replayed is refused.
//!
//! Who the verified identity is in Vexil is `domain::sso_sign_in`'s business.
//!
//! Single sign-out (RP-initiated logout): with `enableSingleSignOut` on and an `end_session_endpoint` in the
//! provider's discovery document, a sign-in keeps its ID token and that endpoint with its session
//! (`domain::single_sign_out`); signing out of Vexil then sends the browser to [`end_session_url`] with
//! `id_token_hint`, `client_id` and `post_logout_redirect_uri`, so the provider's session ends too.

use crate::domain::single_sign_out::ProviderSession;
use crate::domain::sso_flows::{self, Step};
use crate::domain::sso_settings::OidcSettings;
use crate::domain::sso_sign_in::{groups_at, Identity};
use crate::store::Store;
use base64::Engine;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreJsonWebKeySet, CoreJwsSigningAlgorithm,
};
use openidconnect::{
    AuthenticationContextClass, AuthorizationCode, ClientId, ClientSecret, CsrfToken,
    EndSessionUrl, EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, LogoutRequest, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, PostLogoutRedirectUrl, ProviderMetadataWithLogout,
    RedirectUrl, Scope, TokenResponse,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use vexil_shared::{ApiError, ErrorKind};
/// The longest one call to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// What Unleash's `discoverUrl` usually ends with; the issuer is what comes before.
const WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// A client of the provider built from its discovered metadata: authorization and token endpoints.
type ProviderClient = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// A sign-in sent to the provider, as kept until its callback. The provider's keys are kept beside its
/// metadata: the metadata's own serialization leaves them out. The metadata keeps the provider's
/// `end_session_endpoint` when it has one.
#[derive(Serialize, Deserialize)]
struct Pending {
    nonce: String,
    verifier: String,
    metadata: ProviderMetadataWithLogout,
    jwks: CoreJsonWebKeySet,
    next: String,
}

/// The HTTP client that talks to the provider.
pub struct OidcFlows {
    http: reqwest::Client,
}

impl Default for OidcFlows {
    fn default() -> Self {
        OidcFlows::new()
    }
}

/// A sign-in started: where to send the browser, and the state to set in its cookie.
pub struct Started {
    pub authorize_url: String,
    pub state: String,
}

/// A sign-in finished: who the provider vouched for, the page to go to, and (single sign-out on, and the
/// provider offering it) what signing out at the provider will need, to keep with the session.
pub struct Finished {
    pub identity: Identity,
    pub next: String,
    pub provider_session: Option<ProviderSession>,
}

fn refused(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorKind::AuthenticationRequired, message)
}

/// The provider could not be reached or answered nonsense: 503, the details in the log only (they may name
/// internal addresses).
fn provider_unreachable(what: &str, error: impl std::fmt::Display) -> ApiError {
    tracing::warn!(%error, "OpenID Connect: {what}");
    ApiError::new(
        ErrorKind::Unavailable,
        format!("Single sign-on is unavailable: {what}. Try again later, or sign in another way"),
    )
}

fn issuer_of(settings: &OidcSettings) -> Result<IssuerUrl, ApiError> {
    let url = settings
        .discover_url
        .as_deref()
        .ok_or_else(|| ApiError::not_found("OpenID Connect sign-in is not configured"))?;
    let issuer = url.strip_suffix(WELL_KNOWN).unwrap_or(url);
    IssuerUrl::new(issuer.trim_end_matches('/').to_owned()).map_err(|error| {
        ApiError::validation(format!(
            "The OpenID Connect discover URL is not valid: {error}"
        ))
    })
}

fn algorithm(settings: &OidcSettings) -> CoreJwsSigningAlgorithm {
    match settings.signing_algorithm() {
        "RS384" => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
        "RS512" => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
        _ => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    }
}

impl OidcFlows {
    pub fn new() -> OidcFlows {
        // Redirects are not followed (the OAuth 2.0 security advice: no SSRF through a provider's answer).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .connect_timeout(PROVIDER_TIMEOUT)
            .build()
            .unwrap_or_default();
        OidcFlows { http }
    }

    fn client(
        settings: &OidcSettings,
        metadata: ProviderMetadataWithLogout,
        redirect_uri: &str,
    ) -> Result<ProviderClient, ApiError> {
        let client_id = settings
            .client_id
            .clone()
            .ok_or_else(|| ApiError::not_found("OpenID Connect sign-in is not configured"))?;
        let redirect = RedirectUrl::new(redirect_uri.to_owned())
            .map_err(|error| ApiError::validation(format!("Bad redirect URI: {error}")))?;
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(client_id),
            settings.secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect))
    }

    /// Starts a sign-in: discovery (and the provider's keys), then the authorization URL with a new state,
    /// nonce and PKCE challenge. `next` is a local path (checked by the caller).
    pub async fn start(
        &self,
        store: &Store,
        settings: &OidcSettings,
        redirect_uri: &str,
        next: String,
    ) -> Result<Started, ApiError> {
        if !settings.usable() {
            return Err(ApiError::not_found(
                "OpenID Connect sign-in is not configured on this instance",
            ));
        }
        let issuer = issuer_of(settings)?;
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &self.http)
            .await
            .map_err(|error| {
                provider_unreachable(
                    "the identity provider's discovery document could not be read",
                    error,
                )
            })?;
        let client = Self::client(settings, metadata.clone(), redirect_uri)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".to_owned()))
            .add_scope(Scope::new("profile".to_owned()))
            .set_pkce_challenge(challenge);
        if settings.enable_group_syncing && settings.add_groups_scope {
            request = request.add_scope(Scope::new("groups".to_owned()));
        }
        for value in settings
            .acr_values
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
        {
            request =
                request.add_auth_context_value(AuthenticationContextClass::new(value.to_owned()));
        }
        let (url, state, nonce) = request.url();
        let pending = Pending {
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            jwks: metadata.jwks().clone(),
            metadata,
            next,
        };
        sso_flows::keep(store, Step::OidcStarted, state.secret(), &pending).await?;
        Ok(Started {
            authorize_url: url.to_string(),
            state: state.secret().clone(),
        })
    }

    /// Finishes a sign-in at the callback: `state` must be one this process started, unexpired, and the
    /// one of the browser's cookie (`browser_state`); the code is exchanged with the PKCE verifier, and the
    /// ID token verified (signature, issuer, audience, expiry, nonce). The state is used up either way.
    pub async fn finish(
        &self,
        store: &Store,
        settings: &OidcSettings,
        redirect_uri: &str,
        state: &str,
        browser_state: Option<&str>,
        code: &str,
    ) -> Result<Finished, ApiError> {
        let flow: Option<Pending> = sso_flows::take(store, Step::OidcStarted, state).await?;
        let Some(flow) = flow else {
            return Err(refused(
                "This sign-in is unknown, was already used or has expired: start again from the sign-in page",
            ));
        };
        if browser_state != Some(state) {
            return Err(refused(
                "This sign-in was not started in this browser: start again from the sign-in page",
            ));
        }
        if !settings.usable() {
            return Err(ApiError::not_found(
                "OpenID Connect sign-in is not configured on this instance",
            ));
        }
        let end_session_endpoint = flow
            .metadata
            .additional_metadata()
            .end_session_endpoint
            .as_ref()
            .map(|url| url.url().clone())
            .filter(|url| matches!(url.scheme(), "http" | "https"));
        let client = Self::client(settings, flow.metadata.set_jwks(flow.jwks), redirect_uri)?;
        let request = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|error| provider_unreachable("the provider has no token endpoint", error))?;
        let tokens = request
            .set_pkce_verifier(PkceCodeVerifier::new(flow.verifier))
            .request_async(&self.http)
            .await
            .map_err(|error| match error {
                openidconnect::RequestTokenError::ServerResponse(response) => refused(format!(
                    "The identity provider refused the sign-in: {}",
                    response
                        .error_description()
                        .cloned()
                        .unwrap_or_else(|| response.to_string())
                )),
                other => {
                    provider_unreachable("the provider's token endpoint did not answer", other)
                }
            })?;
        let id_token = tokens
            .id_token()
            .ok_or_else(|| refused("The identity provider sent no ID token"))?;
        let verifier = client
            .id_token_verifier()
            .set_allowed_algs([algorithm(settings)]);
        let claims = id_token
            .claims(&verifier, &Nonce::new(flow.nonce))
            .map_err(|error| {
                tracing::warn!(%error, "OpenID Connect: an ID token failed verification");
                refused(format!("The ID token did not pass verification: {error}"))
            })?;
        if claims.email_verified() == Some(false) {
            return Err(refused(
                "The identity provider says your e-mail address is not verified",
            ));
        }
        let email = claims
            .email()
            .map(|email| email.as_str().to_owned())
            .or_else(|| {
                claims
                    .preferred_username()
                    .map(|name| name.as_str().to_owned())
                    .filter(|name| name.contains('@'))
            })
            .ok_or_else(|| {
                refused("The ID token carries no e-mail address: ask for the email scope at the provider")
            })?;
        let name = claims
            .name()
            .and_then(|name| name.get(None))
            .map(|name| name.as_str().to_owned());
        let groups = if settings.enable_group_syncing {
            // The token was verified above; its payload is read again only for the groups claim, which the
            // crate's standard claims do not carry.
            payload(&id_token.to_string())
                .and_then(|claims| groups_at(&claims, settings.group_path()))
        } else {
            None
        };
        let provider_session = end_session_endpoint
            .filter(|_| settings.enable_single_sign_out)
            .map(|endpoint| ProviderSession::Oidc {
                id_token: id_token.to_string(),
                end_session_endpoint: endpoint.to_string(),
            });
        Ok(Finished {
            identity: Identity {
                email,
                name,
                groups,
            },
            next: flow.next,
            provider_session,
        })
    }
}

/// Where to send the browser to sign out at the provider too (RP-initiated logout): the session's
/// `end_session_endpoint` with its ID token as `id_token_hint`, the client ID and
/// `post_logout_redirect_uri`. `None` (sign out of Vexil only) unless single sign-out is on and the
/// session holds what it needs.
pub fn end_session_url(
    settings: &OidcSettings,
    id_token: &str,
    end_session_endpoint: &str,
    post_logout_redirect_uri: &str,
) -> Option<String> {
    if !settings.usable() || !settings.enable_single_sign_out {
        return None;
    }
    let endpoint = EndSessionUrl::new(end_session_endpoint.to_owned()).ok()?;
    let id_token: CoreIdToken = id_token.parse().ok()?;
    let mut request = LogoutRequest::from(endpoint).set_id_token_hint(&id_token);
    if let Some(client_id) = &settings.client_id {
        request = request.set_client_id(ClientId::new(client_id.clone()));
    }
    if let Ok(uri) = PostLogoutRedirectUrl::new(post_logout_redirect_uri.to_owned()) {
        request = request.set_post_logout_redirect_uri(uri);
    }
    Some(request.http_get_url().to_string())
}

/// The claims of a compact JWT (already verified), as JSON.
fn payload(jwt: &str) -> Option<serde_json::Value> {
    let part = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}
