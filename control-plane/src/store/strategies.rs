//! SQL of the strategies of a flag in an environment. Constraints, parameters, variants and segment ids are
//! JSON columns.

use super::encoding::{fetch_many, flag, json, json_text, JsonText};
use super::StoreError;
use crate::model::constraint::Constraint;
use crate::model::variant::StrategyVariant;
use crate::time::Timestamp;
use serde::Deserialize;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct StrategyRow {
    pub id: String,
    pub feature_name: String,
    pub environment: String,
    pub name: String,
    pub title: Option<String>,
    pub disabled: bool,
    pub sort_order: i64,
    pub constraints: Vec<Constraint>,
    pub parameters: BTreeMap<String, String>,
    pub variants: Vec<StrategyVariant>,
    pub segments: Vec<i64>,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for StrategyRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(StrategyRow {
            id: row.try_get("id")?,
            feature_name: row.try_get("feature_name")?,
            environment: row.try_get("environment")?,
            name: row.try_get("name")?,
            title: row.try_get("title")?,
            disabled: flag(row, "disabled")?,
            sort_order: row.try_get("sort_order")?,
            constraints: json(row, "constraints")?,
            parameters: json(row, "parameters")?,
            variants: json(row, "variants")?,
            segments: json(row, "segments")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

/// A row as [`fetch_many`] reads it from SQLite: `COLUMNS` in order.
#[derive(Deserialize)]
struct JsonStrategyRow(
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    JsonText<Vec<Constraint>>,
    JsonText<BTreeMap<String, String>>,
    JsonText<Vec<StrategyVariant>>,
    JsonText<Vec<i64>>,
    Timestamp,
);

impl From<JsonStrategyRow> for StrategyRow {
    fn from(row: JsonStrategyRow) -> StrategyRow {
        let JsonStrategyRow(
            id,
            feature_name,
            environment,
            name,
            title,
            disabled,
            sort_order,
            constraints,
            parameters,
            variants,
            segments,
            created_at,
        ) = row;
        StrategyRow {
            id,
            feature_name,
            environment,
            name,
            title,
            disabled: disabled != 0,
            sort_order,
            constraints: constraints.0,
            parameters: parameters.0,
            variants: variants.0,
            segments: segments.0,
            created_at,
        }
    }
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

/// Every strategy in an environment, grouped by flag, each flag's by sortOrder (read as one JSON value: the
/// client document's largest read).
pub async fn list_in_environment(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<Vec<StrategyRow>, StoreError> {
    let mut rows: Vec<StrategyRow> = fetch_many::<_, JsonStrategyRow>(
        conn,
        COLUMNS,
        "feature_strategies WHERE environment = $1",
        &[environment],
    )
    .await?;
    rows.sort_unstable_by(|a, b| {
        (&a.feature_name, a.sort_order, a.created_at, &a.id).cmp(&(
            &b.feature_name,
            b.sort_order,
            b.created_at,
            &b.id,
        ))
    });
    Ok(rows)
}

/// `COLUMNS` of the strategies table aliased `s`.
fn placed_columns() -> String {
    COLUMNS
        .split(',')
        .map(|column| format!("s.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A strategy with its flag's project.
#[derive(Debug, Clone)]
pub struct PlacedStrategy {
    pub project_id: String,
    pub row: StrategyRow,
}

impl FromRow<'_, AnyRow> for PlacedStrategy {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(PlacedStrategy {
            project_id: row.try_get("project_id")?,
            row: StrategyRow::from_row(row)?,
        })
    }
}

/// Every strategy of every flag (archived ones included) with its project, by flag, environment and
/// sortOrder.
pub async fn list_all_placed(conn: &mut AnyConnection) -> Result<Vec<PlacedStrategy>, StoreError> {
    let sql = format!(
        "SELECT {}, f.project_id FROM feature_strategies s JOIN features f ON f.name = s.feature_name \
         ORDER BY s.feature_name, s.environment, s.sort_order, s.created_at, s.id",
        placed_columns()
    );
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The strategy with this id, wherever it is, with its flag's project.
pub async fn get_placed(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<PlacedStrategy>, StoreError> {
    let sql = format!(
        "SELECT {}, f.project_id FROM feature_strategies s JOIN features f ON f.name = s.feature_name \
         WHERE s.id = $1",
        placed_columns()
    );
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
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
    .bind(i64::from(row.disabled))
    .bind(row.sort_order)
    .bind(json_text(&row.constraints)?)
    .bind(json_text(&row.parameters)?)
    .bind(json_text(&row.variants)?)
    .bind(json_text(&row.segments)?)
    .bind(row.created_at)
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
    .bind(i64::from(row.disabled))
    .bind(row.sort_order)
    .bind(json_text(&row.constraints)?)
    .bind(json_text(&row.parameters)?)
    .bind(json_text(&row.variants)?)
    .bind(json_text(&row.segments)?)
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
