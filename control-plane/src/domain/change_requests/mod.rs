//! Change requests: per project and environment, changes to flags are proposed, reviewed and applied
//! together instead of written directly (API.md §3.6).
//!
//! The state machine is plain data: [`transition`] decides what a requested state means for a request
//! ([`Facts`] in, [`Transition`] out) and [`after_change`] what editing a request does to its state; the
//! async functions below only read the facts, call them and write the outcome. Applying runs every change
//! through the same domain functions as the direct routes (`features::set_enabled`, `strategies::add`, …)
//! inside the caller's one [`WriteTx`], so validation and events are identical and a failing change rolls
//! the whole request back.

use super::events::{payload, EventType};
use super::features::{self, require_project_environment};
use super::limits::Limits;
use super::projects;
use super::strategies::{self, StrategyInput, StrategySortOrder};
use super::variants::{self, FlagVariant};
use crate::store::change_requests::{
    self as store, ChangeRequestRow, ChangeRow, CommentRow, ReviewRow,
};
use crate::store::features as feature_store;
use crate::store::{Actor, NewEvent, StoreError, WriteTx};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{AnyConnection, Connection};
use std::collections::BTreeMap;
use utoipa::ToSchema;
use uuid::Uuid;
use vexil_shared::{ApiError, ErrorKind};

/// The most requests a list answers.
pub const LIST_LIMIT: i64 = 300;
/// The range `requiredApprovals` is clamped into.
pub const APPROVALS_RANGE: (i64, i64) = (1, 10);

/// The states of a change request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum ChangeRequestState {
    Draft,
    #[serde(rename = "In review")]
    InReview,
    Approved,
    Applied,
    Cancelled,
    Rejected,
}

impl ChangeRequestState {
    pub const ALL: [ChangeRequestState; 6] = [
        ChangeRequestState::Draft,
        ChangeRequestState::InReview,
        ChangeRequestState::Approved,
        ChangeRequestState::Applied,
        ChangeRequestState::Cancelled,
        ChangeRequestState::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ChangeRequestState::Draft => "Draft",
            ChangeRequestState::InReview => "In review",
            ChangeRequestState::Approved => "Approved",
            ChangeRequestState::Applied => "Applied",
            ChangeRequestState::Cancelled => "Cancelled",
            ChangeRequestState::Rejected => "Rejected",
        }
    }

    pub fn parse(text: &str) -> Option<ChangeRequestState> {
        Self::ALL.into_iter().find(|state| state.as_str() == text)
    }

    /// Applied, Cancelled and Rejected requests never change again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ChangeRequestState::Applied
                | ChangeRequestState::Cancelled
                | ChangeRequestState::Rejected
        )
    }
}

/// What [`transition`] needs to know about a request and its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub id: i64,
    pub state: ChangeRequestState,
    pub changes: usize,
    /// Approvals recorded so far (the caller's not included: they have none when they may approve).
    pub approvals: usize,
    pub min_approvals: i64,
    pub caller_is_author: bool,
    pub caller_has_approved: bool,
}

/// What a permitted `PUT …/state` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// Draft → In review.
    SendToReview,
    /// Records the caller's approval; `approved`: the request reaches Approved with it.
    AddApproval {
        approved: bool,
    },
    Reject,
    /// Approved → Applied: every change, in one transaction.
    Apply,
    Cancel,
}

fn illegal(facts: &Facts, requested: ChangeRequestState, why: &str) -> ApiError {
    ApiError::validation(format!(
        "Change request {} is {}: it cannot move to {}{why}",
        facts.id,
        facts.state.as_str(),
        requested.as_str()
    ))
}

