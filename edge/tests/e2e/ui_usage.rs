//! The web UI's usage pages in a real browser against the real binaries: a client token made over the admin
//! API, SDK registrations and counts posted THROUGH AN EDGE, and then `js/usage-walk.cjs` (playwright-core
//! and Debian's chromium, installed by `scripts/test`) reads them on the flag's usage chart, the applications,
//! the edges (the running edge at the control plane's revision, read here over the API) and the event log.
//! Between the walk's checkpoints this test posts more counts through the edge and checks the edge's answers.
//! Screenshots: `target/ui-screenshots/usage-*.png`.

use crate::processes::{admin, eventually, get, request, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::{json, Value};
use std::time::Duration;

const FLAG: &str = "walk-checkout";
const APP: &str = "walk-shop";
const EDGE_ID: &str = "edge-walk";

/// An SDK's post to the edge with the client token: 202.
async fn sdk_post(edge: &Process, token: &str, path: &str, body: Value) {
    let answer = request(
        "POST",
        &format!("{}{path}", edge.base),
        Some(token),
        &[],
        Some(body),
    )
    .await;
    assert_eq!(answer.status, 202, "{path}: {}", answer.body);
}

fn counts(yes: i64, no: i64) -> Value {
    json!({
        "appName": APP,
        "instanceId": "walk-instance-1",
        "bucket": {
            "start": "2026-11-24T00:00:00.000Z",
            "stop": "2026-11-24T00:01:00.000Z",
            "toggles": {FLAG: {"yes": yes, "no": no}}
        }
    })
}

/// The flag's yes and no counts as the control plane's API sums them.
async fn stored_counts(control_plane: &Process) -> (i64, i64) {
    let answer = admin(
        control_plane,
        "GET",
        &format!("/api/admin/client-metrics/features/{FLAG}"),
        None,
    )
    .await;
    let rows = answer.body["data"].as_array().cloned().unwrap_or_default();
    let sum = |field: &str| rows.iter().filter_map(|row| row[field].as_i64()).sum();
    (sum("yes"), sum("no"))
}

/// The revision a process serves to the client token (`X-Vexil-Revision`), once it knows the token.
async fn served_revision(process: &Process, token: &str) -> Option<u64> {
    let answer = get(
        &format!("{}/api/client/features", process.base),
        Some(token),
    )
    .await;
    (answer.status == 200)
        .then(|| answer.header("x-vexil-revision")?.parse().ok())
        .flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_usage_pages_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Process::edge(
        &[control_plane.grpc()],
        &["--edge-id", EDGE_ID, "--metrics-interval", "200ms"],
    );
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": FLAG, "description": "The walk's flag"})),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        &format!("/api/admin/projects/default/features/{FLAG}/environments/development/on"),
        None,
    )
    .await;
    let token = admin(
        &control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "walk-sdk", "type": "client", "environment": "development", "projects": ["default"]})),
    )
    .await;
    let token = token.body["secret"]
        .as_str()
        .expect("the secret")
        .to_owned();
    // Generous: the machine running the tests may be busy; each wait ends as soon as its check holds.
    let limit = Duration::from_secs(60);
    eventually(limit, "the edge knows the new client token", || async {
        served_revision(&edge, &token).await.is_some()
    })
    .await;

    sdk_post(
        &edge,
        &token,
        "/api/client/register",
        json!({
            "appName": APP, "instanceId": "walk-instance-1", "sdkVersion": "unleash-client-node:6.12.1",
            "strategies": ["default", "flexibleRollout"], "started": "2026-11-24T00:00:00.000Z", "interval": 10000
        }),
    )
    .await;
    sdk_post(&edge, &token, "/api/client/metrics", counts(7, 3)).await;
    eventually(limit, "the control plane has the edge's counts", || async {
        stored_counts(&control_plane).await == (7, 3)
    })
    .await;
    let application = admin(
        &control_plane,
        "GET",
        &format!("/api/admin/metrics/applications/{APP}"),
        None,
    )
    .await;
    assert_eq!(
        application.body["instances"][0]["instanceId"],
        "walk-instance-1"
    );
    // A browser app asks the edge's frontend API four times: the edge counts what it served and reports it,
    // and the flag's usage page shows it beside the SDK's own counts (issue 30 §7).
    let frontend = admin(
        &control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "walk-web", "type": "frontend", "environment": "development", "projects": ["default"]})),
    )
    .await;
    let frontend = frontend.body["secret"]
        .as_str()
        .expect("the secret")
        .to_owned();
    eventually(
        limit,
        "the edge serves the flag to the frontend token",
        || async {
            let answer = get(&format!("{}/api/frontend", edge.base), Some(&frontend)).await;
            answer.status == 200 && answer.body["toggles"][0]["name"] == FLAG
        },
    )
    .await;
    for _ in 0..3 {
        let answer = get(&format!("{}/api/frontend", edge.base), Some(&frontend)).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    eventually(
        limit,
        "the control plane has the edge's evaluations",
        || async {
            let edges = admin(&control_plane, "GET", "/api/admin/metrics/edges", None).await;
            edges.body["edges"].as_array().is_some_and(|edges| {
                edges.iter().any(|edge| {
                    edge["edgeId"] == EDGE_ID && edge["evaluationsLastHour"]["enabled"] == 4
                })
            })
        },
    )
    .await;
    // They are not SDK counts.
    assert_eq!(stored_counts(&control_plane).await, (7, 3));
    // The control plane's revision, as its API serves it; the edge reports it has applied it.
    let revision = served_revision(&control_plane, &token)
        .await
        .expect("the control plane serves the token");
    eventually(limit, "the edge reported the current revision", || async {
        let edges = admin(&control_plane, "GET", "/api/admin/metrics/edges", None).await;
        edges.body["edges"].as_array().is_some_and(|edges| {
            edges
                .iter()
                .any(|edge| edge["edgeId"] == EDGE_ID && edge["appliedRevision"] == revision)
        })
    })
    .await;

    let screenshots = screenshots();
    let revision_text = revision.to_string();
    let mut walk = Walk::start(
        "usage-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("FLAG", FLAG),
            ("APP", APP),
            ("EDGE_ID", EDGE_ID),
            ("REVISION", &revision_text),
            ("YES", "7"),
            ("NO", "3"),
            ("YES_AFTER", "12"),
            ("SERVED", "4"),
        ],
    );
    loop {
        let (checkpoint, _) = walk.next().await;
        match checkpoint.as_str() {
            "usage" => {
                sdk_post(&edge, &token, "/api/client/metrics", counts(5, 0)).await;
                eventually(limit, "the control plane has the new counts", || async {
                    stored_counts(&control_plane).await == (12, 3)
                })
                .await;
            }
            "edges" => {
                // The edge the page showed as current serves that revision, with the flag on.
                let answer = get(&format!("{}/api/client/features", edge.base), Some(&token)).await;
                assert_eq!(answer.status, 200, "{}", answer.body);
                assert_eq!(
                    answer.header("x-vexil-revision"),
                    Some(revision.to_string().as_str())
                );
                let features = answer.body["features"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                assert!(
                    features
                        .iter()
                        .any(|feature| feature["name"] == FLAG && feature["enabled"] == true),
                    "{}",
                    answer.body
                );
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "01-flag-usage",
        "03-applications",
        "04-application",
        "05-edges",
        "06-events",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("usage-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
