//! SQL of change requests: the per-environment settings, the requests, their changes, reviews (approvals and
//! rejections) and comments.

use super::encoding::{flag, json, json_text};
use super::write::{increment, Counter};
use super::StoreError;
use crate::model::change_request::{Change, ChangeRequestState, ReviewKind};
use crate::time::Timestamp;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use std::collections::BTreeMap;

fn decode_error(column: &str, source: impl Into<sqlx::error::BoxDynError>) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: column.to_owned(),
        source: source.into(),
    }
}

/// One environment of a project with its change-request setting (defaults when it has no row).
#[derive(Debug, Clone)]
pub struct SettingRow {
    pub environment: String,
    pub environment_type: String,
    pub enabled: bool,
    pub required_approvals: i64,
}

impl FromRow<'_, AnyRow> for SettingRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SettingRow {
            environment: row.try_get("environment")?,
            environment_type: row.try_get("type")?,
            enabled: flag(row, "enabled")?,
            required_approvals: row.try_get("required_approvals")?,
        })
    }
}

/// The change-request setting of one environment of a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub enabled: bool,
    pub required_approvals: i64,
}

impl FromRow<'_, AnyRow> for Setting {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(Setting {
            enabled: flag(row, "enabled")?,
            required_approvals: row.try_get("required_approvals")?,
        })
    }
}

/// The setting of every environment of a project, in environment order.
pub async fn settings(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<SettingRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT e.name AS environment, e.type AS type, COALESCE(s.enabled, 0) AS enabled, \
         COALESCE(s.required_approvals, 1) AS required_approvals \
         FROM project_environments pe JOIN environments e ON e.name = pe.environment \
         LEFT JOIN change_request_settings s ON s.project_id = pe.project_id AND s.environment = pe.environment \
         WHERE pe.project_id = $1 ORDER BY e.sort_order, e.name",
    )
    .bind(project)
    .fetch_all(conn)
    .await?)
}

/// The setting of an environment of a project, if set.
pub async fn setting(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
) -> Result<Option<Setting>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT enabled, required_approvals FROM change_request_settings \
         WHERE project_id = $1 AND environment = $2",
    )
    .bind(project)
    .bind(environment)
    .fetch_optional(conn)
    .await?)
}

pub async fn set_setting(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
    enabled: bool,
    required_approvals: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO change_request_settings (project_id, environment, enabled, required_approvals) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, environment) \
         DO UPDATE SET enabled = $3, required_approvals = $4",
    )
    .bind(project)
    .bind(environment)
    .bind(i64::from(enabled))
    .bind(required_approvals)
    .execute(conn)
    .await?;
    Ok(())
}

/// The environments of a project (that it still uses) with change requests on.
pub async fn enabled_environments(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT s.environment FROM change_request_settings s JOIN project_environments pe \
         ON pe.project_id = s.project_id AND pe.environment = s.environment \
         WHERE s.project_id = $1 AND s.enabled = 1 ORDER BY s.environment",
    )
    .bind(project)
    .fetch_all(conn)
    .await?)
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRequestRow {
    pub id: i64,
    pub project_id: String,
    pub environment: String,
    pub title: String,
    pub state: ChangeRequestState,
    pub min_approvals: i64,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
    /// When the request entered each state it has been in.
    pub state_timestamps: BTreeMap<ChangeRequestState, Timestamp>,
}

impl FromRow<'_, AnyRow> for ChangeRequestRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        let state: String = row.try_get("state")?;
        Ok(ChangeRequestRow {
            id: row.try_get("id")?,
            project_id: row.try_get("project_id")?,
            environment: row.try_get("environment")?,
            title: row.try_get("title")?,
            state: ChangeRequestState::parse(&state)
                .ok_or_else(|| decode_error("state", format!("unknown state {state:?}")))?,
            min_approvals: row.try_get("min_approvals")?,
            created_by: row.try_get("created_by")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
            created_at: row.try_get("created_at")?,
            state_timestamps: json(row, "state_timestamps")?,
        })
    }
}

