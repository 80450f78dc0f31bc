//! SQL of the single sign-on sign-ins in flight (`sso_sign_ins`): one row per sign-in, put when it starts,
//! taken (deleted and returned in one statement, so only one caller gets it) when the provider answers.

use super::StoreError;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// Keeps a sign-in's flow under the hash of its state.
pub async fn put(
    conn: &mut AnyConnection,
    state_hash: &str,
    protocol: &str,
    flow: &str,
    created_at_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sso_sign_ins (state_hash, protocol, flow, created_at_ms) VALUES ($1, $2, $3, $4)",
    )
    .bind(state_hash)
    .bind(protocol)
    .bind(flow)
    .bind(created_at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Takes the sign-in of `protocol` under `state_hash` if there is one: its flow and when it started. A second
/// take of the same row finds nothing.
pub async fn take(
    conn: &mut AnyConnection,
    state_hash: &str,
    protocol: &str,
) -> Result<Option<(String, i64)>, StoreError> {
    let row: Option<AnyRow> = sqlx::query(
        "DELETE FROM sso_sign_ins WHERE state_hash = $1 AND protocol = $2 RETURNING flow, created_at_ms",
    )
    .bind(state_hash)
    .bind(protocol)
    .fetch_optional(conn)
    .await?;
    Ok(row
        .map(|row| Ok::<_, sqlx::Error>((row.try_get("flow")?, row.try_get("created_at_ms")?)))
        .transpose()?)
}

/// How many sign-ins are in flight.
pub async fn count(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    let row: AnyRow = sqlx::query("SELECT COUNT(*) AS n FROM sso_sign_ins")
        .fetch_one(conn)
        .await?;
    Ok(row.try_get("n")?)
}

/// Forgets the `n` sign-ins that started first.
pub async fn forget_oldest(conn: &mut AnyConnection, n: i64) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM sso_sign_ins WHERE state_hash IN \
         (SELECT state_hash FROM sso_sign_ins ORDER BY created_at_ms LIMIT $1)",
    )
    .bind(n)
    .execute(conn)
    .await?;
    Ok(())
}

/// Forgets the sign-ins started before `before_ms`.
pub async fn forget_before(conn: &mut AnyConnection, before_ms: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM sso_sign_ins WHERE created_at_ms < $1")
        .bind(before_ms)
        .execute(conn)
        .await?;
    Ok(())
}
