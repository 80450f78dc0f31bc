//! Action sets (`/api/admin/projects/:p/actions…`, Unleash's Enterprise schemas): what to do in a project
//! when a signal endpoint receives a signal whose payload passes the set's filters. Each set names the
//! service account its actions run as (`actorId`) and, in `sortOrder`, its actions; `crate::actions` runs
//! them (`domain::action_runs`) and `GET …/:id/events` shows the log of its executions. Limits:
//! `actionSetsPerProject`, `actionSetActions`, `actionSetFilters`, `actionSetFilterValues`. Changes are
//! `actions-created/updated/deleted` events of the project.

use super::events::{payload, EventType};
use super::limits::{ensure_within, Limits};
use crate::model::action_set::{check_action, Action, Filter, SIGNAL_ENDPOINT_SOURCE};
use crate::store::action_sets::{self as store, ActionSetRow, ExecutionRow};
use crate::store::signals as signal_store;
use crate::store::users::{self as user_store, Account};
use crate::store::{Counter, NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The longest name and description.
const MAX_NAME: usize = 100;
const MAX_DESCRIPTION: usize = 1000;

/// How many executions `GET …/:id/events` shows: the latest.
const LATEST_EXECUTIONS: i64 = 50;

/// `match`: the source of the signals and the filters over their payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Match {
    /// `signal-endpoint`.
    pub source: String,
    /// The signal endpoint's id.
    pub source_id: i64,
    /// Filters by dotted path into the signal's JSON (`commonLabels.severity`, `alerts.0.status`); all must
    /// hold.
    pub payload: BTreeMap<String, Filter>,
}

/// createActionSchema.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAction {
    pub action: String,
    #[schema(minimum = 1)]
    pub sort_order: i64,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub execution_params: Map<String, Value>,
}

/// createActionsSchema (`POST`; `PUT` replaces the set with the same body).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateActionSet {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    #[schema(max_length = 1000)]
    pub description: Option<String>,
    /// Default true.
    pub enabled: Option<bool>,
    /// The service account the actions run as.
    #[schema(minimum = 1)]
    pub actor_id: i64,
    #[serde(rename = "match")]
    pub matching: Match,
    pub actions: Vec<CreateAction>,
}

/// actionsSchema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionSet {
    #[schema(minimum = 1)]
    pub id: i64,
    pub project: String,
    pub created_at: String,
    pub created_by_user_id: i64,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub actor_id: i64,
    pub enabled: bool,
    pub actions: Vec<Action>,
    #[serde(rename = "match")]
    pub matching: Match,
}

/// actionsListSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ActionSetList {
    pub actions: Vec<ActionSet>,
}

/// actionSetEventSchema: one execution, with the signal and the set as they were, each action with its
/// `state` (`not started`, `success`, `failed`) and `details` (why it failed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionSetEvent {
    pub id: i64,
    pub action_set_id: i64,
    pub signal_id: i64,
    pub created_at: String,
    /// `success` or `failed`.
    pub state: String,
    #[schema(value_type = Object)]
    pub signal: Value,
    #[schema(value_type = Object)]
    pub action_set: Value,
}

/// actionSetEventsSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionSetEvents {
    pub action_set_events: Vec<ActionSetEvent>,
}

/// A set as the API shows it.
pub fn view(row: &ActionSetRow) -> ActionSet {
    ActionSet {
        id: row.id,
        project: row.project.clone(),
        created_at: row.created_at.to_string(),
        created_by_user_id: row.created_by_user_id,
        name: row.name.clone(),
        description: row.description.clone(),
        actor_id: row.actor_id,
        enabled: row.enabled,
        actions: row.actions.clone(),
        matching: Match {
            source: row.source.clone(),
            source_id: row.source_id,
            payload: row.payload.clone(),
        },
    }
}

