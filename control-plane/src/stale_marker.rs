//! The potentially-stale job: every `interval`, marks the live flags older than their type's lifetime
//! (`domain::lifecycle::mark_potentially_stale`, one write with a `feature-potentially-stale-on` per flag
//! marked), until the server stops. Replicas on one database each run it; the claim is one UPDATE of the
//! unmarked rows, so each flag is marked, and its event recorded, once.

use crate::domain::{lifecycle, maintenance};
use crate::store::{Actor, Store};
use std::time::Duration;
use tokio::sync::watch;
use vexil_shared::ApiError;

/// Marks potentially stale flags every `interval` until `stop` turns true (or its sender is gone).
pub async fn mark_forever(store: Store, interval: Duration, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        // In maintenance mode this run marks nothing (the first one after it is turned off does).
        let marked = if maintenance::pauses_jobs(&store).await {
            Ok(0)
        } else {
            mark(&store).await
        };
        match marked {
            Ok(0) => {}
            Ok(marked) => tracing::info!(flags = marked, "flags marked potentially stale"),
            Err(error) => tracing::warn!(%error, "cannot mark the potentially stale flags"),
        }
        tokio::select! {
            changed = stop.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(interval) => {}
        }
    }
}

async fn mark(store: &Store) -> Result<usize, ApiError> {
    let mut tx = store.begin_write(&Actor::system()).await?;
    let marked = lifecycle::mark_potentially_stale(&mut tx).await?;
    tx.commit().await?;
    Ok(marked)
}
