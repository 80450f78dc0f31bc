//! Unleash Edge instances in front of this control plane: what an Unleash Edge (20.x) posts about itself to
//! `POST /api/client/metrics/edge` every minute (Unleash's `edgeInstanceDataSchema`: its identifier, app
//! name, version, start, traffic and upstream latencies, the requests it answered since its previous report,
//! the revision it holds per environment, and the Edges that report through it), checked here and kept as
//! each instance's latest report; the Edges page and `GET /api/admin/metrics/edges` list them beside
//! Vexil's own edges.
//!
//! An Edge that relays others (`connectedEdges`) is stored with each of them as an instance of its own,
//! `via` the relaying one. What Unleash bills by (`connectionConsumptionSinceLastReport`,
//! `requestConsumptionSinceLastReport`) is accepted and not kept. Instances that stop reporting go with the
//! client retention (`--client-retention-days`, in the metrics roll-up).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::Connection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

use crate::store::unleash_edges::{self as sql, UnleashEdgeRow};
use crate::store::{Store, StoreError};
use crate::time::Timestamp;

/// Most instances one report may describe (itself and every Edge behind it).
pub const MAX_INSTANCES_PER_REPORT: usize = 100;
/// Deepest chain of Edges behind the reporting one.
pub const MAX_DEPTH: usize = 8;
/// Most entries of each map or list of a report (endpoints, environments).
pub const MAX_ENTRIES: usize = 100;
/// Longest text of a name, version, endpoint or environment.
const MAX_TEXT: usize = 255;

/// `POST /api/client/metrics/edge`'s body, as Unleash Edge sends it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeInstanceData {
    /// The process's identifier (a ULID, new at each start).
    pub identifier: String,
    pub app_name: String,
    #[serde(default)]
    pub hosting: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    pub edge_version: String,
    #[serde(default)]
    pub process_metrics: Option<ProcessMetrics>,
    /// RFC 3339.
    pub started: String,
    pub traffic: InstanceTraffic,
    pub latency_upstream: UpstreamLatency,
    #[serde(default)]
    pub requests_since_last_report: BTreeMap<String, RequestStats>,
    pub connected_streaming_clients: u64,
    pub connected_edges: Vec<EdgeInstanceData>,
    #[serde(default)]
    pub edge_api_key_revision_ids: Vec<ApiKeyRevision>,
}

/// Latencies of one kind of request, in milliseconds.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LatencyMetrics {
    pub avg: f64,
    pub count: f64,
    pub p99: f64,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMetrics {
    /// CPU seconds since the process started.
    pub cpu_usage: f64,
    /// Resident memory, bytes.
    pub memory_usage: f64,
}

/// The requests the instance answered since it started, per route.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InstanceTraffic {
    pub get: BTreeMap<String, LatencyMetrics>,
    pub post: BTreeMap<String, LatencyMetrics>,
    pub access_denied: BTreeMap<String, LatencyMetrics>,
    pub cached_responses: BTreeMap<String, LatencyMetrics>,
}

/// The instance's own calls to its upstream.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamLatency {
    pub features: LatencyMetrics,
    pub metrics: LatencyMetrics,
    pub edge: LatencyMetrics,
}

/// Requests to one route since the previous report.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RequestStats {
    #[serde(default)]
    pub requests_200: u64,
    #[serde(default)]
    pub requests_304: u64,
}

/// The revision the instance holds for one token's environment and projects.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyRevision {
    pub environment: String,
    pub projects: Vec<String>,
    pub revision_id: u64,
    /// RFC 3339, as the instance sent it.
    pub last_updated: String,
}

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

fn text(path: &str, value: &str, required: bool) -> Result<(), ApiError> {
    let length = value.chars().count();
    if (required && length == 0) || length > MAX_TEXT {
        return Err(ApiError::validation(format!(
            "{path} must be {} to {MAX_TEXT} characters",
            u8::from(required)
        )));
    }
    Ok(())
}

fn amount(path: &str, value: f64) -> Result<(), ApiError> {
    if !value.is_finite() || value < 0.0 {
        return Err(ApiError::validation(format!(
            "{path} must be a number of at least 0"
        )));
    }
    Ok(())
}

fn latency(path: &str, metrics: &LatencyMetrics) -> Result<(), ApiError> {
    amount(&format!("{path}.avg"), metrics.avg)?;
    amount(&format!("{path}.count"), metrics.count)?;
    amount(&format!("{path}.p99"), metrics.p99)
}

fn entries(path: &str, count: usize) -> Result<(), ApiError> {
    if count > MAX_ENTRIES {
        return Err(ApiError::validation(format!(
            "{path} may hold at most {MAX_ENTRIES} entries"
        )));
    }
    Ok(())
}

