//! SQL of projects and of which environments each project uses.

use super::StoreError;
use crate::time::Timestamp;
use sqlx::AnyConnection;
use std::collections::BTreeMap;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub mode: String,
    pub default_stickiness: String,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
    /// Set while the project is archived (written by [`set_archived_at`] only).
    pub archived_at: Option<Timestamp>,
}

const COLUMNS: &str =
    "id, name, description, mode, default_stickiness, created_at, updated_at, archived_at";

pub async fn list(conn: &mut AnyConnection) -> Result<Vec<ProjectRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM projects ORDER BY name, id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(conn: &mut AnyConnection, id: &str) -> Result<Option<ProjectRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM projects WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

pub async fn insert(conn: &mut AnyConnection, row: &ProjectRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO projects (id, name, description, mode, default_stickiness, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.mode)
    .bind(&row.default_stickiness)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut AnyConnection, row: &ProjectRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE projects SET name = $2, description = $3, mode = $4, default_stickiness = $5, updated_at = $6 \
         WHERE id = $1",
    )
    .bind(&row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.mode)
    .bind(&row.default_stickiness)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, id: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM project_environments WHERE project_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM projects WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The environments a project uses, in environment sort order.
pub async fn environments(conn: &mut AnyConnection, id: &str) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT e.name FROM project_environments pe JOIN environments e ON e.name = pe.environment \
         WHERE pe.project_id = $1 ORDER BY e.sort_order, e.name",
    )
    .bind(id)
    .fetch_all(conn)
    .await?)
}

/// Every project's environments (those with any), in environment sort order: [`environments`] for all
/// projects in one statement.
pub async fn environments_of_all(
    conn: &mut AnyConnection,
) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT pe.project_id, e.name FROM project_environments pe \
         JOIN environments e ON e.name = pe.environment ORDER BY e.sort_order, e.name",
    )
    .fetch_all(conn)
    .await?;
    let mut by_project: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (project, environment) in rows {
        by_project.entry(project).or_default().push(environment);
    }
    Ok(by_project)
}

pub async fn has_environment(
    conn: &mut AnyConnection,
    id: &str,
    environment: &str,
) -> Result<bool, StoreError> {
    let count: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM project_environments WHERE project_id = $1 AND environment = $2",
    )
    .bind(id)
    .bind(environment)
    .fetch_one(conn)
    .await?;
    Ok(count > 0)
}

pub async fn add_environment(
    conn: &mut AnyConnection,
    id: &str,
    environment: &str,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO project_environments (project_id, environment) VALUES ($1, $2)")
        .bind(id)
        .bind(environment)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn remove_environment(
    conn: &mut AnyConnection,
    id: &str,
    environment: &str,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM project_environments WHERE project_id = $1 AND environment = $2")
        .bind(id)
        .bind(environment)
        .execute(conn)
        .await?;
    Ok(())
}

/// How many flags the project holds, archived ones included when asked.
pub async fn feature_count(
    conn: &mut AnyConnection,
    id: &str,
    include_archived: bool,
) -> Result<i64, StoreError> {
    let sql = if include_archived {
        "SELECT COUNT(*) FROM features WHERE project_id = $1"
    } else {
        "SELECT COUNT(*) FROM features WHERE project_id = $1 AND archived_at IS NULL"
    };
    Ok(sqlx::query_scalar(sql).bind(id).fetch_one(conn).await?)
}

/// How many flags each project holds, archived ones left out: [`feature_count`] for all projects in one
/// statement (a project without flags is absent).
pub async fn feature_counts(conn: &mut AnyConnection) -> Result<BTreeMap<String, i64>, StoreError> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT project_id, COUNT(*) FROM features WHERE archived_at IS NULL GROUP BY project_id",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().collect())
}

pub async fn count_all(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM projects")
        .fetch_one(conn)
        .await?)
}

/// The default strategy of a project environment, as stored (JSON); `None` when none is set or the project
/// does not use the environment.
pub async fn default_strategy(
    conn: &mut AnyConnection,
    id: &str,
    environment: &str,
) -> Result<Option<String>, StoreError> {
    let found: Option<Option<String>> = sqlx::query_scalar(
        "SELECT default_strategy FROM project_environments WHERE project_id = $1 AND environment = $2",
    )
    .bind(id)
    .bind(environment)
    .fetch_optional(conn)
    .await?;
    Ok(found.flatten())
}

pub async fn set_default_strategy(
    conn: &mut AnyConnection,
    id: &str,
    environment: &str,
    strategy: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE project_environments SET default_strategy = $3 WHERE project_id = $1 AND environment = $2",
    )
    .bind(id)
    .bind(environment)
    .bind(strategy)
    .execute(conn)
    .await?;
    Ok(())
}

/// When the project was archived; `None` while it is active (or when it does not exist).
pub async fn archived_at(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<Timestamp>, StoreError> {
    let found: Option<Option<Timestamp>> =
        sqlx::query_scalar("SELECT archived_at FROM projects WHERE id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?;
    Ok(found.flatten())
}

pub async fn set_archived_at(
    conn: &mut AnyConnection,
    id: &str,
    at: Option<Timestamp>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE projects SET archived_at = $2 WHERE id = $1")
        .bind(id)
        .bind(at)
        .execute(conn)
        .await?;
    Ok(())
}
