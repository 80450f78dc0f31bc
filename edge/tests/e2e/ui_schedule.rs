//! A scheduled change request in a real browser against the real binaries: `js/schedule-walk.cjs`
//! (playwright-core driving Debian's chromium, both installed by `scripts/test`). Through the admin API this
//! test turns change requests on in development (1 approval), makes Editors ed and ann, a frontend token and
//! two requests of the admin token in review; in the browser ann approves both, ed schedules the first an
//! hour ahead (the form's time in UTC), reschedules it a few seconds ahead and sees it applied on its
//! schedule; the second, scheduled too, ed cancels with "Cancel schedule". Between the steps the edge's
//! `/api/frontend` must not serve the flag until the control plane applied the request by itself, and then
//! must. Screenshots: `target/ui-screenshots/schedule-*.png`.

use crate::processes::{admin, eventually, get, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::{json, Value};
use std::time::Duration;

/// Whether the edge serves `flag` as on to a frontend client with `token`.
async fn served(edge: &Process, token: &str, flag: &str) -> bool {
    let answer = get(
        &format!("{}/api/frontend?userId=u1", edge.base),
        Some(token),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["toggles"]
        .as_array()
        .is_some_and(|toggles| toggles.iter().any(|toggle| toggle["name"] == flag))
}

async fn request(control_plane: &Process, id: &str) -> Value {
    admin(
        control_plane,
        "GET",
        &format!("/api/admin/projects/default/change-requests/{id}"),
        None,
    )
    .await
    .body
}

/// Sets up what the walk needs through the admin API; answers the frontend token's secret and the two
/// requests' ids.
async fn set_up(control_plane: &Process) -> (String, Vec<String>) {
    let features = "/api/admin/projects/default/features";
    for name in ["timed", "later"] {
        admin(control_plane, "POST", features, Some(json!({"name": name}))).await;
        admin(
            control_plane,
            "POST",
            &format!("{features}/{name}/environments/development/strategies"),
            Some(json!({"name": "default"})),
        )
        .await;
    }
    admin(
        control_plane,
        "PUT",
        "/api/admin/projects/default/environments/development/change-requests/config",
        Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 1})),
    )
    .await;
    for username in ["ed", "ann"] {
        admin(
            control_plane,
            "POST",
            "/api/admin/user-admin",
            Some(json!({"username": username, "password": "correct horse battery", "rootRole": "Editor"})),
        )
        .await;
    }
    let mut ids = Vec::new();
    for name in ["timed", "later"] {
        let created = admin(
            control_plane,
            "POST",
            "/api/admin/projects/default/environments/development/change-requests",
            Some(json!({"feature": name, "action": "updateEnabled", "payload": {"enabled": true}})),
        )
        .await;
        let id = created.body["id"].to_string();
        admin(
            control_plane,
            "PUT",
            &format!("/api/admin/projects/default/change-requests/{id}/state"),
            Some(json!({"state": "In review"})),
        )
        .await;
        ids.push(id);
    }
    let token = admin(
        control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "walk", "type": "frontend", "environment": "development", "projects": ["*"]})),
    )
    .await;
    let secret = token.body["secret"]
        .as_str()
        .expect("the new token's secret")
        .to_owned();
    (secret, ids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_request_is_scheduled_and_applied_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    let (token, ids) = set_up(&control_plane).await;
    let limit = Duration::from_secs(10);
    eventually(limit, "the edge has its first snapshot", || async {
        get(&format!("{}/api/frontend", edge.base), Some(&token))
            .await
            .status
            == 200
    })
    .await;
    assert!(!served(&edge, &token, "timed").await);

    let screenshots = screenshots();
    let requests = format!("{},{}", ids[0], ids[1]);
    let mut walk = Walk::start(
        "schedule-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium), ("REQUESTS", &requests)],
    );
    loop {
        let (checkpoint, message) = walk.next().await;
        match checkpoint.as_str() {
            "scheduled" => {
                let timed = request(&control_plane, &ids[0]).await;
                assert_eq!(timed["state"], "Scheduled");
                assert_eq!(timed["schedule"]["status"], "pending");
                assert_eq!(timed["schedule"]["scheduledAt"], message["scheduledAt"]);
                assert!(!served(&edge, &token, "timed").await);
            }
            "rescheduled" => {
                let timed = request(&control_plane, &ids[0]).await;
                assert_eq!(timed["schedule"]["scheduledAt"], message["scheduledAt"]);
                assert!(!served(&edge, &token, "timed").await);
            }
            "applied" => {
                assert_eq!(request(&control_plane, &ids[0]).await["state"], "Applied");
                eventually(limit, "the edge serves the applied change", || async {
                    served(&edge, &token, "timed").await
                })
                .await;
            }
            "cancelled" => {
                assert_eq!(request(&control_plane, &ids[1]).await["state"], "Cancelled");
                assert!(!served(&edge, &token, "later").await);
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in ["02-scheduled", "03-applied"] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("schedule-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
