//! What an Unleash Edge (20.x) posts about itself every minute, with the first of its startup tokens (a client
//! token), to `POST /api/client/metrics/edge` of its upstream: Unleash's `edgeInstanceDataSchema` (its
//! identifier, app name, version, start, traffic and upstream latencies, the requests it answered since its
//! previous report, the revision it holds per environment, and the Edges that report through it). Here: the
//! body ([`EdgeInstanceData`]), its checks ([`check`]), and its `vexil.v1` form ([`report`], [`data_of`]),
//! in which `vexil-edge serve` relays it to the control plane inside its usage batches. The handler is
//! `client_api::unleash_edge_instance_data`; each binary's usage sink takes the checked report: the control
//! plane keeps it (`domain::unleash_edges`), `vexil-edge serve` relays it, `vexil-edge edge` forwards it to its
//! Unleash upstream. What Unleash bills by (`connectionConsumptionSinceLastReport`,
//! `requestConsumptionSinceLastReport`) is accepted and not kept.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_proto::v1;
use vexil_shared::ApiError;

/// Most instances one report may describe (itself and every Edge behind it).
pub const MAX_INSTANCES_PER_REPORT: usize = 100;
/// Deepest chain of Edges behind the reporting one.
pub const MAX_DEPTH: usize = 8;
/// Most entries of each map or list of a report (endpoints, environments).
pub const MAX_ENTRIES: usize = 100;
/// Longest text of a name, version, endpoint or environment.
pub const MAX_TEXT: usize = 255;

/// `POST /api/client/metrics/edge`'s body, as Unleash Edge sends it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
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

