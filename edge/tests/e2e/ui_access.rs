//! The admin web UI's access pages in a real browser against the real binaries: `js/access-walk.cjs`
//! (playwright-core driving Debian's chromium, both installed by `scripts/test`) creates a frontend token in
//! the UI, and this test uses its secret against the edge's `/api/frontend`; the walk revokes it, and the edge
//! refuses it within seconds; an Editor created in the UI finds tokens and users not editable and changes
//! their own password. Screenshots: `target/ui-screenshots/access-*.png`.

use crate::processes::{admin, create_enabled_flag, eventually, get, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::{json, Value};
use std::time::Duration;

/// The edge's `/api/frontend` answer to `secret`.
async fn frontend(edge: &Process, secret: &str) -> (u16, Value) {
    let answer = get(
        &format!("{}/api/frontend?userId=u1", edge.base),
        Some(secret),
    )
    .await;
    (answer.status, answer.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_pages_in_chromium() {
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
    create_enabled_flag(&control_plane, "access-walk-flag").await;
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "access-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    let limit = Duration::from_secs(10);
    loop {
        let (checkpoint, message) = walk.next().await;
        let secret = message["secret"].as_str().unwrap_or_default().to_owned();
        match checkpoint.as_str() {
            "token-created" => {
                eventually(limit, "the edge serves the UI's new token", || async {
                    let (status, body) = frontend(&edge, &secret).await;
                    status == 200
                        && body["toggles"].as_array().is_some_and(|toggles| {
                            toggles.iter().any(|t| t["name"] == "access-walk-flag")
                        })
                })
                .await;
            }
            "token-revoked" => {
                let took = eventually(limit, "the edge refuses the revoked token", || async {
                    frontend(&edge, &secret).await.0 == 401
                })
                .await;
                eprintln!("the edge refused the revoked token after {took:?}");
                let tokens = admin(&control_plane, "GET", "/api/admin/api-tokens", None).await;
                assert!(!tokens.body["tokens"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|token| token["tokenName"] == "web-shop"));
            }
            "editor-created" => {
                let users = admin(&control_plane, "GET", "/api/admin/user-admin", None).await;
                let eddie = users.body["users"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|user| user["username"] == "eddie")
                    .cloned()
                    .expect("the UI created eddie");
                assert_eq!(eddie["rootRole"], 2);
                assert_eq!(eddie["name"], "Eddie Editor");
                let groups = admin(&control_plane, "GET", "/api/admin/groups", None).await;
                assert_eq!(groups.body["groups"][0]["name"], "release managers");
                assert_eq!(
                    groups.body["groups"][0]["users"][0]["user"]["id"],
                    eddie["id"]
                );
            }
            "password-changed" => {
                let pat = message["pat"].as_str().unwrap_or_default();
                let me = get(&format!("{}/api/admin/user", control_plane.base), Some(pat)).await;
                assert_eq!(me.status, 200, "{}", me.body);
                assert_eq!(me.body["user"]["username"], "eddie");
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "01-tokens",
        "02-token-created",
        "05-users",
        "07-editor-refused",
        "08-profile",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("access-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
