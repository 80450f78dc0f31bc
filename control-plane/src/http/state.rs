//! What every handler can reach: [`AppState`].

use crate::domain::limits::Limits;
use crate::domain::passwords::PasswordWork;
use crate::domain::sign_in_throttle::SignInThrottle;
use crate::store::Store;
use crate::time::Clock;
use metrics_exporter_prometheus::PrometheusHandle;

/// What every handler can reach.
pub struct AppState {
    pub store: Store,
    /// False with `--auth-type none`.
    pub auth_enabled: bool,
    /// False with `--disable-password-auth`.
    pub password_auth: bool,
    /// "" or "/x".
    pub base_path: String,
    pub prometheus: PrometheusHandle,
    /// The OpenAPI document, rendered once.
    pub openapi: serde_json::Value,
    pub limits: Limits,
    /// Unix milliseconds now: the metrics views' windows are relative to it (tests inject their own).
    pub clock: Clock,
    /// With `--trust-proxy`: the caller's address is the first `X-Forwarded-For` hop.
    pub trust_proxy: bool,
    /// Failed sign-ins, counted in this process's memory.
    pub sign_in: SignInThrottle,
    /// Password hashing and checking, bounded in concurrency and memory.
    pub password_work: PasswordWork,
}
