//! The scheduler: applies scheduled change requests when they fall due (`domain::change_requests`'s
//! schedules) and starts release plans' next milestones when their progression falls due
//! (`domain::release_plans::progressions`). It wakes at the next due time, and at least every [`POLL`] (which also picks up schedules
//! other replicas wrote), and stops when the server does. The schedules are rows of the store, so a restart
//! loses none: one due while no control plane ran is applied at the next start. Each request is applied in
//! a write of its own, as the one who scheduled it; the domain makes that happen once however many replicas
//! try at the same time. A plan's progression likewise runs in a write of its own, as the system. While
//! maintenance mode is on, nothing is applied (`domain::maintenance::pauses_jobs`); what fell due meanwhile is
//! applied when it is turned off.

use crate::domain::change_requests::{self, Attempt, Due};
use crate::domain::limits::Limits;
use crate::domain::maintenance;
use crate::domain::release_plans::progressions::{self, Progress};
use crate::store::{Actor, Store};
use crate::time::Timestamp;
use std::time::Duration;
use tokio::sync::watch;
use vexil_shared::ApiError;

/// The longest wait between two looks at the schedules.
pub const POLL: Duration = Duration::from_secs(2);

/// Applies due schedules until `stop` turns true (or its sender is gone).
pub async fn apply_forever(store: Store, limits: Limits, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        let checked = Timestamp::now();
        let wait = if maintenance::pauses_jobs(&store).await {
            // In maintenance mode nothing is applied: look again later.
            POLL
        } else {
            if let Err(error) = apply_due(&store, &limits, checked).await {
                tracing::warn!(%error, "cannot apply the scheduled change requests");
            }
            if let Err(error) = progress_due(&store, &limits, checked).await {
                tracing::warn!(%error, "cannot progress the release plans");
            }
            wait_after(&store, checked).await
        };
        tokio::select! {
            changed = stop.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// How long to wait after the look at `checked`: until the next due schedule or progression, at most [`POLL`].
async fn wait_after(store: &Store, checked: Timestamp) -> Duration {
    match next_due(store).await {
        // Due by `checked`: tried just now (failed on the store, or a full batch: the next look comes soon
        // enough).
        Ok(Some(due)) if due <= checked => POLL,
        Ok(Some(due)) => {
            let ms = due.millis().saturating_sub(Timestamp::now().millis());
            Duration::from_millis(u64::try_from(ms).unwrap_or(0)).min(POLL)
        }
        Ok(None) => POLL,
        Err(error) => {
            tracing::warn!(%error, "cannot read the change request schedules");
            POLL
        }
    }
}

/// The earliest due schedule or progression.
async fn next_due(store: &Store) -> Result<Option<Timestamp>, ApiError> {
    let mut conn = store.read().await?;
    let schedule = change_requests::next_due(&mut conn).await?;
    let progression = progressions::next_due(&mut conn).await?;
    Ok(schedule.into_iter().chain(progression).min())
}

/// Applies the schedules due at `now` (a batch), one write each, the earliest first.
async fn apply_due(store: &Store, limits: &Limits, now: Timestamp) -> Result<(), ApiError> {
    let due = {
        let mut conn = store.read().await?;
        change_requests::due(&mut conn, now).await?
    };
    for entry in due {
        apply_one(store, limits, &entry).await?;
    }
    Ok(())
}

/// One request: applied (committed) as its scheduler, or its refusal recorded as the system in a write of
/// its own; nothing when another replica got there first.
async fn apply_one(store: &Store, limits: &Limits, entry: &Due) -> Result<(), ApiError> {
    let mut tx = store.begin_write(&entry.actor).await?;
    match change_requests::apply_scheduled(&mut tx, entry.id, limits).await? {
        Attempt::Applied => {
            tx.commit().await?;
            tracing::info!(
                change_request = entry.id,
                "scheduled change request applied"
            );
        }
        Attempt::Gone => drop(tx),
        Attempt::Refused(refusal) => {
            drop(tx);
            let mut tx = store.begin_write(&Actor::system()).await?;
            if change_requests::settle_refused(&mut tx, entry.id, &refusal).await? {
                tx.commit().await?;
                tracing::warn!(
                    change_request = entry.id,
                    status = refusal.status.as_str(),
                    reason = %refusal.reason,
                    "a scheduled change request was not applied"
                );
            }
        }
    }
    Ok(())
}

/// Starts the next milestone of each plan whose progression is due at `now`, one write each.
async fn progress_due(store: &Store, limits: &Limits, now: Timestamp) -> Result<(), ApiError> {
    let due = {
        let mut conn = store.read().await?;
        progressions::due(&mut conn, now).await?
    };
    for plan in due {
        let mut tx = store.begin_write(&Actor::system()).await?;
        match progressions::progress(&mut tx, &plan, limits).await? {
            Progress::Started => {
                tx.commit().await?;
                tracing::info!(
                    release_plan = plan,
                    "release plan progressed to its next milestone"
                );
            }
            Progress::Gone => drop(tx),
            Progress::Refused(reason) => {
                drop(tx);
                let mut tx = store.begin_write(&Actor::system()).await?;
                if progressions::settle_refused(&mut tx, &plan, &reason).await? {
                    tx.commit().await?;
                    tracing::warn!(release_plan = plan, %reason, "a release plan's progression was paused");
                }
            }
        }
    }
    Ok(())
}
