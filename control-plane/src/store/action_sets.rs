//! SQL of action sets and of their executions (`action_set_events`: at most one per signal and set).

use super::encoding::{flag, json, json_text};
use super::write::{increment, Counter};
use super::StoreError;
use crate::model::action_set::{Action, Filter};
use crate::time::Timestamp;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct ActionSetRow {
    pub id: i64,
    pub project: String,
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    /// The service account the actions run as.
    pub actor_id: i64,
    pub source: String,
    pub source_id: i64,
    /// The filters by dotted path.
    pub payload: BTreeMap<String, Filter>,
    /// In `sortOrder`.
    pub actions: Vec<Action>,
    pub created_at: Timestamp,
    pub created_by_user_id: i64,
}

impl FromRow<'_, AnyRow> for ActionSetRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(ActionSetRow {
            id: row.try_get("id")?,
            project: row.try_get("project")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            enabled: flag(row, "enabled")?,
            actor_id: row.try_get("actor_id")?,
            source: row.try_get("source")?,
            source_id: row.try_get("source_id")?,
            payload: json(row, "payload")?,
            actions: json(row, "actions")?,
            created_at: row.try_get("created_at")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
        })
    }
}

/// One execution of a set for a signal.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionRow {
    pub id: i64,
    pub action_set_id: i64,
    pub signal_id: i64,
    /// `success` or `failed`.
    pub state: String,
    /// Why it failed.
    pub details: Option<String>,
    /// The signal as the API shows it.
    pub signal: Value,
    /// The set as the API shows it, each action with its `state` and `details`.
    pub action_set: Value,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for ExecutionRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(ExecutionRow {
            id: row.try_get("id")?,
            action_set_id: row.try_get("action_set_id")?,
            signal_id: row.try_get("signal_id")?,
            state: row.try_get("state")?,
            details: row.try_get("details")?,
            signal: json(row, "signal")?,
            action_set: json(row, "action_set")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const COLUMNS: &str =
    "id, project, name, description, enabled, actor_id, source, source_id, payload, \
                       actions, created_at, created_by_user_id";
const EXECUTION_COLUMNS: &str =
    "id, action_set_id, signal_id, state, details, signal, action_set, created_at";

/// A project's sets, by id.
pub async fn of_project(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<ActionSetRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM action_sets WHERE project = $1 ORDER BY id");
    Ok(sqlx::query_as(&sql).bind(project).fetch_all(conn).await?)
}

/// The enabled sets listening to a source, by id.
pub async fn enabled_of_source(
    conn: &mut AnyConnection,
    source: &str,
    source_id: i64,
) -> Result<Vec<ActionSetRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM action_sets WHERE source = $1 AND source_id = $2 AND enabled = 1 ORDER BY id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(source)
        .bind(source_id)
        .fetch_all(conn)
        .await?)
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<ActionSetRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM action_sets WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

/// Inserts the set, or replaces it when its id exists.
pub async fn put(conn: &mut AnyConnection, row: &ActionSetRow) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO action_sets ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (id) DO UPDATE SET name = $3, description = $4, enabled = $5, actor_id = $6, \
         source = $7, source_id = $8, payload = $9, actions = $10"
    ))
    .bind(row.id)
    .bind(&row.project)
    .bind(&row.name)
    .bind(&row.description)
    .bind(i64::from(row.enabled))
    .bind(row.actor_id)
    .bind(&row.source)
    .bind(row.source_id)
    .bind(json_text(&row.payload)?)
    .bind(json_text(&row.actions)?)
    .bind(row.created_at)
    .bind(row.created_by_user_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes a set and its executions.
pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM action_set_events WHERE action_set_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM action_sets WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn count_of_project(conn: &mut AnyConnection, project: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM action_sets WHERE project = $1")
            .bind(project)
            .fetch_one(conn)
            .await?,
    )
}

/// Whether the execution of set `action_set_id` for signal `signal_id` is recorded.
pub async fn executed(
    conn: &mut AnyConnection,
    signal_id: i64,
    action_set_id: i64,
) -> Result<bool, StoreError> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM action_set_events WHERE signal_id = $1 AND action_set_id = $2",
    )
    .bind(signal_id)
    .bind(action_set_id)
    .fetch_optional(conn)
    .await?;
    Ok(found.is_some())
}

/// Records an execution unless one of the same signal and set is (its `id` is taken from the counter).
/// Returns whether it did.
pub async fn record_execution(
    conn: &mut AnyConnection,
    row: &ExecutionRow,
) -> Result<bool, StoreError> {
    let id = increment(&mut *conn, Counter::ActionSetEvent).await?;
    let done = sqlx::query(&format!(
        "INSERT INTO action_set_events ({EXECUTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (signal_id, action_set_id) DO NOTHING"
    ))
    .bind(id)
    .bind(row.action_set_id)
    .bind(row.signal_id)
    .bind(&row.state)
    .bind(&row.details)
    .bind(json_text(&row.signal)?)
    .bind(json_text(&row.action_set)?)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The latest `limit` executions of a set, the newest first.
pub async fn executions(
    conn: &mut AnyConnection,
    action_set_id: i64,
    limit: i64,
) -> Result<Vec<ExecutionRow>, StoreError> {
    let sql = format!(
        "SELECT {EXECUTION_COLUMNS} FROM action_set_events WHERE action_set_id = $1 ORDER BY id DESC LIMIT $2"
    );
    Ok(sqlx::query_as(&sql)
        .bind(action_set_id)
        .bind(limit)
        .fetch_all(conn)
        .await?)
}

/// Deletes a set's executions older than its latest `keep`.
pub async fn prune_executions(
    conn: &mut AnyConnection,
    action_set_id: i64,
    keep: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM action_set_events WHERE action_set_id = $1 AND id < \
         (SELECT id FROM action_set_events WHERE action_set_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)",
    )
    .bind(action_set_id)
    .bind(keep)
    .execute(conn)
    .await?;
    Ok(())
}
