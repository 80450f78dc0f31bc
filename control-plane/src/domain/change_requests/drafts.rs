//! What a request holds and who wrote it: changes added to the caller's Draft, edited, discarded; the
//! request's authors (its creator and whoever added, edited or discarded a change: none of them may approve
//! it); and the web UI's writes, which become changes where change requests are on.

use super::applying::make_change;
use super::state_machine::after_change;
use super::{
    change_data, principal_key, request_event, require, set_state, view, ChangeInput, ChangeInputs,
    ChangeRequest,
};
use crate::domain::change_request_gate::{ensure_segment_place, segment_place};
use crate::domain::environments;
use crate::domain::events::{payload, EventType};
use crate::domain::feature_lookup::require_project_environment;
use crate::domain::limits::Limits;
use crate::domain::projects;
use crate::domain::segments::{self, SegmentInput};
use crate::model::change_request::{Change, ChangeRequestState, SegmentUpdate};
use crate::store::change_requests::{self as store, AuthorRow, ChangeRequestRow, ChangeRow};
use crate::store::features as feature_store;
use crate::store::segments as segment_store;
use crate::store::{Counter, WriteTx};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use vexil_shared::ApiError;

/// A change as it is stored: a flag's names a live flag of the project; a segment's names a segment and is
/// proposed where that segment belongs (the change-request gate's `segment_place`). The payload fits its
/// action by type.
async fn validated(
    conn: &mut AnyConnection,
    (project, environment): (&str, &str),
    input: ChangeInput,
) -> Result<(Option<String>, Change), ApiError> {
    if let Some(id) = input.change.segment() {
        if segment_store::get(conn, id).await?.is_none() {
            return Err(ApiError::validation(format!(
                "payload.id: segment {id} does not exist"
            )));
        }
        ensure_segment_place(conn, id, (project, environment)).await?;
        return Ok((None, input.change));
    }
    let Some(feature) = input.feature else {
        return Err(ApiError::validation(format!(
            "feature: a {} change names the flag it changes",
            input.change.action()
        )));
    };
    match feature_store::get(conn, &feature).await? {
        Some(row) if row.project_id == project && row.archived_at.is_none() => {}
        _ => {
            return Err(ApiError::validation(format!(
                "feature: flag {feature} does not exist in project {project}"
            )))
        }
    }
    Ok((Some(feature), input.change))
}

/// Records the caller as an author of request `id` (once).
async fn note_author(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let actor = tx.actor().clone();
    let author = AuthorRow {
        principal: principal_key(&actor.name, actor.user_id),
        created_by: actor.name,
        created_by_user_id: actor.user_id,
        created_at: tx.now(),
    };
    store::add_author(tx.conn(), id, &author).await?;
    Ok(())
}

/// What [`make_or_propose`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The change was made.
    Made,
    /// Change requests are on there: the change joined the caller's draft, this request.
    Proposed(i64),
}

/// The web UI's writes to a flag in an environment: where change requests are on, the change joins the
/// caller's draft ([`add_changes`]); elsewhere it is made ([`make_change`]). Either way the flag's own rules
/// and validation apply.
pub async fn make_or_propose(
    tx: &mut WriteTx,
    (project, environment, feature): (&str, &str, &str),
    change: Change,
    limits: &Limits,
) -> Result<Outcome, ApiError> {
    let protected = store::setting(tx.conn(), project, environment)
        .await?
        .is_some_and(|setting| setting.enabled);
    if !protected {
        make_change(tx, (project, environment, feature), change, limits).await?;
        return Ok(Outcome::Made);
    }
    let input = ChangeInput {
        feature: Some(feature.to_owned()),
        change,
    };
    let request = add_changes(tx, project, environment, ChangeInputs::One(input)).await?;
    Ok(Outcome::Proposed(request.id))
}

