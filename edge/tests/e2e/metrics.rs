//! Usage metrics end to end: SDK posts to two edges and to the control plane itself show up exactly once in
//! the metrics views; an edge cut off from the control plane keeps its batches and delivers them once on
//! reconnect; `/api/admin/metrics/edges` shows both edges at the current revision with their evaluations.
//! Poisonous posts are refused by the edge as by the control plane (SQLite and Postgres), a batch the control
//! plane refuses is dropped and counted while reporting goes on, and a cut larger than a gRPC message is sent
//! as several batches, all counted.

use std::time::Duration;

use serde_json::{json, Value};

use crate::database::TestDb;
use crate::processes::*;
use crate::usage_proxy::SpoilingProxy;

crate::on_sqlite_and_postgres!(poisonous_posts_leave_the_counting_through_an_edge_exact,);

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
        // Current now: an application's first registration is a write (`application-created`).
        || async {
            let now = served_revision(&control_plane).await.unwrap_or_default();
            edges_are(&edges_view(&control_plane).await, now, [5, 3])
        },
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
    let now = served_revision(&control_plane).await.unwrap_or_default();
    assert!(edges_are(&edges_view(&control_plane).await, now, [5, 3]));
}

/// A control plane and an edge subscribed to `upstream` (the control plane's gRPC when `None`), reporting
/// every 200 ms, once the edge serves the flag `checkout`.
async fn control_plane_and_edge(
    db: &TestDb,
    upstream: Option<&str>,
    edge_id: &str,
) -> (Process, Process) {
    let control_plane = Process::control_plane(&db.url, &[]);
    let upstream = upstream.unwrap_or(control_plane.grpc()).to_owned();
    let edge = Process::edge(
        &[&upstream],
        &["--edge-id", edge_id, "--metrics-interval", "200ms"],
    );
    create_enabled_flag(&control_plane, "checkout").await;
    eventually(
        Duration::from_secs(10),
        "the edge serves checkout",
        || async { served_revision(&edge).await.is_some() },
    )
    .await;
    (control_plane, edge)
}

