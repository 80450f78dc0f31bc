//! Change requests: per project and environment, changes to flags (and to the segments their strategies use
//! there) are proposed, reviewed and applied together instead of written directly (API.md §3.6).
//!
//! The state machine is plain data ([`state_machine`]); the changes are one serde-tagged enum
//! ([`Change`](crate::model::change_request::Change)). Here: the configuration and the reads; [`drafts`]:
//! what changes a request's content and who its authors are; [`reviews`]: its state (reviews, applying)
//! and comments; [`schedules`]: an Approved request scheduled for a time and applied then by the control
//! plane (`crate::scheduler`). Applying runs every change through the same domain functions as the direct routes
//! (`features::set_enabled`, `strategies::add`, `segments::update`, …) inside the caller's one [`WriteTx`],
//! put in the mode that lets the change-request gate pass, so validation and events are identical and a
//! failing change rolls the whole request back.

mod applying;
mod bodies;
mod drafts;
mod preview;
mod reviews;
mod schedules;
pub mod state_machine;

pub use applying::make_change;
pub use bodies::{
    ChangeInput, ChangeInputs, ChangeRequest, ChangeRequestConfigInput, ChangeView, Comment,
    CommentInput, EnvironmentChangeRequestConfig, FeatureChanges, Principal, Review, Schedule,
    ScheduledChangeRequest, ScheduledQuery, SegmentChangeView, StateInput,
};
pub use drafts::{
    add_changes, discard, discard_change, edit_change, make_or_propose, make_or_propose_dependency,
    make_or_propose_segment, Outcome,
};
pub use preview::{preview, ChangePreview};
pub use reviews::{change_state, comment, possible_states};
pub use schedules::{
    apply_scheduled, due, next_due, schedule_of, scheduled, settle_refused, Attempt, Due, Refusal,
    ScheduleRecord,
};

use super::environments;
use super::events::{payload, EventType};
use super::feature_lookup::require_project_environment;
use super::projects;
use crate::model::change_request::{ChangeRequestState, ReviewKind};
use crate::store::change_request_schedules as schedule_store;
use crate::store::change_requests::{self as store, ChangeRequestRow, ChangeRow};
use crate::store::segments as segment_store;
use crate::store::{Actor, NewEvent, WriteTx};
use serde_json::Value;
use sqlx::AnyConnection;
use state_machine::{clamp_approvals, APPROVALS_RANGE};
use vexil_shared::ApiError;

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

/// A segment change's `name`: the segment's current name, else the proposed one, else its id.
async fn segment_name(conn: &mut AnyConnection, change: &ChangeRow) -> Result<String, ApiError> {
    let id = change.change.segment().unwrap_or_default();
    if let Some(segment) = segment_store::get(conn, id).await? {
        return Ok(segment.name);
    }
    Ok(match &change.change {
        crate::model::change_request::Change::UpdateSegment(update) => update.segment.name.clone(),
        _ => format!("segment {id}"),
    })
}

async fn view(conn: &mut AnyConnection, row: ChangeRequestRow) -> Result<ChangeRequest, ApiError> {
    let mut features: Vec<FeatureChanges> = Vec::new();
    let mut segments = Vec::new();
    for change in store::changes(conn, row.id).await? {
        let created_by = principal(&change.created_by, change.created_by_user_id);
        let Some(feature) = change.feature.clone() else {
            segments.push(SegmentChangeView {
                id: change.id,
                name: segment_name(conn, &change).await?,
                change: change.change,
                created_by,
                created_at: change.created_at.to_string(),
            });
            continue;
        };
        let view = ChangeView {
            id: change.id,
            change: change.change,
            created_by,
            created_at: change.created_at.to_string(),
        };
        match features.iter_mut().find(|f| f.name == feature) {
            Some(changes) => changes.changes.push(view),
            None => features.push(FeatureChanges {
                name: feature,
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
    let authors = store::authors(conn, row.id)
        .await?
        .into_iter()
        .map(|author| principal(&author.created_by, author.created_by_user_id))
        .collect();
    let schedule = schedules::shown(conn, &row).await?;
    Ok(ChangeRequest {
        id: row.id,
        title: row.title,
        project: row.project_id,
        environment: row.environment,
        state: row.state,
        min_approvals: row.min_approvals,
        created_by: principal(&row.created_by, row.created_by_user_id),
        created_at: row.created_at.to_string(),
        authors,
        state_timestamps: row
            .state_timestamps
            .iter()
            .map(|(state, at)| (state.as_str().to_owned(), at.to_string()))
            .collect(),
        features,
        segments,
        approvals,
        rejections,
        comments,
        schedule,
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

/// A change's event data: its payload, the request, the change, and its flag (or segment).
fn change_data(row: &ChangeRequestRow, change: &ChangeRow) -> Value {
    let mut data = payload(&change.change);
    if let Value::Object(fields) = &mut data {
        fields.insert("changeRequestId".to_owned(), row.id.into());
        fields.insert("changeId".to_owned(), change.id.into());
        match (&change.feature, change.change.segment()) {
            (Some(feature), _) => fields.insert("feature".to_owned(), feature.clone().into()),
            (None, segment) => fields.insert("segment".to_owned(), segment.into()),
        };
    }
    data
}

/// Moves a request to `state`; leaving Scheduled other than by its schedule being applied forgets the
/// schedule.
async fn set_state(
    tx: &mut WriteTx,
    row: &mut ChangeRequestRow,
    state: ChangeRequestState,
) -> Result<(), ApiError> {
    row.state_timestamps.insert(state, tx.now());
    row.state = state;
    store::set_state(tx.conn(), row).await?;
    if state != ChangeRequestState::Scheduled {
        schedule_store::unschedule(tx.conn(), row.id).await?;
    }
    Ok(())
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

/// One page of a project's open requests (Draft, In review, Approved, Scheduled) or closed ones (Applied, Cancelled,
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
