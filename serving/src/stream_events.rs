//! What the open change streams share (held by `ServingState`, used by `change_stream`): [`SharedEvents`],
//! the events of the current revision, made once per scope; [`KeepAliveClock`], the one clock of their
//! keep-alive comments.

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use axum::body::Bytes;
use rustc_hash::FxHashMap;
use tokio::sync::watch;

/// Keep-alive comments on every open stream, so that proxies and the SDKs' read timeouts (60 s in
/// `unleash-client`) see traffic.
pub const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// The events of the current revision, serialized once for all the streams that need the same one: the
/// streams of one scope wake together at a revision and would each serialize an identical event. Keyed by
/// the revision the stream had and its exact scope (environment, projects, filter; no hash, so two scopes
/// never share an entry); emptied when the revision moves on. Only streams lock it, each for one lookup (the
/// first of a key serializes while holding it, so the others wait for that one result rather than redo it).
#[derive(Debug, Default)]
pub struct SharedEvents {
    current: Mutex<(u64, EventsByScope)>,
}

/// Events in wire form by (revision the stream had, exact scope); `None`: nothing to send.
type EventsByScope = FxHashMap<(u64, String), Option<Bytes>>;

impl SharedEvents {
    /// The event for a stream at `since` with scope `key` at `revision`: `make`'s, made once; `None` when
    /// there is nothing to send.
    pub fn get_or_make(
        &self,
        revision: u64,
        since: u64,
        key: &str,
        make: impl FnOnce() -> Option<Bytes>,
    ) -> Option<Bytes> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.0 != revision {
            *current = (revision, FxHashMap::default());
        }
        current
            .1
            .entry((since, key.to_owned()))
            .or_insert_with(make)
            .clone()
    }
}

/// The one clock of a server's keep-alive comments: every open stream waits on the same tick (a watch
/// channel) rather than on a timer of its own. Started by the first stream, on its runtime; it stops when the
/// server's state is dropped.
#[derive(Debug, Default)]
pub struct KeepAliveClock {
    ticks: OnceLock<Arc<watch::Sender<u64>>>,
}

impl KeepAliveClock {
    /// A receiver of the ticks, every [`KEEP_ALIVE`] from now on.
    pub fn ticks(&self) -> watch::Receiver<u64> {
        self.ticks
            .get_or_init(|| {
                let ticks = Arc::new(watch::Sender::new(0));
                tokio::spawn(run_clock(Arc::downgrade(&ticks)));
                ticks
            })
            .subscribe()
    }
}

async fn run_clock(ticks: Weak<watch::Sender<u64>>) {
    let mut interval = tokio::time::interval(KEEP_ALIVE);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval.tick().await;
    loop {
        interval.tick().await;
        let Some(ticks) = ticks.upgrade() else {
            return;
        };
        ticks.send_modify(|tick| *tick = tick.wrapping_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn every_stream_hears_the_one_clock_tick() {
        let clock = KeepAliveClock::default();
        let (mut first, mut second) = (clock.ticks(), clock.ticks());
        let started = tokio::time::Instant::now();
        first.changed().await.unwrap();
        assert_eq!(started.elapsed(), KEEP_ALIVE);
        second.changed().await.unwrap();
        assert_eq!(started.elapsed(), KEEP_ALIVE, "the same tick");
        first.changed().await.unwrap();
        assert_eq!(started.elapsed(), 2 * KEEP_ALIVE);
        drop(clock);
        assert!(
            first.changed().await.is_err(),
            "the clock stops with its server"
        );
    }
}
