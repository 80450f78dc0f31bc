//! Access per project in a real browser against the real binary: `js/project-access-walk.cjs` (playwright-core
//! driving Debian's chromium) creates a custom role on the Roles page and gives people roles on a project's
//! Access page; between its steps this test checks what the control plane stored and allows. Screenshots:
//! `target/ui-screenshots/project-access-*.png`.

use crate::processes::{admin, get, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

async fn user(control_plane: &Process, username: &str, role: &str) -> i64 {
    admin(
        control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(json!({"username": username, "password": PASSWORD, "rootRole": role})),
    )
    .await
    .body["id"]
        .as_i64()
        .expect("a user id")
}

/// The roles of each user with access to `project`, by username.
async fn access_of(control_plane: &Process, project: &str) -> Vec<(String, Vec<i64>)> {
    let access = admin(
        control_plane,
        "GET",
        &format!("/api/admin/projects/{project}/access"),
        None,
    )
    .await
    .body;
    access["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|user| {
            (
                user["username"].as_str().unwrap_or_default().to_owned(),
                serde_json::from_value(user["roles"].clone()).unwrap(),
            )
        })
        .collect()
}

fn enabled_in(flag: &Value, environment: &str) -> bool {
    flag["environments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == environment && e["enabled"] == true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_access_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    user(&control_plane, "alice", "Admin").await;
    user(&control_plane, "vera", "Viewer").await;
    user(&control_plane, "dora", "Viewer").await;
    for (project, flag) in [("alpha", "alpha-flag"), ("beta", "beta-flag")] {
        admin(
            &control_plane,
            "POST",
            "/api/admin/projects",
            Some(json!({"id": project, "name": project})),
        )
        .await;
        admin(
            &control_plane,
            "POST",
            &format!("/api/admin/projects/{project}/features"),
            Some(json!({"name": flag})),
        )
        .await;
    }
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "project-access-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    loop {
        let (checkpoint, _) = walk.next().await;
        match checkpoint.as_str() {
            "access-given" => {
                let roles = admin(&control_plane, "GET", "/api/admin/roles", None)
                    .await
                    .body;
                let custom = roles["roles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|role| role["name"] == "switch in development")
                    .expect("the UI created the role")
                    .clone();
                assert_eq!(custom["type"], "custom");
                let id = custom["id"].as_i64().unwrap();
                let role = admin(
                    &control_plane,
                    "GET",
                    &format!("/api/admin/roles/{id}"),
                    None,
                )
                .await
                .body;
                assert_eq!(
                    role["permissions"],
                    json!([{"id": 205, "name": "UPDATE_FEATURE_ENVIRONMENT",
                            "displayName": "Switch flags on and off", "type": "environment",
                            "environment": "development"}])
                );
                let mut access = access_of(&control_plane, "alpha").await;
                access.sort();
                assert_eq!(
                    access,
                    [("dora".to_owned(), vec![id]), ("vera".to_owned(), vec![5])]
                );
                assert!(access_of(&control_plane, "beta").await.is_empty());
            }
            "member-created-flag" => {
                let flag = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/projects/alpha/features/vera-flag",
                    None,
                )
                .await;
                assert_eq!(flag.status, 200, "{}", flag.body);
                let events = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/events?type=feature-created&limit=100",
                    None,
                )
                .await
                .body;
                let created = events["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["featureName"] == "vera-flag")
                    .expect("its event")
                    .clone();
                assert_eq!(created["createdBy"], "vera");
            }
            "switched-in-development" => {
                let flag = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/projects/alpha/features/alpha-flag",
                    None,
                )
                .await
                .body;
                assert!(enabled_in(&flag, "development"), "{flag}");
                assert!(!enabled_in(&flag, "production"), "{flag}");
            }
            "revoked" => {
                assert!(access_of(&control_plane, "alpha")
                    .await
                    .iter()
                    .all(|(name, _)| name != "vera"));
                let health = get(&format!("{}/health", control_plane.base), None).await;
                assert_eq!(health.status, 200);
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "01-roles",
        "03-access-given",
        "04-member-in-beta",
        "05-switch-in-development",
    ] {
        for scheme in ["light", "dark"] {
            for width in [1280, 390] {
                let path = screenshots.join(format!("project-access-{page}-{scheme}-{width}.png"));
                assert!(path.exists(), "{} was not saved", path.display());
            }
        }
    }
}
