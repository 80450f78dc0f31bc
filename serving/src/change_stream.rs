//! One open change stream (`/api/client/streaming`, OFREP's event stream). [`ChangeWatch`] is what it waits
//! on: the next revision served, the server stopping, its token's expiry. It holds a slot of
//! `--max-streams` and ends (`None`) when its token is revoked, changed or expired, or when the server
//! stops. [`OpenStream`] is the stream itself: its first event, then an event per change in its scope and a
//! keep-alive comment at each tick of the server's one `KeepAliveClock` (`stream_events`), each in
//! server-sent events' wire form, ready to be written (by hyper, or by `stream_connection` once the stream
//! has left hyper).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::watch;
use vexil_shared::time::now_ms;
use vexil_shared::token::SecretHash;
use vexil_shared::Projects;

use crate::extract::{grant_expired, Scope};
use crate::snapshot::{EnvironmentView, ServingSnapshot, TokenGrant};
use crate::state::{ServingState, StreamSlot};

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
    seen: u64,
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

/// What a stream sends for a change: its scope at the new revision and the revision it had before →
/// the event (a server-sent event in wire form), or `None` when the change is not the stream's.
pub type EventOf = Box<dyn FnMut(&Scope, u64) -> Option<Bytes> + Send>;

/// An open change stream: what it sends, one event at a time.
pub struct OpenStream {
    first: Option<Bytes>,
    watch: ChangeWatch,
    ticks: Option<watch::Receiver<u64>>,
    event_of: EventOf,
}

/// The comment sent on every open stream at each keep-alive tick.
const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

impl OpenStream {
    /// A stream sending `first` (if any), then `event_of`'s event for each revision `watch` sees, and a
    /// keep-alive comment at each tick of `state`'s keep-alive clock.
    pub fn new(
        state: &ServingState,
        first: Option<Bytes>,
        watch: ChangeWatch,
        event_of: EventOf,
    ) -> OpenStream {
        OpenStream {
            first,
            watch,
            ticks: Some(state.keep_alive.ticks()),
            event_of,
        }
    }

    /// The next bytes to send (an event or a keep-alive comment); `None` when the stream ends. Cancel-safe:
    /// dropped before it is ready, it loses nothing.
    pub async fn next(&mut self) -> Option<Bytes> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        loop {
            tokio::select! {
                scope = self.watch.next() => {
                    let scope = scope?;
                    let since = self.watch.seen;
                    self.watch.seen = scope.snapshot.revision;
                    if let Some(event) = (self.event_of)(&scope, since) {
                        return Some(event);
                    }
                }
                ticked = tick(&mut self.ticks) => {
                    if ticked {
                        return Some(Bytes::from_static(KEEP_ALIVE_COMMENT));
                    }
                    // The clock stopped (the server's state is being dropped): no more keep-alives.
                    self.ticks = None;
                }
            }
        }
    }
}

/// Whether the clock ticked (`false`: it stopped); never ready once there is no clock.
async fn tick(ticks: &mut Option<watch::Receiver<u64>>) -> bool {
    match ticks {
        Some(ticks) => ticks.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// A server-sent event in wire form: `event` and `id` (if any), then `data` (one `data:` line per line).
pub fn sse_event(event: Option<&str>, id: Option<u64>, data: &str) -> Bytes {
    let mut text = String::with_capacity(data.len() + 48);
    if let Some(event) = event {
        text.push_str("event: ");
        text.push_str(event);
        text.push('\n');
    }
    if let Some(id) = id {
        text.push_str("id: ");
        text.push_str(&id.to_string());
        text.push('\n');
    }
    for line in data.split('\n') {
        text.push_str("data: ");
        text.push_str(line.strip_suffix('\r').unwrap_or(line));
        text.push('\n');
    }
    text.push('\n');
    Bytes::from(text)
}

async fn sleep_or_forever(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_in_wire_form() {
        assert_eq!(
            sse_event(Some("unleash-updated"), Some(7), "{\"events\":[]}"),
            "event: unleash-updated\nid: 7\ndata: {\"events\":[]}\n\n"
        );
        // Each line of the data is a `data:` line of its own (a line break inside would end the field).
        assert_eq!(
            sse_event(None, Some(1), "a\r\nb\nc"),
            "id: 1\ndata: a\ndata: b\ndata: c\n\n"
        );
        assert_eq!(
            sse_event(Some("fetch-mode"), None, "polling"),
            "event: fetch-mode\ndata: polling\n\n"
        );
    }
}