/// A counter of the edge's Prometheus text (`None` while absent).
async fn edge_counter(edge: &Process, name: &str) -> Option<f64> {
    let text = get(
        &format!("{}/internal-backstage/prometheus", edge.base),
        None,
    )
    .await;
    let text = text.body.as_str()?.to_owned();
    text.lines().find_map(|line| {
        let (metric, value) = line.split_once(' ')?;
        (metric == name)
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

async fn poisonous_posts_leave_the_counting_through_an_edge_exact(db: TestDb) {
    let (control_plane, edge) = control_plane_and_edge(&db, None, "edge-p").await;
    let long = "x".repeat(256);
    let nul = "bad\u{0}name";
    let one = json!({"a": {"yes": 1, "no": 0}});
    let many_variants: serde_json::Map<String, Value> =
        (0..101).map(|i| (format!("v{i}"), json!(1))).collect();
    let poisons = [
        (
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            metrics_body("web", &long, one.clone()),
        ),
        (
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            metrics_body(nul, "w1", one.clone()),
        ),
        (
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            metrics_body("web", "w1", json!({nul: {"yes": 1}})),
        ),
        (
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            metrics_body(
                "web",
                "w1",
                json!({"a": {"yes": 1, "variants": many_variants}}),
            ),
        ),
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            metrics_body("shop", "i1", json!({"a": {"yes": 1, "variants": {nul: 1}}})),
        ),
        (
            "/api/client/metrics/bulk",
            CLIENT_TOKEN,
            json!({"metrics": [{"featureName": "a", "appName": "shop", "environment": "e".repeat(101)}]}),
        ),
    ];
    for process in [&edge, &control_plane] {
        for (path, token, body) in &poisons {
            let answer = request(
                "POST",
                &format!("{}{path}", process.base),
                Some(token),
                &[],
                Some(body.clone()),
            )
            .await;
            assert_eq!(answer.status, 400, "{path}: {}", answer.body);
            assert_eq!(answer.body["name"], "ValidationError");
        }
    }

    // Counts near 2^63, twice through the edge and twice straight to the control plane: saturated.
    let most = |flag: &str| json!({flag: {"yes": u64::MAX, "no": i64::MAX, "variants": {"red": u64::MAX}}});
    for _ in 0..2 {
        let body = metrics_body("web", "w1", most("big-edge"));
        assert_eq!(
            post(&edge, "/api/frontend/client/metrics", FRONTEND_TOKEN, body).await,
            200
        );
        let body = metrics_body("shop", "i1", most("big-direct"));
        assert_eq!(
            post(&control_plane, "/api/client/metrics", CLIENT_TOKEN, body).await,
            202
        );
    }
    let saturated = json!({"yes": i64::MAX, "no": i64::MAX});
    eventually(
        Duration::from_secs(10),
        "the saturated counts arrive",
        || async {
            let last_hour = last_hour(&control_plane).await;
            last_hour["big-edge"] == saturated && last_hour["big-direct"] == saturated
        },
    )
    .await;

    // Ordinary posts, through the edge and straight to the control plane, are counted exactly.
    let body = metrics_body("shop", "i1", json!({"ordinary": {"yes": 3, "no": 1}}));
    assert_eq!(
        post(&edge, "/api/client/metrics", CLIENT_TOKEN, body).await,
        202
    );
    let body = metrics_body("web", "w1", json!({"ordinary": {"yes": 2, "no": 0}}));
    assert_eq!(
        post(
            &control_plane,
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            body
        )
        .await,
        200
    );
    let exact = json!({"yes": 5, "no": 1});
    eventually(
        Duration::from_secs(10),
        "the ordinary counts arrive",
        || async { last_hour(&control_plane).await["ordinary"] == exact },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        last_hour(&control_plane).await["ordinary"],
        exact,
        "and only once"
    );
    for path in [
        "/api/admin/metrics/seen-toggles",
        "/api/admin/metrics/applications",
        "/api/admin/metrics/applications/web",
        "/api/admin/metrics/seen-apps",
        "/api/admin/metrics/edges",
        "/api/admin/client-metrics/features/big-edge",
    ] {
        admin(&control_plane, "GET", path, None).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_batch_is_dropped_and_counted_and_reporting_goes_on() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let proxy = SpoilingProxy::start(control_plane.grpc(), "spoiled").await;
    let edge = Process::edge(
        &[&proxy.url],
        &["--edge-id", "edge-r", "--metrics-interval", "200ms"],
    );
    create_enabled_flag(&control_plane, "checkout").await;
    eventually(
        Duration::from_secs(10),
        "the edge serves checkout",
        || async { served_revision(&edge).await.is_some() },
    )
    .await;
    eventually(
        Duration::from_secs(10),
        "usage_rejected_total is there",
        || async { edge_counter(&edge, "usage_rejected_total").await == Some(0.0) },
    )
    .await;

    let spoiled = metrics_body("spoiled", "s1", json!({"checkout": {"yes": 7, "no": 7}}));
    assert_eq!(
        post(&edge, "/api/client/metrics", CLIENT_TOKEN, spoiled).await,
        202
    );
    eventually(
        Duration::from_secs(10),
        "the refused batch is counted",
        || async { edge_counter(&edge, "usage_rejected_total").await == Some(1.0) },
    )
    .await;
    // The next batches are reported.
    let shop = metrics_body("shop", "i1", json!({"checkout": {"yes": 3, "no": 1}}));
    assert_eq!(
        post(&edge, "/api/client/metrics", CLIENT_TOKEN, shop).await,
        202
    );
    let expected = json!({"checkout": {"yes": 3, "no": 1}});
    eventually(
        Duration::from_secs(10),
        "the next batch arrives",
        || async { last_hour(&control_plane).await == expected },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(last_hour(&control_plane).await, expected);
    assert_eq!(
        edge_counter(&edge, "usage_rejected_total").await,
        Some(1.0),
        "dropped, not retried"
    );
    let apps = admin(
        &control_plane,
        "GET",
        "/api/admin/metrics/applications",
        None,
    )
    .await;
    assert_eq!(apps.body["total"], 1, "{}", apps.body);
    assert_eq!(apps.body["applications"][0]["appName"], "shop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_larger_than_a_message_is_split_and_fully_counted() {
    const POSTS: usize = 5;
    const FLAGS_PER_POST: usize = 3_500;
    let db = TestDb::sqlite().await;
    let (mut control_plane, edge) = control_plane_and_edge(&db, None, "edge-s").await;
    // Cut off, the edge gathers more than a message (4 MiB) may hold: 17 500 counts of ~300 bytes.
    let grpc_address = control_plane
        .grpc()
        .trim_start_matches("http://")
        .to_owned();
    control_plane.kill();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let prefix = "f".repeat(240);
    for post_index in 0..POSTS {
        let toggles: serde_json::Map<String, Value> = (0..FLAGS_PER_POST)
            .map(|i| {
                (
                    format!("{prefix}-{post_index}-{i:04}"),
                    json!({"yes": 1, "no": 1}),
                )
            })
            .collect();
        let body = metrics_body("bulky", "b1", Value::Object(toggles));
        assert_eq!(
            post(&edge, "/api/client/metrics", CLIENT_TOKEN, body).await,
            202
        );
    }
    let control_plane = Process::control_plane_at(&db.url, &grpc_address, &[]);
    let expected_count = 2 * POSTS * FLAGS_PER_POST;
    let counted = || async {
        let seen = admin(
            &control_plane,
            "GET",
            "/api/admin/metrics/seen-toggles",
            None,
        )
        .await;
        let bulky = seen
            .body
            .as_array()
            .and_then(|apps| apps.iter().find(|a| a["appName"] == "bulky").cloned());
        bulky.map(|app| {
            (
                app["seenToggles"].as_array().map_or(0, Vec::len),
                app["metricsCount"].as_u64().unwrap_or_default() as usize,
            )
        })
    };
    let started = std::time::Instant::now();
    while counted().await != Some((POSTS * FLAGS_PER_POST, expected_count)) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not all counted within 60 s: {:?}",
            counted().await
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        counted().await,
        Some((POSTS * FLAGS_PER_POST, expected_count)),
        "each batch once"
    );
}
