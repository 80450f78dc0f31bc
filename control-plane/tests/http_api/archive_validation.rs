//! `POST /api/admin/projects/:p/archive/validate` through the real binary on SQLite and Postgres: which of
//! the given flags live flags outside the list depend on, and whether dependencies would go; a read
//! (Viewers may ask), no event.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;

crate::on_sqlite_and_postgres!(archive_validation);

async fn archive_validation(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for flag in ["parent", "child", "lone"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": flag}),
            )
            .await
            .expect(201);
    }
    server
        .post(
            "/api/admin/projects/default/features/child/dependencies",
            json!({"feature": "parent"}),
        )
        .await
        .expect(200);
    const VALIDATE: &str = "/api/admin/projects/default/archive/validate";
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;
    let events = server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"].clone();
    for (features, parents, deleted) in [
        (json!(["parent"]), json!(["parent"]), true),
        (json!(["parent", "child"]), json!([]), true),
        (json!(["child"]), json!([]), true),
        (json!(["lone"]), json!([]), false),
        (json!(["lone", "not-a-flag"]), json!([]), false),
    ] {
        let answer = server
            .post(VALIDATE, json!({"features": features}))
            .await
            .expect(200)
            .clone();
        assert_eq!(
            answer,
            json!({"parentsWithChildFeatures": parents, "hasDeletedDependencies": deleted}),
            "{features}"
        );
    }
    let answer = server
        .send(
            "POST",
            VALIDATE,
            Some(json!({"features": ["parent"]})),
            Some(&viewer),
        )
        .await;
    assert_eq!(
        answer.expect(200)["parentsWithChildFeatures"],
        json!(["parent"])
    );
    server
        .post(VALIDATE, json!({"names": ["parent"]}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/projects/nope/archive/validate",
            json!({"features": ["parent"]}),
        )
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(
        server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"],
        events
    );
}
