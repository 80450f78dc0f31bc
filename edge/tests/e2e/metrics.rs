//! Usage metrics end to end: SDK posts to two edges and to the control plane itself show up exactly once in
//! the metrics views; an edge cut off from the control plane keeps its batches and delivers them once on
//! reconnect; `/api/admin/metrics/edges` shows both edges at the current revision with their evaluations.

use std::time::Duration;

use serde_json::{json, Value};

use crate::database::TestDb;
use crate::processes::*;

fn metrics_body(app: &str, instance: &str, toggles: Value) -> Value {
    json!({
        "appName": app,
        "instanceId": instance,
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z", "toggles": toggles}
    })
}

async fn post(process: &Process, path: &str, token: &str, body: Value) -> u16 {
    request(
        "POST",
        &format!("{}{path}", process.base),
        Some(token),
        &[],
        Some(body),
    )
    .await
    .status
}

/// The revision a process serves once `checkout` is on, from the client API (which counts no evaluation).
async fn served_revision(process: &Process) -> Option<u64> {
    let answer = get(
        &format!("{}/api/client/features", process.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    let has_flag = answer.body["features"].as_array().is_some_and(|f| {
        f.iter()
            .any(|f| f["name"] == "checkout" && f["enabled"] == true)
    });
    has_flag
        .then(|| answer.header("x-vexil-revision")?.parse().ok())
        .flatten()
}

async fn last_hour(control_plane: &Process) -> Value {
    admin(
        control_plane,
        "GET",
        "/api/admin/metrics/feature-toggles",
        None,
    )
    .await
    .body["lastHour"]
        .clone()
}

async fn edges_view(control_plane: &Process) -> Value {
    admin(control_plane, "GET", "/api/admin/metrics/edges", None)
        .await
        .body["edges"]
        .clone()
}

/// Both edges at `revision`, with exactly these enabled evaluations of the last hour.
fn edges_are(view: &Value, revision: u64, enabled: [i64; 2]) -> bool {
    let Some(edges) = view.as_array() else {
        return false;
    };
    edges.len() == 2
        && edges
            .iter()
            .zip(["edge-a", "edge-b"])
            .zip(enabled)
            .all(|((edge, id), enabled)| {
                edge["edgeId"] == id
                    && edge["appliedRevision"] == revision
                    && edge["evaluationsLastHour"]["enabled"] == enabled
                    && edge["evaluationsLastHour"]["notEnabled"] == 0
                    && edge["version"].as_str().is_some_and(|v| !v.is_empty())
            })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_metrics_via_two_edges_and_the_control_plane_are_counted_exactly_once() {
    let db = TestDb::sqlite().await;
    let mut control_plane = Process::control_plane(&db.url, &[]);
    let grpc = control_plane.grpc().to_owned();
    let edges = [
        Process::edge(
            &[&grpc],
            &["--edge-id", "edge-a", "--metrics-interval", "200ms"],
        ),
        Process::edge(
            &[&grpc],
            &["--edge-id", "edge-b", "--metrics-interval", "200ms"],
        ),
    ];
    create_enabled_flag(&control_plane, "checkout").await;
    eventually(
        Duration::from_secs(5),
        "the control plane serves checkout",
        || async { served_revision(&control_plane).await.is_some() },
    )
    .await;
    let revision = served_revision(&control_plane).await.unwrap_or_default();
    for edge in &edges {
        eventually(
            Duration::from_secs(10),
            "the edge serves checkout",
            || async { served_revision(edge).await == Some(revision) },
        )
        .await;
    }

    // The edges' own evaluations: 5 on edge-a, 3 on edge-b.
    for (edge, times) in edges.iter().zip([5, 3]) {
        for _ in 0..times {
            assert_eq!(frontend_flags(edge).await.toggle_names(), ["checkout"]);
        }
    }

    // SDK posts: to each edge and to the control plane.
    let register = json!({"appName": "shop", "instanceId": "i1", "strategies": ["default"],
        "started": "2026-11-22T00:00:00.000Z", "interval": 10000});
    assert_eq!(
        post(&edges[0], "/api/client/register", CLIENT_TOKEN, register).await,
        202
    );
    let shop = metrics_body("shop", "i1", json!({"checkout": {"yes": 3, "no": 1}}));
    assert_eq!(
        post(&edges[0], "/api/client/metrics", CLIENT_TOKEN, shop).await,
        202
    );
    let web = metrics_body("web", "w1", json!({"checkout": {"yes": 2, "no": 0}}));
    assert_eq!(
        post(
            &edges[1],
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            web
        )
        .await,
        200
    );
    let direct = metrics_body(
        "shop",
        "i2",
        json!({"checkout": {"yes": 1, "no": 1}, "search": {"yes": 0, "no": 4}}),
    );
    assert_eq!(
        post(&control_plane, "/api/client/metrics", CLIENT_TOKEN, direct).await,
        202
    );

    let expected = json!({"checkout": {"yes": 6, "no": 2}, "search": {"yes": 0, "no": 4}});
    eventually(Duration::from_secs(10), "the counts arrive", || async {
        last_hour(&control_plane).await == expected
    })
    .await;
    // 1
    let seen = admin(
        &control_plane,
        "GET",
        "/api/admin/metrics/seen-toggles",
        None,
    )
    .await;
    assert_eq!(
        seen.body,
        json!([
            {"appName": "shop", "seenToggles": ["checkout", "search"], "metricsCount": 10},
            {"appName": "web", "seenToggles": ["checkout"], "metricsCount": 2}
        ])
    );
    // 3
    let apps = admin(
        &control_plane,
        "GET",
        "/api/admin/metrics/applications",
        None,
    )
    .await;
    assert_eq!(apps.body["total"], 2);
    assert_eq!(apps.body["applications"][0]["appName"], "shop");
    assert_eq!(
        apps.body["applications"][0]["strategies"],
        json!(["default"])
    );
    // 4
    let details = admin(
        &control_plane,
        "GET",
        "/api/admin/metrics/applications/shop",
        None,
    )
    .await;
    let instances: Vec<&str> = details.body["instances"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|i| i["instanceId"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(instances.len(), 2);
    assert!(instances.contains(&"i1") && instances.contains(&"i2"));
    assert_eq!(details.body["seenToggles"], json!(["checkout", "search"]));
    // 5
    let seen_apps = admin(&control_plane, "GET", "/api/admin/metrics/seen-apps", None).await;
    let names = |flag: &str| -> Vec<String> {
        seen_apps.body[flag]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|a| a["appName"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(names("checkout"), ["shop", "web"]);
    assert_eq!(names("search"), ["shop"]);
    // The edges view.
    eventually(
        Duration::from_secs(10),
        "both edges at the current revision",
        || async { edges_are(&edges_view(&control_plane).await, revision, [5, 3]) },
    )
    .await;

    // Cut off: the control plane dies; the edges keep taking posts.
    let grpc_address = grpc.trim_start_matches("http://").to_owned();
    control_plane.kill();
    let more = metrics_body("shop", "i1", json!({"checkout": {"yes": 10, "no": 5}}));
    assert_eq!(
        post(&edges[0], "/api/client/metrics", CLIENT_TOKEN, more).await,
        202
    );
    let more = metrics_body("web", "w1", json!({"checkout": {"yes": 1, "no": 1}}));
    assert_eq!(
        post(
            &edges[1],
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            more
        )
        .await,
        200
    );
    // Several failed reports.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let control_plane = Process::control_plane_at(&db.url, &grpc_address, &[]);
    let expected = json!({"checkout": {"yes": 17, "no": 8}, "search": {"yes": 0, "no": 4}});
    eventually(
        Duration::from_secs(15),
        "the kept batches arrive",
        || async { last_hour(&control_plane).await == expected },
    )
    .await;
    // Later batches (and any retry) add nothing more.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(last_hour(&control_plane).await, expected);
    assert!(edges_are(
        &edges_view(&control_plane).await,
        revision,
        [5, 3]
    ));
}
