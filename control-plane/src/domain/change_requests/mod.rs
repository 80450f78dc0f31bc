//! Change requests: per project and environment, changes to flags are proposed, reviewed and applied
//! together instead of written directly (API.md §3.6).
//!
//! The state machine is plain data ([`state_machine`]); the changes are one serde-tagged enum
//! ([`Change`](crate::model::change_request::Change)); the functions here read the facts, call the state
//! machine and write the outcome. Applying runs every change through the same domain functions as the
//! direct routes (`features::set_enabled`, `strategies::add`, …) inside the caller's one [`WriteTx`], put in
//! the mode that lets the change-request gate pass, so validation and events are identical and a failing
//! change rolls the whole request back.

mod bodies;
mod preview;
pub mod state_machine;

pub use bodies::{
    ChangeInput, ChangeInputs, ChangeRequest, ChangeRequestConfigInput, ChangeView, Comment,
    CommentInput, EnvironmentChangeRequestConfig, FeatureChanges, Principal, Review, StateInput,
};
pub use preview::{preview, ChangePreview};

use super::environments;
use super::events::{payload, EventType};
use super::feature_lookup::require_project_environment;
use super::limits::Limits;
use super::{dependencies, features, projects, strategies, variants};
use crate::model::change_request::{Change, ChangeRequestState, ReviewKind};
use crate::model::dependency::RemoveDependency;
use crate::store::change_requests::{
    self as store, ChangeRequestRow, ChangeRow, NewComment, ReviewRow,
};
use crate::store::features as feature_store;
use crate::store::{Actor, Counter, NewEvent, StoreError, WriteTx};
use crate::time::Timestamp;
use serde_json::Value;
use sqlx::{AnyConnection, Connection};
use state_machine::{
    after_change, clamp_approvals, transition, Facts, Transition, APPROVALS_RANGE,
};
use std::collections::BTreeMap;
use vexil_shared::{ApiError, ErrorKind};

/// The most requests a list answers.
pub const LIST_LIMIT: i64 = 300;

/// The key that tells principals apart: a user by id, an API token by name.
fn principal_key(name: &str, user_id: i64) -> String {
    if user_id == Actor::ADMIN_TOKEN_USER_ID {
        format!("token:{name}")
    } else {
        format!("user:{user_id}")
    }
}

/// A change as it is stored: the flag is a live flag of the project (the payload fits its action by type).
async fn validated(
    conn: &mut AnyConnection,
    project: &str,
    input: ChangeInput,
) -> Result<(String, Change), ApiError> {
    match feature_store::get(conn, &input.feature).await? {
        Some(row) if row.project_id == project && row.archived_at.is_none() => {}
        _ => {
            return Err(ApiError::validation(format!(
                "feature: flag {} does not exist in project {project}",
                input.feature
            )))
        }
    }
    Ok((input.feature, input.change))
}

/// Runs one stored change through the flag's own domain function.
async fn apply_change(
    tx: &mut WriteTx,
    request: &ChangeRequestRow,
    change: &ChangeRow,
    limits: &Limits,
) -> Result<(), ApiError> {
    let place = (
        request.project_id.as_str(),
        request.environment.as_str(),
        change.feature.as_str(),
    );
    make_change(tx, place, change.change.clone(), limits).await
}

/// Makes one change to a flag of `(project, environment, feature)` through the flag's own domain function
/// (which asks the change-request gate, so in a direct [`WriteTx`] it is refused where change requests are
/// on).
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
    }
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
        feature: feature.to_owned(),
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
        feature: feature.to_owned(),
        change,
    };
    let request = add_changes(tx, project, environment, ChangeInputs::One(input)).await?;
    Ok(Outcome::Proposed(request.id))
}

fn not_found(project: &str, id: i64) -> ApiError {
    ApiError::not_found(format!(
        "Change request {id} does not exist in project {project}"
    ))
}

/// The request `id` of `project`; 404 for an unknown project or request.
async fn require(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
) -> Result<ChangeRequestRow, ApiError> {
    projects::require(conn, project).await?;
    match store::get(conn, id).await? {
        Some(row) if row.project_id == project => Ok(row),
        _ => Err(not_found(project, id)),
    }
}

fn principal(name: &str, user_id: i64) -> Principal {
    Principal {
        id: user_id,
        username: name.to_owned(),
    }
}

