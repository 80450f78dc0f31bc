//! SQL of feature flags and of their per-environment switches.

use super::encoding::{fetch_many, flag};
use super::StoreError;
use crate::time::Timestamp;
use serde::Deserialize;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct FeatureRow {
    pub name: String,
    pub project_id: String,
    pub feature_type: String,
    pub description: Option<String>,
    pub stale: bool,
    /// Set by the potentially-stale job (`domain::lifecycle`); no write of the flag changes it.
    pub potentially_stale: bool,
    pub impression_data: bool,
    pub created_at: Timestamp,
    pub archived_at: Option<Timestamp>,
}

impl FromRow<'_, AnyRow> for FeatureRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(FeatureRow {
            name: row.try_get("name")?,
            project_id: row.try_get("project_id")?,
            feature_type: row.try_get("type")?,
            description: row.try_get("description")?,
            stale: flag(row, "stale")?,
            potentially_stale: flag(row, "potentially_stale")?,
            impression_data: flag(row, "impression_data")?,
            created_at: row.try_get("created_at")?,
            archived_at: row.try_get("archived_at")?,
        })
    }
}

/// A row as [`fetch_many`] reads it from SQLite: `COLUMNS` in order.
#[derive(Deserialize)]
struct JsonFeatureRow(
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    Timestamp,
    Option<Timestamp>,
    i64,
);

impl From<JsonFeatureRow> for FeatureRow {
    fn from(row: JsonFeatureRow) -> FeatureRow {
        let JsonFeatureRow(
            name,
            project_id,
            feature_type,
            description,
            stale,
            impression_data,
            created_at,
            archived_at,
            potentially_stale,
        ) = row;
        FeatureRow {
            name,
            project_id,
            feature_type,
            description,
            stale: stale != 0,
            potentially_stale: potentially_stale != 0,
            impression_data: impression_data != 0,
            created_at,
            archived_at,
        }
    }
}

/// A flag's state in one of its project's environments.
#[derive(Debug, Clone)]
pub struct FeatureEnvironmentRow {
    pub name: String,
    pub environment_type: String,
    pub sort_order: i64,
    pub enabled: bool,
}

impl FromRow<'_, AnyRow> for FeatureEnvironmentRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(FeatureEnvironmentRow {
            name: row.try_get("name")?,
            environment_type: row.try_get("type")?,
            sort_order: row.try_get("sort_order")?,
            enabled: flag(row, "enabled")?,
        })
    }
}

const COLUMNS: &str =
    "name, project_id, type, description, stale, impression_data, created_at, archived_at, potentially_stale";

pub async fn get(conn: &mut AnyConnection, name: &str) -> Result<Option<FeatureRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM features WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(conn).await?)
}

/// The live (not archived) flags of a project, by name.
pub async fn list_live(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<FeatureRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM features WHERE project_id = $1 AND archived_at IS NULL ORDER BY name");
    Ok(sqlx::query_as(&sql).bind(project).fetch_all(conn).await?)
}

/// Every live flag, by name (read as one JSON value: the client document reads every flag).
pub async fn list_all_live(conn: &mut AnyConnection) -> Result<Vec<FeatureRow>, StoreError> {
    let mut rows: Vec<FeatureRow> =
        fetch_many::<_, JsonFeatureRow>(conn, COLUMNS, "features WHERE archived_at IS NULL", &[])
            .await?;
    rows.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Ok(rows)
}

/// Archived flags, newest archive first; of one project when given.
pub async fn list_archived(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<Vec<FeatureRow>, StoreError> {
    let rows = match project {
        Some(project) => {
            let sql = format!(
                "SELECT {COLUMNS} FROM features WHERE archived_at IS NOT NULL AND project_id = $1 \
                 ORDER BY archived_at DESC, name"
            );
            sqlx::query_as(&sql).bind(project).fetch_all(conn).await?
        }
        None => {
            let sql =
                format!("SELECT {COLUMNS} FROM features WHERE archived_at IS NOT NULL ORDER BY archived_at DESC, name");
            sqlx::query_as(&sql).fetch_all(conn).await?
        }
    };
    Ok(rows)
}

/// The environments of every archived flag (of one project when given), as `(flag, environment)`: one
/// query for the whole archive.
pub async fn archived_environments(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<Vec<(String, FeatureEnvironmentRow)>, StoreError> {
    let sql = format!(
        "SELECT f.name AS feature_name, e.name, e.type, e.sort_order, COALESCE(fe.enabled, 0) AS enabled \
         FROM features f JOIN project_environments pe ON pe.project_id = f.project_id \
         JOIN environments e ON e.name = pe.environment \
         LEFT JOIN feature_environments fe ON fe.environment = e.name AND fe.feature_name = f.name \
         WHERE f.archived_at IS NOT NULL{} ORDER BY f.name, e.sort_order, e.name",
        if project.is_some() { " AND f.project_id = $1" } else { "" }
    );
    let query = sqlx::query(&sql);
    let query = match project {
        Some(project) => query.bind(project),
        None => query,
    };
    let rows = query.fetch_all(conn).await?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get("feature_name")?,
                FeatureEnvironmentRow::from_row(row)?,
            ))
        })
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}

