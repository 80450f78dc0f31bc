//! SQL of the strategies of a flag in an environment. Nested values are JSON text.

use super::StoreError;
use sqlx::AnyConnection;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StrategyRow {
    pub id: String,
    pub feature_name: String,
    pub environment: String,
    pub name: String,
    pub title: Option<String>,
    pub disabled: i64,
    pub sort_order: i64,
    pub constraints: String,
    pub parameters: String,
    pub variants: String,
    pub segments: String,
    pub created_at: String,
}

const COLUMNS: &str =
    "id, feature_name, environment, name, title, disabled, sort_order, constraints, parameters, \
                       variants, segments, created_at";

/// The strategies of a flag in an environment, by sortOrder (then creation, then id).
pub async fn list(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Vec<StrategyRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM feature_strategies WHERE feature_name = $1 AND environment = $2 \
         ORDER BY sort_order, created_at, id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(feature)
        .bind(environment)
        .fetch_all(conn)
        .await?)
}

/// Every strategy in an environment, grouped by flag, each flag's by sortOrder.
pub async fn list_in_environment(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<Vec<StrategyRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM feature_strategies WHERE environment = $1 \
         ORDER BY feature_name, sort_order, created_at, id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(environment)
        .fetch_all(conn)
        .await?)
}

pub async fn get(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<Option<StrategyRow>, StoreError> {
    let sql =
        format!("SELECT {COLUMNS} FROM feature_strategies WHERE feature_name = $1 AND environment = $2 AND id = $3");
    Ok(sqlx::query_as(&sql)
        .bind(feature)
        .bind(environment)
        .bind(id)
        .fetch_optional(conn)
        .await?)
}

pub async fn insert(conn: &mut AnyConnection, row: &StrategyRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_strategies (id, feature_name, environment, name, title, disabled, sort_order, \
         constraints, parameters, variants, segments, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&row.id)
    .bind(&row.feature_name)
    .bind(&row.environment)
    .bind(&row.name)
    .bind(&row.title)
    .bind(row.disabled)
    .bind(row.sort_order)
    .bind(&row.constraints)
    .bind(&row.parameters)
    .bind(&row.variants)
    .bind(&row.segments)
    .bind(&row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes every column but the keys and createdAt.
pub async fn update(conn: &mut AnyConnection, row: &StrategyRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE feature_strategies SET name = $2, title = $3, disabled = $4, sort_order = $5, constraints = $6, \
         parameters = $7, variants = $8, segments = $9 WHERE id = $1",
    )
    .bind(&row.id)
    .bind(&row.name)
    .bind(&row.title)
    .bind(row.disabled)
    .bind(row.sort_order)
    .bind(&row.constraints)
    .bind(&row.parameters)
    .bind(&row.variants)
    .bind(&row.segments)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, id: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM feature_strategies WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn max_sort_order(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT MAX(sort_order) FROM feature_strategies WHERE feature_name = $1 AND environment = $2",
    )
    .bind(feature)
    .bind(environment)
    .fetch_one(conn)
    .await?)
}
