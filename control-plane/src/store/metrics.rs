//! SQL of usage metrics: sightings of applications and instances, minute and hour buckets (upserts whose
//! counts add up), the edges' batches and evaluations (the applications' reads: [`super::applications`]). Times are Unix milliseconds. Counts saturate at the BIGINT maximum instead
//! of overflowing: every addition is [`saturating_add`], every sum [`saturating_sum`] (the same SQL text on
//! SQLite and Postgres).

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;

use super::encoding::{json_text, millis};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use vexil_proto::v1;

/// A count as stored: a BIGINT, so at most `i64::MAX`.
fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// SQL for `a + b` of two non-negative counts, `i64::MAX` when the sum would pass it (Postgres raises
/// "bigint out of range" and SQLite turns the integer into a REAL).
fn saturating_add(a: &str, b: &str) -> String {
    format!("CASE WHEN {a} > 9223372036854775807 - {b} THEN 9223372036854775807 ELSE {a} + {b} END")
}

/// SQL for the sum of a non-negative BIGINT column over a group (0 when there is none), exact up to
/// `i64::MAX` and `i64::MAX` past it. Postgres sums BIGINT as NUMERIC (whose cast back fails past the maximum)
/// and SQLite's `SUM` raises "integer overflow", so each value is split at 2^32: neither the high nor the low
/// halves' sum can overflow (fewer than 2^31 rows), and the two are recombined with the carry, saturating
/// once the high half reaches 2^31.
fn saturating_sum(column: &str) -> String {
    let high = format!("COALESCE(CAST(SUM({column} / 4294967296) AS BIGINT), 0)");
    let low = format!("COALESCE(CAST(SUM({column} % 4294967296) AS BIGINT), 0)");
    format!(
        "CASE WHEN {high} + {low} / 4294967296 >= 2147483648 THEN 9223372036854775807 \
         ELSE ({high} + {low} / 4294967296) * 4294967296 + {low} % 4294967296 END"
    )
}

/// Creates application `app_name` first seen at `seen_at_ms` unless it exists: whether it created it.
pub async fn create_application(
    conn: &mut AnyConnection,
    app_name: &str,
    seen_at_ms: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO client_applications (app_name, strategies, created_at_ms, updated_at_ms, last_seen_ms) \
         VALUES ($1, '[]', $2, $2, $2) ON CONFLICT (app_name) DO NOTHING",
    )
    .bind(app_name)
    .bind(seen_at_ms)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Most application names [`KnownApplications`] remembers; past this it starts over.
const MOST_KNOWN: usize = 100_000;

/// The applications this process knows exist (created, with their `application-created` event), so that the
/// usage ingest looks an application up once per process, not on every post.
#[derive(Debug, Default)]
pub struct KnownApplications(Mutex<HashSet<String>>);

impl KnownApplications {
    pub fn contains(&self, app_name: &str) -> bool {
        let names = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        names.contains(app_name)
    }

    pub fn insert(&self, app_name: &str) {
        let mut names = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if names.len() >= MOST_KNOWN {
            names.clear();
        }
        names.insert(app_name.to_owned());
    }
}

