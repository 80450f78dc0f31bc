//! The flag list and a flag's page at a glance (issue 30 §6) in a real browser against the real binary:
//! `js/flag-list-walk.cjs` reads per environment what a flag serves, the "change pending" badge of the change
//! request waiting in production, and who changed a flag last (sorting by it), at 1280 and 390 px; then adds
//! a tag on the flag's page by keyboard (after a refused value) and removes it with Tab and Enter; marks the
//! flag a favourite with its star (listed first) and unmarks it in the list. This test checks the tags the
//! admin API stores and the favourite events at each step. Screenshots go to
//! `target/ui-screenshots/flag-list-*.png`.

use crate::processes::{admin, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;

const FLAG: &str = "new-checkout";

async fn tags(control_plane: &Process) -> serde_json::Value {
    let answer = admin(
        control_plane,
        "GET",
        &format!("/api/admin/features/{FLAG}/tags"),
        None,
    )
    .await;
    answer.body["tags"].clone()
}

/// The favourite events of FLAG, newest first: (type, who).
async fn favourite_events(control_plane: &Process) -> Vec<(String, String)> {
    let answer = admin(
        control_plane,
        "GET",
        &format!("/api/admin/events/{FLAG}"),
        None,
    )
    .await;
    answer.body["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|event| {
            event["type"]
                .as_str()
                .is_some_and(|t| t.contains("favorited"))
        })
        .map(|event| {
            let field = |name: &str| event[name].as_str().unwrap_or_default().to_owned();
            (field("type"), field("createdBy"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flag_list_says_what_each_environment_serves_and_tags_are_added_by_keyboard() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let user =
        json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"});
    admin(&control_plane, "POST", "/api/admin/user-admin", Some(user)).await;
    for name in [FLAG, "dark-mode", "welcome-banner"] {
        let created = admin(
            &control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name})),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let development =
        format!("/api/admin/projects/default/features/{FLAG}/environments/development");
    let rollout = json!({"name": "flexibleRollout",
        "parameters": {"rollout": "50", "stickiness": "default", "groupId": FLAG},
        "constraints": [
            {"contextName": "country", "operator": "IN", "values": ["NO", "SE"]},
            {"contextName": "appName", "operator": "IN", "values": ["web-shop"]}]});
    let added = admin(
        &control_plane,
        "POST",
        &format!("{development}/strategies"),
        Some(rollout),
    )
    .await;
    assert_eq!(added.status, 200, "{}", added.body);
    admin(&control_plane, "POST", &format!("{development}/on"), None).await;
    // Change requests on in production, and one waiting there to switch the flag on.
    let production = "/api/admin/projects/default/environments/production";
    admin(
        &control_plane,
        "PUT",
        &format!("{production}/change-requests/config"),
        Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 1})),
    )
    .await;
    let request = admin(
        &control_plane,
        "POST",
        &format!("{production}/change-requests"),
        Some(json!({"feature": FLAG, "action": "updateEnabled", "payload": {"enabled": true}})),
    )
    .await;
    assert_eq!(request.status, 200, "{}", request.body);
    assert_eq!(request.body["id"], 1);

    let screenshots = screenshots();
    let mut walk = Walk::start(
        "flag-list-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium), ("FLAG", FLAG)],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "tagged");
    let stored = tags(&control_plane).await;
    assert_eq!(stored.as_array().map(Vec::len), Some(1), "{stored}");
    assert_eq!(
        (&stored[0]["type"], &stored[0]["value"]),
        (&json!("simple"), &json!("beta"))
    );
    walk.resume().await;
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "favourite");
    assert_eq!(
        favourite_events(&control_plane).await,
        [("feature-favorited".to_owned(), "alice".to_owned())]
    );
    walk.resume().await;
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    assert_eq!(tags(&control_plane).await, json!([]));
    assert_eq!(favourite_events(&control_plane).await.len(), 2);
    for page in ["list", "page"] {
        for width in [1280, 390] {
            for theme in ["light", "dark"] {
                let path = screenshots.join(format!("flag-list-{page}-{width}-{theme}.png"));
                assert!(path.exists(), "{} was not saved", path.display());
            }
        }
    }
}
