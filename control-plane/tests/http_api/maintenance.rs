//! Maintenance mode through the real binary on SQLite and Postgres: switched by `POST /api/admin/maintenance`
//! (Admins, or a custom root role with UPDATE_MAINTENANCE_MODE), reported by `GET` and the UI configuration;
//! while on, admin writes answer 503 naming it and change nothing, the UI (signing in too) shows a banner with its change forms
//! disabled and refuses their posts, and the SDK routes keep serving; turning it off is never refused.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(maintenance_pauses_changes_not_serving);

async fn setting_events(server: &Server) -> Vec<(String, Value)> {
    let events = server.get("/api/admin/events").await.expect(200).clone();
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| {
            event["type"]
                .as_str()
                .is_some_and(|kind| kind.starts_with("setting-"))
        })
        .map(|event| {
            (
                event["type"].as_str().unwrap().to_owned(),
                event["data"].clone(),
            )
        })
        .collect()
}

async fn maintenance_pauses_changes_not_serving(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "served"}),
        )
        .await
        .expect(201);
    let client = server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "sdk", "type": "client", "environment": "development"}),
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        server.get("/api/admin/maintenance").await.expect(200),
        &json!({"enabled": false})
    );
    // Bad bodies change nothing.
    for body in [
        json!({"enabled": "yes"}),
        json!({}),
        json!({"enabled": true, "x": 1}),
    ] {
        server
            .post("/api/admin/maintenance", body)
            .await
            .expect_error(400, "ValidationError");
    }
    // A Viewer may not switch it.
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    user_with_pat(&server, "editor", "Editor").await;
    let refused = server
        .send(
            "POST",
            "/api/admin/maintenance",
            Some(json!({"enabled": true})),
            Some(&viewer),
        )
        .await;
    refused.expect_error(403, "NoAccessError");

    server
        .post("/api/admin/maintenance", json!({"enabled": true}))
        .await
        .expect(204);
    assert_eq!(
        server.get("/api/admin/maintenance").await.expect(200),
        &json!({"enabled": true})
    );
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["maintenanceMode"],
        true
    );
    // Writes are refused with a message naming maintenance mode, and nothing changes.
    let message = server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "blocked"}),
        )
        .await
        .expect_error(503, "ServiceUnavailableError");
    assert!(message.contains("maintenance mode"), "{message}");
    server
        .get("/api/admin/projects/default/features/blocked")
        .await
        .expect(404);
    server
        .post(
            "/api/admin/projects/default/features/served/environments/development/on",
            json!({}),
        )
        .await
        .expect_error(503, "ServiceUnavailableError");
    // Reads, signing in and the SDK routes go on.
    server.get("/api/admin/projects").await.expect(200);
    let features = server
        .send("GET", "/api/client/features", None, Some(&client))
        .await;
    let names: Vec<&str> = features.expect(200)["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["served"]);

    // The UI: a banner, the flag page's change forms disabled, the settings switch still live, a post refused.
    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[
            ("username", "editor"),
            ("password", "correct horse battery"),
            ("next", "/"),
        ])
        .await;
    let page = browser.get("/projects/default/features/served").await;
    page.expect(200);
    assert!(page.has("Maintenance mode is on."), "{}", page.text);
    assert!(page.has("<fieldset class=\"paused\" disabled>"));
    let csrf = page.csrf();
    let posted = browser
        .post(
            "/projects/default/features/served/environments/development/switch",
            &[("csrf", &csrf), ("enabled", "true")],
        )
        .await;
    assert_eq!(posted.status, 503, "{}", posted.text);
    assert!(posted.has("maintenance mode"));

    // Turning it off is never refused; the events say what changed.
    server
        .post("/api/admin/maintenance", json!({"enabled": false}))
        .await
        .expect(204);
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "after"}),
        )
        .await
        .expect(201);
    let events = setting_events(&server).await;
    let kinds: Vec<&str> = events.iter().map(|(kind, _)| kind.as_str()).collect();
    // Newest first.
    assert_eq!(kinds, ["setting-updated", "setting-created"], "{events:?}");
    assert_eq!(events[0].1["value"], json!({"enabled": false}));
    assert_eq!(events[1].1["id"], "maintenanceMode");
    let page = browser.get("/projects/default/features/served").await;
    assert!(!page.has("Maintenance mode is on."));
    assert!(!page.has("class=\"paused\""));
}