fn execution_view(row: ExecutionRow) -> ActionSetEvent {
    ActionSetEvent {
        id: row.id,
        action_set_id: row.action_set_id,
        signal_id: row.signal_id,
        created_at: row.created_at.to_string(),
        state: row.state,
        signal: row.signal,
        action_set: row.action_set,
    }
}

/// The project's sets (404 for no such project).
pub async fn list(conn: &mut AnyConnection, project: &str) -> Result<ActionSetList, ApiError> {
    super::projects::require(conn, project).await?;
    Ok(ActionSetList {
        actions: store::of_project(conn, project)
            .await?
            .iter()
            .map(view)
            .collect(),
    })
}

/// Set `id` of `project`, or 404.
pub async fn require(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
) -> Result<ActionSetRow, ApiError> {
    super::projects::require(conn, project).await?;
    store::get(conn, id)
        .await?
        .filter(|row| row.project == project)
        .ok_or_else(|| ApiError::not_found(format!("Project {project} has no action set {id}")))
}

/// The checks of a set's body against the store and the limits: a row (with new action ids) to write.
async fn checked(
    tx: &mut WriteTx,
    project: &str,
    input: CreateActionSet,
    limits: &Limits,
) -> Result<ActionSetRow, ApiError> {
    let name = input.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(ApiError::invalid_field(
            "name",
            format!("name must be 1 to {MAX_NAME} characters long"),
        ));
    }
    let description = input
        .description
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    if description
        .as_ref()
        .is_some_and(|text| text.chars().count() > MAX_DESCRIPTION)
    {
        return Err(ApiError::invalid_field(
            "description",
            format!("description must be at most {MAX_DESCRIPTION} characters long"),
        ));
    }
    if user_store::get_of(tx.conn(), input.actor_id, Account::Service)
        .await?
        .is_none()
    {
        return Err(ApiError::invalid_field(
            "actorId",
            format!("actorId: {} is not a service account", input.actor_id),
        ));
    }
    let matching = input.matching;
    if matching.source != SIGNAL_ENDPOINT_SOURCE {
        return Err(ApiError::invalid_field(
            "match.source",
            format!("match.source must be {SIGNAL_ENDPOINT_SOURCE}"),
        ));
    }
    if signal_store::endpoint(tx.conn(), matching.source_id)
        .await?
        .is_none()
    {
        return Err(ApiError::invalid_field(
            "match.sourceId",
            format!(
                "match.sourceId: {} is not a signal endpoint",
                matching.source_id
            ),
        ));
    }
    ensure_within(
        "actionSetFilters",
        "this action set's filters",
        matching.payload.len(),
        limits.action_set_filters,
    )?;
    for (path, filter) in &matching.payload {
        if path.trim().is_empty() {
            return Err(ApiError::invalid_field(
                "match.payload",
                "match.payload: a filter's path must not be empty",
            ));
        }
        filter.check(path)?;
    }
    let values: usize = matching.payload.values().map(Filter::value_count).sum();
    ensure_within(
        "actionSetFilterValues",
        "this action set's filter values",
        values,
        limits.action_set_filter_values,
    )?;
    ensure_within(
        "actionSetActions",
        "this action set's actions",
        input.actions.len(),
        limits.action_set_actions,
    )?;
    let mut actions = Vec::with_capacity(input.actions.len());
    for (index, action) in input.actions.into_iter().enumerate() {
        check_action(index, &action.action, &action.execution_params)?;
        if action.sort_order < 1 {
            return Err(ApiError::invalid_field(
                format!("actions[{index}].sortOrder"),
                format!("actions[{index}].sortOrder must be at least 1"),
            ));
        }
        let target = action
            .execution_params
            .get("project")
            .and_then(Value::as_str);
        if target != Some(project) {
            return Err(ApiError::invalid_field(
                format!("actions[{index}].executionParams.project"),
                format!(
                    "actions[{index}].executionParams.project must be this set's project, {project}"
                ),
            ));
        }
        actions.push(Action {
            id: tx.next_id(Counter::Action).await?,
            created_at: tx.now(),
            created_by_user_id: tx.actor().user_id,
            action: action.action,
            sort_order: action.sort_order,
            execution_params: action.execution_params,
        });
    }
    actions.sort_by_key(|action| (action.sort_order, action.id));
    Ok(ActionSetRow {
        id: 0,
        project: project.to_owned(),
        name,
        description,
        enabled: input.enabled.unwrap_or(true),
        actor_id: input.actor_id,
        source: matching.source,
        source_id: matching.source_id,
        payload: matching.payload,
        actions,
        created_at: tx.now(),
        created_by_user_id: tx.actor().user_id,
    })
}

