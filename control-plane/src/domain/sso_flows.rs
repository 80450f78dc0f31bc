//! Single sign-on sign-ins in flight (OpenID Connect's and SAML's, and SAML sign-outs), kept in the database
//! (`store::sso_sign_ins`) rather than in one process's memory: the identity provider's answer may reach any
//! control plane on the database, so replicas behind a load balancer need no sticky sessions. Each is kept
//! under the SHA-256 of its state (a random value the browser holds in a cookie), taken once, and forgotten
//! after [`TTL`]; at most [`MAX_IN_FLIGHT`] are kept (the oldest go first).

use crate::store::sso_sign_ins;
use crate::store::Store;
use crate::time::Timestamp;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;
use vexil_shared::token::sha256_hex;
use vexil_shared::ApiError;

/// How long a started sign-in may take at the provider.
pub const TTL: Duration = Duration::from_secs(600);
/// At most this many sign-ins in flight.
const MAX_IN_FLIGHT: i64 = 10_000;

/// Which step of which protocol a kept flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// An OpenID Connect sign-in sent to the provider.
    OidcStarted,
    /// A SAML sign-in sent to the identity provider.
    SamlStarted,
    /// A SAML response verified, waiting for the browser that started the sign-in.
    SamlVerified,
    /// A SAML LogoutRequest sent to the identity provider, kept under its ID until the LogoutResponse
    /// answering it (its InResponseTo).
    SamlLogoutSent,
}

impl Step {
    fn as_str(self) -> &'static str {
        match self {
            Step::OidcStarted => "oidc",
            Step::SamlStarted => "saml",
            Step::SamlVerified => "saml-verified",
            Step::SamlLogoutSent => "saml-logout",
        }
    }
}

fn ttl_ms() -> i64 {
    i64::try_from(TTL.as_millis()).unwrap_or(i64::MAX)
}

/// Keeps `flow` as `step` of the sign-in `state`.
pub async fn keep<T: Serialize>(
    store: &Store,
    step: Step,
    state: &str,
    flow: &T,
) -> Result<(), ApiError> {
    let now = Timestamp::now().millis();
    let text = serde_json::to_string(flow)
        .map_err(|error| ApiError::validation(format!("The sign-in could not be kept: {error}")))?;
    let mut conn = store.bookkeeping().await?;
    sso_sign_ins::forget_before(&mut conn, now - ttl_ms()).await?;
    let in_flight = sso_sign_ins::count(&mut conn).await?;
    if in_flight >= MAX_IN_FLIGHT {
        sso_sign_ins::forget_oldest(&mut conn, in_flight - MAX_IN_FLIGHT + 1).await?;
    }
    sso_sign_ins::put(&mut conn, &sha256_hex(state), step.as_str(), &text, now).await?;
    Ok(())
}

/// Takes `step` of the sign-in `state`, once: `None` when there is none, it has expired or it is not a `T`.
pub async fn take<T: DeserializeOwned>(
    store: &Store,
    step: Step,
    state: &str,
) -> Result<Option<T>, ApiError> {
    let mut conn = store.bookkeeping().await?;
    let taken = sso_sign_ins::take(&mut conn, &sha256_hex(state), step.as_str()).await?;
    let now = Timestamp::now().millis();
    Ok(taken
        .filter(|(_, started)| now - started < ttl_ms())
        .and_then(|(flow, _)| match serde_json::from_str(&flow) {
            Ok(flow) => Some(flow),
            Err(error) => {
                tracing::warn!(%error, step = step.as_str(), "a kept sign-in could not be read");
                None
            }
        }))
}
