//! SQL of strategy definitions (built-in rows come with the migration). Parameters are a JSON column.

use super::encoding::{flag, json, json_text};
use super::StoreError;
use crate::model::strategy_definition::StrategyParameter;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct StrategyDefinitionRow {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub parameters: Vec<StrategyParameter>,
    pub built_in: bool,
    pub deprecated: bool,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for StrategyDefinitionRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(StrategyDefinitionRow {
            name: row.try_get("name")?,
            title: row.try_get("title")?,
            description: row.try_get("description")?,
            parameters: json(row, "parameters")?,
            built_in: flag(row, "built_in")?,
            deprecated: flag(row, "deprecated")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const COLUMNS: &str = "name, title, description, parameters, built_in, deprecated, created_at";

/// Built-ins first, then custom ones by name.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<StrategyDefinitionRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM strategy_definitions ORDER BY built_in DESC, created_at, name"
    );
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<StrategyDefinitionRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM strategy_definitions WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

pub async fn insert(
    conn: &mut AnyConnection,
    row: &StrategyDefinitionRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO strategy_definitions (name, title, description, parameters, built_in, deprecated, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&row.name)
    .bind(&row.title)
    .bind(&row.description)
    .bind(json_text(&row.parameters)?)
    .bind(i64::from(row.built_in))
    .bind(i64::from(row.deprecated))
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes title, description, parameters and deprecated.
pub async fn update(
    conn: &mut AnyConnection,
    row: &StrategyDefinitionRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE strategy_definitions SET title = $2, description = $3, parameters = $4, deprecated = $5 \
         WHERE name = $1",
    )
    .bind(&row.name)
    .bind(&row.title)
    .bind(&row.description)
    .bind(json_text(&row.parameters)?)
    .bind(i64::from(row.deprecated))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, name: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM strategy_definitions WHERE name = $1")
        .bind(name)
        .execute(conn)
        .await?;
    Ok(())
}

/// How many flag strategies (any flag, any environment) use the definition.
pub async fn usage_count(conn: &mut AnyConnection, name: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM feature_strategies WHERE name = $1")
            .bind(name)
            .fetch_one(conn)
            .await?,
    )
}
