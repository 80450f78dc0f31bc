//! The SQL of flag lifecycles (`domain::lifecycle`): the recorded stages (`feature_lifecycles`), the flag
//! types' lifetimes (`feature_type_lifetimes`) and the potentially-stale claim; and [`SeenPairs`], the
//! per-process memory that keeps the usage ingest from writing a stage it already recorded.

use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A recorded stage of a flag (pre-live, live or completed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageRow {
    pub stage: String,
    pub status: Option<String>,
    pub status_value: Option<String>,
    pub entered_at: Timestamp,
}

impl FromRow<'_, AnyRow> for StageRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(StageRow {
            stage: row.try_get("stage")?,
            status: row.try_get("status")?,
            status_value: row.try_get("status_value")?,
            entered_at: row.try_get("entered_at")?,
        })
    }
}

/// The current stage of the flag `features` row aliased `table`, as SQL: archived, else the latest recorded
/// of completed, live, pre-live, else initial.
pub fn current_stage_sql(table: &str) -> String {
    let recorded = |stage: &str| {
        format!(
            "EXISTS (SELECT 1 FROM feature_lifecycles l WHERE l.feature_name = {table}.name AND l.stage = '{stage}')"
        )
    };
    format!(
        "CASE WHEN {table}.archived_at IS NOT NULL THEN 'archived' \
         WHEN {} THEN 'completed' WHEN {} THEN 'live' WHEN {} THEN 'pre-live' ELSE 'initial' END",
        recorded("completed"),
        recorded("live"),
        recorded("pre-live"),
    )
}

/// A flag's recorded stages, in the order they were entered.
pub async fn stages(conn: &mut AnyConnection, feature: &str) -> Result<Vec<StageRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT stage, status, status_value, entered_at FROM feature_lifecycles \
         WHERE feature_name = $1 ORDER BY entered_at, stage",
    )
    .bind(feature)
    .fetch_all(conn)
    .await?)
}

/// Records that an SDK saw `feature` in `environment` at `at`: live in a production-type environment, else
/// pre-live; nothing when that stage is recorded already, or the flag or environment is unknown.
pub async fn record_seen(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
    at: Timestamp,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO feature_lifecycles (feature_name, stage, entered_at) \
         SELECT f.name, CASE WHEN e.type = 'production' THEN 'live' ELSE 'pre-live' END, $3 \
         FROM features f JOIN environments e ON e.name = $2 WHERE f.name = $1 \
         ON CONFLICT (feature_name, stage) DO NOTHING",
    )
    .bind(feature)
    .bind(environment)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a flag completed with `status` (and `status_value`); false when it was, with the same ones.
pub async fn complete(
    conn: &mut AnyConnection,
    feature: &str,
    status: &str,
    status_value: Option<&str>,
    at: Timestamp,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO feature_lifecycles (feature_name, stage, status, status_value, entered_at) \
         VALUES ($1, 'completed', $2, $3, $4) \
         ON CONFLICT (feature_name, stage) DO UPDATE SET status = excluded.status, \
           status_value = excluded.status_value \
         WHERE feature_lifecycles.status IS DISTINCT FROM excluded.status \
            OR feature_lifecycles.status_value IS DISTINCT FROM excluded.status_value",
    )
    .bind(feature)
    .bind(status)
    .bind(status_value)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Takes a flag out of the completed stage; false when it was not in it.
pub async fn uncomplete(conn: &mut AnyConnection, feature: &str) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "DELETE FROM feature_lifecycles WHERE feature_name = $1 AND stage = 'completed'",
    )
    .bind(feature)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// How many flags (of `project`, or of every project) are in each current stage (stages without flags are
/// absent).
pub async fn stage_counts(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<Vec<(String, i64)>, StoreError> {
    let sql = format!(
        "SELECT stage, CAST(COUNT(*) AS BIGINT) AS n FROM \
         (SELECT {} AS stage FROM features f WHERE $1 IS NULL OR f.project_id = $1) current \
         GROUP BY stage",
        current_stage_sql("f")
    );
    let rows = sqlx::query(&sql).bind(project).fetch_all(conn).await?;
    rows.iter()
        .map(|row| Ok((row.try_get("stage")?, row.try_get("n")?)))
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}

/// The current stage of each of the flags named (live and archived; unknown names are absent).
pub async fn current_stages_of(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<Vec<(String, String)>, StoreError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT f.name, {} AS stage FROM features f WHERE f.name IN ({})",
        current_stage_sql("f"),
        super::encoding::placeholders(1, names.len())
    );
    let mut query = sqlx::query(&sql);
    for name in names {
        query = query.bind(name);
    }
    let rows = query.fetch_all(conn).await?;
    rows.iter()
        .map(|row| Ok((row.try_get("name")?, row.try_get("stage")?)))
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}

