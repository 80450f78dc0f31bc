//! SQL of API tokens. Only SHA-256 hashes of secrets are stored.

use super::encoding::{json, json_text};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use vexil_shared::token::TokenKind;

#[derive(Debug, Clone, PartialEq)]
pub struct TokenRow {
    /// Lowercase hex SHA-256 of the secret.
    pub secret_hash: String,
    pub name: String,
    pub kind: TokenKind,
    /// Project ids, `["*"]` for all.
    pub projects: Vec<String>,
    pub environment: String,
    pub expires_at: Option<Timestamp>,
    pub created_at: Timestamp,
    /// The latest use noted ([`note_seen`]); `None`: never.
    pub seen_at: Option<Timestamp>,
}

impl FromRow<'_, AnyRow> for TokenRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(TokenRow {
            secret_hash: row.try_get("secret_hash")?,
            name: row.try_get("name")?,
            kind: {
                let kind: String = row.try_get("kind")?;
                TokenKind::parse(&kind).ok_or_else(|| sqlx::Error::ColumnDecode {
                    index: "kind".to_owned(),
                    source: format!("unknown token kind {kind:?}").into(),
                })?
            },
            projects: json(row, "projects")?,
            environment: row.try_get("environment")?,
            expires_at: row.try_get("expires_at")?,
            created_at: row.try_get("created_at")?,
            seen_at: row.try_get("seen_at")?,
        })
    }
}

pub async fn get_by_hash(
    conn: &mut AnyConnection,
    secret_hash: &str,
) -> Result<Option<TokenRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM api_tokens WHERE secret_hash = $1");
    Ok(sqlx::query_as(&sql)
        .bind(secret_hash)
        .fetch_optional(conn)
        .await?)
}

pub async fn insert(conn: &mut AnyConnection, row: &TokenRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO api_tokens (secret_hash, name, kind, projects, environment, expires_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&row.secret_hash)
    .bind(&row.name)
    .bind(row.kind.as_str())
    .bind(json_text(&row.projects)?)
    .bind(&row.environment)
    .bind(row.expires_at)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn count_of_kind(conn: &mut AnyConnection, kind: TokenKind) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM api_tokens WHERE kind = $1")
            .bind(kind.as_str())
            .fetch_one(conn)
            .await?,
    )
}

const COLUMNS: &str =
    "secret_hash, name, kind, projects, environment, expires_at, created_at, seen_at";

/// Every API token, oldest first.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<TokenRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, name, secret_hash");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn count(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM api_tokens")
        .fetch_one(conn)
        .await?)
}

pub async fn set_expiry(
    conn: &mut AnyConnection,
    secret_hash: &str,
    expires_at: Option<Timestamp>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE api_tokens SET expires_at = $1 WHERE secret_hash = $2")
        .bind(expires_at)
        .bind(secret_hash)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, secret_hash: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM api_tokens WHERE secret_hash = $1")
        .bind(secret_hash)
        .execute(conn)
        .await?;
    Ok(())
}

/// Notes that the API token or personal access token whose secret has the SHA-256 `secret_hash` (hex) was
/// used at `at`: its `seen_at` moves to `at` unless it is later already (a write only moves it forwards).
/// A hash of neither table changes nothing.
pub async fn note_seen(
    conn: &mut AnyConnection,
    secret_hash: &str,
    at: Timestamp,
) -> Result<(), StoreError> {
    for table in ["api_tokens", "personal_access_tokens"] {
        let sql = format!(
            "UPDATE {table} SET seen_at = $1 \
             WHERE secret_hash = $2 AND (seen_at IS NULL OR seen_at < $1)"
        );
        sqlx::query(&sql)
            .bind(at)
            .bind(secret_hash)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