/// The state machine of API.md §3.6: what `requested` means for a request in `facts.state`, or why not
/// (400 naming the current state; 403 when the author approves their own request).
pub fn transition(facts: &Facts, requested: ChangeRequestState) -> Result<Transition, ApiError> {
    use ChangeRequestState::*;
    if facts.state.is_final() {
        return Err(illegal(facts, requested, " (it is final)"));
    }
    match (facts.state, requested) {
        (_, Cancelled) => Ok(Transition::Cancel),
        (Draft, InReview) if facts.changes == 0 => {
            Err(illegal(facts, requested, " while it holds no change"))
        }
        (Draft, InReview) => Ok(Transition::SendToReview),
        (InReview, Approved) if facts.caller_is_author => Err(ApiError::new(
            ErrorKind::NoAccess,
            format!("Change request {}: its author cannot approve it", facts.id),
        )),
        (InReview, Approved) if facts.caller_has_approved => Err(ApiError::validation(format!(
            "Change request {}: you have already approved it",
            facts.id
        ))),
        (InReview, Approved) => {
            let approvals = i64::try_from(facts.approvals + 1).unwrap_or(i64::MAX);
            Ok(Transition::AddApproval {
                approved: facts.changes > 0 && approvals >= facts.min_approvals,
            })
        }
        (InReview | Approved, Rejected) => Ok(Transition::Reject),
        (Approved, Applied) => Ok(Transition::Apply),
        _ => Err(illegal(facts, requested, "")),
    }
}

/// The state of a request after one of its changes is added, edited or discarded: a Draft stays a Draft,
/// a request under review (Approved included) goes back to In review and loses its approvals; a final one
/// cannot change (400).
pub fn after_change(id: i64, state: ChangeRequestState) -> Result<ChangeRequestState, ApiError> {
    match state {
        ChangeRequestState::Draft => Ok(ChangeRequestState::Draft),
        ChangeRequestState::InReview | ChangeRequestState::Approved => {
            Ok(ChangeRequestState::InReview)
        }
        final_state => Err(ApiError::validation(format!(
            "Change request {id} is {}: its changes can no longer change",
            final_state.as_str()
        ))),
    }
}

/// `requiredApprovals` into 1..10.
pub fn clamp_approvals(requested: i64) -> i64 {
    requested.clamp(APPROVALS_RANGE.0, APPROVALS_RANGE.1)
}

/// Who did something, as the record shows it (API tokens: id -1337 and the token's name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Principal {
    pub id: i64,
    pub username: String,
}

/// The key that tells principals apart: a user by id, an API token by name.
fn principal_key(name: &str, user_id: i64) -> String {
    if user_id == Actor::ADMIN_TOKEN_USER_ID {
        format!("token:{name}")
    } else {
        format!("user:{user_id}")
    }
}

/// `PUT …/environments/:environment/change-requests/config` (spec endpoint 6).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestConfigInput {
    pub change_requests_enabled: bool,
    /// An integer, clamped into 1..10; absent: unchanged (default 1).
    #[schema(value_type = Option<i64>)]
    pub required_approvals: Option<serde_json::Number>,
}

/// One environment's entry of `GET …/change-requests/config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentChangeRequestConfig {
    pub environment: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub change_request_enabled: bool,
    pub required_approvals: i64,
}

/// The actions a change may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangeAction {
    /// `{enabled}`: turn the flag on or off in the environment.
    UpdateEnabled,
    /// A strategy, as `POST …/strategies` takes it.
    AddStrategy,
    /// `{id, …strategy}`: replace a strategy, as `PUT …/strategies/:id` does.
    UpdateStrategy,
    /// `{id}`.
    DeleteStrategy,
    /// `[{id, sortOrder}]`.
    ReorderStrategy,
    /// `{variants}`: the flag's variants in the environment.
    PatchVariant,
    /// No payload: archive the flag.
    ArchiveFeature,
}

