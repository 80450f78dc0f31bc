//! SCIM provisioning in the admin web UI in a real browser against the real control plane:
//! `js/scim-walk.cjs` (playwright-core driving Debian's chromium, with the axe audit) switches provisioning on
//! and generates a token in the UI; this test provisions a user and a group with that token over `/scim/v2`;
//! the walk finds them marked SCIM, their details disabled and explained, and changes the user's root role
//! (checked here through the admin API); this test deactivates the user through SCIM and the walk finds them
//! marked deactivated. Screenshots: `target/ui-screenshots/scim-*.png`.

use crate::processes::{admin, request, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;

async fn scim(
    control_plane: &Process,
    token: &str,
    method: &str,
    path: &str,
    body: serde_json::Value,
) -> crate::processes::Answer {
    let bearer = format!("Bearer {token}");
    request(
        method,
        &format!("{}/scim/v2{path}", control_plane.base),
        Some(&bearer),
        &[],
        Some(body),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_provisioning_in_chromium() {
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
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "scim-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    let mut token = String::new();
    let mut sam = String::new();
    loop {
        let (checkpoint, message) = walk.next().await;
        match checkpoint.as_str() {
            "token-created" => {
                token = message["secret"].as_str().unwrap().to_owned();
                let user = scim(
                    &control_plane,
                    &token,
                    "POST",
                    "/Users",
                    json!({"userName": "sam@example.com", "displayName": "Sam Provisioned",
                           "emails": [{"value": "sam@example.com", "primary": true}]}),
                )
                .await;
                assert_eq!(user.status, 201, "{}", user.body);
                sam = user.body["id"].as_str().unwrap().to_owned();
                let group = scim(
                    &control_plane,
                    &token,
                    "POST",
                    "/Groups",
                    json!({"displayName": "Support", "members": [{"value": sam}]}),
                )
                .await;
                assert_eq!(group.status, 201, "{}", group.body);
            }
            "role-saved" => {
                let users = admin(&control_plane, "GET", "/api/admin/user-admin", None).await;
                let user = users.body["users"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|user| user["scimId"] == sam.as_str())
                    .unwrap()
                    .clone();
                assert_eq!(user["rootRole"], 2);
                assert_eq!(user["name"], "Sam Provisioned");
                let patched = scim(
                    &control_plane,
                    &token,
                    "PATCH",
                    &format!("/Users/{sam}"),
                    json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                           "Operations": [{"op": "replace", "path": "active", "value": false}]}),
                )
                .await;
                assert_eq!(patched.status, 200, "{}", patched.body);
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "01-off",
        "02-token",
        "03-users",
        "04-user",
        "05-group",
        "06-deactivated",
        "07-dark",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("scim-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
