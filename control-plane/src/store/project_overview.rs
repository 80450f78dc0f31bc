//! The SQL of a project's overview, health and status (`domain::project_overview`): counts done by the
//! database, a handful of statements per answer whatever the number of flags (no statement per flag).

use super::encoding::json_text;
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// A flag type's live flags in a project: how many, how many marked stale, how many potentially stale
/// (older than their type's lifetime and not marked stale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeCounts {
    pub feature_type: String,
    pub total: i64,
    pub stale: i64,
    pub potentially_stale: i64,
}

/// A live flag that is stale or potentially stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnhealthyFlag {
    pub name: String,
    pub feature_type: String,
    pub stale: bool,
    pub created_at: Timestamp,
}

/// Counts over the current window (`since_current` until now) and the one before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowCounts {
    pub created_current: i64,
    pub created_past: i64,
    pub archived_current: i64,
    pub archived_past: i64,
    pub archived_total: i64,
    pub flags_ever: i64,
    pub events_current: i64,
    pub events_past: i64,
}

/// The types whose flags become potentially stale, each with the creation time before which one is.
pub type StaleCutoffs<'a> = &'a [(&'a str, Timestamp)];

/// `stale = 0 AND (type = $n AND created_at < $n+1 OR …)` with its placeholders from `$first`, the columns
/// of the features table named `table` (`features` or an alias).
fn potentially_stale_condition(table: &str, cutoffs: StaleCutoffs, first: usize) -> String {
    if cutoffs.is_empty() {
        return "0 = 1".to_owned();
    }
    let any: Vec<String> = (0..cutoffs.len())
        .map(|index| {
            let at = first + 2 * index;
            format!(
                "({table}.type = ${at} AND {table}.created_at < ${})",
                at + 1
            )
        })
        .collect();
    format!("({table}.stale = 0 AND ({}))", any.join(" OR "))
}

fn bind_cutoffs<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    cutoffs: StaleCutoffs<'q>,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for (feature_type, before) in cutoffs {
        query = query.bind(*feature_type).bind(*before);
    }
    query
}

/// The project's live flags counted per type (types without flags are absent), in type order.
pub async fn type_counts(
    conn: &mut AnyConnection,
    project: &str,
    cutoffs: StaleCutoffs<'_>,
) -> Result<Vec<TypeCounts>, StoreError> {
    let sql = format!(
        "SELECT type, COUNT(*) AS total, CAST(SUM(stale) AS BIGINT) AS stale, \
         CAST(SUM(CASE WHEN {} THEN 1 ELSE 0 END) AS BIGINT) AS potentially_stale \
         FROM features WHERE project_id = $1 AND archived_at IS NULL GROUP BY type ORDER BY type",
        potentially_stale_condition("features", cutoffs, 2)
    );
    let rows = bind_cutoffs(sqlx::query(&sql).bind(project), cutoffs)
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(TypeCounts {
                feature_type: row.try_get("type")?,
                total: row.try_get("total")?,
                stale: row.try_get("stale")?,
                potentially_stale: row.try_get("potentially_stale")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError)
}

/// The project's stale and potentially stale live flags, stale first, then by name; at most `limit`.
pub async fn unhealthy_flags(
    conn: &mut AnyConnection,
    project: &str,
    cutoffs: StaleCutoffs<'_>,
    limit: i64,
) -> Result<Vec<UnhealthyFlag>, StoreError> {
    let sql = format!(
        "SELECT name, type, stale, created_at FROM features \
         WHERE project_id = $1 AND archived_at IS NULL AND (stale <> 0 OR {}) \
         ORDER BY stale DESC, name LIMIT {limit}",
        potentially_stale_condition("features", cutoffs, 2)
    );
    let rows = bind_cutoffs(sqlx::query(&sql).bind(project), cutoffs)
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|row: &AnyRow| {
            Ok(UnhealthyFlag {
                name: row.try_get("name")?,
                feature_type: row.try_get("type")?,
                stale: super::encoding::flag(row, "stale")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError)
}

/// A project with its live flags' health counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectHealthRow {
    pub id: String,
    pub name: String,
    pub total: i64,
    pub stale: i64,
    pub potentially_stale: i64,
}

/// Every project, by name, with its live flags counted: all, stale, potentially stale.
pub async fn projects_with_health(
    conn: &mut AnyConnection,
    cutoffs: StaleCutoffs<'_>,
) -> Result<Vec<ProjectHealthRow>, StoreError> {
    let sql = format!(
        "SELECT p.id AS id, p.name AS name, COUNT(f.name) AS total, \
         CAST(COALESCE(SUM(f.stale), 0) AS BIGINT) AS stale, \
         CAST(COALESCE(SUM(CASE WHEN {} THEN 1 ELSE 0 END), 0) AS BIGINT) AS potentially_stale \
         FROM projects p LEFT JOIN features f ON f.project_id = p.id AND f.archived_at IS NULL \
         GROUP BY p.id, p.name ORDER BY p.name, p.id",
        potentially_stale_condition("f", cutoffs, 1)
    );
    let rows = bind_cutoffs(sqlx::query(&sql), cutoffs)
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(ProjectHealthRow {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                total: row.try_get("total")?,
                stale: row.try_get("stale")?,
                potentially_stale: row.try_get("potentially_stale")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError)
}

/// The live flags the user created or marked as a favourite: (name, project, type), by name.
pub async fn flags_of_user(
    conn: &mut AnyConnection,
    user_id: i64,
) -> Result<Vec<(String, String, String)>, StoreError> {
    let rows = sqlx::query(
        "SELECT name, project_id, type FROM features WHERE archived_at IS NULL AND ( \
           name IN (SELECT feature_name FROM favorite_features WHERE user_id = $1) \
           OR name IN (SELECT feature_name FROM events \
                       WHERE created_by_user_id = $1 AND type = 'feature-created')) \
         ORDER BY name",
    )
    .bind(user_id)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get("name")?,
                row.try_get("project_id")?,
                row.try_get("type")?,
            ))
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError)
}