impl ChangeAction {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeAction::UpdateEnabled => "updateEnabled",
            ChangeAction::AddStrategy => "addStrategy",
            ChangeAction::UpdateStrategy => "updateStrategy",
            ChangeAction::DeleteStrategy => "deleteStrategy",
            ChangeAction::ReorderStrategy => "reorderStrategy",
            ChangeAction::PatchVariant => "patchVariant",
            ChangeAction::ArchiveFeature => "archiveFeature",
        }
    }

    fn parse(text: &str) -> Option<ChangeAction> {
        [
            ChangeAction::UpdateEnabled,
            ChangeAction::AddStrategy,
            ChangeAction::UpdateStrategy,
            ChangeAction::DeleteStrategy,
            ChangeAction::ReorderStrategy,
            ChangeAction::PatchVariant,
            ChangeAction::ArchiveFeature,
        ]
        .into_iter()
        .find(|action| action.as_str() == text)
    }
}

/// A change to a flag of the request's project, in the request's environment.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ChangeInput {
    pub feature: String,
    pub action: ChangeAction,
    /// The action's payload (see [`ChangeAction`]).
    #[schema(value_type = Object)]
    pub payload: Option<Value>,
}

/// The body of `POST …/change-requests`: one change or an array of them.
#[derive(Debug, Clone)]
pub enum ChangeInputs {
    One(ChangeInput),
    Many(Vec<ChangeInput>),
}

impl ChangeInputs {
    pub fn into_vec(self) -> Vec<ChangeInput> {
        match self {
            ChangeInputs::One(change) => vec![change],
            ChangeInputs::Many(changes) => changes,
        }
    }
}

impl<'de> Deserialize<'de> for ChangeInputs {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let named = |error: serde_path_to_error::Error<serde_json::Error>| {
            serde::de::Error::custom(format!("at {}: {}", error.path(), error.inner()))
        };
        if value.is_array() {
            serde_path_to_error::deserialize(value)
                .map(ChangeInputs::Many)
                .map_err(named)
        } else {
            serde_path_to_error::deserialize(value)
                .map(ChangeInputs::One)
                .map_err(named)
        }
    }
}

/// `PUT …/change-requests/:id/state` (spec endpoint 19).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct StateInput {
    pub state: ChangeRequestState,
    /// Kept as a comment of the request.
    pub comment: Option<String>,
}

/// `POST …/change-requests/:id/comments`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CommentInput {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeView {
    pub id: i64,
    pub action: ChangeAction,
    #[schema(value_type = Object)]
    pub payload: Value,
    pub created_by: Principal,
    pub created_at: String,
}

/// The changes of one flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FeatureChanges {
    pub name: String,
    pub changes: Vec<ChangeView>,
}

/// An approval or a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    pub created_by: Principal,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: i64,
    pub text: String,
    pub created_by: Principal,
    pub created_at: String,
}

/// A change request as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequest {
    pub id: i64,
    pub title: String,
    pub project: String,
    pub environment: String,
    pub state: ChangeRequestState,
    /// `requiredApprovals` of the environment when the request was created.
    pub min_approvals: i64,
    pub created_by: Principal,
    pub created_at: String,
    /// When the request entered each state it has been in.
    pub state_timestamps: BTreeMap<String, String>,
    pub features: Vec<FeatureChanges>,
    /// Always empty: segment changes are not supported.
    #[schema(value_type = Vec<Object>)]
    pub segments: Vec<Value>,
    pub approvals: Vec<Review>,
    pub rejections: Vec<Review>,
    pub comments: Vec<Comment>,
}

/// A change's payload, typed by its action.
enum Change {
    UpdateEnabled(UpdateEnabled),
    AddStrategy(StrategyInput),
    UpdateStrategy(UpdateStrategy),
    DeleteStrategy(StrategyRef),
    ReorderStrategy(Vec<StrategySortOrder>),
    PatchVariant(PatchVariant),
    ArchiveFeature,
}

#[derive(Deserialize)]
struct UpdateEnabled {
    enabled: bool,
}

#[derive(Deserialize)]
struct UpdateStrategy {
    id: Uuid,
    #[serde(flatten)]
    strategy: StrategyInput,
}