/// Every flag type's lifetime in days (`None`: never potentially stale).
pub async fn lifetimes(conn: &mut AnyConnection) -> Result<Vec<(String, Option<i64>)>, StoreError> {
    let rows = sqlx::query("SELECT feature_type, lifetime_days FROM feature_type_lifetimes")
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("feature_type")?, row.try_get("lifetime_days")?)))
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}

/// Sets a flag type's lifetime; false when it had that one already.
pub async fn set_lifetime(
    conn: &mut AnyConnection,
    feature_type: &str,
    days: Option<i64>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO feature_type_lifetimes (feature_type, lifetime_days) VALUES ($1, $2) \
         ON CONFLICT (feature_type) DO UPDATE SET lifetime_days = excluded.lifetime_days \
         WHERE feature_type_lifetimes.lifetime_days IS DISTINCT FROM excluded.lifetime_days",
    )
    .bind(feature_type)
    .bind(days)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Claims, in one statement, the live flags not yet potentially stale that were created before their type's
/// cutoff (`cutoffs`: type and time), and returns each one claimed with its project. A flag another writer
/// claimed first is not returned.
pub async fn claim_potentially_stale(
    conn: &mut AnyConnection,
    cutoffs: &[(String, Timestamp)],
) -> Result<Vec<(String, String)>, StoreError> {
    if cutoffs.is_empty() {
        return Ok(Vec::new());
    }
    let any: Vec<String> = (0..cutoffs.len())
        .map(|index| {
            format!(
                "(type = ${} AND created_at < ${})",
                2 * index + 1,
                2 * index + 2
            )
        })
        .collect();
    let sql = format!(
        "UPDATE features SET potentially_stale = 1 \
         WHERE potentially_stale = 0 AND archived_at IS NULL AND ({}) RETURNING name, project_id",
        any.join(" OR ")
    );
    let mut query = sqlx::query(&sql);
    for (feature_type, before) in cutoffs {
        query = query.bind(feature_type).bind(*before);
    }
    let rows = query.fetch_all(conn).await?;
    let mut claimed: Vec<(String, String)> = rows
        .iter()
        .map(|row| Ok((row.try_get("name")?, row.try_get("project_id")?)))
        .collect::<sqlx::Result<_>>()?;
    claimed.sort();
    Ok(claimed)
}

/// How long [`SeenPairs`] trusts what it remembers: a flag deleted and created again under its name gets its
/// stages recorded again within this time.
const SEEN_FOR: Duration = Duration::from_secs(600);
/// Most pairs remembered; past this the memory starts over.
const MOST_SEEN: usize = 100_000;

/// The (flag, environment) pairs whose stage this process recorded lately, so that the usage ingest writes a
/// stage only for a pair it has not seen: one look in a set per reported count on the hot path.
#[derive(Debug)]
pub struct SeenPairs {
    inner: Mutex<(HashSet<(String, String)>, Instant)>,
}

impl Default for SeenPairs {
    fn default() -> Self {
        SeenPairs {
            inner: Mutex::new((HashSet::new(), Instant::now())),
        }
    }
}

impl SeenPairs {
    /// Whether the pair's stage was recorded lately.
    pub fn contains(&self, feature: &str, environment: &str) -> bool {
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (pairs, since) = &mut *guard;
        if since.elapsed() > SEEN_FOR || pairs.len() > MOST_SEEN {
            pairs.clear();
            *since = Instant::now();
        }
        pairs.contains(&(feature.to_owned(), environment.to_owned()))
    }

    /// Remembers pairs whose stage is recorded (committed).
    pub fn insert(&self, recorded: Vec<(String, String)>) {
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        guard.0.extend(recorded);
    }
}