pub async fn insert(conn: &mut AnyConnection, row: &FeatureRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO features (name, project_id, type, description, stale, impression_data, created_at, archived_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&row.name)
    .bind(&row.project_id)
    .bind(&row.feature_type)
    .bind(&row.description)
    .bind(i64::from(row.stale))
    .bind(i64::from(row.impression_data))
    .bind(row.created_at)
    .bind(row.archived_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes type, description, stale, impressionData and archivedAt.
pub async fn update(conn: &mut AnyConnection, row: &FeatureRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE features SET type = $2, description = $3, stale = $4, impression_data = $5, archived_at = $6 \
         WHERE name = $1",
    )
    .bind(&row.name)
    .bind(&row.feature_type)
    .bind(&row.description)
    .bind(i64::from(row.stale))
    .bind(i64::from(row.impression_data))
    .bind(row.archived_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Deletes the flag with its switches, strategies and variants.
pub async fn delete(conn: &mut AnyConnection, name: &str) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM feature_strategies WHERE feature_name = $1",
        "DELETE FROM feature_environment_variants WHERE feature_name = $1",
        "DELETE FROM feature_environments WHERE feature_name = $1",
        "DELETE FROM feature_tags WHERE feature_name = $1",
        "DELETE FROM feature_dependencies WHERE child = $1 OR parent = $1",
        "DELETE FROM features WHERE name = $1",
    ] {
        sqlx::query(sql).bind(name).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The environments of every live flag of `project`, as `(flag, environment)` by flag and environment order:
/// one query for the whole list.
pub async fn live_environments(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<(String, FeatureEnvironmentRow)>, StoreError> {
    let rows = sqlx::query(
        "SELECT f.name AS feature_name, e.name, e.type, e.sort_order, COALESCE(fe.enabled, 0) AS enabled \
         FROM features f JOIN project_environments pe ON pe.project_id = f.project_id \
         JOIN environments e ON e.name = pe.environment \
         LEFT JOIN feature_environments fe ON fe.environment = e.name AND fe.feature_name = f.name \
         WHERE f.archived_at IS NULL AND f.project_id = $1 ORDER BY f.name, e.sort_order, e.name",
    )
    .bind(project)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get("feature_name")?,
                FeatureEnvironmentRow::from_row(row)?,
            ))
        })
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}

/// The flag's state in each environment of its project, in environment order.
pub async fn environments(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
) -> Result<Vec<FeatureEnvironmentRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT e.name, e.type, e.sort_order, COALESCE(fe.enabled, 0) AS enabled \
         FROM project_environments pe JOIN environments e ON e.name = pe.environment \
         LEFT JOIN feature_environments fe ON fe.environment = e.name AND fe.feature_name = $2 \
         WHERE pe.project_id = $1 ORDER BY e.sort_order, e.name",
    )
    .bind(project)
    .bind(feature)
    .fetch_all(conn)
    .await?)
}

pub async fn is_enabled(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<bool, StoreError> {
    let enabled: Option<i64> = sqlx::query_scalar(
        "SELECT enabled FROM feature_environments WHERE feature_name = $1 AND environment = $2",
    )
    .bind(feature)
    .bind(environment)
    .fetch_optional(conn)
    .await?;
    Ok(enabled.unwrap_or(0) != 0)
}

pub async fn set_enabled(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
    enabled: bool,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_environments (feature_name, environment, enabled) VALUES ($1, $2, $3) \
         ON CONFLICT (feature_name, environment) DO UPDATE SET enabled = $3",
    )
    .bind(feature)
    .bind(environment)
    .bind(i64::from(enabled))
    .execute(conn)
    .await?;
    Ok(())
}

/// Turns the flag off everywhere.
pub async fn disable_everywhere(conn: &mut AnyConnection, feature: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE feature_environments SET enabled = 0 WHERE feature_name = $1")
        .bind(feature)
        .execute(conn)
        .await?;
    Ok(())
}

/// The names of the flags enabled in an environment, by name.
pub async fn enabled_in(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<Vec<String>, StoreError> {
    let rows: Vec<(String,)> = fetch_many::<_, (String,)>(
        conn,
        "feature_name",
        "feature_environments WHERE environment = $1 AND enabled = 1",
        &[environment],
    )
    .await?;
    let mut names: Vec<String> = rows.into_iter().map(|(name,)| name).collect();
    names.sort_unstable();
    Ok(names)
}

/// Live (not archived) flags, all projects.
pub async fn count_live(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM features WHERE archived_at IS NULL")
            .fetch_one(conn)
            .await?,
    )
}

/// Moves a flag to another project.
pub async fn set_project(
    conn: &mut AnyConnection,
    name: &str,
    project: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE features SET project_id = $2 WHERE name = $1")
        .bind(name)
        .bind(project)
        .execute(conn)
        .await?;
    Ok(())
}