#[derive(Deserialize)]
struct StrategyRef {
    id: Uuid,
}

#[derive(Deserialize)]
struct PatchVariant {
    variants: Vec<FlagVariant>,
}

fn typed<T: DeserializeOwned>(payload: &Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(payload.clone()).map_err(|error| {
        let path = error.path().to_string();
        if path == "." {
            ApiError::validation(format!("payload: {}", error.inner()))
        } else {
            ApiError::validation(format!("payload.{path}: {}", error.inner()))
        }
    })
}

/// Checks a payload's shape against its action (what the flag's own routes check is checked when applied).
fn parse_change(action: ChangeAction, payload: &Value) -> Result<Change, ApiError> {
    Ok(match action {
        ChangeAction::UpdateEnabled => Change::UpdateEnabled(typed(payload)?),
        ChangeAction::AddStrategy => Change::AddStrategy(typed(payload)?),
        ChangeAction::UpdateStrategy => Change::UpdateStrategy(typed(payload)?),
        ChangeAction::DeleteStrategy => Change::DeleteStrategy(typed(payload)?),
        ChangeAction::ReorderStrategy => Change::ReorderStrategy(typed(payload)?),
        ChangeAction::PatchVariant => Change::PatchVariant(typed(payload)?),
        ChangeAction::ArchiveFeature => Change::ArchiveFeature,
    })
}

/// A change as it is stored: the flag is a live flag of the project, the payload fits the action.
async fn validated(
    conn: &mut AnyConnection,
    project: &str,
    input: ChangeInput,
) -> Result<(String, ChangeAction, Value), ApiError> {
    let payload = input
        .payload
        .unwrap_or_else(|| Value::Object(Default::default()));
    parse_change(input.action, &payload)?;
    match feature_store::get(conn, &input.feature).await? {
        Some(row) if row.project_id == project && row.archived_at.is_none() => {}
        _ => {
            return Err(ApiError::validation(format!(
                "feature: flag {} does not exist in project {project}",
                input.feature
            )))
        }
    }
    Ok((input.feature, input.action, payload))
}

