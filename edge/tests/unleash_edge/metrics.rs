//! Real SDK metrics posted through the edge (unleash-client on the client API, unleash-proxy-client on
//! the frontend API) reach Unleash's metrics.

use serde_json::Value;

use crate::answers::wait_in_step;
use crate::unleash::{unleash, wait_for, Edge, NodeSdk, SERIAL};

async fn counted(flag: &str, app: &str) -> u64 {
    let raw = unleash()
        .admin(
            reqwest::Method::GET,
            &format!("/api/admin/client-metrics/features/{flag}/raw"),
            None,
        )
        .await;
    raw["data"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|row| row["appName"] == app)
                .map(|row| row["yes"].as_u64().unwrap_or(0) + row["no"].as_u64().unwrap_or(0))
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn sdk_metrics_posted_through_the_edge_appear_in_unleash() {
    let _serial = SERIAL.lock().await;
    let unleash = unleash();
    let flag = format!("ue-metrics-{}", fastrand::u32(..));
    unleash
        .admin(
            reqwest::Method::POST,
            "/api/admin/projects/default/features",
            Some(serde_json::json!({"name": flag})),
        )
        .await;
    let client = unleash.token("client", "development", &["*"]).await;
    let frontend = unleash.token("frontend", "development", &["default"]).await;
    unleash.wait_known(&client).await;
    unleash.wait_known(&frontend).await;
    let edge = Edge::start(&[
        ("UPSTREAM_URL", &unleash.base),
        ("TOKENS", &client),
        ("FEATURES_REFRESH_INTERVAL_SECONDS", "1"),
        ("METRICS_INTERVAL_SECONDS", "1"),
    ]);
    wait_in_step(unleash, &edge, &client).await;
    let mut server_sdk = NodeSdk::start(
        "server-sdk.cjs",
        &[&format!("{}/api", edge.base), &client, "1000", "1000"],
    );
    let mut frontend_sdk = NodeSdk::start(
        "frontend-sdk.cjs",
        &[&format!("{}/api/frontend", edge.base), &frontend, "1", "1"],
    );
    for _ in 0..5 {
        server_sdk.ask(None, &[&flag]);
        frontend_sdk.ask(None, &[&flag]);
    }
    for app in ["vexil-sdk-test-server", "vexil-sdk-test-frontend"] {
        wait_for(&format!("{app}'s metrics in Unleash"), 60, || async {
            (counted(&flag, app).await >= 5).then_some(())
        })
        .await;
    }
    // Unleash lists registrations after a while of its own.
    wait_for("the SDK's registration in Unleash", 90, || async {
        let applications = unleash
            .admin(
                reqwest::Method::GET,
                "/api/admin/metrics/applications",
                None,
            )
            .await;
        let names: Vec<&Value> = applications["applications"]
            .as_array()?
            .iter()
            .map(|a| &a["appName"])
            .collect();
        names
            .iter()
            .any(|n| *n == "vexil-sdk-test-server")
            .then_some(())
    })
    .await;
}