const COLUMNS: &str = "id, project_id, environment, title, state, min_approvals, created_by, \
                       created_by_user_id, created_at, state_timestamps";

pub async fn insert(conn: &mut AnyConnection, row: &ChangeRequestRow) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO change_requests ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(row.id)
    .bind(&row.project_id)
    .bind(&row.environment)
    .bind(&row.title)
    .bind(row.state.as_str())
    .bind(row.min_approvals)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(row.created_at)
    .bind(json_text(&row.state_timestamps)?)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<ChangeRequestRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM change_requests WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

/// A project's change requests, newest first, at most `limit`.
pub async fn list(
    conn: &mut AnyConnection,
    project: &str,
    limit: i64,
) -> Result<Vec<ChangeRequestRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM change_requests WHERE project_id = $1 ORDER BY id DESC LIMIT $2"
    );
    Ok(sqlx::query_as(&sql)
        .bind(project)
        .bind(limit)
        .fetch_all(conn)
        .await?)
}

/// `state IN ($from, …)` for `count` states, numbered from `$from`.
fn states_in(from: usize, count: usize) -> String {
    let numbers: Vec<String> = (from..from + count).map(|n| format!("${n}")).collect();
    format!("state IN ({})", numbers.join(", "))
}

/// One page of a project's change requests in `states`, newest first.
pub async fn list_in_states(
    conn: &mut AnyConnection,
    project: &str,
    states: &[ChangeRequestState],
    offset: i64,
    limit: i64,
) -> Result<Vec<ChangeRequestRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM change_requests WHERE project_id = $1 AND {} \
         ORDER BY id DESC LIMIT ${} OFFSET ${}",
        states_in(2, states.len()),
        states.len() + 2,
        states.len() + 3
    );
    let mut query = sqlx::query_as(&sql).bind(project);
    for state in states {
        query = query.bind(state.as_str());
    }
    Ok(query.bind(limit).bind(offset).fetch_all(conn).await?)
}

/// How many change requests of a project are in `states`.
pub async fn count_in_states(
    conn: &mut AnyConnection,
    project: &str,
    states: &[ChangeRequestState],
) -> Result<i64, StoreError> {
    let sql = format!(
        "SELECT COUNT(*) FROM change_requests WHERE project_id = $1 AND {}",
        states_in(2, states.len())
    );
    let mut query = sqlx::query_scalar(&sql).bind(project);
    for state in states {
        query = query.bind(state.as_str());
    }
    Ok(query.fetch_one(conn).await?)
}

/// The id of this author's Draft for a project and environment, if any (the newest).
pub async fn open_draft(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
    created_by: &str,
    created_by_user_id: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM change_requests WHERE project_id = $1 AND environment = $2 AND state = $3 \
         AND created_by = $4 AND created_by_user_id = $5 ORDER BY id DESC LIMIT 1",
    )
    .bind(project)
    .bind(environment)
    .bind(ChangeRequestState::Draft.as_str())
    .bind(created_by)
    .bind(created_by_user_id)
    .fetch_optional(conn)
    .await?)
}

/// Writes the request's state and state timestamps.
pub async fn set_state(conn: &mut AnyConnection, row: &ChangeRequestRow) -> Result<(), StoreError> {
    sqlx::query("UPDATE change_requests SET state = $2, state_timestamps = $3 WHERE id = $1")
        .bind(row.id)
        .bind(row.state.as_str())
        .bind(json_text(&row.state_timestamps)?)
        .execute(conn)
        .await?;
    Ok(())
}

/// The tables of a request's changes, authors, reviews, comments and schedule.
const CHILD_TABLES: [&str; 5] = [
    "change_request_schedules",
    "change_request_changes",
    "change_request_authors",
    "change_request_reviews",
    "change_request_comments",
];

