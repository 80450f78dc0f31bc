//! What every handler can reach: [`AppState`], and [`AppState::commit`], the end of every admin write.

use crate::domain::limits::Limits;
use crate::domain::passwords::PasswordWork;
use crate::domain::playground::CompiledDocuments;
use crate::domain::saml_settings::{self, SamlSettings};
use crate::domain::sign_in_throttle::SignInThrottle;
use crate::domain::sso_settings::{self, OidcSettings, SignInConfig};
use crate::domain::webhook_targets::WebhookTargets;
use crate::oidc::OidcFlows;
use crate::publisher::published::Published;
use crate::store::{Store, WriteTx};
use crate::time::Clock;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;
use std::time::Duration;
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
}

impl AppState {
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
