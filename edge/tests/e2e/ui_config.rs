//! The UI's configuration pages in a real browser against the real binaries: `js/config-walk.cjs` creates a
//! project and turns change requests on in development with 2 approvals, creates a context field with legal
//! values and a custom strategy and finds both in a flag's strategy form, deprecates the strategy, and adds a
//! CORS origin on the settings page. Between its steps this test checks the admin API and the edge: the
//! change-request configuration, the deprecation, and the edge's answer to a CORS preflight from the new
//! origin. Screenshots go to `target/ui-screenshots/config-*.png`.

use crate::processes::{admin, eventually, request, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;
use std::time::Duration;

const ORIGIN: &str = "https://shop.example.com";

/// The `Access-Control-Allow-Origin` the edge answers to a CORS preflight of its frontend API from `origin`.
async fn allowed_origin(edge: &Process, origin: &str) -> Option<String> {
    let answer = request(
        "OPTIONS",
        &format!("{}/api/frontend", edge.base),
        None,
        &[("Origin", origin), ("Access-Control-Request-Method", "GET")],
        None,
    )
    .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    answer
        .header("access-control-allow-origin")
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_walk_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "config-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    let mut seen = Vec::new();
    loop {
        let (checkpoint, _) = walk.next().await;
        match checkpoint.as_str() {
            "change-requests" => {
                let config = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/projects/web/change-requests/config",
                    None,
                )
                .await;
                let development = config.body.as_array().and_then(|environments| {
                    environments
                        .iter()
                        .find(|entry| entry["environment"] == "development")
                });
                let development = development.expect("development in the project's configuration");
                assert_eq!(development["changeRequestEnabled"], true, "{}", config.body);
                assert_eq!(development["requiredApprovals"], 2, "{}", config.body);
            }
            "strategy-deprecated" => {
                let stored = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/strategies/by-tenant",
                    None,
                )
                .await;
                assert_eq!(stored.body["deprecated"], true);
                assert_eq!(stored.body["parameters"][0]["name"], "tenants");
                assert_eq!(stored.body["parameters"][0]["type"], "list");
                assert_eq!(stored.body["parameters"][0]["required"], true);
            }
            "origins" => {
                eventually(
                    Duration::from_secs(10),
                    "the edge allows the origin set in the UI",
                    || async { allowed_origin(&edge, ORIGIN).await.as_deref() == Some(ORIGIN) },
                )
                .await;
                assert_eq!(allowed_origin(&edge, "https://evil.example").await, None);
            }
            "done" => {
                seen.push(checkpoint);
                break;
            }
            other => panic!("unknown checkpoint {other}"),
        }
        seen.push(checkpoint);
        walk.resume().await;
    }
    assert_eq!(
        seen,
        ["change-requests", "strategy-deprecated", "origins", "done"]
    );
    walk.finish().await;
    for page in [
        "01-projects",
        "02-project-settings",
        "08-constraint-legal-values",
        "10-settings",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("config-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
