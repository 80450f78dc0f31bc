//! SQL of addons and their outbox of deliveries (`addon_deliveries`). The outbox rows of an audit event are
//! written in the event's own transaction ([`super::WriteTx::record`]); senders claim due rows with a lease
//! ([`claim`]), so two replicas do not send the same row at the same time, and finish them.

use super::encoding::{flag, json, json_text};
use super::events::EventRow;
use super::write::{increment, Counter};
use super::StoreError;
use crate::time::Timestamp;
use serde_json::{Map, Value};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Connection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct AddonRow {
    pub id: i64,
    pub provider: String,
    pub description: Option<String>,
    pub enabled: bool,
    /// With the secrets in clear.
    pub parameters: Map<String, Value>,
    pub events: Vec<String>,
    pub projects: Vec<String>,
    pub environments: Vec<String>,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for AddonRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(AddonRow {
            id: row.try_get("id")?,
            provider: row.try_get("provider")?,
            description: row.try_get("description")?,
            enabled: flag(row, "enabled")?,
            parameters: json(row, "parameters")?,
            events: json(row, "events")?,
            projects: json(row, "projects")?,
            environments: json(row, "environments")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const COLUMNS: &str =
    "id, provider, description, enabled, parameters, events, projects, environments, created_at";

/// By id.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<AddonRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM addons ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<AddonRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM addons WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

/// The id of a new addon.
pub async fn next_id(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    increment(conn, Counter::Addon).await
}

pub async fn insert(conn: &mut AnyConnection, row: &AddonRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO addons (id, provider, description, enabled, parameters, events, projects, environments, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(row.id)
    .bind(&row.provider)
    .bind(&row.description)
    .bind(i64::from(row.enabled))
    .bind(json_text(&row.parameters)?)
    .bind(json_text(&row.events)?)
    .bind(json_text(&row.projects)?)
    .bind(json_text(&row.environments)?)
    .bind(row.created_at)
    .execute(&mut *conn)
    .await?;
    write_filters(conn, row).await
}

/// Writes everything but the id and the creation time.
pub async fn update(conn: &mut AnyConnection, row: &AddonRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE addons SET provider = $2, description = $3, enabled = $4, parameters = $5, events = $6, \
         projects = $7, environments = $8 WHERE id = $1",
    )
    .bind(row.id)
    .bind(&row.provider)
    .bind(&row.description)
    .bind(i64::from(row.enabled))
    .bind(json_text(&row.parameters)?)
    .bind(json_text(&row.events)?)
    .bind(json_text(&row.projects)?)
    .bind(json_text(&row.environments)?)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM addon_filters WHERE addon_id = $1")
        .bind(row.id)
        .execute(&mut *conn)
        .await?;
    write_filters(conn, row).await
}

async fn write_filters(conn: &mut AnyConnection, row: &AddonRow) -> Result<(), StoreError> {
    for (kind, values) in [
        ("event", &row.events),
        ("project", &row.projects),
        ("environment", &row.environments),
    ] {
        for value in values {
            sqlx::query(
                "INSERT INTO addon_filters (addon_id, kind, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (addon_id, kind, value) DO NOTHING",
            )
            .bind(row.id)
            .bind(kind)
            .bind(value)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}

/// Deletes the addon with its filters and deliveries.
pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM addon_deliveries WHERE addon_id = $1",
        "DELETE FROM addon_filters WHERE addon_id = $1",
        "DELETE FROM addons WHERE id = $1",
    ] {
        sqlx::query(sql).bind(id).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The earliest time a pending delivery is due (its lease past, if it has one), if any is pending.
pub async fn next_due_ms(conn: &mut AnyConnection) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(CASE WHEN lease_until_ms > next_attempt_ms THEN lease_until_ms ELSE next_attempt_ms END) \
         FROM addon_deliveries WHERE state = 'pending'",
    )
    .fetch_one(conn)
    .await?)
}

/// A claimed delivery: which event for which addon, and the attempt this is (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct Claimed {
    pub event_id: i64,
    pub addon_id: i64,
    pub attempts: i64,
}

/// Claims up to `limit` due deliveries until `lease_until_ms`, counting the attempt. The outer conditions
/// are checked again on each row as it is updated, so a row another replica claimed meanwhile is skipped
/// (Postgres re-reads a row updated by a concurrent transaction before updating it).
pub async fn claim(
    conn: &mut AnyConnection,
    now_ms: i64,
    lease_until_ms: i64,
    limit: i64,
) -> Result<Vec<Claimed>, StoreError> {
    Ok(sqlx::query_as(
        "UPDATE addon_deliveries SET lease_until_ms = $1, attempts = attempts + 1 \
         WHERE state = 'pending' AND next_attempt_ms <= $2 AND lease_until_ms <= $2 \
         AND (event_id, addon_id) IN (SELECT event_id, addon_id FROM addon_deliveries \
             WHERE state = 'pending' AND next_attempt_ms <= $2 AND lease_until_ms <= $2 \
             ORDER BY event_id LIMIT $3) \
         RETURNING event_id, addon_id, attempts",
    )
    .bind(lease_until_ms)
    .bind(now_ms)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// A failed attempt that will be tried again at `next_attempt_ms`.
pub async fn retry_later(
    conn: &mut AnyConnection,
    claimed: Claimed,
    next_attempt_ms: i64,
    state_details: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE addon_deliveries SET next_attempt_ms = $3, lease_until_ms = 0, state_details = $4 \
         WHERE event_id = $1 AND addon_id = $2 AND state = 'pending'",
    )
    .bind(claimed.event_id)
    .bind(claimed.addon_id)
    .bind(next_attempt_ms)
    .bind(state_details)
    .execute(conn)
    .await?;
    Ok(())
}

/// How a delivery ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failed,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failed => "failed",
        }
    }
}

