//! SQL of segments. Ids come from the `segment` counter; constraints are a JSON column.

use super::encoding::{json, json_text};
use super::StoreError;
use crate::model::constraint::Constraint;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct SegmentRow {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub project_id: Option<String>,
    pub constraints: Vec<Constraint>,
    pub created_by: String,
    pub created_at: Timestamp,
}

impl FromRow<'_, AnyRow> for SegmentRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SegmentRow {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            project_id: row.try_get("project_id")?,
            constraints: json(row, "constraints")?,
            created_by: row.try_get("created_by")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

const COLUMNS: &str = "id, name, description, project_id, constraints, created_by, created_at";

/// Every segment, by id.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<SegmentRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM segments ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<SegmentRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM segments WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

pub async fn get_by_name(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<SegmentRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM segments WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

pub async fn count(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM segments")
        .fetch_one(conn)
        .await?)
}

pub async fn insert(conn: &mut AnyConnection, row: &SegmentRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO segments (id, name, description, project_id, constraints, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.project_id)
    .bind(json_text(&row.constraints)?)
    .bind(&row.created_by)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes name, description, project and constraints.
pub async fn update(conn: &mut AnyConnection, row: &SegmentRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE segments SET name = $2, description = $3, project_id = $4, constraints = $5 WHERE id = $1",
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.project_id)
    .bind(json_text(&row.constraints)?)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM segments WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A strategy that references segments: which strategy, where (flag, the flag's project, environment) and
/// the segment ids.
#[derive(Debug, Clone)]
pub struct SegmentReference {
    pub strategy_id: String,
    pub strategy_name: String,
    pub feature_name: String,
    pub project_id: String,
    pub environment: String,
    pub segments: Vec<i64>,
}

impl FromRow<'_, AnyRow> for SegmentReference {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(SegmentReference {
            strategy_id: row.try_get("id")?,
            strategy_name: row.try_get("name")?,
            feature_name: row.try_get("feature_name")?,
            project_id: row.try_get("project_id")?,
            environment: row.try_get("environment")?,
            segments: json(row, "segments")?,
        })
    }
}

/// Every strategy (of any flag, archived ones included) with at least one segment.
pub async fn references(conn: &mut AnyConnection) -> Result<Vec<SegmentReference>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT s.id, s.name, s.feature_name, f.project_id, s.environment, s.segments \
         FROM feature_strategies s \
         JOIN features f ON f.name = s.feature_name WHERE s.segments <> '[]' ORDER BY s.feature_name",
    )
    .fetch_all(conn)
    .await?)
}

/// How many segments belong to a project.
pub async fn count_in_project(conn: &mut AnyConnection, project: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM segments WHERE project_id = $1")
            .bind(project)
            .fetch_one(conn)
            .await?,
    )
}
