//! SQL of usage metrics: applications, instances, minute and hour buckets (upserts whose counts add up), the
//! edges' batches and evaluations. Times are Unix milliseconds. Sums are cast to BIGINT (Postgres would
//! answer NUMERIC).

use super::encoding::{json, json_text, millis};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use vexil_proto::v1;

fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Records a sighting of an application: created on first sight, `last_seen` moves forwards, a
/// registration replaces `strategies` (and is remembered among the distinct lists).
pub async fn upsert_application(
    conn: &mut AnyConnection,
    app: &v1::ApplicationSeen,
) -> Result<(), StoreError> {
    let strategies = json_text(&app.strategies)?;
    sqlx::query(
        "INSERT INTO client_applications (app_name, strategies, created_at_ms, updated_at_ms, last_seen_ms) \
         VALUES ($1, $2, $3, $3, $3) \
         ON CONFLICT (app_name) DO UPDATE SET \
           last_seen_ms = CASE WHEN excluded.last_seen_ms > client_applications.last_seen_ms \
             THEN excluded.last_seen_ms ELSE client_applications.last_seen_ms END, \
           strategies = CASE WHEN $4 = 1 THEN excluded.strategies ELSE client_applications.strategies END, \
           updated_at_ms = CASE WHEN $4 = 1 THEN excluded.updated_at_ms ELSE client_applications.updated_at_ms END",
    )
    .bind(&app.app_name)
    .bind(&strategies)
    .bind(app.seen_at_ms)
    .bind(i64::from(app.registered))
    .execute(&mut *conn)
    .await?;
    if app.registered {
        sqlx::query(
            "INSERT INTO client_application_registrations (app_name, strategies) VALUES ($1, $2) \
             ON CONFLICT (app_name, strategies) DO NOTHING",
        )
        .bind(&app.app_name)
        .bind(&strategies)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Application metadata (`POST /api/admin/metrics/applications/:appName`): creates the application if
/// needed; absent fields keep their value.
pub async fn upsert_metadata(
    conn: &mut AnyConnection,
    app_name: &str,
    metadata: &ApplicationMetadata,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO client_applications (app_name, description, url, color, icon, strategies, created_at_ms, \
         updated_at_ms, last_seen_ms) VALUES ($1, $2, $3, $4, $5, '[]', $6, $6, $6) \
         ON CONFLICT (app_name) DO UPDATE SET \
           description = COALESCE(excluded.description, client_applications.description), \
           url = COALESCE(excluded.url, client_applications.url), \
           color = COALESCE(excluded.color, client_applications.color), \
           icon = COALESCE(excluded.icon, client_applications.icon), \
           updated_at_ms = excluded.updated_at_ms",
    )
    .bind(app_name)
    .bind(&metadata.description)
    .bind(&metadata.url)
    .bind(&metadata.color)
    .bind(&metadata.icon)
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplicationMetadata {
    pub description: Option<String>,
    pub url: Option<String>,
    pub color: Option<String>,
    pub icon: Option<String>,
}

pub async fn upsert_instance(
    conn: &mut AnyConnection,
    instance: &v1::InstanceSeen,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO client_instances (app_name, instance_id, client_ip, sdk_version, environment, \
         created_at_ms, last_seen_ms) VALUES ($1, $2, $3, $4, $5, $6, $6) \
         ON CONFLICT (app_name, instance_id) DO UPDATE SET \
           client_ip = COALESCE(excluded.client_ip, client_instances.client_ip), \
           sdk_version = COALESCE(excluded.sdk_version, client_instances.sdk_version), \
           environment = COALESCE(excluded.environment, client_instances.environment), \
           last_seen_ms = CASE WHEN excluded.last_seen_ms > client_instances.last_seen_ms \
             THEN excluded.last_seen_ms ELSE client_instances.last_seen_ms END",
    )
    .bind(&instance.app_name)
    .bind(&instance.instance_id)
    .bind(&instance.client_ip)
    .bind(&instance.sdk_version)
    .bind(&instance.environment)
    .bind(instance.seen_at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Adds one flag's counts to its minute bucket (and its variants'), and remembers the name as seen.
pub async fn add_count(conn: &mut AnyConnection, c: &v1::FlagCount) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO client_usage_minutes (feature_name, app_name, environment, minute_ms, yes_count, no_count) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (feature_name, app_name, environment, minute_ms) DO UPDATE SET \
           yes_count = client_usage_minutes.yes_count + excluded.yes_count, \
           no_count = client_usage_minutes.no_count + excluded.no_count",
    )
    .bind(&c.feature_name)
    .bind(&c.app_name)
    .bind(&c.environment)
    .bind(c.minute_ms)
    .bind(count(c.yes))
    .bind(count(c.no))
    .execute(&mut *conn)
    .await?;
    for (variant, n) in &c.variants {
        sqlx::query(
            "INSERT INTO client_usage_minute_variants (feature_name, app_name, environment, minute_ms, variant, count) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (feature_name, app_name, environment, minute_ms, variant) DO UPDATE SET \
               count = client_usage_minute_variants.count + excluded.count",
        )
        .bind(&c.feature_name)
        .bind(&c.app_name)
        .bind(&c.environment)
        .bind(c.minute_ms)
        .bind(variant)
        .bind(count(*n))
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query(
        "INSERT INTO client_seen_toggles (app_name, feature_name) VALUES ($1, $2) \
         ON CONFLICT (app_name, feature_name) DO NOTHING",
    )
    .bind(&c.app_name)
    .bind(&c.feature_name)
    .execute(conn)
    .await?;
    Ok(())
}

/// Claims an edge's batch: false when it was counted before.
pub async fn claim_batch(
    conn: &mut AnyConnection,
    edge_id: &str,
    batch_id: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO usage_batches (edge_id, batch_id, received_at_ms) VALUES ($1, $2, $3) \
         ON CONFLICT (edge_id, batch_id) DO NOTHING",
    )
    .bind(edge_id)
    .bind(batch_id)
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn upsert_edge(
    conn: &mut AnyConnection,
    edge_id: &str,
    version: &str,
    applied_revision: i64,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO edges (edge_id, version, applied_revision, last_report_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (edge_id) DO UPDATE SET version = excluded.version, \
           applied_revision = excluded.applied_revision, last_report_ms = excluded.last_report_ms",
    )
    .bind(edge_id)
    .bind(version)
    .bind(applied_revision)
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn add_evaluations(
    conn: &mut AnyConnection,
    edge_id: &str,
    e: &v1::EvaluationCount,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO edge_evaluation_minutes (edge_id, environment, feature_name, minute_ms, enabled_count, \
         disabled_count) VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (edge_id, environment, feature_name, minute_ms) DO UPDATE SET \
           enabled_count = edge_evaluation_minutes.enabled_count + excluded.enabled_count, \
           disabled_count = edge_evaluation_minutes.disabled_count + excluded.disabled_count",
    )
    .bind(edge_id)
    .bind(&e.environment)
    .bind(&e.feature_name)
    .bind(e.minute_ms)
    .bind(count(e.enabled))
    .bind(count(e.disabled))
    .execute(conn)
    .await?;
    Ok(())
}

/// Sums per flag and application over the minute buckets in `[from_ms, to_ms]`.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UsageSum {
    pub feature_name: String,
    pub app_name: String,
    pub yes_count: i64,
    pub no_count: i64,
}

