//! Unleash Edge instances in front of this control plane (or of its edges): what an Unleash Edge (20.x)
//! posts about itself to `POST /api/client/metrics/edge` every minute (the body and its checks are
//! `vexil_serving::unleash_edge_report`'s; the route is a serving route, so the control plane and its edges
//! answer it alike), kept as each instance's latest report; the Edges page and `GET /api/admin/metrics/edges`
//! list them beside Vexil's own edges. A report reaches [`write`] from this process's usage sink (posted to the
//! control plane) or inside a Vexil edge's usage batch (posted to that edge), with the time it was received.
//!
//! An Edge that relays others (`connectedEdges`) is stored with each of them as an instance of its own,
//! `via` the relaying one. Instances that stop reporting go with the client retention
//! (`--client-retention-days`, in the metrics roll-up).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_proto::v1;
use vexil_serving::unleash_edge_report::{check, check_report, started_ms};
pub use vexil_serving::unleash_edge_report::{
    ApiKeyRevision, EdgeInstanceData, InstanceTraffic, LatencyMetrics, ProcessMetrics,
    RequestStats, UpstreamLatency,
};
use vexil_shared::ApiError;

use crate::store::unleash_edges::{self as sql, UnleashEdgeRow};
use crate::time::Timestamp;

/// What is kept of a report besides the columns the lists sort and show.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UnleashEdgeDetails {
    pub requests_since_last_report: BTreeMap<String, RequestStats>,
    pub traffic: InstanceTraffic,
    pub latency_upstream: UpstreamLatency,
    pub process_metrics: Option<ProcessMetrics>,
    pub revisions: Vec<ApiKeyRevision>,
}

/// An Unleash Edge instance as its latest report describes it.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UnleashEdge {
    pub identifier: String,
    pub app_name: String,
    pub edge_version: String,
    pub region: Option<String>,
    pub hosting: Option<String>,
    /// The environment of the token its report came with (`*`: every environment).
    pub environment: String,
    /// The identifier of the Edge that relayed its report; absent: it reports itself.
    pub via: Option<String>,
    pub started: String,
    pub last_report: String,
    pub connected_streaming_clients: i64,
    #[serde(flatten)]
    pub details: UnleashEdgeDetails,
}

impl UnleashEdge {
    /// Requests answered (2xx and 304) since its previous report, over every route.
    pub fn requests_since_last_report(&self) -> u64 {
        self.details
            .requests_since_last_report
            .values()
            .map(|stats| stats.requests_200.saturating_add(stats.requests_304))
            .fold(0, u64::saturating_add)
    }

    /// The highest revision it holds over its environments, if it named any.
    pub fn revision(&self) -> Option<u64> {
        self.details.revisions.iter().map(|r| r.revision_id).max()
    }
}

/// The rows a report keeps: the reporting instance and every Edge behind it (depth first), each with the
/// one that relayed it; a validation error names the first bad field by its path in the body.
pub fn rows_of(
    report: EdgeInstanceData,
    environment: &str,
    received_at_ms: i64,
) -> Result<Vec<UnleashEdgeRow<UnleashEdgeDetails>>, ApiError> {
    check(&report)?;
    let last_report = Timestamp::from_millis(received_at_ms).unwrap_or(Timestamp::EPOCH);
    let mut rows = Vec::new();
    // (relaying identifier, report)
    let mut pending = vec![(None::<String>, report)];
    while let Some((via, mut data)) = pending.pop() {
        let started = started_ms(&data.started)
            .ok()
            .and_then(Timestamp::from_millis)
            .ok_or_else(|| ApiError::validation("started must be an RFC 3339 date-time"))?;
        let behind = std::mem::take(&mut data.connected_edges);
        for edge in behind.into_iter().rev() {
            pending.push((Some(data.identifier.clone()), edge));
        }
        rows.push(UnleashEdgeRow {
            identifier: data.identifier,
            app_name: data.app_name,
            edge_version: data.edge_version,
            region: data.region,
            hosting: data.hosting,
            environment: environment.to_owned(),
            via,
            started,
            last_report,
            connected_streaming_clients: i64::try_from(data.connected_streaming_clients)
                .unwrap_or(i64::MAX),
            details: UnleashEdgeDetails {
                requests_since_last_report: data.requests_since_last_report,
                traffic: data.traffic,
                latency_upstream: data.latency_upstream,
                process_metrics: data.process_metrics,
                revisions: data.edge_api_key_revision_ids,
            },
        });
    }
    Ok(rows)
}

/// Keeps checked reports (`vexil.v1` form: the environment of the token each was posted with, when it was
/// received, taken as `latest_ms` when later: a relaying edge's clock may run ahead) as the latest of each instance they describe, in `conn`'s transaction,
/// in the order of their identifiers (so that concurrent writes take row locks alike); of two reports on
/// one instance the later received wins. No audit event: SDK-side posts are not audited.
pub async fn write(
    conn: &mut sqlx::AnyConnection,
    reports: Vec<v1::UnleashEdgeReport>,
    latest_ms: i64,
) -> Result<(), ApiError> {
    let mut rows = Vec::new();
    for report in reports {
        let data = check_report(&report)?;
        rows.extend(rows_of(
            data,
            &report.environment,
            report.received_at_ms.min(latest_ms),
        )?);
    }
    // The latest report of each instance first, so that `dedup_by` keeps it.
    rows.sort_by(|a, b| {
        (&a.identifier, std::cmp::Reverse(a.last_report))
            .cmp(&(&b.identifier, std::cmp::Reverse(b.last_report)))
    });
    rows.dedup_by(|a, b| a.identifier == b.identifier);
    for row in &rows {
        sql::upsert(&mut *conn, row).await?;
    }
    Ok(())
}

/// Every Unleash Edge instance that reported (within the client retention), the latest reports first.
pub async fn list(conn: &mut sqlx::AnyConnection) -> Result<Vec<UnleashEdge>, ApiError> {
    Ok(sql::list::<UnleashEdgeDetails>(conn)
        .await?
        .into_iter()
        .map(|row| UnleashEdge {
            identifier: row.identifier,
            app_name: row.app_name,
            edge_version: row.edge_version,
            region: row.region,
            hosting: row.hosting,
            environment: row.environment,
            via: row.via,
            started: row.started.to_string(),
            last_report: row.last_report.to_string(),
            connected_streaming_clients: row.connected_streaming_clients,
            details: row.details,
        })
        .collect())
}
