//! SQL of the applications SDKs registered or reported usage from: their records, instances, registrations
//! and the flag names they reported (read by the applications views, forgotten by `delete_application`).
//! Times are Unix milliseconds. What they count is in [`super::metrics`].

use super::encoding::{json, millis};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct ApplicationRow {
    pub app_name: String,
    pub description: Option<String>,
    pub url: Option<String>,
    pub color: Option<String>,
    pub icon: Option<String>,
    /// The strategies of its last registration.
    pub strategies: Vec<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub last_seen: Timestamp,
}

impl FromRow<'_, AnyRow> for ApplicationRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(ApplicationRow {
            app_name: row.try_get("app_name")?,
            description: row.try_get("description")?,
            url: row.try_get("url")?,
            color: row.try_get("color")?,
            icon: row.try_get("icon")?,
            strategies: json(row, "strategies")?,
            created_at: millis(row, "created_at_ms")?,
            updated_at: millis(row, "updated_at_ms")?,
            last_seen: millis(row, "last_seen_ms")?,
        })
    }
}

const APPLICATION_COLUMNS: &str =
    "app_name, description, url, color, icon, strategies, created_at_ms, \
    updated_at_ms, last_seen_ms";

/// Applications last seen in `[from_ms, to_ms]`, by name.
pub async fn applications_seen_between(
    conn: &mut AnyConnection,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<ApplicationRow>, StoreError> {
    let sql = format!(
        "SELECT {APPLICATION_COLUMNS} FROM client_applications \
         WHERE last_seen_ms >= $1 AND last_seen_ms <= $2 ORDER BY app_name"
    );
    Ok(sqlx::query_as(&sql)
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(conn)
        .await?)
}

/// One application of a page of them, with its instances counted.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplicationListingRow {
    pub app_name: String,
    pub description: Option<String>,
    pub last_seen: Timestamp,
    pub instance_count: i64,
}

impl FromRow<'_, AnyRow> for ApplicationListingRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(ApplicationListingRow {
            app_name: row.try_get("app_name")?,
            description: row.try_get("description")?,
            last_seen: millis(row, "last_seen_ms")?,
            instance_count: row.try_get("instance_count")?,
        })
    }
}

/// A page of every application, by name (the primary key's order), and how many there are in all. Each
/// count walks the instances' primary key `(app_name, instance_id)`.
pub async fn application_page(
    conn: &mut AnyConnection,
    offset: i64,
    limit: i64,
) -> Result<(Vec<ApplicationListingRow>, i64), StoreError> {
    let rows = sqlx::query_as(
        "SELECT a.app_name, a.description, a.last_seen_ms, \
           (SELECT COUNT(*) FROM client_instances i WHERE i.app_name = a.app_name) AS instance_count \
         FROM client_applications a ORDER BY a.app_name LIMIT $1 OFFSET $2",
    )
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *conn)
    .await?;
    let total = sqlx::query_scalar("SELECT COUNT(*) FROM client_applications")
        .fetch_one(conn)
        .await?;
    Ok((rows, total))
}

pub async fn applications_named(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<ApplicationRow>, StoreError> {
    let mut rows = Vec::with_capacity(names.len());
    for name in names {
        if let Some(row) = application(&mut *conn, name).await? {
            rows.push(row);
        }
    }
    Ok(rows)
}

pub async fn application(
    conn: &mut AnyConnection,
    app_name: &str,
) -> Result<Option<ApplicationRow>, StoreError> {
    let sql = format!("SELECT {APPLICATION_COLUMNS} FROM client_applications WHERE app_name = $1");
    Ok(sqlx::query_as(&sql)
        .bind(app_name)
        .fetch_optional(conn)
        .await?)
}

#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRow {
    pub instance_id: String,
    pub client_ip: Option<String>,
    pub sdk_version: Option<String>,
    pub environment: Option<String>,
    pub created_at: Timestamp,
    pub last_seen: Timestamp,
}

impl FromRow<'_, AnyRow> for InstanceRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(InstanceRow {
            instance_id: row.try_get("instance_id")?,
            client_ip: row.try_get("client_ip")?,
            sdk_version: row.try_get("sdk_version")?,
            environment: row.try_get("environment")?,
            created_at: millis(row, "created_at_ms")?,
            last_seen: millis(row, "last_seen_ms")?,
        })
    }
}

