//! SQL of a flag's links (`feature_links`).

use super::StoreError;
use crate::time::Timestamp;
use sqlx::{AnyConnection, FromRow};

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LinkRow {
    pub id: String,
    pub feature_name: String,
    pub url: String,
    pub title: Option<String>,
}

/// The flag's links, oldest first.
pub async fn of_feature(
    conn: &mut AnyConnection,
    feature: &str,
) -> Result<Vec<LinkRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, feature_name, url, title FROM feature_links WHERE feature_name = $1 \
         ORDER BY created_at, id",
    )
    .bind(feature)
    .fetch_all(conn)
    .await?)
}

/// The flag's link `id`, if it has it.
pub async fn get(
    conn: &mut AnyConnection,
    feature: &str,
    id: &str,
) -> Result<Option<LinkRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, feature_name, url, title FROM feature_links WHERE feature_name = $1 AND id = $2",
    )
    .bind(feature)
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

pub async fn insert(
    conn: &mut AnyConnection,
    row: &LinkRow,
    now: Timestamp,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_links (id, feature_name, url, title, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&row.id)
    .bind(&row.feature_name)
    .bind(&row.url)
    .bind(&row.title)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut AnyConnection, row: &LinkRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE feature_links SET url = $1, title = $2 WHERE feature_name = $3 AND id = $4",
    )
    .bind(&row.url)
    .bind(&row.title)
    .bind(&row.feature_name)
    .bind(&row.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, feature: &str, id: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM feature_links WHERE feature_name = $1 AND id = $2")
        .bind(feature)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
