//! SQL of the audit trail.

use super::encoding::optional_json;
use super::StoreError;
use crate::time::Timestamp;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub id: i64,
    pub event_type: String,
    pub created_at: Timestamp,
    pub created_by: String,
    pub created_by_user_id: i64,
    pub project: Option<String>,
    pub environment: Option<String>,
    pub feature_name: Option<String>,
    pub data: Option<Value>,
    pub pre_data: Option<Value>,
}

impl FromRow<'_, AnyRow> for EventRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(EventRow {
            id: row.try_get("id")?,
            event_type: row.try_get("type")?,
            created_at: row.try_get("created_at")?,
            created_by: row.try_get("created_by")?,
            created_by_user_id: row.try_get("created_by_user_id")?,
            project: row.try_get("project")?,
            environment: row.try_get("environment")?,
            feature_name: row.try_get("feature_name")?,
            data: optional_json(row, "data")?,
            pre_data: optional_json(row, "pre_data")?,
        })
    }
}

/// The columns an [`EventRow`] is read from.
pub const COLUMNS: &str =
    "id, type, created_at, created_by, created_by_user_id, project, environment, feature_name, data, pre_data";

/// Which events to read; `None` filters match everything.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub project: Option<String>,
    pub feature: Option<String>,
    pub event_type: Option<String>,
}

impl EventFilter {
    /// The WHERE clause with `$1..` placeholders and the values to bind, in order.
    fn clause(&self) -> (String, Vec<&str>) {
        let mut conditions = Vec::new();
        let mut values = Vec::new();
        for (column, value) in [
            ("project", &self.project),
            ("feature_name", &self.feature),
            ("type", &self.event_type),
        ] {
            if let Some(value) = value {
                values.push(value.as_str());
                conditions.push(format!("{column} = ${}", values.len()));
            }
        }
        if conditions.is_empty() {
            (String::new(), values)
        } else {
            (format!("WHERE {}", conditions.join(" AND ")), values)
        }
    }
}

/// Matching events, newest first.
pub async fn list(
    conn: &mut AnyConnection,
    filter: &EventFilter,
    offset: i64,
    limit: i64,
) -> Result<Vec<EventRow>, StoreError> {
    let (clause, values) = filter.clause();
    let sql = format!(
        "SELECT {COLUMNS} FROM events {clause} ORDER BY id DESC LIMIT {limit} OFFSET {offset}"
    );
    let mut query = sqlx::query_as(&sql);
    for value in values {
        query = query.bind(value);
    }
    Ok(query.fetch_all(conn).await?)
}

pub async fn count(conn: &mut AnyConnection, filter: &EventFilter) -> Result<i64, StoreError> {
    let (clause, values) = filter.clause();
    let sql = format!("SELECT COUNT(*) FROM events {clause}");
    let mut query = sqlx::query_scalar(&sql);
    for value in values {
        query = query.bind(value);
    }
    Ok(query.fetch_one(conn).await?)
}

/// What the publisher needs of an event: its revision, type and flag.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RevisionEvent {
    pub revision: i64,
    #[sqlx(rename = "type")]
    pub event_type: String,
    pub feature_name: Option<String>,
}

/// The events of the revisions in `after < revision <= upto`, at most `limit` of them.
pub async fn of_revisions(
    conn: &mut AnyConnection,
    after: i64,
    upto: i64,
    limit: i64,
) -> Result<Vec<RevisionEvent>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT revision, type, feature_name FROM events WHERE revision > $1 AND revision <= $2 \
         ORDER BY id LIMIT $3",
    )
    .bind(after)
    .bind(upto)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// One event by id.
pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<EventRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, type, created_at, created_by, created_by_user_id, project, environment, feature_name, data, \
         pre_data FROM events WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

/// Who recorded events: each distinct (user id, name), by name, optionally only events of flag creation in
/// one project.
pub async fn creators(
    conn: &mut AnyConnection,
    created_flags_in: Option<&str>,
) -> Result<Vec<(i64, String)>, StoreError> {
    let rows: Vec<(i64, String)> = match created_flags_in {
        None => {
            sqlx::query_as(
                "SELECT DISTINCT created_by_user_id, created_by FROM events ORDER BY created_by, created_by_user_id",
            )
            .fetch_all(conn)
            .await?
        }
        Some(project) => {
            sqlx::query_as(
                "SELECT DISTINCT created_by_user_id, created_by FROM events \
                 WHERE type = 'feature-created' AND project = $1 ORDER BY created_by, created_by_user_id",
            )
            .bind(project)
            .fetch_all(conn)
            .await?
        }
    };
    Ok(rows)
}
