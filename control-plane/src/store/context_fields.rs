//! SQL of context fields (built-in rows come with the migration). Legal values are a JSON column; `project` is
//! null for the instance's fields, else the project that owns the field.

use super::encoding::{flag, json, json_text};
use super::StoreError;
use crate::model::context_field::LegalValue;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct ContextFieldRow {
    pub name: String,
    pub description: Option<String>,
    pub stickiness: bool,
    pub sort_order: i64,
    pub legal_values: Vec<LegalValue>,
    pub built_in: bool,
    pub created_at: Timestamp,
    /// The project that owns the field (only its flags may test it); `None`: the instance's.
    pub project: Option<String>,
}

impl FromRow<'_, AnyRow> for ContextFieldRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(ContextFieldRow {
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            stickiness: flag(row, "stickiness")?,
            sort_order: row.try_get("sort_order")?,
            legal_values: json(row, "legal_values")?,
            built_in: flag(row, "built_in")?,
            created_at: row.try_get("created_at")?,
            project: row.try_get("project")?,
        })
    }
}

const COLUMNS: &str =
    "name, description, stickiness, sort_order, legal_values, built_in, created_at, project";

/// Every field, the instance's and the projects', by sortOrder, then name.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<ContextFieldRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM context_fields ORDER BY sort_order, name");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The fields of project `project`, by sortOrder, then name.
pub async fn list_of_project(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<ContextFieldRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM context_fields WHERE project = $1 ORDER BY sort_order, name"
    );
    Ok(sqlx::query_as(&sql).bind(project).fetch_all(conn).await?)
}

/// How many fields project `project` owns.
pub async fn count_in_project(conn: &mut AnyConnection, project: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM context_fields WHERE project = $1")
            .bind(project)
            .fetch_one(conn)
            .await?,
    )
}

pub async fn get(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<ContextFieldRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM context_fields WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

pub async fn max_sort_order(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    let max: Option<i64> = sqlx::query_scalar("SELECT MAX(sort_order) FROM context_fields")
        .fetch_one(conn)
        .await?;
    Ok(max.unwrap_or(0))
}

pub async fn insert(conn: &mut AnyConnection, row: &ContextFieldRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values, built_in, created_at, project) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&row.name)
    .bind(&row.description)
    .bind(i64::from(row.stickiness))
    .bind(row.sort_order)
    .bind(json_text(&row.legal_values)?)
    .bind(i64::from(row.built_in))
    .bind(row.created_at)
    .bind(&row.project)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes description, stickiness, sortOrder and legal values.
pub async fn update(conn: &mut AnyConnection, row: &ContextFieldRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE context_fields SET description = $2, stickiness = $3, sort_order = $4, legal_values = $5 \
         WHERE name = $1",
    )
    .bind(&row.name)
    .bind(&row.description)
    .bind(i64::from(row.stickiness))
    .bind(row.sort_order)
    .bind(json_text(&row.legal_values)?)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, name: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM context_fields WHERE name = $1")
        .bind(name)
        .execute(conn)
        .await?;
    Ok(())
}