pub async fn usage_between(
    conn: &mut AnyConnection,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<UsageSum>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT feature_name, app_name, CAST(SUM(yes_count) AS BIGINT) AS yes_count, \
         CAST(SUM(no_count) AS BIGINT) AS no_count FROM client_usage_minutes \
         WHERE minute_ms >= $1 AND minute_ms <= $2 GROUP BY feature_name, app_name \
         ORDER BY feature_name, app_name",
    )
    .bind(from_ms)
    .bind(to_ms)
    .fetch_all(conn)
    .await?)
}

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

/// One flag's counts per hour, application and environment since `from_ms` (minute buckets summed per hour,
/// and the rolled-up hours).
#[derive(Debug, Clone, PartialEq)]
pub struct HourlyUsage {
    /// The start of the hour.
    pub hour: Timestamp,
    pub app_name: String,
    pub environment: String,
    pub yes_count: i64,
    pub no_count: i64,
}

impl FromRow<'_, AnyRow> for HourlyUsage {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(HourlyUsage {
            hour: millis(row, "hour_ms")?,
            app_name: row.try_get("app_name")?,
            environment: row.try_get("environment")?,
            yes_count: row.try_get("yes_count")?,
            no_count: row.try_get("no_count")?,
        })
    }
}

pub async fn hourly_usage(
    conn: &mut AnyConnection,
    feature_name: &str,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<HourlyUsage>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT hour_ms, app_name, environment, CAST(SUM(yes_count) AS BIGINT) AS yes_count, \
           CAST(SUM(no_count) AS BIGINT) AS no_count FROM ( \
             SELECT minute_ms - (minute_ms % 3600000) AS hour_ms, app_name, environment, yes_count, no_count \
             FROM client_usage_minutes WHERE feature_name = $1 AND minute_ms >= $2 AND minute_ms <= $3 \
             UNION ALL \
             SELECT hour_ms, app_name, environment, yes_count, no_count \
             FROM client_usage_hours WHERE feature_name = $1 AND hour_ms >= $2 AND hour_ms <= $3 \
           ) AS buckets GROUP BY hour_ms, app_name, environment ORDER BY hour_ms, app_name, environment",
    )
    .bind(feature_name)
    .bind(from_ms)
    .bind(to_ms)
    .fetch_all(conn)
    .await?)
}

