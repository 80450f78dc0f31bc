//! What every handler can reach: [`AppState`], and [`AppState::commit`], the end of every admin write.

use crate::domain::limits::Limits;
use crate::domain::password_resets::{self, LinkKind};
use crate::domain::passwords::PasswordWork;
use crate::domain::playground::CompiledDocuments;
use crate::domain::saml_settings::{self, SamlSettings};
use crate::domain::sign_in_throttle::SignInThrottle;
use crate::domain::sso_settings::{self, OidcSettings, SignInConfig};
use crate::domain::webhook_targets::WebhookTargets;
use crate::mail::Mailer;
use crate::oidc::OidcFlows;
use crate::publisher::published::Published;
use crate::store::users::UserRow;
use crate::store::{Store, WriteTx};
use crate::time::Clock;
use axum::http::HeaderMap;
use metrics_exporter_prometheus::PrometheusHandle;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use vexil_serving::token_sightings::TokenSightings;
use vexil_shared::ApiError;

/// The longest a write's answer waits for this process's SDK routes to serve it. It normally takes about a
/// millisecond (the publisher wakes on the commit); past this the answer goes out anyway, the write being
/// committed, and a warning is logged.
const READ_YOUR_WRITES_WAIT: Duration = Duration::from_secs(2);

/// What every handler can reach.
pub struct AppState {
    pub store: Store,
    /// False with `--auth-type none`.
    pub auth_enabled: bool,
    /// `--disable-password-auth`, the `OIDC_*` and the `SAML_*` variables: with the stored settings, who may sign in how
    /// (`domain::sso_settings`).
    pub sign_in_config: SignInConfig,
    /// The client that talks to OpenID Connect providers.
    pub oidc: OidcFlows,
    /// "" or "/x".
    pub base_path: String,
    pub prometheus: PrometheusHandle,
    /// The OpenAPI document, rendered once.
    pub openapi: serde_json::Value,
    pub limits: Limits,
    /// Unix milliseconds now: the metrics views' windows are relative to it (tests inject their own).
    pub clock: Clock,
    /// What this process's publisher has published, and so its own SDK routes serve.
    pub published: watch::Receiver<Arc<Published>>,
    /// With `--trust-proxy`: the caller's address is the first `X-Forwarded-For` hop.
    pub trust_proxy: bool,
    /// Where SDKs reach Vexil, for the UI's snippets (`--sdk-url`); `None`: this control plane.
    pub sdk_url: Option<String>,
    /// Failed sign-ins, counted in this process's memory.
    pub sign_in: SignInThrottle,
    /// Password hashing and checking, bounded in concurrency and memory.
    pub password_work: PasswordWork,
    /// The tokens callers used (the serving state's set: the SDK routes note theirs there too), written to
    /// the store now and then (`ingest::note_tokens_seen_forever`).
    pub token_sightings: Arc<TokenSightings>,
    /// The playground's compiled admin documents, one per environment, kept while the revision stands.
    pub playground: CompiledDocuments,
    /// Which addresses webhooks may target (`--allow-private-webhook-targets`).
    pub webhook_targets: WebhookTargets,
    /// What this process's SDK routes serve: the tokens an SDK-side route of the control plane's own checks
    /// (`extract::ClientTokenEnvironment`).
    pub serving: Arc<vexil_serving::ServingState>,
    /// The SMTP sender of reset and welcome links (`--smtp-url`); `None`: no e-mail, the admin passes links on.
    pub mailer: Option<Arc<Mailer>>,
    /// `--public-url`: where links point; `None`: the address each request came to.
    pub public_url: Option<String>,
    /// Anonymous requests for a reset e-mail, counted as sign-in failures are (every request counts).
    pub reset_requests: SignInThrottle,
    /// Wakes this process's action processor when a signal is received (`crate::actions`).
    pub signal_received: crate::actions::Wake,
}

impl AppState {
    /// The start of every link this instance gives out (origin and base path): `--public-url`, else the
    /// address of the request (`headers`).
    pub fn site(&self, headers: &HeaderMap) -> String {
        match &self.public_url {
            Some(url) => url.clone(),
            None => format!(
                "{}{}",
                crate::http::admin::ui_config::request_origin(headers),
                self.base_path
            ),
        }
    }