async fn view(conn: &mut AnyConnection, row: ChangeRequestRow) -> Result<ChangeRequest, ApiError> {
    let mut features: Vec<FeatureChanges> = Vec::new();
    for change in store::changes(conn, row.id).await? {
        let view = ChangeView {
            id: change.id,
            change: change.change,
            created_by: principal(&change.created_by, change.created_by_user_id),
            created_at: change.created_at.to_string(),
        };
        match features.iter_mut().find(|f| f.name == change.feature) {
            Some(feature) => feature.changes.push(view),
            None => features.push(FeatureChanges {
                name: change.feature,
                changes: vec![view],
            }),
        }
    }
    let (mut approvals, mut rejections) = (Vec::new(), Vec::new());
    for review in store::reviews(conn, row.id).await? {
        let entry = Review {
            created_by: principal(&review.created_by, review.created_by_user_id),
            created_at: review.created_at.to_string(),
        };
        if review.kind == ReviewKind::Approval {
            approvals.push(entry);
        } else {
            rejections.push(entry);
        }
    }
    let comments = store::comments(conn, row.id)
        .await?
        .into_iter()
        .map(|comment| Comment {
            id: comment.id,
            text: comment.text,
            created_by: principal(&comment.created_by, comment.created_by_user_id),
            created_at: comment.created_at.to_string(),
        })
        .collect();
    Ok(ChangeRequest {
        id: row.id,
        title: row.title,
        project: row.project_id,
        environment: row.environment,
        state: row.state,
        min_approvals: row.min_approvals,
        created_by: principal(&row.created_by, row.created_by_user_id),
        created_at: row.created_at.to_string(),
        state_timestamps: row
            .state_timestamps
            .iter()
            .map(|(state, at)| (state.as_str().to_owned(), at.to_string()))
            .collect(),
        features,
        segments: Vec::new(),
        approvals,
        rejections,
        comments,
    })
}

fn request_event(
    event_type: EventType,
    row: &ChangeRequestRow,
    data: Value,
    pre_data: Option<Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(row.project_id.clone()),
        environment: Some(row.environment.clone()),
        data: Some(data),
        pre_data,
        ..NewEvent::default()
    }
}

fn change_data(row: &ChangeRequestRow, change: &ChangeRow) -> Value {
    let mut data = payload(&change.change);
    if let Value::Object(fields) = &mut data {
        fields.insert("changeRequestId".to_owned(), row.id.into());
        fields.insert("changeId".to_owned(), change.id.into());
        fields.insert("feature".to_owned(), change.feature.clone().into());
    }
    data
}

