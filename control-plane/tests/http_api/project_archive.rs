//! Archiving and reviving a project through Unleash's routes (`POST /api/admin/projects/archive/:p`,
//! `…/revive/:p`) on SQLite and Postgres: refused while it has live flags, for `default`, an unknown project
//! or a Viewer, with nothing changed; once archived it takes no new flag (created or revived) until revived;
//! `project-archived` and `project-revived`.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(archive_and_revive_a_project);

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn event_count(server: &Server) -> i64 {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap()
}

async fn archive_and_revive_a_project(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "mobile", "name": "Mobile"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/mobile/features",
            json!({"name": "splash"}),
        )
        .await
        .expect(201);
    const ARCHIVE: &str = "/api/admin/projects/archive/mobile";
    const REVIVE: &str = "/api/admin/projects/revive/mobile";

    let before = event_count(&server).await;
    let message = server
        .post_empty(ARCHIVE)
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("live flag"), "{message}");
    server
        .post_empty("/api/admin/projects/archive/default")
        .await
        .expect_error(400, "ValidationError");
    server
        .post_empty("/api/admin/projects/archive/nope")
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(event_count(&server).await, before);
    let project = server
        .get("/api/admin/projects/mobile")
        .await
        .expect(200)
        .clone();
    assert!(project.get("archivedAt").is_none(), "{project}");

    server
        .delete("/api/admin/projects/mobile/features/splash")
        .await
        .expect(202);
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;
    server
        .send("POST", ARCHIVE, None, Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    server.post_empty(ARCHIVE).await.expect(200);
    let project = server
        .get("/api/admin/projects/mobile")
        .await
        .expect(200)
        .clone();
    assert!(project["archivedAt"].is_string(), "{project}");
    let archived = events_of_type(&server, "project-archived").await;
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0]["project"], "mobile");
    assert!(archived[0]["preData"].get("archivedAt").is_none());
    assert!(archived[0]["data"]["archivedAt"].is_string());
    // Again: nothing to do, no second event.
    server.post_empty(ARCHIVE).await.expect(200);
    assert_eq!(events_of_type(&server, "project-archived").await.len(), 1);

    // No new flags while archived: neither created nor revived.
    let count = event_count(&server).await;
    server
        .post(
            "/api/admin/projects/mobile/features",
            json!({"name": "other"}),
        )
        .await
        .expect_error(400, "ValidationError");
    let message = server
        .post_empty("/api/admin/archive/revive/splash")
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("archived"), "{message}");
    assert_eq!(event_count(&server).await, count);

    server.post_empty(REVIVE).await.expect(200);
    let project = server
        .get("/api/admin/projects/mobile")
        .await
        .expect(200)
        .clone();
    assert!(project.get("archivedAt").is_none(), "{project}");
    let revived = events_of_type(&server, "project-revived").await;
    assert_eq!(revived.len(), 1);
    assert_eq!(revived[0]["project"], "mobile");
    server.post_empty(REVIVE).await.expect(200);
    assert_eq!(events_of_type(&server, "project-revived").await.len(), 1);
    server
        .post_empty("/api/admin/archive/revive/splash")
        .await
        .expect(200);
    server
        .post_empty("/api/admin/projects/revive/nope")
        .await
        .expect_error(404, "NotFoundError");
}
