//! [`ServingState`]: what the SDK-facing handlers read, shared by every request, and how its snapshot
//! advances ([`ServingState::advance`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use tokio::sync::watch;
use vexil_proto::v1;
use vexil_shared::{ApiError, CompileOptions, ErrorKind};

use crate::change_feed;
use crate::snapshot::{self, RevisionGap, ServingSnapshot};
use crate::stream_events::{KeepAliveClock, SharedEvents};
use crate::token_resolver::TokenResolver;
use crate::token_sightings::TokenSightings;
use crate::usage::{Usage, UsageSink};

/// What the SDK-facing handlers read: the current snapshot (none until one is loaded), whether to trust
/// `X-Forwarded-For`, where the SDKs' usage goes (none: accepted and dropped) and whether the frontend
/// API counts the evaluations it answers.
#[derive(Default)]
pub struct ServingState {
    pub current: ArcSwapOption<ServingSnapshot>,
    pub trust_proxy: bool,
    pub usage: Option<Arc<dyn UsageSink>>,
    pub count_evaluations: bool,
    /// Authentication `none` (API.md §2): a call without an `Authorization` header acts as a token for
    /// every project in `development`.
    pub anonymous: bool,
    /// The revision served, announced after each advance: what the streams wait on.
    pub revisions: watch::Sender<u64>,
    /// The open change streams and how many may be open (`--max-streams`).
    pub streams: Arc<StreamSlots>,
    /// Set when the server stops: every change stream ends, so that graceful shutdown does not wait on them.
    pub closing: watch::Sender<bool>,
    /// The current revision's stream events, serialized once per scope.
    pub stream_events: SharedEvents,
    /// The one clock of the streams' keep-alive comments.
    pub keep_alive: KeepAliveClock,
    /// The tokens that authenticated here, for the reporter that takes them (an `Arc`: the control plane's
    /// admin API notes its callers' tokens in the same set).
    pub token_sightings: Arc<TokenSightings>,
    /// Asked about a token the snapshot does not hold (`vexil-edge edge`); none: such a token is refused.
    /// Set once, after the state is shared (the resolver advances this state).
    pub token_resolver: std::sync::OnceLock<Arc<dyn TokenResolver>>,
}

/// Default of `--max-streams`: change streams one server holds open (see BENCHMARKS.md); past it a new
/// client is told to poll.
pub const DEFAULT_MAX_STREAMS: usize = 20_000;

/// `--max-streams`, a flag of both binaries (`#[command(flatten)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct StreamArgs {
    /// Most change streams (`/api/client/streaming`, `/ofrep/v1/events`) open at once; past it a streaming
    /// SDK is told to poll (`fetch-mode: polling`) and an OFREP client gets 429.
    #[arg(long, env = "VEXIL_MAX_STREAMS", default_value_t = DEFAULT_MAX_STREAMS)]
    pub max_streams: usize,
}

impl Default for StreamArgs {
    fn default() -> Self {
        StreamArgs {
            max_streams: DEFAULT_MAX_STREAMS,
        }
    }
}

/// A bounded count of open change streams.
#[derive(Debug)]
pub struct StreamSlots {
    open: AtomicUsize,
    pub max: usize,
}

impl Default for StreamSlots {
    fn default() -> Self {
        StreamSlots::new(DEFAULT_MAX_STREAMS)
    }
}

impl StreamSlots {
    pub fn new(max: usize) -> StreamSlots {
        StreamSlots {
            open: AtomicUsize::new(0),
            max,
        }
    }

    /// A slot, held until the returned guard drops; `None` when `max` are open.
    pub fn take(self: &Arc<Self>) -> Option<StreamSlot> {
        let taken = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.max).then_some(open + 1)
            });
        taken.ok().map(|_| StreamSlot(self.clone()))
    }

    /// How many streams are open.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