/// Flags created and archived and events recorded in the current window (from `since_current`) and the past
/// one (from `since_past` to `since_current`); all-time archived flags and flags ever created (archived ones
/// included).
pub async fn window_counts(
    conn: &mut AnyConnection,
    project: &str,
    since_current: Timestamp,
    since_past: Timestamp,
) -> Result<WindowCounts, StoreError> {
    let row = sqlx::query(
        "SELECT \
         (SELECT COUNT(*) FROM features WHERE project_id = $1 AND created_at >= $2) AS created_current, \
         (SELECT COUNT(*) FROM features WHERE project_id = $1 AND created_at >= $3 AND created_at < $2) \
           AS created_past, \
         (SELECT COUNT(*) FROM features WHERE project_id = $1 AND archived_at >= $2) AS archived_current, \
         (SELECT COUNT(*) FROM features WHERE project_id = $1 AND archived_at >= $3 AND archived_at < $2) \
           AS archived_past, \
         (SELECT COUNT(*) FROM features WHERE project_id = $1 AND archived_at IS NOT NULL) AS archived_total, \
         (SELECT COUNT(*) FROM features WHERE project_id = $1) AS flags_ever, \
         (SELECT COUNT(*) FROM events WHERE project = $1 AND created_at >= $2) AS events_current, \
         (SELECT COUNT(*) FROM events WHERE project = $1 AND created_at >= $3 AND created_at < $2) \
           AS events_past",
    )
    .bind(project)
    .bind(since_current)
    .bind(since_past)
    .fetch_one(conn)
    .await?;
    let count = |column: &str| row.try_get::<i64, _>(column);
    Ok(WindowCounts {
        created_current: count("created_current")?,
        created_past: count("created_past")?,
        archived_current: count("archived_current")?,
        archived_past: count("archived_past")?,
        archived_total: count("archived_total")?,
        flags_ever: count("flags_ever")?,
        events_current: count("events_current")?,
        events_past: count("events_past")?,
    })
}

/// The project's events per day (`YYYY-MM-DD`, UTC) since `since`, in day order.
pub async fn activity_by_day(
    conn: &mut AnyConnection,
    project: &str,
    since: Timestamp,
) -> Result<Vec<(String, i64)>, StoreError> {
    let rows = sqlx::query(
        "SELECT SUBSTR(created_at, 1, 10) AS day, COUNT(*) AS count FROM events \
         WHERE project = $1 AND created_at >= $2 GROUP BY SUBSTR(created_at, 1, 10) ORDER BY day",
    )
    .bind(project)
    .bind(since)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("day")?, row.try_get("count")?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError)
}

/// Whether an SDK or an edge has reported any live flag of the project, in any environment (one index step
/// per flag until the first one reported).
pub async fn any_seen(conn: &mut AnyConnection, project: &str) -> Result<bool, StoreError> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM features f WHERE f.project_id = $1 AND f.archived_at IS NULL AND ( \
           EXISTS (SELECT 1 FROM flags_served_by_edges s WHERE s.feature_name = f.name) \
           OR EXISTS (SELECT 1 FROM client_usage_minutes s WHERE s.feature_name = f.name) \
           OR EXISTS (SELECT 1 FROM client_usage_hours s WHERE s.feature_name = f.name)) \
         LIMIT 1",
    )
    .bind(project)
    .fetch_optional(conn)
    .await?;
    Ok(found.is_some())
}

/// The project's first flag (archived ones included), by creation.
pub async fn first_flag(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT name FROM features WHERE project_id = $1 ORDER BY created_at, name LIMIT 1",
    )
    .bind(project)
    .fetch_optional(conn)
    .await?)
}

/// Each flag of the project (archived ones included) created from `created_since` that was switched on in a
/// production-type environment after it was created: its name, creation and first such switch, by name.
pub async fn production_dates(
    conn: &mut AnyConnection,
    project: &str,
    created_since: Timestamp,
) -> Result<Vec<(String, Timestamp, Timestamp)>, StoreError> {
    let rows = sqlx::query(
        "SELECT f.name AS name, f.created_at AS created_at, MIN(ev.created_at) AS enabled_at \
         FROM features f \
         JOIN events ev ON ev.feature_name = f.name AND ev.type = 'feature-environment-enabled' \
           AND ev.created_at >= f.created_at \
         JOIN environments e ON e.name = ev.environment AND e.type = 'production' \
         WHERE f.project_id = $1 AND f.created_at >= $2 GROUP BY f.name, f.created_at ORDER BY f.name",
    )
    .bind(project)
    .bind(created_since)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get("name")?,
                row.try_get("created_at")?,
                row.try_get("enabled_at")?,
            ))
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError)
}

/// The API tokens made for this project alone.
pub async fn token_count(conn: &mut AnyConnection, project: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM api_tokens WHERE projects = $1")
            .bind(json_text(&[project])?)
            .fetch_one(conn)
            .await?,
    )
}