    /// E-mails `user` their new link (a reset or welcome link) when the instance can send e-mail and the user
    /// has an address: whether it was sent.
    pub async fn mail_link(&self, user: &UserRow, kind: LinkKind, url: &str) -> bool {
        let (Some(mailer), Some(to)) = (&self.mailer, &user.email) else {
            return false;
        };
        let mail = match kind {
            LinkKind::Reset => crate::mail::reset_mail(to, url),
            LinkKind::Welcome => crate::mail::welcome_mail(to, user.name.as_deref(), url),
        };
        mailer.send(mail).await
    }

    /// An anonymous request for a reset e-mail to `email` from `client` (`POST /auth/reset/password-email`,
    /// the UI's "Forgot password?"): not an address → 400; past the limits of sign-in, counting every request
    /// → 429; else `Ok` whether or not anyone has the address. When someone does and the instance sends
    /// e-mail, their link is issued and mailed after the answer, which so waits for neither the store nor the
    /// SMTP server: its time does not tell whether the address has an account.
    pub fn request_reset_mail(
        self: &Arc<Self>,
        email: &str,
        client: Option<IpAddr>,
    ) -> Result<(), ApiError> {
        let email = email.trim().to_lowercase();
        if !email.contains('@') || email.chars().count() > 254 {
            return Err(ApiError::invalid_field(
                "email",
                "email is not a valid e-mail address",
            ));
        }
        self.reset_requests.check(&email, client, Instant::now())?;
        self.reset_requests
            .record_failure(&email, client, Instant::now());
        let (Some(_), Some(site)) = (&self.mailer, self.public_url.clone()) else {
            return Ok(());
        };
        let state = self.clone();
        tokio::spawn(async move {
            if let Err(error) = state.mail_reset_link(&email, &site).await {
                tracing::warn!(error = %error.message, "cannot issue a reset link");
            }
        });
        Ok(())
    }

    async fn mail_reset_link(&self, email: &str, site: &str) -> Result<(), ApiError> {
        let user = {
            let mut conn = self.store.read().await?;
            password_resets::person_by_email(&mut conn, email).await?
        };
        let Some(user) = user else {
            return Ok(());
        };
        let issued = {
            let mut conn = self.store.bookkeeping().await?;
            password_resets::issue(&mut conn, user, LinkKind::Reset, site).await?
        };
        self.mail_link(&issued.user, LinkKind::Reset, &issued.url)
            .await;
        Ok(())
    }

    /// 404 while password sign-in is off: no one signs up with a password or sets one through a link then.
    pub async fn require_password_sign_in(&self) -> Result<(), ApiError> {
        if self.password_sign_in().await? {
            Ok(())
        } else {
            Err(ApiError::not_found("Password sign-in is disabled"))
        }
    }

    /// Whether password sign-in is on now (`domain::sso_settings::password_sign_in`).
    pub async fn password_sign_in(&self) -> Result<bool, ApiError> {
        let mut conn = self.store.read().await?;
        sso_settings::password_sign_in(&mut conn, &self.sign_in_config).await
    }

    /// The OpenID Connect settings in force (the environment's, else the stored ones).
    pub async fn oidc_settings(&self) -> Result<OidcSettings, ApiError> {
        let mut conn = self.store.read().await?;
        sso_settings::oidc(&mut conn, &self.sign_in_config).await
    }

    /// The SAML settings in force (the environment's, else the stored ones).
    pub async fn saml_settings(&self) -> Result<SamlSettings, ApiError> {
        let mut conn = self.store.read().await?;
        saml_settings::saml(&mut conn, self.sign_in_config.saml_env.as_ref()).await
    }

    /// Commits a configuration write and, when it changed something, waits until this process's own SDK
    /// routes (`/api/frontend`, the client API) serve its revision: a 2xx from the admin API is then visible
    /// there at once (a token just created authenticates, a flag just switched answers switched). Returns
    /// whether the write committed ([`WriteTx::commit`]).
    pub async fn commit(&self, tx: WriteTx) -> Result<bool, ApiError> {
        let revision = u64::try_from(tx.revision()).unwrap_or_default();
        if !tx.commit().await? {
            return Ok(false);
        }
        let mut published = self.published.clone();
        let served = published.wait_for(|published| published.revision() >= revision);
        match tokio::time::timeout(READ_YOUR_WRITES_WAIT, served).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => tracing::warn!(
                revision,
                "the SDK routes of this process did not reach a write's revision in time"
            ),
        }
        Ok(true)
    }
}
