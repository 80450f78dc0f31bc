//! [`ChangeWatch`]: what one open change stream (`/api/client/streaming`, OFREP's event stream) waits on:
//! the next revision served, the server stopping, its token's expiry. It holds a slot of `--max-streams`
//! and ends (`None`) when its token is revoked, changed or expired, or when the server stops.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use vexil_shared::time::now_ms;
use vexil_shared::token::SecretHash;
use vexil_shared::Projects;

use crate::extract::{grant_expired, Scope};
use crate::snapshot::{EnvironmentView, ServingSnapshot, TokenGrant};
use crate::state::{ServingState, StreamSlot};

/// Keep-alive comments on every open stream, so that proxies and the SDKs' read timeouts (60 s in
/// `unleash-client`) see traffic.
pub const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// One open stream's wait for changes.
pub struct ChangeWatch {
    state: Arc<ServingState>,
    revisions: watch::Receiver<u64>,
    closing: watch::Receiver<bool>,
    token: Option<(SecretHash, TokenGrant)>,
    environment: String,
    projects: Projects,
    wildcard_environment: bool,
    /// The revision the client has (what the next changes are counted from).
    pub seen: u64,
    _slot: StreamSlot,
}

impl ChangeWatch {
    /// A watch of `scope`'s environment and token, counting from the snapshot `scope` was checked against.
    pub fn new(state: Arc<ServingState>, scope: &Scope, slot: StreamSlot) -> ChangeWatch {
        let revisions = state.revisions.subscribe();
        let closing = state.closing.subscribe();
        ChangeWatch {
            state,
            revisions,
            closing,
            token: scope.token.clone(),
            environment: scope.environment.name.clone(),
            projects: scope.projects.clone(),
            wildcard_environment: scope.wildcard_environment,
            seen: scope.snapshot.revision,
            _slot: slot,
        }
    }

    /// The next snapshot newer than [`ChangeWatch::seen`], as this stream's scope; `None` when the stream
    /// must end (token revoked, changed or expired; server stopping).
    pub async fn next(&mut self) -> Option<Scope> {
        loop {
            if self.closing() {
                return None;
            }
            let snapshot = self.state.current.load_full()?;
            if !self.still_granted(&snapshot) {
                return None;
            }
            if snapshot.revision != self.seen {
                return Some(self.scope_at(snapshot));
            }
            let expiry = self
                .token
                .as_ref()
                .and_then(|(_, grant)| grant.expires_at_ms)
                .map(|at| Duration::from_millis(u64::try_from(at - now_ms()).unwrap_or(0)));
            tokio::select! {
                changed = self.revisions.changed() => changed.ok()?,
                _ = self.closing.wait_for(|closing| *closing) => return None,
                () = sleep_or_forever(expiry) => return None,
            }
        }
    }

    /// Whether the server is stopping (a stream checks before it starts).
    pub fn closing(&self) -> bool {
        *self.closing.borrow()
    }

    fn still_granted(&self, snapshot: &ServingSnapshot) -> bool {
        match &self.token {
            None => true,
            Some((hash, grant)) => snapshot
                .tokens
                .get(hash)
                .is_some_and(|now| now == grant && !grant_expired(now, now_ms())),
        }
    }

    fn scope_at(&self, snapshot: Arc<ServingSnapshot>) -> Scope {
        let environment = snapshot
            .environments
            .get(&self.environment)
            .cloned()
            .unwrap_or_else(|| Arc::new(EnvironmentView::empty(&self.environment)));
        Scope {
            snapshot,
            environment,
            projects: self.projects.clone(),
            wildcard_environment: self.wildcard_environment,
            token: self.token.clone(),
        }
    }
}

async fn sleep_or_forever(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}