/// Spec endpoint 6: `requiredApprovals` clamped, absent kept; an event on a real change.
pub async fn configure(
    tx: &mut WriteTx,
    project: &str,
    environment: &str,
    input: ChangeRequestConfigInput,
) -> Result<(), ApiError> {
    projects::require(tx.conn(), project).await?;
    environments::require(tx.conn(), environment).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    let requested = match &input.required_approvals {
        None => None,
        Some(number) => Some(match (number.as_i64(), number.as_u64()) {
            (Some(value), _) => clamp_approvals(value),
            (None, Some(_)) => APPROVALS_RANGE.1,
            (None, None) => {
                return Err(ApiError::validation(format!(
                    "requiredApprovals must be an integer, got {number}"
                )))
            }
        }),
    };
    let before = store::setting(tx.conn(), project, environment).await?;
    let (was_enabled, was_required) = before.map_or((false, APPROVALS_RANGE.0), |setting| {
        (setting.enabled, setting.required_approvals)
    });
    let required = requested.unwrap_or(was_required);
    if before.is_some() && was_enabled == input.change_requests_enabled && was_required == required
    {
        return Ok(());
    }
    store::set_setting(
        tx.conn(),
        project,
        environment,
        input.change_requests_enabled,
        required,
    )
    .await?;
    tx.record(NewEvent {
        event_type: EventType::ChangeRequestConfigurationUpdated.as_str(),
        project: Some(project.to_owned()),
        environment: Some(environment.to_owned()),
        data: Some(serde_json::json!({
            "changeRequestsEnabled": input.change_requests_enabled,
            "requiredApprovals": required,
        })),
        pre_data: Some(serde_json::json!({
            "changeRequestsEnabled": was_enabled,
            "requiredApprovals": was_required,
        })),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// `GET …/change-requests/config`: every environment of the project.
pub async fn configuration(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<EnvironmentChangeRequestConfig>, ApiError> {
    projects::require(conn, project).await?;
    Ok(store::settings(conn, project)
        .await?
        .into_iter()
        .map(|row| EnvironmentChangeRequestConfig {
            environment: row.environment,
            environment_type: row.environment_type,
            change_request_enabled: row.enabled,
            required_approvals: row.required_approvals,
        })
        .collect())
}

pub async fn get(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
) -> Result<ChangeRequest, ApiError> {
    let row = require(conn, project, id).await?;
    view(conn, row).await
}

/// A request as a list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRequestListing {
    pub id: i64,
    pub title: String,
    pub environment: String,
    pub state: ChangeRequestState,
    pub created_by: Principal,
    pub created_at: String,
}

/// One page of a project's open requests (Draft, In review, Approved) or closed ones (Applied, Cancelled,
/// Rejected), newest first, and how many there are in all.
pub async fn list_page(
    conn: &mut AnyConnection,
    project: &str,
    open: bool,
    offset: i64,
    limit: i64,
) -> Result<(Vec<ChangeRequestListing>, i64), ApiError> {
    projects::require(conn, project).await?;
    let states: Vec<ChangeRequestState> = ChangeRequestState::ALL
        .into_iter()
        .filter(|state| state.is_final() != open)
        .collect();
    let total = store::count_in_states(conn, project, &states).await?;
    let rows = store::list_in_states(conn, project, &states, offset.max(0), limit).await?;
    let requests = rows
        .into_iter()
        .map(|row| ChangeRequestListing {
            id: row.id,
            created_by: principal(&row.created_by, row.created_by_user_id),
            title: row.title,
            environment: row.environment,
            state: row.state,
            created_at: row.created_at.to_string(),
        })
        .collect();
    Ok((requests, total))
}

/// A project's requests, newest first, at most [`LIST_LIMIT`].
pub async fn list(conn: &mut AnyConnection, project: &str) -> Result<Vec<ChangeRequest>, ApiError> {
    projects::require(conn, project).await?;
    let mut requests = Vec::new();
    for row in store::list(conn, project, LIST_LIMIT).await? {
        requests.push(view(conn, row).await?);
    }
    Ok(requests)
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

async fn set_state(
    tx: &mut WriteTx,
    row: &mut ChangeRequestRow,
    state: ChangeRequestState,
) -> Result<(), ApiError> {
    row.state_timestamps.insert(state, tx.now());
    row.state = state;
    store::set_state(tx.conn(), row).await?;
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
        changes.push(validated(tx.conn(), project, input).await?);
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

/// Replaces a change; an Approved request goes back to In review, approvals reset.
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
    let (feature, change) = validated(tx.conn(), project, input).await?;
    let after = ChangeRow {
        feature,
        change,
        ..before.clone()
    };
    store::update_change(tx.conn(), &after).await?;
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

/// Removes a change; an Approved request goes back to In review, approvals reset.
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

/// What the state machine decides on for `actor` and request `row`, and the request's changes.
async fn facts_of(
    conn: &mut AnyConnection,
    row: &ChangeRequestRow,
    actor: &Actor,
) -> Result<(Facts, Vec<ChangeRow>), ApiError> {
    let caller = principal_key(&actor.name, actor.user_id);
    let changes = store::changes(conn, row.id).await?;
    let reviews = store::reviews(conn, row.id).await?;
    let approvals = reviews.iter().filter(|r| r.kind == ReviewKind::Approval);
    let facts = Facts {
        id: row.id,
        state: row.state,
        changes: changes.len(),
        approvals: approvals.clone().count(),
        min_approvals: row.min_approvals,
        caller_is_author: principal_key(&row.created_by, row.created_by_user_id) == caller,
        caller_has_approved: approvals.clone().any(|r| r.principal == caller),
    };
    Ok((facts, changes))
}

/// The states `actor` may move request `id` to now, as [`change_state`] would decide (the same
/// [`transition`] on the same facts): In review, Approved, Applied, Rejected, Cancelled, in that order.
/// Whether the caller may change configuration at all is the permission rule's question, not this one's.
pub async fn possible_states(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
    actor: &Actor,
) -> Result<Vec<ChangeRequestState>, ApiError> {
    use ChangeRequestState::*;
    let row = require(conn, project, id).await?;
    let (facts, _) = facts_of(conn, &row, actor).await?;
    Ok([InReview, Approved, Applied, Rejected, Cancelled]
        .into_iter()
        .filter(|requested| transition(&facts, *requested).is_ok())
        .collect())
}

/// Spec endpoint 19: the state machine ([`transition`]) and its effects. Applying runs every change in this
/// transaction; the first failure answers 400 and, the transaction being dropped, nothing is applied.
pub async fn change_state(
    tx: &mut WriteTx,
    project: &str,
    id: i64,
    input: StateInput,
    limits: &Limits,
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
    match transition(&facts, input.state)? {
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
        Transition::Apply => {
            // The one place a write becomes the application of an approved change request: the
            // change-request gate lets its changes through.
            tx.apply_change_request(id);
            for change in &changes {
                apply_change(tx, &row, change, limits)
                    .await
                    .map_err(|error| apply_failure(change, error))?;
            }
            tx.end_change_request();
            set_state(tx, &mut row, ChangeRequestState::Applied).await?;
            tx.record(request_event(
                EventType::ChangeRequestApplied,
                &row,
                base,
                None,
            ))
            .await?;
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

/// A change that cannot be applied: 400 naming it (a store failure stays a 500).
fn apply_failure(change: &ChangeRow, error: ApiError) -> ApiError {
    if error.kind == ErrorKind::Internal {
        return error;
    }
    ApiError::validation(format!(
        "Change {} ({} of flag {}) cannot be applied, so nothing was: {}",
        change.id,
        change.change.action(),
        change.feature,
        error.message
    ))
}