/// Records a sighting of an application: created on first sight, `last_seen` moves forwards, a
/// registration replaces `strategies` and is remembered among the distinct lists, of which at most
/// `max_registrations` are kept (a further one is not remembered; a known one's `last_seen` moves forwards).
pub async fn upsert_application(
    conn: &mut AnyConnection,
    app: &v1::ApplicationSeen,
    max_registrations: usize,
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
        // The application's row, written above, is locked until the commit: no other writer counts along.
        let known: Vec<String> = sqlx::query_scalar(
            "SELECT strategies FROM client_application_registrations WHERE app_name = $1",
        )
        .bind(&app.app_name)
        .fetch_all(&mut *conn)
        .await?;
        if known.len() < max_registrations || known.contains(&strategies) {
            sqlx::query(
                "INSERT INTO client_application_registrations (app_name, strategies, last_seen_ms) \
                 VALUES ($1, $2, $3) ON CONFLICT (app_name, strategies) DO UPDATE SET \
                   last_seen_ms = CASE WHEN excluded.last_seen_ms > client_application_registrations.last_seen_ms \
                     THEN excluded.last_seen_ms ELSE client_application_registrations.last_seen_ms END",
            )
            .bind(&app.app_name)
            .bind(&strategies)
            .bind(app.seen_at_ms)
            .execute(&mut *conn)
            .await?;
        }
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

/// Adds one flag's counts to its minute bucket (and its variants', of which at most `max_variants` are kept
/// per bucket: further names are not counted), and remembers the name as seen in that minute.
pub async fn add_count(
    conn: &mut AnyConnection,
    c: &v1::FlagCount,
    max_variants: usize,
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO client_usage_minutes (feature_name, app_name, environment, minute_ms, yes_count, no_count) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (feature_name, app_name, environment, minute_ms) DO UPDATE SET \
           yes_count = {}, no_count = {}",
        saturating_add("client_usage_minutes.yes_count", "excluded.yes_count"),
        saturating_add("client_usage_minutes.no_count", "excluded.no_count"),
    );
    sqlx::query(&sql)
        .bind(&c.feature_name)
        .bind(&c.app_name)
        .bind(&c.environment)
        .bind(c.minute_ms)
        .bind(count(c.yes))
        .bind(count(c.no))
        .execute(&mut *conn)
        .await?;
    if !c.variants.is_empty() {
        // The bucket's row, written above, is locked until the commit: no other writer adds names meanwhile.
        let mut known: BTreeSet<String> = sqlx::query_scalar(
            "SELECT variant FROM client_usage_minute_variants \
             WHERE feature_name = $1 AND app_name = $2 AND environment = $3 AND minute_ms = $4",
        )
        .bind(&c.feature_name)
        .bind(&c.app_name)
        .bind(&c.environment)
        .bind(c.minute_ms)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .collect();
        let sql = format!(
            "INSERT INTO client_usage_minute_variants (feature_name, app_name, environment, minute_ms, variant, count) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (feature_name, app_name, environment, minute_ms, variant) DO UPDATE SET count = {}",
            saturating_add("client_usage_minute_variants.count", "excluded.count"),
        );
        let mut variants: Vec<(&String, &u64)> = c.variants.iter().collect();
        variants.sort_unstable();
        for (variant, n) in variants {
            if !known.contains(variant) {
                if known.len() >= max_variants {
                    continue;
                }
                known.insert(variant.clone());
            }
            sqlx::query(&sql)
                .bind(&c.feature_name)
                .bind(&c.app_name)
                .bind(&c.environment)
                .bind(c.minute_ms)
                .bind(variant)
                .bind(count(*n))
                .execute(&mut *conn)
                .await?;
        }
    }
    sqlx::query(
        "INSERT INTO client_seen_toggles (app_name, feature_name, last_seen_ms) VALUES ($1, $2, $3) \
         ON CONFLICT (app_name, feature_name) DO UPDATE SET \
           last_seen_ms = CASE WHEN excluded.last_seen_ms > client_seen_toggles.last_seen_ms \
             THEN excluded.last_seen_ms ELSE client_seen_toggles.last_seen_ms END",
    )
    .bind(&c.app_name)
    .bind(&c.feature_name)
    .bind(c.minute_ms)
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
    let sql = format!(
        "INSERT INTO edge_evaluation_minutes (edge_id, environment, feature_name, minute_ms, enabled_count, \
         disabled_count) VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (edge_id, environment, feature_name, minute_ms) DO UPDATE SET \
           enabled_count = {}, disabled_count = {}",
        saturating_add("edge_evaluation_minutes.enabled_count", "excluded.enabled_count"),
        saturating_add("edge_evaluation_minutes.disabled_count", "excluded.disabled_count"),
    );
    sqlx::query(&sql)
        .bind(edge_id)
        .bind(&e.environment)
        .bind(&e.feature_name)
        .bind(e.minute_ms)
        .bind(count(e.enabled))
        .bind(count(e.disabled))
        .execute(&mut *conn)
        .await?;
    if e.enabled > 0 || e.disabled > 0 {
        sqlx::query(
            "INSERT INTO flags_served_by_edges (feature_name, environment, last_served_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (feature_name, environment) DO UPDATE SET \
               last_served_ms = CASE WHEN excluded.last_served_ms > flags_served_by_edges.last_served_ms \
                 THEN excluded.last_served_ms ELSE flags_served_by_edges.last_served_ms END",
        )
        .bind(&e.feature_name)
        .bind(&e.environment)
        .bind(e.minute_ms)
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// One flag's edge evaluations (frontend API and OFREP) per hour and environment in `[from_ms, to_ms]`,
/// summed over edges; they are kept as minutes for 48 hours.
#[derive(Debug, Clone, PartialEq)]
pub struct HourlyEvaluations {
    /// The start of the hour.
    pub hour: Timestamp,
    pub environment: String,
    pub enabled_count: i64,
    pub disabled_count: i64,
}

impl FromRow<'_, AnyRow> for HourlyEvaluations {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(HourlyEvaluations {
            hour: millis(row, "hour_ms")?,
            environment: row.try_get("environment")?,
            enabled_count: row.try_get("enabled_count")?,
            disabled_count: row.try_get("disabled_count")?,
        })
    }
}

