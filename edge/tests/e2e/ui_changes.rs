//! Change requests and the playground in a real browser against the real binaries: `js/ui-changes-walk.cjs`
//! (playwright-core driving Debian's chromium, both installed by `scripts/test`). Through the admin API this
//! test turns change requests on with 2 required approvals in development, makes Editors ed, ann and bob and
//! a frontend token; in the browser ed switches a flag on (a draft), submits it, ann and bob approve, ed
//! (never offered Approve) applies; between the steps the edge's `/api/frontend`, with that token, must not
//! serve the flag until the request is applied, and then must. Then the playground names the constraint
//! that decided a flag for country NO and for SE. Screenshots: `target/ui-screenshots/changes-*.png`.

use crate::processes::{admin, eventually, get, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::{json, Value};
use std::time::Duration;

/// Whether the edge serves `flag` as on to a frontend client with `token` (user u1 in Norway).
async fn served(edge: &Process, token: &str, flag: &str) -> bool {
    let answer = get(
        &format!("{}/api/frontend?userId=u1&country=NO", edge.base),
        Some(token),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["toggles"]
        .as_array()
        .is_some_and(|toggles| toggles.iter().any(|toggle| toggle["name"] == flag))
}

async fn request_state(control_plane: &Process, path: &str) -> Value {
    let id = path.rsplit('/').next().unwrap_or_default();
    admin(
        control_plane,
        "GET",
        &format!("/api/admin/projects/default/change-requests/{id}"),
        None,
    )
    .await
    .body["state"]
        .clone()
}

/// Sets up what the walk needs through the admin API; answers the frontend token's secret.
async fn set_up(control_plane: &Process) -> String {
    let features = "/api/admin/projects/default/features";
    for name in ["guarded", "nordic"] {
        admin(control_plane, "POST", features, Some(json!({"name": name}))).await;
    }
    admin(
        control_plane,
        "POST",
        &format!("{features}/nordic/environments/development/strategies"),
        Some(json!({
            "name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "nordic"},
            "constraints": [{"contextName": "country", "operator": "IN", "values": ["NO"]}]
        })),
    )
    .await;
    admin(
        control_plane,
        "POST",
        &format!("{features}/nordic/environments/development/on"),
        None,
    )
    .await;
    // Only now: with change requests on, the writes above would be drafts too.
    admin(
        control_plane,
        "PUT",
        "/api/admin/projects/default/environments/development/change-requests/config",
        Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 2})),
    )
    .await;
    for username in ["ed", "ann", "bob"] {
        admin(
            control_plane,
            "POST",
            "/api/admin/user-admin",
            Some(json!({"username": username, "password": "correct horse battery", "rootRole": "Editor"})),
        )
        .await;
    }
    let token = admin(
        control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "walk", "type": "frontend", "environment": "development", "projects": ["*"]})),
    )
    .await;
    token.body["secret"]
        .as_str()
        .expect("the new token's secret")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_requests_and_the_playground_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    let token = set_up(&control_plane).await;
    let limit = Duration::from_secs(10);
    eventually(
        limit,
        "the edge serves nordic (the set-up arrived)",
        || async { served(&edge, &token, "nordic").await },
    )
    .await;
    assert!(!served(&edge, &token, "guarded").await);

    let screenshots = screenshots();
    let mut walk = Walk::start(
        "ui-changes-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    let mut request = String::new();
    loop {
        let (checkpoint, message) = walk.next().await;
        match checkpoint.as_str() {
            "drafted" => {
                request = message["request"].as_str().unwrap_or_default().to_owned();
                assert_eq!(request_state(&control_plane, &request).await, "Draft");
                let flag = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/projects/default/features/guarded",
                    None,
                )
                .await;
                assert_eq!(flag.body["environments"][0]["name"], "development");
                assert_eq!(flag.body["environments"][0]["enabled"], false);
                assert!(!served(&edge, &token, "guarded").await);
            }
            "submitted" => {
                assert_eq!(request_state(&control_plane, &request).await, "In review");
                assert!(!served(&edge, &token, "guarded").await);
            }
            "approved" => {
                assert_eq!(request_state(&control_plane, &request).await, "Approved");
                assert!(!served(&edge, &token, "guarded").await);
            }
            "applied" => {
                assert_eq!(request_state(&control_plane, &request).await, "Applied");
                eventually(limit, "the edge serves the applied change", || async {
                    served(&edge, &token, "guarded").await
                })
                .await;
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "03-draft",
        "06-applied",
        "09-playground-on",
        "10-playground-off",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("changes-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