/// An application's instances, most recently seen first.
pub async fn instances(
    conn: &mut AnyConnection,
    app_name: &str,
) -> Result<Vec<InstanceRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT instance_id, client_ip, sdk_version, environment, created_at_ms, last_seen_ms \
         FROM client_instances WHERE app_name = $1 ORDER BY last_seen_ms DESC, instance_id",
    )
    .bind(app_name)
    .fetch_all(conn)
    .await?)
}

/// The distinct strategy lists an application registered with, in the text order of their JSON.
pub async fn registrations(
    conn: &mut AnyConnection,
    app_name: &str,
) -> Result<Vec<Vec<String>>, StoreError> {
    let rows: Vec<AnyRow> = sqlx::query(
        "SELECT strategies FROM client_application_registrations WHERE app_name = $1 ORDER BY strategies",
    )
    .bind(app_name)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(|row| json(row, "strategies"))
        .collect::<sqlx::Result<_>>()?)
}

/// Every flag name an application ever reported, sorted.
pub async fn seen_toggles(
    conn: &mut AnyConnection,
    app_name: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT feature_name FROM client_seen_toggles WHERE app_name = $1 ORDER BY feature_name",
    )
    .bind(app_name)
    .fetch_all(conn)
    .await?)
}

/// Forgets an application: its record, registrations, instances and the flag names it reported (its usage
/// counts stay, they are the flags'), in one transaction.
pub async fn delete_application(
    conn: &mut AnyConnection,
    app_name: &str,
) -> Result<(), StoreError> {
    use sqlx::Connection;
    let mut tx = conn.begin().await?;
    for table in [
        "client_applications",
        "client_application_registrations",
        "client_instances",
        "client_seen_toggles",
    ] {
        sqlx::query(&format!("DELETE FROM {table} WHERE app_name = $1"))
            .bind(app_name)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// A flag name some application reported usage of that no flag has: by name, application, environment,
/// with the last minute (or hour) it was counted in.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownFlagRow {
    pub feature_name: String,
    pub app_name: String,
    pub environment: String,
    pub last_seen: Timestamp,
}

impl FromRow<'_, AnyRow> for UnknownFlagRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(UnknownFlagRow {
            feature_name: row.try_get("feature_name")?,
            app_name: row.try_get("app_name")?,
            environment: row.try_get("environment")?,
            last_seen: millis(row, "last_ms")?,
        })
    }
}

pub async fn unknown_flags(conn: &mut AnyConnection) -> Result<Vec<UnknownFlagRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT feature_name, app_name, environment, MAX(last_ms) AS last_ms FROM ( \
           SELECT feature_name, app_name, environment, MAX(minute_ms) AS last_ms FROM client_usage_minutes \
             GROUP BY feature_name, app_name, environment \
           UNION ALL \
           SELECT feature_name, app_name, environment, MAX(hour_ms) AS last_ms FROM client_usage_hours \
             GROUP BY feature_name, app_name, environment \
         ) u WHERE feature_name NOT IN (SELECT name FROM features) \
         GROUP BY feature_name, app_name, environment ORDER BY feature_name, app_name, environment",
    )
    .fetch_all(conn)
    .await?)
}

/// The applications that reported a flag of `project`, by name.
pub async fn applications_of_project(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT t.app_name FROM client_seen_toggles t JOIN features f ON f.name = t.feature_name \
         WHERE f.project_id = $1 ORDER BY t.app_name",
    )
    .bind(project)
    .fetch_all(conn)
    .await?)
}

/// Each distinct (application, `sdkVersion`) its instances reported, by application then version; with
/// `project`, only the applications that reported a flag of that project.
pub async fn sdk_versions(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<Vec<(String, String)>, StoreError> {
    let rows: Vec<AnyRow> = match project {
        None => {
            sqlx::query(
                "SELECT DISTINCT app_name, sdk_version FROM client_instances \
                 WHERE sdk_version IS NOT NULL ORDER BY app_name, sdk_version",
            )
            .fetch_all(conn)
            .await?
        }
        Some(project) => {
            sqlx::query(
                "SELECT DISTINCT i.app_name, i.sdk_version FROM client_instances i \
                 WHERE i.sdk_version IS NOT NULL AND i.app_name IN (\
                   SELECT t.app_name FROM client_seen_toggles t JOIN features f ON f.name = t.feature_name \
                   WHERE f.project_id = $1) \
                 ORDER BY i.app_name, i.sdk_version",
            )
            .bind(project)
            .fetch_all(conn)
            .await?
        }
    };
    rows.iter()
        .map(|row| Ok((row.try_get("app_name")?, row.try_get("sdk_version")?)))
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}
