//! Applying: every change of a request through its flag's (or segment's) own domain function, in the
//! caller's one write put in the mode that lets the change-request gate pass; by hand (`reviews`) or on its
//! schedule (`schedules`).

use super::{request_event, set_state};
use crate::domain::change_request_gate::ensure_segment_place;
use crate::domain::events::EventType;
use crate::domain::limits::Limits;
use crate::domain::{dependencies, features, segments, strategies, variants};
use crate::model::change_request::{Change, ChangeRequestState};
use crate::model::dependency::RemoveDependency;
use crate::store::change_requests::{ChangeRequestRow, ChangeRow};
use crate::store::WriteTx;
use vexil_shared::{ApiError, ErrorKind};

/// Runs one stored change through its flag's (or segment's) own domain function. A segment's change is
/// applied only from the place the segment belongs to now: where it is used may have changed since it was
/// proposed.
async fn apply_change(
    tx: &mut WriteTx,
    request: &ChangeRequestRow,
    change: &ChangeRow,
    limits: &Limits,
) -> Result<(), ApiError> {
    let (project, environment) = (request.project_id.as_str(), request.environment.as_str());
    if let Some(id) = change.change.segment() {
        ensure_segment_place(tx.conn(), id, (project, environment)).await?;
    }
    let feature = change.feature.as_deref().unwrap_or_default();
    make_change(
        tx,
        (project, environment, feature),
        change.change.clone(),
        limits,
    )
    .await
}

/// Makes one change to a flag of `(project, environment, feature)` through the flag's own domain function,
/// or to a segment through the segment's (the place is then not read); each asks the change-request gate,
/// so in a direct [`WriteTx`] it is refused where change requests are on.
pub async fn make_change(
    tx: &mut WriteTx,
    (project, environment, feature): (&str, &str, &str),
    change: Change,
    limits: &Limits,
) -> Result<(), ApiError> {
    match change {
        Change::UpdateEnabled { enabled } => {
            features::set_enabled(tx, project, feature, environment, enabled, false).await
        }
        Change::AddStrategy(input) => {
            strategies::add(tx, project, feature, environment, input, limits)
                .await
                .map(drop)
        }
        Change::UpdateStrategy(body) => strategies::update(
            tx,
            project,
            feature,
            environment,
            body.id,
            body.strategy,
            limits,
        )
        .await
        .map(drop),
        Change::DeleteStrategy { id } => {
            strategies::delete(tx, project, feature, environment, id).await
        }
        Change::ReorderStrategy(entries) => {
            strategies::set_sort_order(tx, project, feature, environment, entries).await
        }
        Change::PatchVariant { variants } => {
            variants::set(tx, project, feature, environment, variants)
                .await
                .map(drop)
        }
        Change::ArchiveFeature(_) => features::archive(tx, project, feature).await,
        Change::AddDependency(input) => dependencies::add(tx, project, feature, input)
            .await
            .map(drop),
        Change::DeleteDependency(RemoveDependency {
            feature: Some(parent),
        }) => dependencies::remove(tx, project, feature, &parent).await,
        Change::DeleteDependency(RemoveDependency { feature: None }) => {
            dependencies::remove_all(tx, project, feature).await
        }
        Change::UpdateSegment(update) => {
            segments::update(tx, update.id, update.segment, limits).await
        }
        Change::DeleteSegment { id } => segments::delete(tx, id).await,
    }
}

/// Applies every change of an Approved or Scheduled request in `tx`, then moves it to Applied with
/// `change-request-applied` (`data`); the first change that fails answers 400 naming it, and the caller
/// drops the write.
pub(super) async fn apply_all(
    tx: &mut WriteTx,
    row: &mut ChangeRequestRow,
    changes: &[ChangeRow],
    limits: &Limits,
    data: serde_json::Value,
) -> Result<(), ApiError> {
    // The one place a write becomes the application of an approved change request: the change-request
    // gate lets its changes through.
    tx.apply_change_request(row.id);
    for change in changes {
        apply_change(tx, row, change, limits)
            .await
            .map_err(|error| apply_failure(change, error))?;
    }
    tx.end_change_request();
    set_state(tx, row, ChangeRequestState::Applied).await?;
    tx.record(request_event(
        EventType::ChangeRequestApplied,
        row,
        data,
        None,
    ))
    .await?;
    Ok(())
}

/// A change that cannot be applied: 400 naming it (a store failure stays a 500).
fn apply_failure(change: &ChangeRow, error: ApiError) -> ApiError {
    if error.kind == ErrorKind::Internal {
        return error;
    }
    let subject = match (&change.feature, change.change.segment()) {
        (Some(feature), _) => format!("flag {feature}"),
        (None, segment) => format!("segment {}", segment.unwrap_or_default()),
    };
    ApiError::validation(format!(
        "Change {} ({} of {subject}) cannot be applied, so nothing was: {}",
        change.id,
        change.change.action(),
        error.message
    ))
}
