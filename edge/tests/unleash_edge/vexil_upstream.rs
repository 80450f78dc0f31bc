//! `vexil-edge edge` in front of a Vexil control plane instead of Unleash: it reads the control plane's
//! delta (`GET /api/client/delta` with the revision it has) rather than whole documents, and serves a change
//! made through the admin API within the refresh interval plus 1 s; an Unleash Edge's report on itself
//! posted to it is forwarded to the control plane's `POST /api/client/metrics/edge`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::processes::{self, create_enabled_flag, eventually, Process, CLIENT_TOKEN};
use crate::unleash::Edge;

/// The requests the control plane counted on `route`, every method and status.
async fn requests_on(control_plane: &Process, route: &str) -> u64 {
    let answer = processes::get(
        &format!("{}/internal-backstage/prometheus", control_plane.base),
        None,
    )
    .await;
    let Value::String(text) = answer.body else {
        panic!("the Prometheus text: {:?}", answer.body);
    };
    let label = format!("http_requests_total{{route=\"{route}\",");
    text.lines()
        .filter(|line| line.starts_with(&label))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

async fn edge_flags(edge: &Edge) -> Vec<String> {
    let answer = processes::get(
        &format!("{}/api/client/features", edge.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    answer.body["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|f| f["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn in_front_of_a_vexil_control_plane_the_edge_reads_its_delta() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    create_enabled_flag(&control_plane, "before-the-edge").await;
    let edge = Edge::start(&[
        ("UPSTREAM_URL", control_plane.base.as_str()),
        ("TOKENS", CLIENT_TOKEN),
        ("FEATURES_REFRESH_INTERVAL_SECONDS", "1"),
    ]);
    eventually(
        Duration::from_secs(20),
        "the edge serves the first flag",
        || async {
            edge_flags(&edge)
                .await
                .iter()
                .any(|f| f == "before-the-edge")
        },
    )
    .await;

    create_enabled_flag(&control_plane, "after-the-edge").await;
    // The refresh interval plus 1 s.
    eventually(
        Duration::from_secs(2),
        "the edge serves the new flag",
        || async {
            edge_flags(&edge)
                .await
                .iter()
                .any(|f| f == "after-the-edge")
        },
    )
    .await;

    let deltas = requests_on(&control_plane, "/api/client/delta").await;
    let documents = requests_on(&control_plane, "/api/client/features").await;
    assert!(deltas >= 2, "a hydration and a change at least: {deltas}");
    assert_eq!(documents, 0, "no whole document fetched");
}

#[tokio::test]
async fn an_unleash_edge_report_posted_to_the_edge_reaches_the_vexil_control_plane() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Edge::start(&[
        ("UPSTREAM_URL", control_plane.base.as_str()),
        ("TOKENS", CLIENT_TOKEN),
        ("METRICS_INTERVAL_SECONDS", "1"),
    ]);
    let latency = json!({"avg": 1.0, "count": 2.0, "p99": 3.0});
    let report = json!({
        "identifier": "01JDBEHINDVEXILEDGEMODE000", "appName": "unleash-edge-behind", "edgeVersion": "20.1.0",
        "started": "2026-11-30T10:00:00Z",
        "traffic": {"get": {}, "post": {}, "accessDenied": {}, "cachedResponses": {}},
        "latencyUpstream": {"features": latency, "metrics": latency, "edge": latency},
        "requestsSinceLastReport": {"/api/frontend": {"requests200": 4, "requests304": 0}},
        "connectedStreamingClients": 1, "connectedEdges": []
    });
    let post = |token| {
        let (base, report) = (edge.base.clone(), report.clone());
        async move {
            processes::request(
                "POST",
                &format!("{base}/api/client/metrics/edge"),
                token,
                &[],
                Some(report),
            )
            .await
            .status
        }
    };
    // Until it has its first snapshot from the control plane the edge answers 503: wait for it.
    eventually(
        Duration::from_secs(10),
        "the edge serves its first snapshot",
        || async {
            processes::request(
                "GET",
                &format!("{}/api/client/features", edge.base),
                Some(CLIENT_TOKEN),
                &[],
                None,
            )
            .await
            .status
                == 200
        },
    )
    .await;
    assert_eq!(post(None).await, 401);
    assert_eq!(post(Some(CLIENT_TOKEN)).await, 202);
    eventually(
        Duration::from_secs(10),
        "the control plane lists the instance",
        || async {
            let edges =
                processes::admin(&control_plane, "GET", "/api/admin/metrics/edges", None).await;
            edges.body["unleashEdges"].as_array().is_some_and(|list| {
                list.len() == 1
                    && list[0]["identifier"] == "01JDBEHINDVEXILEDGEMODE000"
                    && list[0]["environment"] == "development"
                    && list[0]["connectedStreamingClients"] == 1
            })
        },
    )
    .await;
}
