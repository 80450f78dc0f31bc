//! SQL of scheduled change requests: one row per request that was scheduled, with its time, who scheduled it
//! and how it stands ([`ScheduleStatus`]).

use super::{Backend, StoreError};
use crate::model::change_request::{ChangeRequestState, ScheduleStatus};
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRow {
    pub change_request_id: i64,
    pub scheduled_at: Timestamp,
    pub status: ScheduleStatus,
    /// Why it failed or was suspended.
    pub reason: Option<String>,
    /// Who scheduled it: the scheduler applies it as them.
    pub scheduled_by: String,
    pub scheduled_by_user_id: i64,
    /// When the row last changed: scheduled, or its outcome.
    pub updated_at: Timestamp,
}

impl FromRow<'_, AnyRow> for ScheduleRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        let status: String = row.try_get("status")?;
        Ok(ScheduleRow {
            change_request_id: row.try_get("change_request_id")?,
            scheduled_at: row.try_get("scheduled_at")?,
            status: ScheduleStatus::parse(&status).ok_or_else(|| sqlx::Error::ColumnDecode {
                index: "status".to_owned(),
                source: format!("unknown schedule status {status:?}").into(),
            })?,
            reason: row.try_get("reason")?,
            scheduled_by: row.try_get("scheduled_by")?,
            scheduled_by_user_id: row.try_get("scheduled_by_user_id")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

const COLUMNS: &str = "change_request_id, scheduled_at, status, reason, scheduled_by, \
                       scheduled_by_user_id, updated_at";

/// The schedule of request `id`, whatever its status.
pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<ScheduleRow>, StoreError> {
    let sql =
        format!("SELECT {COLUMNS} FROM change_request_schedules WHERE change_request_id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

/// Writes the schedule of a request (scheduling again replaces it).
pub async fn put(conn: &mut AnyConnection, row: &ScheduleRow) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO change_request_schedules ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (change_request_id) DO UPDATE SET scheduled_at = $2, status = $3, reason = $4, \
         scheduled_by = $5, scheduled_by_user_id = $6, updated_at = $7"
    ))
    .bind(row.change_request_id)
    .bind(row.scheduled_at)
    .bind(row.status.as_str())
    .bind(&row.reason)
    .bind(&row.scheduled_by)
    .bind(row.scheduled_by_user_id)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Forgets the schedule of a request that left the Scheduled state (an applied one's stays).
pub async fn unschedule(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM change_request_schedules WHERE change_request_id = $1 AND status <> $2",
    )
    .bind(id)
    .bind(ScheduleStatus::Applied.as_str())
    .execute(conn)
    .await?;
    Ok(())
}

/// The earliest time a pending schedule falls due.
pub async fn next_due(conn: &mut AnyConnection) -> Result<Option<Timestamp>, StoreError> {
    let first: Option<String> = sqlx::query_scalar(
        "SELECT MIN(scheduled_at) FROM change_request_schedules WHERE status = $1",
    )
    .bind(ScheduleStatus::Pending.as_str())
    .fetch_one(conn)
    .await?;
    first
        .map(|text| Timestamp::parse(&text))
        .transpose()
        .map_err(|error| {
            StoreError(sqlx::Error::ColumnDecode {
                index: "scheduled_at".to_owned(),
                source: Box::new(error),
            })
        })
}

/// Pending schedules due at `now`, the earliest first, at most `limit`.
pub async fn due(
    conn: &mut AnyConnection,
    now: Timestamp,
    limit: i64,
) -> Result<Vec<ScheduleRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM change_request_schedules WHERE status = $1 AND scheduled_at <= $2 \
         ORDER BY scheduled_at, change_request_id LIMIT $3"
    );
    Ok(sqlx::query_as(&sql)
        .bind(ScheduleStatus::Pending.as_str())
        .bind(now)
        .bind(limit)
        .fetch_all(conn)
        .await?)
}

/// Within a configuration write: the schedule of request `id` if it is still pending and due at `now`,
/// locked for this transaction (Postgres: `FOR UPDATE SKIP LOCKED`, so a replica never waits on a row
/// another is applying; SQLite has one writer). Together with the status change in the same transaction,
/// this is what makes a schedule apply once: a replica that comes second reads it applied (or failed).
pub async fn claim(
    conn: &mut AnyConnection,
    id: i64,
    now: Timestamp,
) -> Result<Option<ScheduleRow>, StoreError> {
    let lock = match Backend::of(conn) {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM change_request_schedules WHERE change_request_id = $1 AND status = $2 \
         AND scheduled_at <= $3{lock}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id)
        .bind(ScheduleStatus::Pending.as_str())
        .bind(now)
        .fetch_optional(conn)
        .await?)
}

/// A pending schedule's outcome: `applied`, `failed` or `suspended` (with the reason). Returns whether it
/// was still pending (only then is it changed).
pub async fn settle(
    conn: &mut AnyConnection,
    id: i64,
    status: ScheduleStatus,
    reason: Option<&str>,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE change_request_schedules SET status = $2, reason = $3, updated_at = $4 \
         WHERE change_request_id = $1 AND status = $5",
    )
    .bind(id)
    .bind(status.as_str())
    .bind(reason)
    .bind(now)
    .bind(ScheduleStatus::Pending.as_str())
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The ids of a project's Scheduled requests whose schedule is pending, the earliest due first.
pub async fn pending_of_project(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT s.change_request_id FROM change_request_schedules s \
         JOIN change_requests r ON r.id = s.change_request_id \
         WHERE r.project_id = $1 AND r.state = $2 AND s.status = $3 \
         ORDER BY s.scheduled_at, s.change_request_id",
    )
    .bind(project)
    .bind(ChangeRequestState::Scheduled.as_str())
    .bind(ScheduleStatus::Pending.as_str())
    .fetch_all(conn)
    .await?)
}