/// The web UI's writes to a flag's dependencies, which hold in every environment: while change requests are
/// on in any environment of the project, the change joins the caller's draft for the first of them (by
/// name), the one the direct write's refusal names; elsewhere it is made.
pub async fn make_or_propose_dependency(
    tx: &mut WriteTx,
    (project, feature): (&str, &str),
    change: Change,
    limits: &Limits,
) -> Result<Outcome, ApiError> {
    let protected = store::enabled_environments(tx.conn(), project).await?;
    let Some(environment) = protected.first() else {
        // The environment is not read by a dependency change.
        make_change(tx, (project, "", feature), change, limits).await?;
        return Ok(Outcome::Made);
    };
    let input = ChangeInput {
        feature: Some(feature.to_owned()),
        change,
    };
    let request = add_changes(tx, project, environment, ChangeInputs::One(input)).await?;
    Ok(Outcome::Proposed(request.id))
}

/// Moves a request to `state` after one of its changes changed, resetting approvals; `change-*` recorded by
/// the caller.
async fn reopen(
    tx: &mut WriteTx,
    row: &mut ChangeRequestRow,
    state: ChangeRequestState,
) -> Result<(), ApiError> {
    store::reset_approvals(tx.conn(), row.id).await?;
    if row.state != state {
        set_state(tx, row, state).await?;
    }
    Ok(())
}

/// Adds changes to the caller's Draft for this project and environment, creating it if there is none.
pub async fn add_changes(
    tx: &mut WriteTx,
    project: &str,
    environment: &str,
    inputs: ChangeInputs,
) -> Result<ChangeRequest, ApiError> {
    projects::require(tx.conn(), project).await?;
    environments::require(tx.conn(), environment).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    let Some(store::Setting {
        enabled: true,
        required_approvals: required,
    }) = store::setting(tx.conn(), project, environment).await?
    else {
        return Err(ApiError::validation(format!(
            "Change requests are not enabled for environment {environment} of project {project}"
        )));
    };
    let inputs = inputs.into_vec();
    if inputs.is_empty() {
        return Err(ApiError::validation(
            "the body must hold at least one change",
        ));
    }
    let mut changes = Vec::new();
    for input in inputs {
        changes.push(validated(tx.conn(), (project, environment), input).await?);
    }
    let actor = tx.actor().clone();
    let existing =
        store::open_draft(tx.conn(), project, environment, &actor.name, actor.user_id).await?;
    let row = match existing {
        Some(id) => require(tx.conn(), project, id).await?,
        None => {
            let id = tx.next_id(Counter::ChangeRequest).await?;
            let row = ChangeRequestRow {
                id,
                project_id: project.to_owned(),
                environment: environment.to_owned(),
                title: format!("Change request #{id}"),
                state: ChangeRequestState::Draft,
                min_approvals: required,
                created_by: actor.name.clone(),
                created_by_user_id: actor.user_id,
                created_at: tx.now(),
                state_timestamps: BTreeMap::from([(ChangeRequestState::Draft, tx.now())]),
            };
            store::insert(tx.conn(), &row).await?;
            let data = serde_json::json!({"changeRequestId": id, "title": row.title});
            tx.record(request_event(
                EventType::ChangeRequestCreated,
                &row,
                data,
                None,
            ))
            .await?;
            row
        }
    };
    note_author(tx, row.id).await?;
    for (feature, change) in changes {
        let change = ChangeRow {
            id: tx.next_id(Counter::ChangeRequestChange).await?,
            change_request_id: row.id,
            feature,
            change,
            created_by: actor.name.clone(),
            created_by_user_id: actor.user_id,
            created_at: tx.now(),
        };
        store::insert_change(tx.conn(), &change).await?;
        let data = change_data(&row, &change);
        tx.record(request_event(EventType::ChangeAdded, &row, data, None))
            .await?;
    }
    view(tx.conn(), row).await
}

