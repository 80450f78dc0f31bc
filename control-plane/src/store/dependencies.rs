//! SQL of flag dependencies: one row per (child, parent) with the parent state the child requires
//! (`enabled`, and the variant names as a JSON list, empty when any variant will do).

use super::encoding::{flag, json, json_text, placeholders, IN_LIST_CHUNK};
use super::StoreError;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyRow {
    pub child: String,
    pub parent: String,
    pub enabled: bool,
    pub variants: Vec<String>,
}

impl FromRow<'_, AnyRow> for DependencyRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(DependencyRow {
            child: row.try_get("child")?,
            parent: row.try_get("parent")?,
            enabled: flag(row, "enabled")?,
            variants: json(row, "variants")?,
        })
    }
}

const SELECT: &str = "SELECT child, parent, enabled, variants FROM feature_dependencies";

/// The parents a flag depends on, by parent name.
pub async fn of_child(
    conn: &mut AnyConnection,
    child: &str,
) -> Result<Vec<DependencyRow>, StoreError> {
    let sql = format!("{SELECT} WHERE child = $1 ORDER BY parent");
    Ok(sqlx::query_as(&sql).bind(child).fetch_all(conn).await?)
}

/// The dependencies of the named children, by child and parent.
pub async fn of_children(
    conn: &mut AnyConnection,
    children: &[String],
) -> Result<Vec<DependencyRow>, StoreError> {
    let mut rows = Vec::new();
    for chunk in children.chunks(IN_LIST_CHUNK) {
        let sql = format!(
            "{SELECT} WHERE child IN ({}) ORDER BY child, parent",
            placeholders(1, chunk.len())
        );
        let mut query = sqlx::query_as(&sql);
        for name in chunk {
            query = query.bind(name);
        }
        let found: Vec<DependencyRow> = query.fetch_all(&mut *conn).await?;
        rows.extend(found);
    }
    rows.sort_by(|a, b| a.child.cmp(&b.child));
    Ok(rows)
}

/// Every dependency, by child and parent.
pub async fn list_all(conn: &mut AnyConnection) -> Result<Vec<DependencyRow>, StoreError> {
    let sql = format!("{SELECT} ORDER BY child, parent");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The first `limit` names, by name, of the live flags of `project` that could be `child`'s parent: not
/// the child, without parents of their own (one query, whatever the project's size).
pub async fn parent_candidates(
    conn: &mut AnyConnection,
    project: &str,
    child: &str,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT f.name FROM features f WHERE f.project_id = $1 AND f.archived_at IS NULL \
         AND f.name <> $2 AND NOT EXISTS (SELECT 1 FROM feature_dependencies d WHERE d.child = f.name) \
         ORDER BY f.name LIMIT $3",
    )
    .bind(project)
    .bind(child)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// The names of the flags that depend on `parent` (archived ones too), by name.
pub async fn children_of(
    conn: &mut AnyConnection,
    parent: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT child FROM feature_dependencies WHERE parent = $1 ORDER BY child",
    )
    .bind(parent)
    .fetch_all(conn)
    .await?)
}

/// Whether any flag of the project depends on another.
pub async fn exist_in_project(conn: &mut AnyConnection, project: &str) -> Result<bool, StoreError> {
    let count: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM feature_dependencies d JOIN features f ON f.name = d.child \
         WHERE f.project_id = $1",
    )
    .bind(project)
    .fetch_one(conn)
    .await?;
    Ok(count > 0)
}

/// Adds the dependency, or replaces the one on the same parent.
pub async fn upsert(conn: &mut AnyConnection, row: &DependencyRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_dependencies (child, parent, enabled, variants) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (child, parent) DO UPDATE SET enabled = $3, variants = $4",
    )
    .bind(&row.child)
    .bind(&row.parent)
    .bind(i64::from(row.enabled))
    .bind(json_text(&row.variants)?)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes one dependency; whether it was there.
pub async fn delete(
    conn: &mut AnyConnection,
    child: &str,
    parent: &str,
) -> Result<bool, StoreError> {
    let result = sqlx::query("DELETE FROM feature_dependencies WHERE child = $1 AND parent = $2")
        .bind(child)
        .bind(parent)
        .execute(conn)
        .await?;
    Ok(result.rows_affected() > 0)
}

/// Removes every dependency of a child; how many there were.
pub async fn delete_of_child(conn: &mut AnyConnection, child: &str) -> Result<u64, StoreError> {
    let result = sqlx::query("DELETE FROM feature_dependencies WHERE child = $1")
        .bind(child)
        .execute(conn)
        .await?;
    Ok(result.rows_affected())
}