/// 0 (optional) or 1 (required) to [`MAX_TEXT`] characters, no control character (no store keeps a NUL).
fn text(path: &str, value: &str, required: bool) -> Result<(), ApiError> {
    let length = value.chars().count();
    if (required && length == 0) || length > MAX_TEXT {
        return Err(ApiError::validation(format!(
            "{path} must be {} to {MAX_TEXT} characters",
            u8::from(required)
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(ApiError::validation(format!(
            "{path} must not contain control characters"
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

/// Unix milliseconds of an RFC 3339 date-time.
pub fn started_ms(started: &str) -> Result<i64, String> {
    let parsed =
        chrono::DateTime::parse_from_rfc3339(started.trim()).map_err(|error| error.to_string())?;
    let ms = parsed.timestamp_millis();
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|_| ms)
        .ok_or_else(|| format!("{started} is out of range"))
}

/// Checks one instance's report (not the Edges behind it).
fn check_instance(path: &str, data: &EdgeInstanceData) -> Result<(), ApiError> {
    text(&format!("{path}identifier"), &data.identifier, true)?;
    text(&format!("{path}appName"), &data.app_name, true)?;
    text(&format!("{path}edgeVersion"), &data.edge_version, true)?;
    for (field, value) in [("region", &data.region), ("hosting", &data.hosting)] {
        if let Some(value) = value {
            text(&format!("{path}{field}"), value, false)?;
        }
    }
    started_ms(&data.started).map_err(|error| {
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
    Ok(())
}

/// Checks a report: the reporting instance and every Edge behind it (at most [`MAX_DEPTH`] deep, at most
/// [`MAX_INSTANCES_PER_REPORT`] in all); a validation error names the first bad field by its path in the
/// body (`connectedEdges[0].appName`).
pub fn check(report: &EdgeInstanceData) -> Result<(), ApiError> {
    let mut seen = 0_usize;
    // (path prefix, depth, report)
    let mut pending = vec![(String::new(), 0_usize, report)];
    while let Some((path, depth, data)) = pending.pop() {
        if depth > MAX_DEPTH {
            return Err(ApiError::validation(format!(
                "connectedEdges may nest at most {MAX_DEPTH} deep"
            )));
        }
        check_instance(&path, data)?;
        seen += 1;
        if seen + pending.len() + data.connected_edges.len() > MAX_INSTANCES_PER_REPORT {
            return Err(ApiError::validation(format!(
                "A report may describe at most {MAX_INSTANCES_PER_REPORT} Edge instances (connectedEdges included)"
            )));
        }
        for (index, edge) in data.connected_edges.iter().enumerate().rev() {
            pending.push((format!("{path}connectedEdges[{index}]."), depth + 1, edge));
        }
    }
    Ok(())
}

/// A checked report in its `vexil.v1` form: received at `received_at_ms` with a client token of
/// `environment` (`*`: every environment).
pub fn report(
    data: EdgeInstanceData,
    environment: &str,
    received_at_ms: i64,
) -> v1::UnleashEdgeReport {
    v1::UnleashEdgeReport {
        environment: environment.to_owned(),
        received_at_ms,
        instance: Some(instance_of(data)),
    }
}

/// Checks a relayed report (a usage batch's `unleash_edges`): its environment and instance as [`check`]
/// does; returns the instance's body.
pub fn check_report(report: &v1::UnleashEdgeReport) -> Result<EdgeInstanceData, ApiError> {
    text("environment", &report.environment, true)?;
    let instance = report
        .instance
        .clone()
        .ok_or_else(|| ApiError::validation("instance is required"))?;
    let data = data_of(instance);
    check(&data)?;
    Ok(data)
}

fn latency_of(metrics: LatencyMetrics) -> v1::UnleashEdgeLatency {
    v1::UnleashEdgeLatency {
        avg: metrics.avg,
        count: metrics.count,
        p99: metrics.p99,
    }
}

fn metrics_of(latency: Option<v1::UnleashEdgeLatency>) -> LatencyMetrics {
    latency.map_or_else(LatencyMetrics::default, |l| LatencyMetrics {
        avg: l.avg,
        count: l.count,
        p99: l.p99,
    })
}

fn latencies_of(map: BTreeMap<String, LatencyMetrics>) -> HashMap<String, v1::UnleashEdgeLatency> {
    map.into_iter().map(|(k, v)| (k, latency_of(v))).collect()
}

fn routes_of(map: HashMap<String, v1::UnleashEdgeLatency>) -> BTreeMap<String, LatencyMetrics> {
    map.into_iter()
        .map(|(k, v)| (k, metrics_of(Some(v))))
        .collect()
}

/// The wire form of an instance (and the Edges behind it).
pub fn instance_of(data: EdgeInstanceData) -> v1::UnleashEdgeInstance {
    v1::UnleashEdgeInstance {
        identifier: data.identifier,
        app_name: data.app_name,
        hosting: data.hosting,
        region: data.region,
        edge_version: data.edge_version,
        process_metrics: data.process_metrics.map(|p| v1::UnleashEdgeProcess {
            cpu_usage: p.cpu_usage,
            memory_usage: p.memory_usage,
        }),
        started: data.started,
        traffic: Some(v1::UnleashEdgeTraffic {
            get: latencies_of(data.traffic.get),
            post: latencies_of(data.traffic.post),
            access_denied: latencies_of(data.traffic.access_denied),
            cached_responses: latencies_of(data.traffic.cached_responses),
        }),
        latency_upstream: Some(v1::UnleashEdgeUpstreamLatency {
            features: Some(latency_of(data.latency_upstream.features)),
            metrics: Some(latency_of(data.latency_upstream.metrics)),
            edge: Some(latency_of(data.latency_upstream.edge)),
        }),
        requests_since_last_report: data
            .requests_since_last_report
            .into_iter()
            .map(|(route, stats)| {
                (
                    route,
                    v1::UnleashEdgeRequests {
                        requests_200: stats.requests_200,
                        requests_304: stats.requests_304,
                    },
                )
            })
            .collect(),
        connected_streaming_clients: data.connected_streaming_clients,
        connected_edges: data.connected_edges.into_iter().map(instance_of).collect(),
        edge_api_key_revision_ids: data
            .edge_api_key_revision_ids
            .into_iter()
            .map(|r| v1::UnleashEdgeRevision {
                environment: r.environment,
                projects: r.projects,
                revision_id: r.revision_id,
                last_updated: r.last_updated,
            })
            .collect(),
    }
}

/// The body an instance's wire form stands for (the inverse of [`instance_of`]).
pub fn data_of(instance: v1::UnleashEdgeInstance) -> EdgeInstanceData {
    let traffic = instance.traffic.unwrap_or_default();
    let upstream = instance.latency_upstream.unwrap_or_default();
    EdgeInstanceData {
        identifier: instance.identifier,
        app_name: instance.app_name,
        hosting: instance.hosting,
        region: instance.region,
        edge_version: instance.edge_version,
        process_metrics: instance.process_metrics.map(|p| ProcessMetrics {
            cpu_usage: p.cpu_usage,
            memory_usage: p.memory_usage,
        }),
        started: instance.started,
        traffic: InstanceTraffic {
            get: routes_of(traffic.get),
            post: routes_of(traffic.post),
            access_denied: routes_of(traffic.access_denied),
            cached_responses: routes_of(traffic.cached_responses),
        },
        latency_upstream: UpstreamLatency {
            features: metrics_of(upstream.features),
            metrics: metrics_of(upstream.metrics),
            edge: metrics_of(upstream.edge),
        },
        requests_since_last_report: instance
            .requests_since_last_report
            .into_iter()
            .map(|(route, stats)| {
                (
                    route,
                    RequestStats {
                        requests_200: stats.requests_200,
                        requests_304: stats.requests_304,
                    },
                )
            })
            .collect(),
        connected_streaming_clients: instance.connected_streaming_clients,
        connected_edges: instance.connected_edges.into_iter().map(data_of).collect(),
        edge_api_key_revision_ids: instance
            .edge_api_key_revision_ids
            .into_iter()
            .map(|r| ApiKeyRevision {
                environment: r.environment,
                projects: r.projects,
                revision_id: r.revision_id,
                last_updated: r.last_updated,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(identifier: &str, connected: Vec<serde_json::Value>) -> serde_json::Value {
        let latency = serde_json::json!({"avg": 1.5, "count": 40.0, "p99": 4.9});
        serde_json::json!({
            "identifier": identifier, "appName": "unleash-edge", "hosting": "self-hosted", "region": null,
            "edgeVersion": "20.1.0", "processMetrics": {"cpuUsage": 1.25, "memoryUsage": 2.0e7},
            "started": "2026-11-30T10:00:00.123456789Z",
            "traffic": {"get": {"/api/client/features": latency}, "post": {}, "accessDenied": {},
                "cachedResponses": {"/api/client/features": latency}},
            "latencyUpstream": {"features": latency, "metrics": latency, "edge": latency},
            "requestsSinceLastReport": {"/api/client/features": {"requests200": 3, "requests304": 4}},
            "connectedStreamingClients": 2, "connectedEdges": connected,
            "requestConsumptionSinceLastReport": [],
            "edgeApiKeyRevisionIds": [{"environment": "development", "projects": ["default"],
                "revisionId": 9, "lastUpdated": "2026-11-30T10:00:15.500Z"}]
        })
    }

    #[test]
    fn the_wire_form_carries_the_whole_report_and_its_checks_hold_on_it() {
        let data: EdgeInstanceData =
            serde_json::from_value(body("front", vec![body("behind", vec![])])).unwrap();
        check(&data).unwrap();
        let wire = report(data.clone(), "development", 42);
        assert_eq!(check_report(&wire).unwrap(), data);
        let mut bad = wire.clone();
        bad.instance.as_mut().unwrap().connected_edges[0].app_name = String::new();
        let error = check_report(&bad).unwrap_err();
        assert!(
            error.message.contains("connectedEdges[0].appName"),
            "{}",
            error.message
        );
        let mut nul = data;
        nul.traffic
            .get
            .insert("/a\u{0}".into(), LatencyMetrics::default());
        assert!(check(&nul).is_err(), "no store keeps a NUL");
        assert!(check_report(&v1::UnleashEdgeReport {
            environment: "development".into(),
            received_at_ms: 1,
            instance: None,
        })
        .is_err());
    }

    #[test]
    fn a_chain_is_bounded_in_depth() {
        let mut chain = body("0", vec![]);
        for depth in 1..=MAX_DEPTH + 1 {
            chain = body(&depth.to_string(), vec![chain]);
        }
        let data: EdgeInstanceData = serde_json::from_value(chain).unwrap();
        let error = check(&data).unwrap_err();
        assert!(error.message.contains("nest"), "{}", error.message);
    }
}
