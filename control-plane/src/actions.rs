//! The action processor: runs the action sets that received signals match (`domain::action_runs`). It wakes
//! when this process stores a signal ([`Wake`]) and at least every [`POLL`] (signals another replica
//! received), takes the unprocessed signals in arrival order, runs each matched set in a write of its own as
//! the set's service account, then marks the signal processed. Signals are rows, so a restart loses none; a
//! set runs once per signal however many replicas try (the domain claims its execution in the write that
//! runs it). Stops when the server does.

use crate::domain::action_runs::{self, Execution};
use crate::domain::limits::Limits;
use crate::domain::maintenance;
use crate::store::signals::SignalRow;
use crate::store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};
use vexil_shared::ApiError;

/// The longest wait between two looks at the signals.
pub const POLL: Duration = Duration::from_secs(1);

/// Woken when this process received a signal.
pub type Wake = Arc<Notify>;

/// Processes signals until `stop` turns true (or its sender is gone).
pub async fn process_forever(
    store: Store,
    limits: Limits,
    wake: Wake,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        // In maintenance mode the signals wait, unprocessed, until it is turned off.
        let processed = if maintenance::pauses_jobs(&store).await {
            Ok(false)
        } else {
            process_pending(&store, &limits).await
        };
        let wait = match processed {
            // Signals were there: look again at once (more may have come meanwhile).
            Ok(true) => Duration::ZERO,
            Ok(false) => POLL,
            Err(error) => {
                tracing::warn!(%error, "cannot process the received signals");
                POLL
            }
        };
        tokio::select! {
            changed = stop.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = wake.notified() => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// Processes a batch of pending signals, the oldest first; returns whether there were any.
async fn process_pending(store: &Store, limits: &Limits) -> Result<bool, ApiError> {
    let pending = {
        let mut conn = store.read().await?;
        action_runs::pending(&mut conn).await?
    };
    let full = !pending.is_empty();
    for signal in &pending {
        process(store, limits, signal).await?;
    }
    Ok(full)
}

/// One signal: each matched set run (or found run), then the signal marked processed.
async fn process(store: &Store, limits: &Limits, signal: &SignalRow) -> Result<(), ApiError> {
    let sets = {
        let mut conn = store.read().await?;
        action_runs::matching_sets(&mut conn, signal).await?
    };
    for set in &sets {
        let runner = {
            let mut conn = store.read().await?;
            action_runs::runner(&mut conn, set).await?
        };
        let mut tx = store
            .begin_write(&action_runs::actor_of(runner.as_ref()))
            .await?;
        match action_runs::execute(&mut tx, signal, set, runner.as_ref(), limits).await? {
            Execution::AlreadyDone => drop(tx),
            Execution::Ran(row) => {
                if !tx.commit().await? {
                    let mut conn = store.bookkeeping().await?;
                    action_runs::record_unchanged(&mut conn, &row).await?;
                }
                tracing::info!(
                    signal = signal.id,
                    action_set = set.id,
                    state = %row.state,
                    "action set executed"
                );
            }
        }
    }
    let mut conn = store.bookkeeping().await?;
    action_runs::finish(&mut conn, signal, &sets).await
}