/// Runs one stored change through the flag's own domain function.
async fn apply_change(
    tx: &mut WriteTx,
    request: &ChangeRequestRow,
    change: &ChangeRow,
    limits: &Limits,
) -> Result<(), ApiError> {
    let action = ChangeAction::parse(&change.action)
        .ok_or_else(|| ApiError::validation(format!("unknown action {}", change.action)))?;
    let payload: Value = serde_json::from_str(&change.payload)
        .map_err(|error| ApiError::from(crate::store::corrupt_json("payload", error)))?;
    let (project, feature, environment) = (
        request.project_id.as_str(),
        change.feature.as_str(),
        request.environment.as_str(),
    );
    match parse_change(action, &payload)? {
        Change::UpdateEnabled(body) => {
            features::set_enabled(tx, project, feature, environment, body.enabled, false).await
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
        Change::DeleteStrategy(body) => {
            strategies::delete(tx, project, feature, environment, body.id).await
        }
        Change::ReorderStrategy(entries) => {
            strategies::set_sort_order(tx, project, feature, environment, entries).await
        }
        Change::PatchVariant(body) => {
            variants::set(tx, project, feature, environment, body.variants)
                .await
                .map(drop)
        }
        Change::ArchiveFeature => features::archive(tx, project, feature).await,
    }
}

fn not_found(project: &str, id: i64) -> ApiError {
    ApiError::not_found(format!(
        "Change request {id} does not exist in project {project}"
    ))
}

fn state_of(row: &ChangeRequestRow) -> Result<ChangeRequestState, StoreError> {
    ChangeRequestState::parse(&row.state).ok_or_else(|| {
        StoreError(sqlx::Error::Decode(
            format!("change_requests.state holds {:?}", row.state).into(),
        ))
    })
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
    let state = state_of(&row)?;
    let mut features: Vec<FeatureChanges> = Vec::new();
    for change in store::changes(conn, row.id).await? {
        let action = ChangeAction::parse(&change.action).ok_or_else(|| {
            StoreError(sqlx::Error::Decode(
                format!("change_request_changes.action holds {:?}", change.action).into(),
            ))
        })?;
        let view = ChangeView {
            id: change.id,
            action,
            payload: serde_json::from_str(&change.payload)
                .map_err(|error| crate::store::corrupt_json("payload", error))?,
            created_by: principal(&change.created_by, change.created_by_user_id),
            created_at: change.created_at,
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
            created_at: review.created_at,
        };
        if review.kind == "approval" {
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
            created_at: comment.created_at,
        })
        .collect();
    Ok(ChangeRequest {
        id: row.id,
        title: row.title,
        project: row.project_id,
        environment: row.environment,
        state,
        min_approvals: row.min_approvals,
        created_by: principal(&row.created_by, row.created_by_user_id),
        created_at: row.created_at,
        state_timestamps: serde_json::from_str(&row.state_timestamps)
            .map_err(|error| crate::store::corrupt_json("state_timestamps", error))?,
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
    serde_json::json!({
        "changeRequestId": row.id,
        "changeId": change.id,
        "feature": change.feature,
        "action": change.action,
        "payload": serde_json::from_str::<Value>(&change.payload).unwrap_or(Value::Null),
    })
}

/// 403 when change requests are on for this environment of the project: flags there change only through
/// change requests.
pub async fn ensure_direct_write_allowed(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
) -> Result<(), ApiError> {
    if let Some((1, _)) = store::setting(conn, project, environment).await? {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "Change requests are enabled for environment {environment} of project {project}: \
                 propose this change in a change request \
                 (POST /api/admin/projects/{project}/environments/{environment}/change-requests)"
            ),
        ));
    }
    Ok(())
}

/// 403 for archiving a flag directly when change requests are on for any environment of its project.
pub async fn ensure_direct_archive_allowed(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<(), ApiError> {
    if let Some(environment) = store::enabled_environments(conn, project).await?.first() {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            format!(
                "Change requests are enabled for environment {environment} of project {project}: \
                 archive flags with an archiveFeature change in a change request \
                 (POST /api/admin/projects/{project}/environments/{environment}/change-requests)"
            ),
        ));
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
    super::environments::require(tx.conn(), environment).await?;
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
    let (was_enabled, was_required) = before.unwrap_or((0, APPROVALS_RANGE.0));
    let required = requested.unwrap_or(was_required);
    if before.is_some()
        && was_enabled == i64::from(input.change_requests_enabled)
        && was_required == required
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
            "changeRequestsEnabled": was_enabled == 1,
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
            change_request_enabled: row.enabled == 1,
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
    if state_of(row)? != state {
        set_state(tx, row, state).await?;
    }
    Ok(())
}

