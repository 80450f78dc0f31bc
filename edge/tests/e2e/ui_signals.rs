//! The admin web UI's Signals and Actions pages in a real browser against the real control plane:
//! `js/signals-walk.cjs` (playwright-core driving Debian's chromium, with the axe audit on every page) creates
//! a signal endpoint, a token and an action set in the UI; this test posts a critical alert with that token
//! and sees the flag switched off in production.

use std::time::Duration;

use crate::processes::{admin, eventually, request, Process};
use crate::ui::{chromium, Walk};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_and_actions_pages_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
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
        "/api/admin/service-account",
        Some(json!({"username": "alerts", "name": "Alerts", "rootRole": 2})),
    )
    .await;
    let projects = "/api/admin/projects/default";
    admin(
        &control_plane,
        "POST",
        &format!("{projects}/features"),
        Some(json!({"name": "checkout"})),
    )
    .await;
    let on = format!("{projects}/features/checkout/environments/production/on");
    admin(&control_plane, "POST", &on, None).await;
    let mut walk = Walk::start(
        "signals-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    let mut secret = String::new();
    loop {
        let (checkpoint, message) = walk.next().await;
        match checkpoint.as_str() {
            "token-created" => secret = message["secret"].as_str().unwrap_or_default().to_owned(),
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    let alert = json!({"status": "firing", "commonLabels": {"severity": "critical"}});
    let posted = request(
        "POST",
        &format!("{}/api/signal-endpoint/alertmanager", control_plane.base),
        Some(&format!("Bearer {secret}")),
        &[],
        Some(alert),
    )
    .await;
    assert_eq!(posted.status, 200, "{}", posted.body);
    eventually(
        Duration::from_secs(10),
        "checkout off in production",
        || async {
            let flag = admin(
                &control_plane,
                "GET",
                &format!("{projects}/features/checkout"),
                None,
            )
            .await;
            flag.body["environments"]
                .as_array()
                .unwrap()
                .iter()
                .any(|environment| {
                    environment["name"] == "production" && environment["enabled"] == false
                })
        },
    )
    .await;
}
