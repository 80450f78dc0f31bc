//! SQL of change requests: the per-environment settings, the requests, their changes, reviews (approvals and
//! rejections) and comments.

use super::StoreError;
use sqlx::AnyConnection;

/// One environment of a project with its change-request setting (defaults when it has no row).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SettingRow {
    pub environment: String,
    #[sqlx(rename = "type")]
    pub environment_type: String,
    pub enabled: i64,
    pub required_approvals: i64,
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

/// `(enabled, required approvals)` of an environment of a project, if set.
pub async fn setting(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
) -> Result<Option<(i64, i64)>, StoreError> {
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

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChangeRequestRow {
    pub id: i64,
    pub project_id: String,
    pub environment: String,
    pub title: String,
    pub state: String,
    pub min_approvals: i64,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: String,
    pub state_timestamps: String,
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
    .bind(&row.state)
    .bind(row.min_approvals)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(&row.created_at)
    .bind(&row.state_timestamps)
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

/// The id of this author's Draft for a project and environment, if any (the newest).
pub async fn open_draft(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
    created_by: &str,
    created_by_user_id: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM change_requests WHERE project_id = $1 AND environment = $2 AND state = 'Draft' \
         AND created_by = $3 AND created_by_user_id = $4 ORDER BY id DESC LIMIT 1",
    )
    .bind(project)
    .bind(environment)
    .bind(created_by)
    .bind(created_by_user_id)
    .fetch_optional(conn)
    .await?)
}

pub async fn set_state(
    conn: &mut AnyConnection,
    id: i64,
    state: &str,
    state_timestamps: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE change_requests SET state = $2, state_timestamps = $3 WHERE id = $1")
        .bind(id)
        .bind(state)
        .bind(state_timestamps)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes a request with its changes, reviews and comments.
pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    for table in [
        "change_request_changes",
        "change_request_reviews",
        "change_request_comments",
    ] {
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
    for table in [
        "change_request_changes",
        "change_request_reviews",
        "change_request_comments",
    ] {
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

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChangeRow {
    pub id: i64,
    pub change_request_id: i64,
    pub feature: String,
    pub action: String,
    pub payload: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: String,
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
    sqlx::query(&format!(
        "INSERT INTO change_request_changes ({CHANGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    ))
    .bind(row.id)
    .bind(row.change_request_id)
    .bind(&row.feature)
    .bind(&row.action)
    .bind(&row.payload)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(&row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update_change(conn: &mut AnyConnection, row: &ChangeRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE change_request_changes SET feature = $2, action = $3, payload = $4 WHERE id = $1",
    )
    .bind(row.id)
    .bind(&row.feature)
    .bind(&row.action)
    .bind(&row.payload)
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

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ReviewRow {
    pub kind: String,
    pub principal: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: String,
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
    .bind(&row.kind)
    .bind(&row.principal)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(&row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes every approval of a request.
pub async fn reset_approvals(conn: &mut AnyConnection, request: i64) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM change_request_reviews WHERE change_request_id = $1 AND kind = 'approval'",
    )
    .bind(request)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CommentRow {
    pub id: i64,
    pub text: String,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub created_at: String,
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

pub async fn insert_comment(
    conn: &mut AnyConnection,
    request: i64,
    row: &CommentRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO change_request_comments (id, change_request_id, text, created_by, created_by_user_id, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(row.id)
    .bind(request)
    .bind(&row.text)
    .bind(&row.created_by)
    .bind(row.created_by_user_id)
    .bind(&row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The next comment id (comments are written outside a [`WriteTx`](super::WriteTx)).
pub async fn next_comment_id(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE vexil_counters SET value = value + 1 WHERE name = 'change_request_comment' RETURNING value",
    )
    .fetch_one(conn)
    .await?)
}