async fn set_state(
    tx: &mut WriteTx,
    row: &mut ChangeRequestRow,
    state: ChangeRequestState,
) -> Result<(), ApiError> {
    let mut timestamps: BTreeMap<String, String> = serde_json::from_str(&row.state_timestamps)
        .map_err(|error| crate::store::corrupt_json("state_timestamps", error))?;
    timestamps.insert(state.as_str().to_owned(), tx.now().to_owned());
    row.state = state.as_str().to_owned();
    row.state_timestamps = payload(&timestamps).to_string();
    store::set_state(tx.conn(), row.id, &row.state, &row.state_timestamps).await?;
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
    super::environments::require(tx.conn(), environment).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    let Some((1, required)) = store::setting(tx.conn(), project, environment).await? else {
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
            let id = tx.next_id("change_request").await?;
            let mut timestamps = BTreeMap::new();
            timestamps.insert(ChangeRequestState::Draft.as_str(), tx.now().to_owned());
            let row = ChangeRequestRow {
                id,
                project_id: project.to_owned(),
                environment: environment.to_owned(),
                title: format!("Change request #{id}"),
                state: ChangeRequestState::Draft.as_str().to_owned(),
                min_approvals: required,
                created_by: actor.name.clone(),
                created_by_user_id: actor.user_id,
                created_at: tx.now().to_owned(),
                state_timestamps: payload(&timestamps).to_string(),
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
    for (feature, action, payload) in changes {
        let change = ChangeRow {
            id: tx.next_id("change_request_change").await?,
            change_request_id: row.id,
            feature,
            action: action.as_str().to_owned(),
            payload: payload.to_string(),
            created_by: actor.name.clone(),
            created_by_user_id: actor.user_id,
            created_at: tx.now().to_owned(),
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
    let next = after_change(id, state_of(&row)?)?;
    let before = require_change(tx, &row, change_id).await?;
    let (feature, action, payload) = validated(tx.conn(), project, input).await?;
    let after = ChangeRow {
        feature,
        action: action.as_str().to_owned(),
        payload: payload.to_string(),
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
    let next = after_change(id, state_of(&row)?)?;
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
    let state = state_of(&row)?;
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

async fn add_comment(
    conn: &mut AnyConnection,
    id: i64,
    request: i64,
    text: &str,
    actor: &Actor,
    now: &str,
) -> Result<(), ApiError> {
    if text.trim().is_empty() {
        return Err(ApiError::validation("text must not be empty"));
    }
    let comment = CommentRow {
        id,
        text: text.to_owned(),
        created_by: actor.name.clone(),
        created_by_user_id: actor.user_id,
        created_at: now.to_owned(),
    };
    store::insert_comment(conn, request, &comment).await?;
    Ok(())
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
    let mut tx = conn.begin().await.map_err(StoreError)?;
    let comment_id = store::next_comment_id(&mut tx).await?;
    add_comment(
        &mut tx,
        comment_id,
        id,
        &input.text,
        actor,
        &crate::store::timestamp_now(),
    )
    .await?;
    tx.commit().await.map_err(StoreError)?;
    Ok(())
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
    let changes = store::changes(tx.conn(), id).await?;
    let reviews = store::reviews(tx.conn(), id).await?;
    let approvals = reviews.iter().filter(|r| r.kind == "approval");
    let facts = Facts {
        id,
        state: state_of(&row)?,
        changes: changes.len(),
        approvals: approvals.clone().count(),
        min_approvals: row.min_approvals,
        caller_is_author: principal_key(&row.created_by, row.created_by_user_id) == caller,
        caller_has_approved: approvals.clone().any(|r| r.principal == caller),
    };
    let comment = input
        .comment
        .as_deref()
        .filter(|text| !text.trim().is_empty());
    let base = serde_json::json!({"changeRequestId": id, "comment": comment});
    let now = tx.now().to_owned();
    let review = |kind: &str| ReviewRow {
        kind: kind.to_owned(),
        principal: caller.clone(),
        created_by: actor.name.clone(),
        created_by_user_id: actor.user_id,
        created_at: now.clone(),
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
            let approval = review("approval");
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
            let rejection = review("rejection");
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
            for change in &changes {
                apply_change(tx, &row, change, limits)
                    .await
                    .map_err(|error| apply_failure(change, error))?;
            }
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
        let comment_id = tx.next_id("change_request_comment").await?;
        add_comment(tx.conn(), comment_id, id, text, &actor, &now).await?;
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
        change.id, change.action, change.feature, error.message
    ))
}

#[cfg(test)]
mod tests {
    use super::ChangeRequestState::*;
    use super::*;

    fn facts(state: ChangeRequestState) -> Facts {
        Facts {
            id: 7,
            state,
            changes: 1,
            approvals: 0,
            min_approvals: 2,
            caller_is_author: false,
            caller_has_approved: false,
        }
    }

    #[test]
    fn draft_goes_to_review_only_with_changes() {
        assert_eq!(
            transition(&facts(Draft), InReview).unwrap(),
            Transition::SendToReview
        );
        let empty = Facts {
            changes: 0,
            ..facts(Draft)
        };
        let error = transition(&empty, InReview).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Validation);
        assert!(error.message.contains("is Draft"), "{}", error.message);
        for requested in [Draft, Approved, Applied, Rejected] {
            assert!(
                transition(&facts(Draft), requested).is_err(),
                "{requested:?}"
            );
        }
        assert_eq!(
            transition(&facts(Draft), Cancelled).unwrap(),
            Transition::Cancel
        );
    }

    #[test]
    fn approvals_count_towards_the_threshold() {
        assert_eq!(
            transition(&facts(InReview), Approved).unwrap(),
            Transition::AddApproval { approved: false }
        );
        let one = Facts {
            approvals: 1,
            ..facts(InReview)
        };
        assert_eq!(
            transition(&one, Approved).unwrap(),
            Transition::AddApproval { approved: true }
        );
        let no_change = Facts { changes: 0, ..one };
        assert_eq!(
            transition(&no_change, Approved).unwrap(),
            Transition::AddApproval { approved: false }
        );
        let author = Facts {
            caller_is_author: true,
            ..facts(InReview)
        };
        assert_eq!(
            transition(&author, Approved).unwrap_err().kind,
            ErrorKind::NoAccess
        );
        let twice = Facts {
            caller_has_approved: true,
            ..facts(InReview)
        };
        assert_eq!(
            transition(&twice, Approved).unwrap_err().kind,
            ErrorKind::Validation
        );
        assert!(transition(&facts(InReview), Applied).is_err());
        assert!(transition(&facts(InReview), Draft).is_err());
        assert!(transition(&facts(InReview), InReview).is_err());
        assert_eq!(
            transition(&facts(InReview), Rejected).unwrap(),
            Transition::Reject
        );
    }

    #[test]
    fn approved_applies_rejects_or_cancels() {
        assert_eq!(
            transition(&facts(Approved), Applied).unwrap(),
            Transition::Apply
        );
        assert_eq!(
            transition(&facts(Approved), Rejected).unwrap(),
            Transition::Reject
        );
        assert_eq!(
            transition(&facts(Approved), Cancelled).unwrap(),
            Transition::Cancel
        );
        for requested in [Draft, InReview, Approved] {
            let error = transition(&facts(Approved), requested).unwrap_err();
            assert!(error.message.contains("is Approved"), "{}", error.message);
        }
    }

    #[test]
    fn final_states_never_move() {
        for state in [Applied, Cancelled, Rejected] {
            for requested in ChangeRequestState::ALL {
                let error = transition(&facts(state), requested).unwrap_err();
                assert_eq!(error.kind, ErrorKind::Validation);
                assert!(error.message.contains(state.as_str()), "{}", error.message);
            }
            assert!(after_change(7, state).is_err());
        }
    }

    #[test]
    fn a_change_sends_an_approved_request_back_to_review() {
        assert_eq!(after_change(7, Draft).unwrap(), Draft);
        assert_eq!(after_change(7, InReview).unwrap(), InReview);
        assert_eq!(after_change(7, Approved).unwrap(), InReview);
    }

    #[test]
    fn required_approvals_are_clamped() {
        assert_eq!(clamp_approvals(0), 1);
        assert_eq!(clamp_approvals(-5), 1);
        assert_eq!(clamp_approvals(3), 3);
        assert_eq!(clamp_approvals(11), 10);
    }

    #[test]
    fn states_have_their_wire_names() {
        for state in ChangeRequestState::ALL {
            assert_eq!(ChangeRequestState::parse(state.as_str()), Some(state));
            assert_eq!(payload(&state), Value::String(state.as_str().to_owned()));
        }
    }
}