fn set_event(
    event_type: EventType,
    project: &str,
    data: Option<Value>,
    pre: Option<Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(project.to_owned()),
        data,
        pre_data: pre,
        ..NewEvent::default()
    }
}

/// Creates a set in `project` (404; 400 for a bad body or past a limit).
pub async fn create(
    tx: &mut WriteTx,
    project: &str,
    input: CreateActionSet,
    limits: &Limits,
) -> Result<ActionSet, ApiError> {
    super::projects::require(tx.conn(), project).await?;
    let count = store::count_of_project(tx.conn(), project).await?;
    ensure_within(
        "actionSetsPerProject",
        "this project's action sets",
        usize::try_from(count).unwrap_or(usize::MAX) + 1,
        limits.action_sets_per_project,
    )?;
    let mut row = checked(tx, project, input, limits).await?;
    row.id = tx.next_id(Counter::ActionSet).await?;
    store::put(tx.conn(), &row).await?;
    let set = view(&row);
    tx.record(set_event(
        EventType::ActionsCreated,
        project,
        Some(payload(&set)),
        None,
    ))
    .await?;
    Ok(set)
}

/// Replaces set `id` of `project` (404, 400); its actions get new ids.
pub async fn update(
    tx: &mut WriteTx,
    project: &str,
    id: i64,
    input: CreateActionSet,
    limits: &Limits,
) -> Result<ActionSet, ApiError> {
    let before = require(tx.conn(), project, id).await?;
    let mut row = checked(tx, project, input, limits).await?;
    row.id = id;
    row.created_at = before.created_at;
    row.created_by_user_id = before.created_by_user_id;
    store::put(tx.conn(), &row).await?;
    let set = view(&row);
    tx.record(set_event(
        EventType::ActionsUpdated,
        project,
        Some(payload(&set)),
        Some(payload(&view(&before))),
    ))
    .await?;
    Ok(set)
}

/// Deletes set `id` of `project` with its log (404).
pub async fn delete(tx: &mut WriteTx, project: &str, id: i64) -> Result<(), ApiError> {
    let before = require(tx.conn(), project, id).await?;
    store::delete(tx.conn(), id).await?;
    tx.record(set_event(
        EventType::ActionsDeleted,
        project,
        None,
        Some(payload(&view(&before))),
    ))
    .await?;
    Ok(())
}

/// The latest executions of set `id` of `project` (404), the newest first.
pub async fn executions(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
) -> Result<ActionSetEvents, ApiError> {
    require(conn, project, id).await?;
    Ok(ActionSetEvents {
        action_set_events: store::executions(conn, id, LATEST_EXECUTIONS)
            .await?
            .into_iter()
            .map(execution_view)
            .collect(),
    })
}

/// Switches set `id` of `project` on or off (404); no change, no event.
pub async fn set_enabled(
    tx: &mut WriteTx,
    project: &str,
    id: i64,
    enabled: bool,
) -> Result<ActionSet, ApiError> {
    let before = require(tx.conn(), project, id).await?;
    if before.enabled == enabled {
        return Ok(view(&before));
    }
    let row = ActionSetRow {
        enabled,
        ..before.clone()
    };
    store::put(tx.conn(), &row).await?;
    let set = view(&row);
    tx.record(set_event(
        EventType::ActionsUpdated,
        project,
        Some(payload(&set)),
        Some(payload(&view(&before))),
    ))
    .await?;
    Ok(set)
}
