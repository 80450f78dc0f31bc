//! SQL of instance-wide settings: one JSON value per name.

use super::StoreError;
use sqlx::AnyConnection;

pub async fn get(conn: &mut AnyConnection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn set(conn: &mut AnyConnection, name: &str, value: &str) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = $2",
    )
    .bind(name)
    .bind(value)
    .execute(conn)
    .await?;
    Ok(())
}

/// Sets a value only if the name has none (a concurrent first start keeps the first one).
pub async fn insert_missing(
    conn: &mut AnyConnection,
    name: &str,
    value: &str,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
        .bind(name)
        .bind(value)
        .execute(conn)
        .await?;
    Ok(())
}