/// One open stream's slot; released on drop.
#[derive(Debug)]
pub struct StreamSlot(Arc<StreamSlots>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl ServingState {
    /// No snapshot yet, no usage sink, evaluations not counted.
    pub fn new(trust_proxy: bool) -> ServingState {
        ServingState {
            current: ArcSwapOption::empty(),
            trust_proxy,
            usage: None,
            count_evaluations: false,
            anonymous: false,
            revisions: watch::Sender::new(0),
            streams: Arc::default(),
            closing: watch::Sender::new(false),
            stream_events: SharedEvents::default(),
            keep_alive: KeepAliveClock::default(),
            token_sightings: Arc::default(),
            token_resolver: std::sync::OnceLock::new(),
        }
    }

    /// Tokens the snapshot does not hold are first put to `resolver` (the first one set stays).
    pub fn set_token_resolver(&self, resolver: Arc<dyn TokenResolver>) {
        let _ = self.token_resolver.set(resolver);
    }

    /// At most `max` change streams open at once (`--max-streams`).
    pub fn with_max_streams(mut self, max: usize) -> ServingState {
        self.streams = Arc::new(StreamSlots::new(max));
        self
    }

    /// Ends every change stream (open or opened later): called when the server stops.
    pub fn close_streams(&self) {
        self.closing.send_replace(true);
    }

    /// The SDKs' register and metrics posts go to `sink`.
    pub fn with_usage(mut self, sink: Arc<dyn UsageSink>) -> ServingState {
        self.usage = Some(sink);
        self
    }

    /// The frontend API counts its evaluations per flag ([`crate::evaluation_counters::EvaluationCounters`]).
    pub fn counting_evaluations(mut self, on: bool) -> ServingState {
        self.count_evaluations = on;
        self
    }

    /// The current snapshot; 503 while none is loaded.
    pub fn loaded(&self) -> Result<Arc<ServingSnapshot>, ApiError> {
        self.current.load_full().ok_or_else(|| {
            ApiError::new(
                ErrorKind::Unavailable,
                "No configuration snapshot is loaded yet",
            )
        })
    }

    /// Applies `change` to the current snapshot and swaps the result in, so requests see the new revision
    /// without locking (one writer at a time: the subscriber or the publisher). On an error nothing changes.
    pub fn advance(
        &self,
        change: SnapshotChange,
        options: &CompileOptions,
    ) -> Result<Advanced, AdvanceError> {
        let kind = match change {
            SnapshotChange::Full(_) => "full",
            SnapshotChange::Delta(_) => "delta",
        };
        let span = tracing::debug_span!("snapshot.advance", change = kind);
        let _entered = span.enter();
        let started = std::time::Instant::now();
        let next = match change {
            SnapshotChange::Full(full) => {
                let mut next = ServingSnapshot::from_full(full, options);
                if let Some(current) = self.current.load_full() {
                    if current.revision <= next.revision {
                        next.changes = current
                            .changes
                            .followed_by(snapshot::difference(&current, &next));
                    }
                }
                next
            }
            SnapshotChange::Delta(delta) => {
                let current = self.current.load_full();
                let current = current.as_deref().ok_or(AdvanceError::NoSnapshot)?;
                current.apply(delta, options).map_err(AdvanceError::Gap)?
            }
        };
        tracing::debug!(revision = next.revision, elapsed = ?started.elapsed(), "snapshot compiled");
        let current = Arc::new(next);
        let replaced = self.current.swap(Some(current.clone()));
        self.revisions.send_replace(current.revision);
        Ok(Advanced { current, replaced })
    }

    /// Serves `next` (a snapshot built elsewhere: the edge's cache file, an offline features file) in place
    /// of the current one, with the change feed continued by their difference, and announces it.
    pub fn install(&self, mut next: ServingSnapshot) {
        if let Some(current) = self.current.load_full() {
            if current.revision <= next.revision {
                next.changes = current
                    .changes
                    .followed_by(snapshot::difference(&current, &next));
            }
        } else {
            next.changes = change_feed::ChangeLog::starting_at(next.revision);
        }
        let revision = next.revision;
        self.current.store(Some(Arc::new(next)));
        self.revisions.send_replace(revision);
    }

    /// Hands an SDK post's usage to the sink; without one it is accepted and dropped.
    pub async fn deliver_usage(&self, usage: Usage) -> Result<(), ApiError> {
        match &self.usage {
            Some(sink) => sink.record(usage).await,
            None => Ok(()),
        }
    }
}

/// What a [`ServingState`] advances by: a whole snapshot, or the change from the one it serves.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotChange {
    Full(v1::Full),
    Delta(v1::Delta),
}

/// The outcome of [`ServingState::advance`].
#[derive(Debug)]
pub struct Advanced {
    /// The snapshot now served.
    pub current: Arc<ServingSnapshot>,
    /// The snapshot it replaced; `None` when none was loaded.
    pub replaced: Option<Arc<ServingSnapshot>>,
}

/// Why [`ServingState::advance`] applied nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdvanceError {
    /// A delta, while no snapshot is loaded.
    NoSnapshot,
    /// A delta that does not start at the served revision.
    Gap(RevisionGap),
}

impl std::fmt::Display for AdvanceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdvanceError::NoSnapshot => f.write_str("a delta before any snapshot"),
            AdvanceError::Gap(gap) => gap.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(revision: u64) -> v1::Full {
        v1::Full {
            revision,
            ..Default::default()
        }
    }

    fn delta(from_revision: u64, to_revision: u64) -> SnapshotChange {
        SnapshotChange::Delta(v1::Delta {
            from_revision,
            to_revision,
            ..Default::default()
        })
    }

    fn served(state: &ServingState) -> Option<u64> {
        state.current.load().as_ref().map(|s| s.revision)
    }

    #[test]
    fn advance_swaps_in_the_new_snapshot_and_returns_the_old() {
        let state = ServingState::new(false);
        let options = CompileOptions::default();
        assert_eq!(
            state.advance(delta(0, 1), &options).unwrap_err(),
            AdvanceError::NoSnapshot
        );
        assert_eq!(served(&state), None);
        let first = state
            .advance(SnapshotChange::Full(full(3)), &options)
            .unwrap();
        assert!(first.replaced.is_none());
        let gap = state.advance(delta(5, 6), &options).unwrap_err();
        assert_eq!(
            gap.to_string(),
            "a delta from revision 5 cannot apply to revision 3"
        );
        assert_eq!(served(&state), Some(3), "a refused update changes nothing");
        let second = state.advance(delta(3, 4), &options).unwrap();
        assert_eq!(second.current.revision, 4);
        assert!(second
            .replaced
            .is_some_and(|old| Arc::ptr_eq(&old, &first.current)));
        assert_eq!(served(&state), Some(4));
    }
}
