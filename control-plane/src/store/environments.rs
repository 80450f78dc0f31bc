//! SQL of environments.

use super::encoding::flag;
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct EnvironmentRow {
    pub name: String,
    pub environment_type: String,
    pub enabled: bool,
    pub protected: bool,
    pub sort_order: i64,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for EnvironmentRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(EnvironmentRow {
            name: row.try_get("name")?,
            environment_type: row.try_get("type")?,
            enabled: flag(row, "enabled")?,
            protected: flag(row, "protected")?,
            sort_order: row.try_get("sort_order")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const COLUMNS: &str = "name, type, enabled, protected, sort_order, created_at";

pub async fn list(conn: &mut AnyConnection) -> Result<Vec<EnvironmentRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM environments ORDER BY sort_order, name");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<EnvironmentRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM environments WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

pub async fn insert(conn: &mut AnyConnection, row: &EnvironmentRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO environments (name, type, enabled, protected, sort_order, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&row.name)
    .bind(&row.environment_type)
    .bind(i64::from(row.enabled))
    .bind(i64::from(row.protected))
    .bind(row.sort_order)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut AnyConnection, row: &EnvironmentRow) -> Result<(), StoreError> {
    sqlx::query("UPDATE environments SET type = $2, enabled = $3, protected = $4, sort_order = $5 WHERE name = $1")
        .bind(&row.name)
        .bind(&row.environment_type)
        .bind(i64::from(row.enabled))
        .bind(i64::from(row.protected))
        .bind(row.sort_order)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes the environment with its flag switches, strategies and project links.
pub async fn delete(conn: &mut AnyConnection, name: &str) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM feature_strategies WHERE environment = $1",
        "DELETE FROM feature_environment_variants WHERE environment = $1",
        "DELETE FROM feature_environments WHERE environment = $1",
        "DELETE FROM project_environments WHERE environment = $1",
        "DELETE FROM environments WHERE name = $1",
    ] {
        sqlx::query(sql).bind(name).execute(&mut *conn).await?;
    }
    Ok(())
}

pub async fn max_sort_order(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    let max: Option<i64> = sqlx::query_scalar("SELECT MAX(sort_order) FROM environments")
        .fetch_one(conn)
        .await?;
    Ok(max.unwrap_or(0))
}

/// How many projects use the environment.
pub async fn project_count(conn: &mut AnyConnection, name: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM project_environments WHERE environment = $1")
            .bind(name)
            .fetch_one(conn)
            .await?,
    )
}

pub async fn count_all(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM environments")
        .fetch_one(conn)
        .await?)
}
