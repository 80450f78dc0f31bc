//! The counts of the instance statistics that no other store module keeps (`domain::instance_csv`).

use super::StoreError;
use crate::time::Timestamp;
use sqlx::{AnyConnection, Row};

async fn count(conn: &mut AnyConnection, sql: &str, binds: &[&str]) -> Result<i64, StoreError> {
    let mut query = sqlx::query_scalar::<_, i64>(sql);
    for bind in binds {
        query = query.bind(*bind);
    }
    Ok(query.fetch_optional(conn).await?.unwrap_or(0))
}

/// Release plan definitions with this discriminator (`template` or `plan`).
pub async fn release_definitions(
    conn: &mut AnyConnection,
    discriminator: &str,
) -> Result<i64, StoreError> {
    count(
        conn,
        "SELECT COUNT(*) FROM release_plan_definitions WHERE discriminator = $1",
        &[discriminator],
    )
    .await
}

/// Audit events of this type.
pub async fn events_of_type(conn: &mut AnyConnection, event_type: &str) -> Result<i64, StoreError> {
    count(
        conn,
        "SELECT COUNT(*) FROM events WHERE type = $1",
        &[event_type],
    )
    .await
}

/// Audit events in production-type environments since `since`.
pub async fn production_changes_since(
    conn: &mut AnyConnection,
    since: Timestamp,
) -> Result<i64, StoreError> {
    count(
        conn,
        "SELECT COUNT(*) FROM events ev JOIN environments e ON e.name = ev.environment \
         WHERE e.type = 'production' AND ev.created_at >= $1",
        &[&since.to_string()],
    )
    .await
}

/// People (not service accounts) seen since `since`.
pub async fn people_seen_since(
    conn: &mut AnyConnection,
    since: Timestamp,
) -> Result<i64, StoreError> {
    count(
        conn,
        "SELECT COUNT(*) FROM users WHERE is_service = 0 AND seen_at IS NOT NULL AND seen_at >= $1",
        &[&since.to_string()],
    )
    .await
}

/// People with this root role on their own account.
pub async fn people_with_root_role(conn: &mut AnyConnection, role: i64) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE is_service = 0 AND root_role = $1")
            .bind(role)
            .fetch_one(conn)
            .await?,
    )
}

/// Service accounts.
pub async fn service_accounts(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    count(conn, "SELECT COUNT(*) FROM users WHERE is_service = 1", &[]).await
}

/// Applications seen since `since_ms` (Unix milliseconds; 0 for all).
pub async fn applications_seen_since(
    conn: &mut AnyConnection,
    since_ms: i64,
) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM client_applications WHERE last_seen_ms >= $1")
            .bind(since_ms)
            .fetch_one(conn)
            .await?,
    )
}

/// Hourly usage rows (flag × application × environment × hour), and their variant rows, with an hour in
/// `[from_ms, to_ms)`.
pub async fn usage_buckets_between(
    conn: &mut AnyConnection,
    from_ms: i64,
    to_ms: i64,
) -> Result<(i64, i64), StoreError> {
    let enabled: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM client_usage_hours WHERE hour_ms >= $1 AND hour_ms < $2",
    )
    .bind(from_ms)
    .bind(to_ms)
    .fetch_one(&mut *conn)
    .await?;
    let variants: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM client_usage_hour_variants WHERE hour_ms >= $1 AND hour_ms < $2",
    )
    .bind(from_ms)
    .bind(to_ms)
    .fetch_one(conn)
    .await?;
    Ok((enabled, variants))
}

/// The most strategies one flag has in one environment.
pub async fn max_environment_strategies(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    count(
        conn,
        "SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM feature_strategies \
         GROUP BY feature_name, environment) t",
        &[],
    )
    .await
}

/// Every strategy's constraints, as stored (JSON lists).
pub async fn strategy_constraints(conn: &mut AnyConnection) -> Result<Vec<String>, StoreError> {
    let rows = sqlx::query("SELECT constraints FROM feature_strategies")
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|row| row.try_get::<String, _>("constraints"))
        .collect::<sqlx::Result<_>>()
        .map_err(StoreError::from)
}