#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRow {
    pub edge_id: String,
    pub version: String,
    pub applied_revision: i64,
    pub last_report: Timestamp,
    pub enabled_count: i64,
    pub disabled_count: i64,
}

impl FromRow<'_, AnyRow> for EdgeRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(EdgeRow {
            edge_id: row.try_get("edge_id")?,
            version: row.try_get("version")?,
            applied_revision: row.try_get("applied_revision")?,
            last_report: millis(row, "last_report_ms")?,
            enabled_count: row.try_get("enabled_count")?,
            disabled_count: row.try_get("disabled_count")?,
        })
    }
}

/// Every edge, with the evaluations it served in `[from_ms, to_ms]`.
pub async fn edges(
    conn: &mut AnyConnection,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<EdgeRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT e.edge_id, e.version, e.applied_revision, e.last_report_ms, \
           CAST(COALESCE(SUM(m.enabled_count), 0) AS BIGINT) AS enabled_count, \
           CAST(COALESCE(SUM(m.disabled_count), 0) AS BIGINT) AS disabled_count \
         FROM edges e LEFT JOIN edge_evaluation_minutes m \
           ON m.edge_id = e.edge_id AND m.minute_ms >= $1 AND m.minute_ms <= $2 \
         GROUP BY e.edge_id, e.version, e.applied_revision, e.last_report_ms ORDER BY e.edge_id",
    )
    .bind(from_ms)
    .bind(to_ms)
    .fetch_all(conn)
    .await?)
}

/// Rolls minute buckets before `minutes_before_ms` up into hours, drops hours before `hours_before_ms`,
/// and forgets edge batches and evaluations before `minutes_before_ms` (within the caller's transaction).
pub async fn roll_up(
    conn: &mut AnyConnection,
    minutes_before_ms: i64,
    hours_before_ms: i64,
) -> Result<u64, StoreError> {
    // `WHERE true` before ON CONFLICT: SQLite's parser needs it after a SELECT.
    sqlx::query(
        "INSERT INTO client_usage_hours (feature_name, app_name, environment, hour_ms, yes_count, no_count) \
         SELECT feature_name, app_name, environment, hour_ms, CAST(SUM(yes_count) AS BIGINT), \
           CAST(SUM(no_count) AS BIGINT) FROM ( \
             SELECT feature_name, app_name, environment, minute_ms - (minute_ms % 3600000) AS hour_ms, \
               yes_count, no_count FROM client_usage_minutes WHERE minute_ms < $1) AS old \
         WHERE true GROUP BY feature_name, app_name, environment, hour_ms \
         ON CONFLICT (feature_name, app_name, environment, hour_ms) DO UPDATE SET \
           yes_count = client_usage_hours.yes_count + excluded.yes_count, \
           no_count = client_usage_hours.no_count + excluded.no_count",
    )
    .bind(minutes_before_ms)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO client_usage_hour_variants (feature_name, app_name, environment, hour_ms, variant, count) \
         SELECT feature_name, app_name, environment, hour_ms, variant, CAST(SUM(count) AS BIGINT) FROM ( \
             SELECT feature_name, app_name, environment, minute_ms - (minute_ms % 3600000) AS hour_ms, \
               variant, count FROM client_usage_minute_variants WHERE minute_ms < $1) AS old \
         WHERE true GROUP BY feature_name, app_name, environment, hour_ms, variant \
         ON CONFLICT (feature_name, app_name, environment, hour_ms, variant) DO UPDATE SET \
           count = client_usage_hour_variants.count + excluded.count",
    )
    .bind(minutes_before_ms)
    .execute(&mut *conn)
    .await?;
    let rolled = sqlx::query("DELETE FROM client_usage_minutes WHERE minute_ms < $1")
        .bind(minutes_before_ms)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    for sql in [
        "DELETE FROM client_usage_minute_variants WHERE minute_ms < $1",
        "DELETE FROM edge_evaluation_minutes WHERE minute_ms < $1",
        "DELETE FROM usage_batches WHERE received_at_ms < $1",
    ] {
        sqlx::query(sql)
            .bind(minutes_before_ms)
            .execute(&mut *conn)
            .await?;
    }
    for sql in [
        "DELETE FROM client_usage_hours WHERE hour_ms < $1",
        "DELETE FROM client_usage_hour_variants WHERE hour_ms < $1",
    ] {
        sqlx::query(sql)
            .bind(hours_before_ms)
            .execute(&mut *conn)
            .await?;
    }
    Ok(rolled)
}
