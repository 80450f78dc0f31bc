//! Audit events of operations that are not writes of configuration, on SQLite and Postgres: an application's
//! first registration records `application-created` once (also when another control-plane process sees it
//! again), and an export records `features-exported` with what it gave out.

use crate::database::TestDb;
use crate::server::{Server, CLIENT_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    an_applications_first_sighting_is_recorded_once,
    an_export_is_recorded,
);

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=100"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn register(server: &Server, app: &str) {
    let body = json!({
        "appName": app,
        "instanceId": "i1",
        "sdkVersion": "unleash-client-node:6.12.1",
        "strategies": ["default"],
        "started": "2026-11-22T00:00:00.000Z",
        "interval": 10000
    });
    let answer = server
        .send(
            "POST",
            "/api/client/register",
            Some(body),
            Some(CLIENT_TOKEN),
        )
        .await;
    assert_eq!(answer.status, 202, "{}", answer.body);
}

async fn an_applications_first_sighting_is_recorded_once(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    register(&server, "checkout-web").await;
    register(&server, "checkout-web").await;
    register(&server, "search-api").await;
    let created = events_of_type(&server, "application-created").await;
    let mut apps: Vec<&str> = created
        .iter()
        .map(|event| event["data"]["appName"].as_str().unwrap())
        .collect();
    apps.sort_unstable();
    assert_eq!(apps, ["checkout-web", "search-api"], "{created:?}");
    assert!(created.iter().all(|event| event["createdBy"] == "system"));
    let apps = server.get("/api/admin/metrics/applications").await;
    assert_eq!(
        apps.expect(200)["applications"].as_array().unwrap().len(),
        2
    );

    // Another process on the same database, which has not seen them: nothing more.
    drop(server);
    let again = Server::start(&db, &[]).await;
    register(&again, "checkout-web").await;
    register(&again, "billing").await;
    let created = events_of_type(&again, "application-created").await;
    assert_eq!(created.len(), 3, "{created:?}");
    assert_eq!(created[0]["data"]["appName"], "billing");
    // The metrics posts themselves are not audited.
    let body = json!({
        "appName": "billing", "instanceId": "i1", "environment": "development",
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z",
                   "toggles": {"x": {"yes": 1, "no": 0}}}
    });
    let before = again.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"].clone();
    let answer = again
        .send(
            "POST",
            "/api/client/metrics",
            Some(body),
            Some(CLIENT_TOKEN),
        )
        .await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    let after = again.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"].clone();
    assert_eq!(before, after);
}

async fn an_export_is_recorded(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["checkout", "banner"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    let exported = server
        .post(
            "/api/admin/features-batch/export",
            json!({"environment": "development", "project": "default"}),
        )
        .await;
    assert_eq!(
        exported.expect(200)["features"].as_array().unwrap().len(),
        2
    );
    let events = events_of_type(&server, "features-exported").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["environment"], "development");
    let mut names: Vec<&str> = events[0]["data"]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["banner", "checkout"]);
    // A refused export (unknown environment) records nothing.
    server
        .post(
            "/api/admin/features-batch/export",
            json!({"environment": "nowhere"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(events_of_type(&server, "features-exported").await.len(), 1);
}
