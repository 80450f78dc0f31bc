//! `PUT /api/admin/projects/:p/tags` through the real binary on SQLite and Postgres: tags added to and
//! removed from several flags at once with the events a flag's own tag write records; a flag of another
//! project, a bad tag or an unknown field refused with nothing changed.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(tags_on_several_flags);

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

/// The flag's tags as `type:value`.
async fn tags_of(server: &Server, flag: &str) -> Vec<String> {
    server
        .get(&format!("/api/admin/features/{flag}/tags"))
        .await
        .expect(200)["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| {
            format!(
                "{}:{}",
                tag["type"].as_str().unwrap(),
                tag["value"].as_str().unwrap()
            )
        })
        .collect()
}

async fn tags_on_several_flags(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "mobile", "name": "Mobile"}),
        )
        .await
        .expect(201);
    for (project, flag) in [
        ("default", "alpha"),
        ("default", "beta"),
        ("mobile", "gamma"),
    ] {
        server
            .post(
                &format!("/api/admin/projects/{project}/features"),
                json!({"name": flag}),
            )
            .await
            .expect(201);
    }
    const TAGS: &str = "/api/admin/projects/default/tags";
    server
        .put(
            TAGS,
            json!({"features": ["alpha", "beta"],
                   "tags": {"addedTags": [{"type": "simple", "value": "team-x"}], "removedTags": []}}),
        )
        .await
        .expect(200);
    for flag in ["alpha", "beta"] {
        assert_eq!(tags_of(&server, flag).await, ["simple:team-x"], "{flag}");
    }
    let tagged = events_of_type(&server, "feature-tagged").await;
    let mut flags: Vec<&str> = tagged
        .iter()
        .map(|event| event["featureName"].as_str().unwrap())
        .collect();
    flags.sort();
    assert_eq!(flags, ["alpha", "beta"]);
    assert!(tagged.iter().all(|event| event["project"] == "default"));
    assert_eq!(events_of_type(&server, "tag-created").await.len(), 1);

    // Refused, nothing changed.
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;
    let before = server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"].clone();
    let add = json!({"addedTags": [{"type": "simple", "value": "team-y"}], "removedTags": []});
    for (body, status) in [
        (json!({"features": ["alpha", "gamma"], "tags": add}), 404),
        (json!({"features": ["alpha", "nope"], "tags": add}), 404),
        (
            json!({"features": ["alpha"],
                   "tags": {"addedTags": [{"type": "simple", "value": "y"}], "removedTags": []}}),
            400,
        ),
        (
            json!({"features": ["alpha"],
                   "tags": {"addedTags": [{"type": "no-such-type", "value": "team-y"}], "removedTags": []}}),
            404,
        ),
        (json!({"features": ["alpha"], "tags": add, "extra": 1}), 400),
        (json!({"features": ["alpha"]}), 400),
    ] {
        let answer = server.put(TAGS, body.clone()).await;
        assert_eq!(answer.status, status, "{body}: {:?}", answer.body);
    }
    server
        .put(
            "/api/admin/projects/nope/tags",
            json!({"features": ["alpha"], "tags": add}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .send(
            "PUT",
            TAGS,
            Some(json!({"features": ["alpha"], "tags": add})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert_eq!(
        server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"],
        before
    );
    assert_eq!(tags_of(&server, "alpha").await.len(), 1);
    assert!(tags_of(&server, "gamma").await.is_empty());

    // Added, then removed: alpha gets team-y and loses team-x.
    server
        .put(
            TAGS,
            json!({"features": ["alpha"],
                   "tags": {"addedTags": [{"type": "simple", "value": "team-y"}],
                            "removedTags": [{"type": "simple", "value": "team-x"}]}}),
        )
        .await
        .expect(200);
    assert_eq!(tags_of(&server, "alpha").await, ["simple:team-y"]);
    assert_eq!(tags_of(&server, "beta").await.len(), 1);
    let untagged = events_of_type(&server, "feature-untagged").await;
    assert_eq!(untagged.len(), 1);
    assert_eq!(untagged[0]["featureName"], "alpha");
}