/// Finishes a delivery: its state, what happened, and its id in the delivery log.
pub async fn finish(
    conn: &mut AnyConnection,
    claimed: Claimed,
    outcome: Outcome,
    state_details: &str,
    details: &Value,
    now_ms: i64,
) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    let log_id = increment(&mut tx, Counter::AddonDelivery).await?;
    sqlx::query(
        "UPDATE addon_deliveries SET state = $3, state_details = $4, details = $5, log_id = $6, \
         finished_ms = $7, lease_until_ms = 0 WHERE event_id = $1 AND addon_id = $2 AND state = 'pending'",
    )
    .bind(claimed.event_id)
    .bind(claimed.addon_id)
    .bind(outcome.as_str())
    .bind(state_details)
    .bind(json_text(details)?)
    .bind(log_id)
    .bind(now_ms)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A finished delivery with its event.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryLogRow {
    pub log_id: i64,
    pub addon_id: i64,
    pub state: String,
    pub state_details: String,
    pub details: Value,
    pub finished_ms: i64,
    pub event: EventRow,
}

impl FromRow<'_, AnyRow> for DeliveryLogRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(DeliveryLogRow {
            log_id: row.try_get("log_id")?,
            addon_id: row.try_get("addon_id")?,
            state: row.try_get("state")?,
            state_details: row.try_get("state_details")?,
            details: json(row, "details")?,
            finished_ms: row.try_get("finished_ms")?,
            event: EventRow::from_row(row)?,
        })
    }
}

/// An addon's finished deliveries, newest first.
pub async fn log(
    conn: &mut AnyConnection,
    addon_id: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<DeliveryLogRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT d.log_id, d.addon_id, d.state, d.state_details, d.details, d.finished_ms, e.id, e.type, \
         e.created_at, e.created_by, e.created_by_user_id, e.project, e.environment, e.feature_name, e.data, \
         e.pre_data FROM addon_deliveries d JOIN events e ON e.id = d.event_id \
         WHERE d.addon_id = $1 AND d.log_id IS NOT NULL ORDER BY d.log_id DESC LIMIT $2 OFFSET $3",
    )
    .bind(addon_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(conn)
    .await?)
}

/// Forgets finished deliveries older than `before_ms`. Returns how many.
pub async fn forget_finished(conn: &mut AnyConnection, before_ms: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query(
        "DELETE FROM addon_deliveries WHERE finished_ms IS NOT NULL AND finished_ms < $1",
    )
    .bind(before_ms)
    .execute(conn)
    .await?
    .rows_affected())
}
