//! `vexil-edge edge` in front of a Vexil control plane instead of Unleash: it reads the control plane's
//! delta (`GET /api/client/delta` with the revision it has) rather than whole documents, and serves a change
//! made through the admin API within the refresh interval plus 1 s.

use std::time::Duration;

use serde_json::Value;

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