/// Checks one instance's report (not the Edges behind it); returns when it started.
fn check_instance(path: &str, data: &EdgeInstanceData) -> Result<Timestamp, ApiError> {
    text(&format!("{path}identifier"), &data.identifier, true)?;
    text(&format!("{path}appName"), &data.app_name, true)?;
    text(&format!("{path}edgeVersion"), &data.edge_version, true)?;
    for (field, value) in [("region", &data.region), ("hosting", &data.hosting)] {
        if let Some(value) = value {
            text(&format!("{path}{field}"), value, false)?;
        }
    }
    let started = Timestamp::parse(&data.started).map_err(|error| {
        ApiError::validation(format!(
            "{path}started must be an RFC 3339 date-time: {error}"
        ))
    })?;
    if let Some(process) = &data.process_metrics {
        amount(&format!("{path}processMetrics.cpuUsage"), process.cpu_usage)?;
        amount(
            &format!("{path}processMetrics.memoryUsage"),
            process.memory_usage,
        )?;
    }
    let traffic = &data.traffic;
    for (field, map) in [
        ("get", &traffic.get),
        ("post", &traffic.post),
        ("accessDenied", &traffic.access_denied),
        ("cachedResponses", &traffic.cached_responses),
    ] {
        let field = format!("{path}traffic.{field}");
        entries(&field, map.len())?;
        for (route, metrics) in map {
            text(&format!("{field} key"), route, true)?;
            latency(&format!("{field}[{route:?}]"), metrics)?;
        }
    }
    let upstream = &data.latency_upstream;
    latency(
        &format!("{path}latencyUpstream.features"),
        &upstream.features,
    )?;
    latency(&format!("{path}latencyUpstream.metrics"), &upstream.metrics)?;
    latency(&format!("{path}latencyUpstream.edge"), &upstream.edge)?;
    let requests = format!("{path}requestsSinceLastReport");
    entries(&requests, data.requests_since_last_report.len())?;
    for route in data.requests_since_last_report.keys() {
        text(&format!("{requests} key"), route, true)?;
    }
    let revisions = format!("{path}edgeApiKeyRevisionIds");
    entries(&revisions, data.edge_api_key_revision_ids.len())?;
    for (index, revision) in data.edge_api_key_revision_ids.iter().enumerate() {
        let at = format!("{revisions}[{index}]");
        text(&format!("{at}.environment"), &revision.environment, true)?;
        text(&format!("{at}.lastUpdated"), &revision.last_updated, false)?;
        entries(&format!("{at}.projects"), revision.projects.len())?;
        for project in &revision.projects {
            text(&format!("{at}.projects[]"), project, true)?;
        }
    }
    Ok(started)
}

/// The rows a report keeps: the reporting instance and every Edge behind it (depth first), each with the
/// one that relayed it; a validation error names the first bad field by its path in the body.
pub fn rows_of(
    report: EdgeInstanceData,
    environment: &str,
    now_ms: i64,
) -> Result<Vec<UnleashEdgeRow<UnleashEdgeDetails>>, ApiError> {
    let last_report = Timestamp::from_millis(now_ms).unwrap_or(Timestamp::EPOCH);
    let mut rows = Vec::new();
    // (path prefix, depth, relaying identifier, report)
    let mut pending = vec![(String::new(), 0_usize, None::<String>, report)];
    while let Some((path, depth, via, mut data)) = pending.pop() {
        if depth > MAX_DEPTH {
            return Err(ApiError::validation(format!(
                "connectedEdges may nest at most {MAX_DEPTH} deep"
            )));
        }
        let started = check_instance(&path, &data)?;
        let behind = std::mem::take(&mut data.connected_edges);
        if rows.len() + 1 + pending.len() + behind.len() > MAX_INSTANCES_PER_REPORT {
            return Err(ApiError::validation(format!(
                "A report may describe at most {MAX_INSTANCES_PER_REPORT} Edge instances (connectedEdges included)"
            )));
        }
        for (index, edge) in behind.into_iter().enumerate().rev() {
            pending.push((
                format!("{path}connectedEdges[{index}]."),
                depth + 1,
                Some(data.identifier.clone()),
                edge,
            ));
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

/// Checks a report posted with a token of `environment` and keeps it as the latest of each instance it
/// describes, in one transaction (in the order of their identifiers, so that concurrent reports take row
/// locks alike). No audit event: SDK-side posts are not audited.
pub async fn record(
    store: &Store,
    report: EdgeInstanceData,
    environment: &str,
    now_ms: i64,
) -> Result<(), ApiError> {
    let mut rows = rows_of(report, environment, now_ms)?;
    rows.sort_by(|a, b| a.identifier.cmp(&b.identifier));
    rows.dedup_by(|a, b| a.identifier == b.identifier);
    let mut conn = store.bookkeeping().await?;
    let mut tx = conn.begin().await.map_err(StoreError::from)?;
    for row in &rows {
        sql::upsert(&mut tx, row).await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
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
