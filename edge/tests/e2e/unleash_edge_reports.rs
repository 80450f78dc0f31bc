//! An Unleash Edge chained behind a Vexil edge: its report on itself (`POST /api/client/metrics/edge`, Unleash
//! Edge 20.x's body) posted to `vexil-edge serve` is checked there as the control plane checks it (401, 403,
//! 400 naming the field) and relayed in the edge's next usage batch; the control plane's
//! `GET /api/admin/metrics/edges` and Edges page then show the instance and the one behind it, and a
//! later report replaces the earlier one.

use std::time::Duration;

use serde_json::{json, Value};

use crate::processes::*;

/// An instance's report as Unleash Edge 20.x serializes its `EdgeInstanceData`.
pub fn instance_data(identifier: &str, requests_200: u64, connected: Vec<Value>) -> Value {
    let latency = json!({"avg": 1.5, "count": 40.0, "p99": 4.9});
    json!({
        "identifier": identifier,
        "appName": "unleash-edge-behind-vexil",
        "hosting": "self-hosted",
        "region": null,
        "edgeVersion": "20.1.0",
        "processMetrics": {"cpuUsage": 1.25, "memoryUsage": 23456789.0},
        "started": "2026-11-30T10:00:00.123456789Z",
        "traffic": {
            "cachedResponses": {},
            "get": {"/api/client/features": latency},
            "post": {"/api/client/metrics": latency},
            "accessDenied": {}
        },
        "latencyUpstream": {"features": latency, "metrics": latency, "edge": latency},
        "requestsSinceLastReport": {
            "/api/client/features": {"requests200": requests_200, "requests304": 30}
        },
        "connectedStreamingClients": 0,
        "connectedEdges": connected,
        "requestConsumptionSinceLastReport": [{"meteredGroup": "default", "requests": 5}],
        "edgeApiKeyRevisionIds": [{
            "environment": "development", "projects": ["default"], "revisionId": 1,
            "lastUpdated": "2026-11-30T10:00:15.500Z"
        }]
    })
}

pub async fn post_report(base: &str, token: Option<&str>, body: Value) -> Answer {
    request(
        "POST",
        &format!("{base}/api/client/metrics/edge"),
        token,
        &[],
        Some(body),
    )
    .await
}

/// The Unleash Edge instances the control plane lists.
pub async fn unleash_edges(control_plane: &Process) -> Vec<Value> {
    admin(control_plane, "GET", "/api/admin/metrics/edges", None)
        .await
        .body["unleashEdges"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The requests `identifier` reported on `/api/client/features` since its previous report, if listed.
pub fn reported_200(instances: &[Value], identifier: &str) -> Option<u64> {
    instances.iter().find(|i| i["identifier"] == identifier)?["requestsSinceLastReport"]
        ["/api/client/features"]["requests200"]
        .as_u64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unleash_edge_report_posted_to_an_edge_reaches_the_control_plane() {
    let db = crate::database::TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let edge = Process::edge(
        &[control_plane.grpc()],
        &["--edge-id", "vexil-edge-a", "--metrics-interval", "200ms"],
    );
    eventually(Duration::from_secs(10), "the edge is ready", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
    })
    .await;

    // The control plane's rules, at the edge: nothing relayed for these.
    let front = "01JDFRONTBEHINDVEXIL000000";
    let behind = "01JDCHAINEDBEHINDVEXIL0000";
    let body = instance_data(front, 12, vec![instance_data(behind, 7, vec![])]);
    assert_eq!(
        post_report(&edge.base, None, body.clone()).await.status,
        401
    );
    assert_eq!(
        post_report(&edge.base, Some(FRONTEND_TOKEN), body.clone())
            .await
            .status,
        403
    );
    let mut bad = body.clone();
    bad["connectedEdges"][0]["appName"] = json!("");
    let refused = post_report(&edge.base, Some(CLIENT_TOKEN), bad).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("connectedEdges[0].appName")),
        "{}",
        refused.body
    );

    let answer = post_report(&edge.base, Some(CLIENT_TOKEN), body).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    eventually(
        Duration::from_secs(10),
        "the report is on the control plane",
        || async { reported_200(&unleash_edges(&control_plane).await, front) == Some(12) },
    )
    .await;
    let instances = unleash_edges(&control_plane).await;
    assert_eq!(instances.len(), 2, "{instances:?}");
    let kept = instances.iter().find(|i| i["identifier"] == front).unwrap();
    assert_eq!(kept["appName"], "unleash-edge-behind-vexil");
    assert_eq!(kept["environment"], "development");
    assert_eq!(kept["via"], Value::Null);
    assert_eq!(kept["started"], "2026-11-30T10:00:00.123Z");
    assert_eq!(kept["processMetrics"]["memoryUsage"], 23456789.0);
    assert_eq!(kept["revisions"][0]["revisionId"], 1);
    let chained = instances
        .iter()
        .find(|i| i["identifier"] == behind)
        .unwrap();
    assert_eq!(chained["via"], front);
    assert_eq!(reported_200(&instances, behind), Some(7));

    // The next report replaces the previous one: still two instances, with the new counts.
    let later = instance_data(front, 99, vec![instance_data(behind, 8, vec![])]);
    assert_eq!(
        post_report(&edge.base, Some(CLIENT_TOKEN), later)
            .await
            .status,
        202
    );
    eventually(
        Duration::from_secs(10),
        "the later report replaces the earlier",
        || async { reported_200(&unleash_edges(&control_plane).await, front) == Some(99) },
    )
    .await;
    let instances = unleash_edges(&control_plane).await;
    assert_eq!(instances.len(), 2, "{instances:?}");
    assert_eq!(reported_200(&instances, behind), Some(8));
    // Vexil's own edge is listed beside them, as before.
    let edges = admin(&control_plane, "GET", "/api/admin/metrics/edges", None)
        .await
        .body["edges"]
        .clone();
    assert!(
        edges
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["edgeId"] == "vexil-edge-a")),
        "{edges}"
    );
}
