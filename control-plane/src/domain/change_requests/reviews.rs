//! A request's state and comments: reviews (never by an author), rejection, cancellation, scheduling
//! (`schedules`), and applying (`applying`), which runs every change through the same domain function as
//! its direct route.

use super::applying::apply_all;
use super::state_machine::{transition, Facts, Transition};
use super::{
    principal_key, request_event, require, set_state, view, ChangeRequest, CommentInput, StateInput,
};
use crate::domain::access::{Scope, Who};
use crate::domain::events::EventType;
use crate::domain::limits::Limits;
use crate::domain::permissions::Permission;
use crate::model::change_request::{ChangeRequestState, ReviewKind};
use crate::store::change_requests::{
    self as store, ChangeRequestRow, ChangeRow, NewComment, ReviewRow,
};
use crate::store::{Actor, StoreError, WriteTx};
use crate::time::Timestamp;
use sqlx::{AnyConnection, Connection};
use vexil_shared::ApiError;

/// The comment of `actor`, or 400 for an empty text.
fn new_comment(text: &str, actor: &Actor, now: Timestamp) -> Result<NewComment, ApiError> {
    if text.trim().is_empty() {
        return Err(ApiError::validation("text must not be empty"));
    }
    Ok(NewComment {
        text: text.to_owned(),
        created_by: actor.name.clone(),
        created_by_user_id: actor.user_id,
        created_at: now,
    })
}

/// `POST …/comments`: not configuration, so no revision and no event (the store's bookkeeping connection).
pub async fn comment(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
    input: CommentInput,
    actor: &Actor,
) -> Result<(), ApiError> {
    require(conn, project, id).await?;
    let comment = new_comment(&input.text, actor, Timestamp::now())?;
    let mut tx = conn.begin().await.map_err(StoreError)?;
    store::insert_comment(&mut tx, id, &comment).await?;
    tx.commit().await.map_err(StoreError)?;
    Ok(())
}

/// What the state machine decides on for `actor` and request `row` (an author: its creator or anyone who
/// added, edited or discarded one of its changes), and the request's changes.
async fn facts_of(
    conn: &mut AnyConnection,
    row: &ChangeRequestRow,
    actor: &Actor,
) -> Result<(Facts, Vec<ChangeRow>), ApiError> {
    let caller = principal_key(&actor.name, actor.user_id);
    let changes = store::changes(conn, row.id).await?;
    let reviews = store::reviews(conn, row.id).await?;
    let authors = store::authors(conn, row.id).await?;
    let approvals = reviews.iter().filter(|r| r.kind == ReviewKind::Approval);
    let facts = Facts {
        id: row.id,
        state: row.state,
        changes: changes.len(),
        approvals: approvals.clone().count(),
        min_approvals: row.min_approvals,
        caller_is_author: principal_key(&row.created_by, row.created_by_user_id) == caller
            || authors.iter().any(|author| author.principal == caller),
        caller_has_approved: approvals.clone().any(|r| r.principal == caller),
    };
    Ok((facts, changes))
}

/// The states `actor` may move request `id` to now, as [`change_state`] would decide (the same
/// [`transition`] on the same facts): In review, Approved, Scheduled, Applied, Rejected, Cancelled, in that
/// order (Scheduled also needs a time).
/// Whether the caller may change configuration at all is the permission rule's question, not this one's.
pub async fn possible_states(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
    actor: &Actor,
    who: Who<'_>,
) -> Result<Vec<ChangeRequestState>, ApiError> {
    use ChangeRequestState::*;
    let row = require(conn, project, id).await?;
    let (facts, _) = facts_of(conn, &row, actor).await?;
    Ok(
        [InReview, Approved, Scheduled, Applied, Rejected, Cancelled]
            .into_iter()
            .filter(|requested| {
                transition(&facts, *requested)
                    .and_then(|step| may_take(who, &row, &step))
                    .is_ok()
            })
            .collect(),
    )
}

/// 403 unless `who` may take `step` on request `row`: approving or rejecting needs
/// `APPROVE_CHANGE_REQUEST`, applying or scheduling the application `APPLY_CHANGE_REQUEST`, in the
/// request's environment.
fn may_take(who: Who<'_>, row: &ChangeRequestRow, step: &Transition) -> Result<(), ApiError> {
    let scope = Scope::environment(&row.project_id, &row.environment);
    match step {
        Transition::AddApproval { .. } | Transition::Reject => {
            who.require(Permission::ApproveChangeRequest, scope)
        }
        Transition::Apply | Transition::Schedule => {
            who.require(Permission::ApplyChangeRequest, scope)
        }
        _ => Ok(()),
    }
}

/// Spec endpoint 19: the state machine ([`transition`]) and its effects. Applying runs every change in this
/// transaction; the first failure answers 400 and, the transaction being dropped, nothing is applied.
pub async fn change_state(
    tx: &mut WriteTx,
    project: &str,
    id: i64,
    input: StateInput,
    limits: &Limits,
    who: Who<'_>,
) -> Result<ChangeRequest, ApiError> {
    let mut row = require(tx.conn(), project, id).await?;
    let actor = tx.actor().clone();
    let caller = principal_key(&actor.name, actor.user_id);
    let (facts, changes) = facts_of(tx.conn(), &row, &actor).await?;
    let comment = input
        .comment
        .as_deref()
        .filter(|text| !text.trim().is_empty());
    let base = serde_json::json!({"changeRequestId": id, "comment": comment});
    let now = tx.now();
    let review = |kind: ReviewKind| ReviewRow {
        kind,
        principal: caller.clone(),
        created_by: actor.name.clone(),
        created_by_user_id: actor.user_id,
        created_at: now,
    };
    let step = transition(&facts, input.state)?;
    may_take(who, &row, &step)?;
    match step {
        Transition::SendToReview => {
            set_state(tx, &mut row, ChangeRequestState::InReview).await?;
            tx.record(request_event(
                EventType::ChangeRequestSentToReview,
                &row,
                base,
                None,
            ))
            .await?;
        }
        Transition::AddApproval { approved } => {
            let approval = review(ReviewKind::Approval);
            store::insert_review(tx.conn(), id, &approval).await?;
            tx.record(request_event(
                EventType::ChangeRequestApprovalAdded,
                &row,
                base.clone(),
                None,
            ))
            .await?;
            if approved {
                set_state(tx, &mut row, ChangeRequestState::Approved).await?;
                tx.record(request_event(
                    EventType::ChangeRequestApproved,
                    &row,
                    base,
                    None,
                ))
                .await?;
            }
        }
        Transition::Reject => {
            let rejection = review(ReviewKind::Rejection);
            store::insert_review(tx.conn(), id, &rejection).await?;
            set_state(tx, &mut row, ChangeRequestState::Rejected).await?;
            tx.record(request_event(
                EventType::ChangeRequestRejected,
                &row,
                base,
                None,
            ))
            .await?;
        }
        Transition::Apply => apply_all(tx, &mut row, &changes, limits, base).await?,
        Transition::Schedule => {
            super::schedules::schedule(tx, &mut row, input.scheduled_at.as_deref(), base).await?
        }
        Transition::Cancel => {
            set_state(tx, &mut row, ChangeRequestState::Cancelled).await?;
            tx.record(request_event(
                EventType::ChangeRequestCancelled,
                &row,
                base,
                None,
            ))
            .await?;
        }
    }
    if let Some(text) = comment {
        let comment = new_comment(text, &actor, now)?;
        store::insert_comment(tx.conn(), id, &comment).await?;
    }
    view(tx.conn(), row).await
}
