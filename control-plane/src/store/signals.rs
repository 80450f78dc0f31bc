//! SQL of signal endpoints, their tokens (kept as SHA-256 hashes) and the signals they received.

use super::encoding::{flag, json, json_text};
use super::write::{increment, Counter};
use super::StoreError;
use crate::time::Timestamp;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct EndpointRow {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub created_at: Timestamp,
    pub created_by_user_id: i64,
}

impl FromRow<'_, AnyRow> for EndpointRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(EndpointRow {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            enabled: flag(row, "enabled")?,
            created_at: row.try_get("created_at")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TokenRow {
    pub id: i64,
    pub signal_endpoint_id: i64,
    pub name: String,
    /// The SHA-256 (hex) of the secret.
    pub token_hash: String,
    pub created_at: Timestamp,
    pub created_by_user_id: i64,
}

impl FromRow<'_, AnyRow> for TokenRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(TokenRow {
            id: row.try_get("id")?,
            signal_endpoint_id: row.try_get("signal_endpoint_id")?,
            name: row.try_get("name")?,
            token_hash: row.try_get("token_hash")?,
            created_at: row.try_get("created_at")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SignalRow {
    pub id: i64,
    pub source: String,
    pub source_id: i64,
    pub token_id: Option<i64>,
    pub token_name: Option<String>,
    pub payload: Value,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for SignalRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SignalRow {
            id: row.try_get("id")?,
            source: row.try_get("source")?,
            source_id: row.try_get("source_id")?,
            token_id: row.try_get("token_id")?,
            token_name: row.try_get("token_name")?,
            payload: json(row, "payload")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const ENDPOINT_COLUMNS: &str = "id, name, enabled, created_at, created_by_user_id, description";
const TOKEN_COLUMNS: &str =
    "id, signal_endpoint_id, name, token_hash, created_at, created_by_user_id";
const SIGNAL_COLUMNS: &str = "id, source, source_id, token_id, token_name, payload, created_at";

/// Every endpoint, by id.
pub async fn endpoints(conn: &mut AnyConnection) -> Result<Vec<EndpointRow>, StoreError> {
    let sql = format!("SELECT {ENDPOINT_COLUMNS} FROM signal_endpoints ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn endpoint(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<EndpointRow>, StoreError> {
    let sql = format!("SELECT {ENDPOINT_COLUMNS} FROM signal_endpoints WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

pub async fn endpoint_named(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<EndpointRow>, StoreError> {
    let sql = format!("SELECT {ENDPOINT_COLUMNS} FROM signal_endpoints WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

pub async fn count_endpoints(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM signal_endpoints")
        .fetch_one(conn)
        .await?)
}

pub async fn insert_endpoint(
    conn: &mut AnyConnection,
    row: &EndpointRow,
) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO signal_endpoints ({ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
    ))
    .bind(row.id)
    .bind(&row.name)
    .bind(i64::from(row.enabled))
    .bind(row.created_at)
    .bind(row.created_by_user_id)
    .bind(&row.description)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update_endpoint(
    conn: &mut AnyConnection,
    row: &EndpointRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE signal_endpoints SET name = $2, enabled = $3, description = $4 WHERE id = $1",
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(i64::from(row.enabled))
    .bind(&row.description)
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes an endpoint with its tokens and signals.
pub async fn delete_endpoint(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM signals WHERE source_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM signal_endpoint_tokens WHERE signal_endpoint_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM signal_endpoints WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The tokens of an endpoint, by id.
pub async fn tokens(conn: &mut AnyConnection, endpoint: i64) -> Result<Vec<TokenRow>, StoreError> {
    let sql = format!(
        "SELECT {TOKEN_COLUMNS} FROM signal_endpoint_tokens WHERE signal_endpoint_id = $1 ORDER BY id"
    );
    Ok(sqlx::query_as(&sql).bind(endpoint).fetch_all(conn).await?)
}

pub async fn insert_token(conn: &mut AnyConnection, row: &TokenRow) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO signal_endpoint_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
    ))
    .bind(row.id)
    .bind(row.signal_endpoint_id)
    .bind(&row.name)
    .bind(&row.token_hash)
    .bind(row.created_at)
    .bind(row.created_by_user_id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn rename_token(conn: &mut AnyConnection, id: i64, name: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE signal_endpoint_tokens SET name = $2 WHERE id = $1")
        .bind(id)
        .bind(name)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn delete_token(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM signal_endpoint_tokens WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Stores a received signal (not yet processed), on a connection of its own (no configuration write):
/// its id comes from the `signal` counter, so ids follow arrival.
pub async fn insert_signal(
    conn: &mut AnyConnection,
    (source, source_id): (&str, i64),
    token: &TokenRow,
    payload: &Value,
    now: Timestamp,
) -> Result<i64, StoreError> {
    let id = increment(&mut *conn, Counter::Signal).await?;
    sqlx::query(&format!(
        "INSERT INTO signals ({SIGNAL_COLUMNS}, processed) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)"
    ))
    .bind(id)
    .bind(source)
    .bind(source_id)
    .bind(token.id)
    .bind(&token.name)
    .bind(json_text(payload)?)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(id)
}

/// The latest `limit` signals of an endpoint, the newest first.
pub async fn latest(
    conn: &mut AnyConnection,
    endpoint: i64,
    limit: i64,
) -> Result<Vec<SignalRow>, StoreError> {
    let sql = format!(
        "SELECT {SIGNAL_COLUMNS} FROM signals WHERE source_id = $1 ORDER BY id DESC LIMIT $2"
    );
    Ok(sqlx::query_as(&sql)
        .bind(endpoint)
        .bind(limit)
        .fetch_all(conn)
        .await?)
}

/// The oldest `limit` signals not processed yet, in arrival order.
pub async fn unprocessed(
    conn: &mut AnyConnection,
    limit: i64,
) -> Result<Vec<SignalRow>, StoreError> {
    let sql =
        format!("SELECT {SIGNAL_COLUMNS} FROM signals WHERE processed = 0 ORDER BY id LIMIT $1");
    Ok(sqlx::query_as(&sql).bind(limit).fetch_all(conn).await?)
}

/// Marks a signal processed (every action set it matched has its execution recorded).
pub async fn mark_processed(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE signals SET processed = 1 WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes an endpoint's processed signals older than its latest `keep`.
pub async fn prune(conn: &mut AnyConnection, endpoint: i64, keep: i64) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM signals WHERE source_id = $1 AND processed = 1 AND id < \
         (SELECT id FROM signals WHERE source_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)",
    )
    .bind(endpoint)
    .bind(keep)
    .execute(conn)
    .await?;
    Ok(())
}
