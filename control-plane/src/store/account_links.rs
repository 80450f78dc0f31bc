//! SQL of the links that let someone in without a password: invite links (`invite_links`, Unleash's public
//! sign-up tokens) and password reset links (`password_reset_tokens`). Each is found by its random selector;
//! only the SHA-256 of its verifier is stored. Marking one used is a conditional update, so of two uses racing
//! only one succeeds.

use super::encoding::flag;
use super::write::{increment, Counter};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct InviteLinkRow {
    pub id: i64,
    pub selector: String,
    pub verifier_hash: String,
    pub name: String,
    pub root_role: i64,
    pub enabled: bool,
    pub expires_at: Timestamp,
    pub created_at: Timestamp,
    pub created_by: Option<String>,
    pub used_by: Option<i64>,
    pub used_at: Option<Timestamp>,
}

impl FromRow<'_, AnyRow> for InviteLinkRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(InviteLinkRow {
            id: row.try_get("id")?,
            selector: row.try_get("selector")?,
            verifier_hash: row.try_get("verifier_hash")?,
            name: row.try_get("name")?,
            root_role: row.try_get("root_role")?,
            enabled: flag(row, "enabled")?,
            expires_at: row.try_get("expires_at")?,
            created_at: row.try_get("created_at")?,
            created_by: row.try_get("created_by")?,
            used_by: row.try_get("used_by")?,
            used_at: row.try_get("used_at")?,
        })
    }
}

const INVITE_COLUMNS: &str = "id, selector, verifier_hash, name, root_role, enabled, expires_at, \
     created_at, created_by, used_by, used_at";

/// The id of a new invite link.
pub async fn next_invite_id(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    increment(conn, Counter::InviteLink).await
}

pub async fn insert_invite(
    conn: &mut AnyConnection,
    row: &InviteLinkRow,
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO invite_links ({INVITE_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    );
    sqlx::query(&sql)
        .bind(row.id)
        .bind(&row.selector)
        .bind(&row.verifier_hash)
        .bind(&row.name)
        .bind(row.root_role)
        .bind(i64::from(row.enabled))
        .bind(row.expires_at)
        .bind(row.created_at)
        .bind(&row.created_by)
        .bind(row.used_by)
        .bind(row.used_at)
        .execute(conn)
        .await?;
    Ok(())
}

/// Every invite link, newest first.
pub async fn invites(conn: &mut AnyConnection) -> Result<Vec<InviteLinkRow>, StoreError> {
    let sql = format!("SELECT {INVITE_COLUMNS} FROM invite_links ORDER BY id DESC");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn invite(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<InviteLinkRow>, StoreError> {
    let sql = format!("SELECT {INVITE_COLUMNS} FROM invite_links WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

pub async fn invite_by_selector(
    conn: &mut AnyConnection,
    selector: &str,
) -> Result<Option<InviteLinkRow>, StoreError> {
    let sql = format!("SELECT {INVITE_COLUMNS} FROM invite_links WHERE selector = $1");
    Ok(sqlx::query_as(&sql)
        .bind(selector)
        .fetch_optional(conn)
        .await?)
}

/// Sets a link's expiry and whether it is enabled.
pub async fn update_invite(
    conn: &mut AnyConnection,
    row: &InviteLinkRow,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE invite_links SET expires_at = $1, enabled = $2 WHERE id = $3")
        .bind(row.expires_at)
        .bind(i64::from(row.enabled))
        .bind(row.id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Marks link `id` used by `user_id`: false if it already was.
pub async fn use_invite(
    conn: &mut AnyConnection,
    id: i64,
    user_id: i64,
    at: Timestamp,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE invite_links SET used_by = $1, used_at = $2 WHERE id = $3 AND used_at IS NULL",
    )
    .bind(user_id)
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ResetTokenRow {
    pub selector: String,
    pub verifier_hash: String,
    pub user_id: i64,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    pub used_at: Option<Timestamp>,
}

const RESET_COLUMNS: &str = "selector, verifier_hash, user_id, created_at, expires_at, used_at";

/// Stores a new reset link of its user and drops the user's earlier ones: only the latest link works.
pub async fn replace_reset(
    conn: &mut AnyConnection,
    row: &ResetTokenRow,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM password_reset_tokens WHERE user_id = $1")
        .bind(row.user_id)
        .execute(&mut *conn)
        .await?;
    let sql = format!(
        "INSERT INTO password_reset_tokens ({RESET_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
    );
    sqlx::query(&sql)
        .bind(&row.selector)
        .bind(&row.verifier_hash)
        .bind(row.user_id)
        .bind(row.created_at)
        .bind(row.expires_at)
        .bind(row.used_at)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn reset(
    conn: &mut AnyConnection,
    selector: &str,
) -> Result<Option<ResetTokenRow>, StoreError> {
    let sql = format!("SELECT {RESET_COLUMNS} FROM password_reset_tokens WHERE selector = $1");
    Ok(sqlx::query_as(&sql)
        .bind(selector)
        .fetch_optional(conn)
        .await?)
}

/// Marks the reset link `selector` used: false if it already was.
pub async fn use_reset(
    conn: &mut AnyConnection,
    selector: &str,
    at: Timestamp,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE password_reset_tokens SET used_at = $1 WHERE selector = $2 AND used_at IS NULL",
    )
    .bind(at)
    .bind(selector)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}