pub async fn hourly_evaluations(
    conn: &mut AnyConnection,
    feature_name: &str,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<HourlyEvaluations>, StoreError> {
    let sql = format!(
        "SELECT minute_ms - (minute_ms % 3600000) AS hour_ms, environment, {} AS enabled_count, \
           {} AS disabled_count FROM edge_evaluation_minutes \
         WHERE feature_name = $1 AND minute_ms >= $2 AND minute_ms <= $3 \
         GROUP BY minute_ms - (minute_ms % 3600000), environment ORDER BY hour_ms, environment",
        saturating_sum("enabled_count"),
        saturating_sum("disabled_count"),
    );
    Ok(sqlx::query_as(&sql)
        .bind(feature_name)
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(conn)
        .await?)
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
    let sql = format!(
        "SELECT feature_name, app_name, {} AS yes_count, {} AS no_count FROM client_usage_minutes \
         WHERE minute_ms >= $1 AND minute_ms <= $2 GROUP BY feature_name, app_name \
         ORDER BY feature_name, app_name",
        saturating_sum("yes_count"),
        saturating_sum("no_count"),
    );
    Ok(sqlx::query_as(&sql)
        .bind(from_ms)
        .bind(to_ms)
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
    let sql = format!(
        "SELECT hour_ms, app_name, environment, {} AS yes_count, {} AS no_count FROM ( \
             SELECT minute_ms - (minute_ms % 3600000) AS hour_ms, app_name, environment, yes_count, no_count \
             FROM client_usage_minutes WHERE feature_name = $1 AND minute_ms >= $2 AND minute_ms <= $3 \
             UNION ALL \
             SELECT hour_ms, app_name, environment, yes_count, no_count \
             FROM client_usage_hours WHERE feature_name = $1 AND hour_ms >= $2 AND hour_ms <= $3 \
           ) AS buckets GROUP BY hour_ms, app_name, environment ORDER BY hour_ms, app_name, environment",
        saturating_sum("yes_count"),
        saturating_sum("no_count"),
    );
    Ok(sqlx::query_as(&sql)
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
    let sql = format!(
        "SELECT e.edge_id, e.version, e.applied_revision, e.last_report_ms, \
           {} AS enabled_count, {} AS disabled_count \
         FROM edges e LEFT JOIN edge_evaluation_minutes m \
           ON m.edge_id = e.edge_id AND m.minute_ms >= $1 AND m.minute_ms <= $2 \
         GROUP BY e.edge_id, e.version, e.applied_revision, e.last_report_ms ORDER BY e.edge_id",
        saturating_sum("m.enabled_count"),
        saturating_sum("m.disabled_count"),
    );
    Ok(sqlx::query_as(&sql)
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(conn)
        .await?)
}

/// What one roll-up did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RolledUp {
    /// Minute buckets folded into hours.
    pub minute_buckets: u64,
    /// Applications, instances, seen flag names and registrations dropped as not seen within the retention.
    pub clients_pruned: u64,
}

/// Rolls minute buckets before `minutes_before_ms` up into hours (at most `max_variants` variant names per
/// hour bucket, as per minute), drops hours before `hours_before_ms`, forgets edge batches and evaluations
/// before `minutes_before_ms`, and drops applications, instances, seen flag names, registrations and Unleash
/// Edge instances last seen before `clients_before_ms` (within the caller's transaction).
pub async fn roll_up(
    conn: &mut AnyConnection,
    minutes_before_ms: i64,
    hours_before_ms: i64,
    clients_before_ms: i64,
    max_variants: usize,
) -> Result<RolledUp, StoreError> {
    // `WHERE true` before ON CONFLICT: SQLite's parser needs it after a SELECT.
    let sql = format!(
        "INSERT INTO client_usage_hours (feature_name, app_name, environment, hour_ms, yes_count, no_count) \
         SELECT feature_name, app_name, environment, hour_ms, {}, {} FROM ( \
             SELECT feature_name, app_name, environment, minute_ms - (minute_ms % 3600000) AS hour_ms, \
               yes_count, no_count FROM client_usage_minutes WHERE minute_ms < $1) AS old \
         WHERE true GROUP BY feature_name, app_name, environment, hour_ms \
         ON CONFLICT (feature_name, app_name, environment, hour_ms) DO UPDATE SET \
           yes_count = {}, no_count = {}",
        saturating_sum("yes_count"),
        saturating_sum("no_count"),
        saturating_add("client_usage_hours.yes_count", "excluded.yes_count"),
        saturating_add("client_usage_hours.no_count", "excluded.no_count"),
    );
    sqlx::query(&sql)
        .bind(minutes_before_ms)
        .execute(&mut *conn)
        .await?;
    // A name already in the hour adds up; new ones are ranked by name and taken while the hour has room.
    let sql = format!(
        "INSERT INTO client_usage_hour_variants (feature_name, app_name, environment, hour_ms, variant, count) \
         SELECT feature_name, app_name, environment, hour_ms, variant, total FROM ( \
           SELECT grouped.*, ROW_NUMBER() OVER (PARTITION BY feature_name, app_name, environment, hour_ms, \
             known ORDER BY variant) AS position FROM ( \
             SELECT feature_name, app_name, environment, hour_ms, variant, {} AS total, \
               CASE WHEN EXISTS (SELECT 1 FROM client_usage_hour_variants h \
                 WHERE h.feature_name = old.feature_name AND h.app_name = old.app_name \
                 AND h.environment = old.environment AND h.hour_ms = old.hour_ms AND h.variant = old.variant) \
               THEN 1 ELSE 0 END AS known \
             FROM ( \
               SELECT feature_name, app_name, environment, minute_ms - (minute_ms % 3600000) AS hour_ms, \
                 variant, count FROM client_usage_minute_variants WHERE minute_ms < $1) AS old \
             GROUP BY feature_name, app_name, environment, hour_ms, variant) AS grouped) AS ranked \
         WHERE ranked.known = 1 OR ranked.position + (SELECT COUNT(*) FROM client_usage_hour_variants h \
             WHERE h.feature_name = ranked.feature_name AND h.app_name = ranked.app_name \
             AND h.environment = ranked.environment AND h.hour_ms = ranked.hour_ms) <= $2 \
         ON CONFLICT (feature_name, app_name, environment, hour_ms, variant) DO UPDATE SET count = {}",
        saturating_sum("count"),
        saturating_add("client_usage_hour_variants.count", "excluded.count"),
    );
    sqlx::query(&sql)
        .bind(minutes_before_ms)
        .bind(i64::try_from(max_variants).unwrap_or(i64::MAX))
        .execute(&mut *conn)
        .await?;
    let minute_buckets = sqlx::query("DELETE FROM client_usage_minutes WHERE minute_ms < $1")
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
    let mut clients_pruned = 0;
    for sql in [
        "DELETE FROM client_applications WHERE last_seen_ms < $1",
        "DELETE FROM client_instances WHERE last_seen_ms < $1",
        "DELETE FROM client_seen_toggles WHERE last_seen_ms < $1",
        "DELETE FROM flags_served_by_edges WHERE last_served_ms < $1",
        "DELETE FROM client_application_registrations WHERE last_seen_ms < $1",
        "DELETE FROM unleash_edge_instances WHERE last_report_ms < $1",
    ] {
        clients_pruned += sqlx::query(sql)
            .bind(clients_before_ms)
            .execute(&mut *conn)
            .await?
            .rows_affected();
    }
    Ok(RolledUp {
        minute_buckets,
        clients_pruned,
    })
}

/// When an SDK last reported each of `names` or an edge last served it to a frontend or OFREP client (the
/// latest of all), in Unix ms; flags never seen are absent.
pub async fn last_seen_of(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<(String, i64)>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let list = (1..=names.len())
        .map(|index| format!("${index}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT feature_name, MAX(last_seen_ms) AS last_seen_ms FROM ( \
             SELECT feature_name, last_seen_ms FROM client_seen_toggles WHERE feature_name IN ({list}) \
             UNION ALL \
             SELECT feature_name, last_served_ms AS last_seen_ms FROM flags_served_by_edges \
             WHERE feature_name IN ({list}) \
           ) AS seen GROUP BY feature_name"
    );
    let mut query = sqlx::query(&sql);
    for name in names {
        query = query.bind(name);
    }
    let rows = query.fetch_all(conn).await?;
    rows.iter()
        .map(|row| Ok((row.try_get("feature_name")?, row.try_get("last_seen_ms")?)))
        .collect()
}