/// Deletes a request with its changes, authors, reviews, comments and schedule.
pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    for table in CHILD_TABLES {
        sqlx::query(&format!("DELETE FROM {table} WHERE change_request_id = $1"))
            .bind(id)
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query("DELETE FROM change_requests WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Removes the settings and requests of a project (`column` = `project_id`) or an environment
/// (`environment`) that is deleted, so that one re-created under the same name starts clean.
async fn delete_where(
    conn: &mut AnyConnection,
    column: &str,
    value: &str,
) -> Result<(), StoreError> {
    for table in CHILD_TABLES {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE change_request_id IN \
             (SELECT id FROM change_requests WHERE {column} = $1)"
        ))
        .bind(value)
        .execute(&mut *conn)
        .await?;
    }
    for table in ["change_requests", "change_request_settings"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE {column} = $1"))
            .bind(value)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

pub async fn delete_of_project(conn: &mut AnyConnection, project: &str) -> Result<(), StoreError> {
    delete_where(conn, "project_id", project).await
}

pub async fn delete_of_environment(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<(), StoreError> {
    delete_where(conn, "environment", environment).await
}

/// A change of a request. Its `action` and `payload` columns hold the two halves of the [`Change`]; its
/// `feature` column is empty for a change that names no flag (a segment's).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRow {
    pub id: i64,
    pub change_request_id: i64,
    /// The flag changed; `None` for a segment's change.
    pub feature: Option<String>,
    pub change: Change,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for ChangeRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        let action: String = row.try_get("action")?;
        let payload: Value = json(row, "payload")?;
        let change =
            serde_json::from_value(serde_json::json!({"action": action, "payload": payload}))
                .map_err(|error| decode_error("payload", error))?;
        Ok(ChangeRow {
            id: row.try_get("id")?,
            change_request_id: row.try_get("change_request_id")?,
            feature: Some(row.try_get::<String, _>("feature")?).filter(|name| !name.is_empty()),
            change,
            created_by: row.try_get("created_by")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

/// The `action` and `payload` columns of a change.
fn action_and_payload(change: &Change) -> Result<(String, String), StoreError> {
    let mut fields = match serde_json::to_value(change) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => serde_json::Map::new(),
        Err(error) => return Err(StoreError(sqlx::Error::Encode(Box::new(error)))),
    };
    let action = match fields.remove("action") {
        Some(Value::String(action)) => action,
        _ => String::new(),
    };
    let payload = fields.remove("payload").unwrap_or(Value::Null);
    Ok((action, json_text(&payload)?))
}

const CHANGE_COLUMNS: &str =
    "id, change_request_id, feature, action, payload, created_by, created_by_user_id, created_at";

/// The changes of a request, in the order they were added.
pub async fn changes(conn: &mut AnyConnection, request: i64) -> Result<Vec<ChangeRow>, StoreError> {
    let sql = format!(
        "SELECT {CHANGE_COLUMNS} FROM change_request_changes WHERE change_request_id = $1 ORDER BY id"
    );
    Ok(sqlx::query_as(&sql).bind(request).fetch_all(conn).await?)
}

pub async fn insert_change(conn: &mut AnyConnection, row: &ChangeRow) -> Result<(), StoreError> {
    let (action, payload) = action_and_payload(&row.change)?;
    sqlx::query(&format!(
        "INSERT INTO change_request_changes ({CHANGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    ))
    .bind(row.id)
    .bind(row.change_request_id)
    .bind(row.feature.as_deref().unwrap_or_default())
    .bind(action)
    .bind(payload)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Replaces a change's flag, content and author (its creation time stays).
pub async fn update_change(conn: &mut AnyConnection, row: &ChangeRow) -> Result<(), StoreError> {
    let (action, payload) = action_and_payload(&row.change)?;
    sqlx::query(
        "UPDATE change_request_changes SET feature = $2, action = $3, payload = $4, created_by = $5, \
         created_by_user_id = $6 WHERE id = $1",
    )
    .bind(row.id)
    .bind(row.feature.as_deref().unwrap_or_default())
    .bind(action)
    .bind(payload)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete_change(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM change_request_changes WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// An author of a request: its creator, or someone who added, edited or discarded one of its changes.
/// `principal` tells them apart as it does reviewers.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct AuthorRow {
    pub principal: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
}

/// A request's authors, the first to join first.
pub async fn authors(conn: &mut AnyConnection, request: i64) -> Result<Vec<AuthorRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT principal, created_by, created_by_user_id, created_at FROM change_request_authors \
         WHERE change_request_id = $1 ORDER BY created_at, principal",
    )
    .bind(request)
    .fetch_all(conn)
    .await?)
}

/// Records an author of a request (once: an author stays one).
pub async fn add_author(
    conn: &mut AnyConnection,
    request: i64,
    row: &AuthorRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO change_request_authors (change_request_id, principal, created_by, created_by_user_id, \
         created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (change_request_id, principal) DO NOTHING",
    )
    .bind(request)
    .bind(&row.principal)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// An approval or a rejection. `principal` tells reviewers apart (a user by id, a token by name).
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRow {
    pub kind: ReviewKind,
    pub principal: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for ReviewRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        let kind: String = row.try_get("kind")?;
        Ok(ReviewRow {
            kind: ReviewKind::parse(&kind)
                .ok_or_else(|| decode_error("kind", format!("unknown review kind {kind:?}")))?,
            principal: row.try_get("principal")?,
            created_by: row.try_get("created_by")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

pub async fn reviews(conn: &mut AnyConnection, request: i64) -> Result<Vec<ReviewRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT kind, principal, created_by, created_by_user_id, created_at FROM change_request_reviews \
         WHERE change_request_id = $1 ORDER BY created_at, principal",
    )
    .bind(request)
    .fetch_all(conn)
    .await?)
}

pub async fn insert_review(
    conn: &mut AnyConnection,
    request: i64,
    row: &ReviewRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO change_request_reviews (change_request_id, kind, principal, created_by, \
         created_by_user_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(request)
    .bind(row.kind.as_str())
    .bind(&row.principal)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes every approval of a request.
pub async fn reset_approvals(conn: &mut AnyConnection, request: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM change_request_reviews WHERE change_request_id = $1 AND kind = $2")
        .bind(request)
        .bind(ReviewKind::Approval.as_str())
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CommentRow {
    pub id: i64,
    pub text: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
}

pub async fn comments(
    conn: &mut AnyConnection,
    request: i64,
) -> Result<Vec<CommentRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, text, created_by, created_by_user_id, created_at FROM change_request_comments \
         WHERE change_request_id = $1 ORDER BY id",
    )
    .bind(request)
    .fetch_all(conn)
    .await?)
}

/// A comment to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewComment {
    pub text: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: Timestamp,
}

/// Adds a comment with the next comment id (within the caller's transaction) and returns its id. Comments
/// are not configuration: they are also written outside a [`WriteTx`](super::WriteTx).
pub async fn insert_comment(
    conn: &mut AnyConnection,
    request: i64,
    comment: &NewComment,
) -> Result<i64, StoreError> {
    let id = increment(conn, Counter::ChangeRequestComment).await?;
    sqlx::query(
        "INSERT INTO change_request_comments (id, change_request_id, text, created_by, created_by_user_id, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(request)
    .bind(&comment.text)
    .bind(&comment.created_by)
    .bind(comment.created_by_user_id)
    .bind(comment.created_at)
    .execute(conn)
    .await?;
    Ok(id)
}

/// The ids of the change requests not yet applied, cancelled or rejected that hold a change of `feature`.
pub async fn pending_with_feature(
    conn: &mut AnyConnection,
    feature: &str,
) -> Result<Vec<i64>, StoreError> {
    let sql = "SELECT DISTINCT r.id FROM change_requests r \
               JOIN change_request_changes c ON c.change_request_id = r.id \
               WHERE c.feature = $1 AND r.state IN ($2, $3, $4, $5) ORDER BY r.id";
    Ok(sqlx::query_scalar(sql)
        .bind(feature)
        .bind(ChangeRequestState::Draft.as_str())
        .bind(ChangeRequestState::InReview.as_str())
        .bind(ChangeRequestState::Approved.as_str())
        .bind(ChangeRequestState::Scheduled.as_str())
        .fetch_all(conn)
        .await?)
}