async fn require_change(
    tx: &mut WriteTx,
    row: &ChangeRequestRow,
    change_id: i64,
) -> Result<ChangeRow, ApiError> {
    store::changes(tx.conn(), row.id)
        .await?
        .into_iter()
        .find(|change| change.id == change_id)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Change {change_id} does not exist in change request {}",
                row.id
            ))
        })
}

/// Replaces a change, which becomes the caller's (an author of the request from then on); an Approved
/// request goes back to In review, approvals reset.
pub async fn edit_change(
    tx: &mut WriteTx,
    project: &str,
    id: i64,
    change_id: i64,
    input: ChangeInput,
) -> Result<ChangeRequest, ApiError> {
    let mut row = require(tx.conn(), project, id).await?;
    let next = after_change(id, row.state)?;
    let before = require_change(tx, &row, change_id).await?;
    let place = (project, row.environment.as_str());
    let (feature, change) = validated(tx.conn(), place, input).await?;
    let actor = tx.actor().clone();
    let after = ChangeRow {
        feature,
        change,
        created_by: actor.name,
        created_by_user_id: actor.user_id,
        ..before.clone()
    };
    store::update_change(tx.conn(), &after).await?;
    note_author(tx, row.id).await?;
    let (data, pre_data) = (change_data(&row, &after), change_data(&row, &before));
    tx.record(request_event(
        EventType::ChangeEdited,
        &row,
        data,
        Some(pre_data),
    ))
    .await?;
    reopen(tx, &mut row, next).await?;
    view(tx.conn(), row).await
}

/// Removes a change (the caller an author of the request from then on); an Approved request goes back to
/// In review, approvals reset.
pub async fn discard_change(
    tx: &mut WriteTx,
    project: &str,
    id: i64,
    change_id: i64,
) -> Result<ChangeRequest, ApiError> {
    let mut row = require(tx.conn(), project, id).await?;
    let next = after_change(id, row.state)?;
    let change = require_change(tx, &row, change_id).await?;
    store::delete_change(tx.conn(), change.id).await?;
    note_author(tx, row.id).await?;
    let pre_data = change_data(&row, &change);
    let data = serde_json::json!({"changeRequestId": row.id, "changeId": change.id});
    tx.record(request_event(
        EventType::ChangeDiscarded,
        &row,
        data,
        Some(pre_data),
    ))
    .await?;
    reopen(tx, &mut row, next).await?;
    view(tx.conn(), row).await
}

/// Deletes a Draft with its changes; other states → 400.
pub async fn discard(tx: &mut WriteTx, project: &str, id: i64) -> Result<(), ApiError> {
    let row = require(tx.conn(), project, id).await?;
    let state = row.state;
    if state != ChangeRequestState::Draft {
        return Err(ApiError::validation(format!(
            "Change request {id} is {}: only a Draft can be deleted (cancel it instead)",
            state.as_str()
        )));
    }
    let before = view(tx.conn(), row.clone()).await?;
    store::delete(tx.conn(), id).await?;
    let data = serde_json::json!({"changeRequestId": id});
    tx.record(request_event(
        EventType::ChangeRequestDiscarded,
        &row,
        data,
        Some(payload(&before)),
    ))
    .await?;
    Ok(())
}

/// The web UI's edits of segment `id`: while it is used where change requests are on, the update joins the
/// caller's draft for the place it belongs to (`segment_place`) and that request is returned; elsewhere it
/// is made (`None`).
pub async fn make_or_propose_segment(
    tx: &mut WriteTx,
    id: i64,
    input: SegmentInput,
    limits: &Limits,
) -> Result<Option<ChangeRequest>, ApiError> {
    let Some((project, environment)) = segment_place(tx.conn(), id).await? else {
        segments::update(tx, id, input, limits).await?;
        return Ok(None);
    };
    let change = ChangeInput {
        feature: None,
        change: Change::UpdateSegment(SegmentUpdate { id, segment: input }),
    };
    let inputs = ChangeInputs::One(change);
    add_changes(tx, &project, &environment, inputs)
        .await
        .map(Some)
}
