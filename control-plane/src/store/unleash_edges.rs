//! SQL of the Unleash Edge instances that report to this control plane (`POST /api/client/metrics/edge`):
//! the latest report of each, keyed by its identifier. Times are Unix milliseconds; the report's details are
//! JSON text.

use super::encoding::{json, json_text, millis};
use super::StoreError;
use crate::time::Timestamp;
use serde::de::DeserializeOwned;
use serde::Serialize;
use sqlx::{AnyConnection, Row};

/// One instance's latest report, as written and read; `D` is the details' shape.
#[derive(Debug, Clone, PartialEq)]
pub struct UnleashEdgeRow<D> {
    pub identifier: String,
    pub app_name: String,
    pub edge_version: String,
    pub region: Option<String>,
    pub hosting: Option<String>,
    pub environment: String,
    /// The identifier of the instance that relayed this report; `None`: it posted it itself.
    pub via: Option<String>,
    pub started: Timestamp,
    pub last_report: Timestamp,
    pub connected_streaming_clients: i64,
    pub details: D,
}

/// Keeps `row` as its instance's latest report (replacing the previous one, unless that one was received
/// later: a relayed report can arrive after a newer one).
pub async fn upsert<D: Serialize>(
    conn: &mut AnyConnection,
    row: &UnleashEdgeRow<D>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO unleash_edge_instances (identifier, app_name, edge_version, region, hosting, environment, \
           via, started_ms, last_report_ms, connected_streaming_clients, details) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (identifier) DO UPDATE SET app_name = excluded.app_name, \
           edge_version = excluded.edge_version, region = excluded.region, hosting = excluded.hosting, \
           environment = excluded.environment, via = excluded.via, started_ms = excluded.started_ms, \
           last_report_ms = excluded.last_report_ms, \
           connected_streaming_clients = excluded.connected_streaming_clients, details = excluded.details \
         WHERE excluded.last_report_ms >= unleash_edge_instances.last_report_ms",
    )
    .bind(&row.identifier)
    .bind(&row.app_name)
    .bind(&row.edge_version)
    .bind(row.region.as_deref())
    .bind(row.hosting.as_deref())
    .bind(&row.environment)
    .bind(row.via.as_deref())
    .bind(row.started.millis())
    .bind(row.last_report.millis())
    .bind(row.connected_streaming_clients)
    .bind(json_text(&row.details)?)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every instance's latest report, the latest reports first.
pub async fn list<D: DeserializeOwned>(
    conn: &mut AnyConnection,
) -> Result<Vec<UnleashEdgeRow<D>>, StoreError> {
    let rows = sqlx::query(
        "SELECT identifier, app_name, edge_version, region, hosting, environment, via, started_ms, \
           last_report_ms, connected_streaming_clients, details \
         FROM unleash_edge_instances ORDER BY last_report_ms DESC, identifier",
    )
    .fetch_all(conn)
    .await?;
    let decode = |row: &sqlx::any::AnyRow| -> sqlx::Result<UnleashEdgeRow<D>> {
        Ok(UnleashEdgeRow {
            identifier: row.try_get("identifier")?,
            app_name: row.try_get("app_name")?,
            edge_version: row.try_get("edge_version")?,
            region: row.try_get("region")?,
            hosting: row.try_get("hosting")?,
            environment: row.try_get("environment")?,
            via: row.try_get("via")?,
            started: millis(row, "started_ms")?,
            last_report: millis(row, "last_report_ms")?,
            connected_streaming_clients: row.try_get("connected_streaming_clients")?,
            details: json(row, "details")?,
        })
    };
    Ok(rows.iter().map(decode).collect::<sqlx::Result<_>>()?)
}
