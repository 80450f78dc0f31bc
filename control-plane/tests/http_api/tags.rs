//! Tag types, tags and flag tags over HTTP, on SQLite and on Postgres: bodies and statuses as Unleash 8.2
//! answers them, events, permissions, and the client API's `?tag=type:value` filter.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, CLIENT_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    tag_types_life_cycle,
    tags_and_flag_tags,
    deleting_a_tag_or_its_type_untags_flags,
    tag_writes_need_an_editor,
    the_client_api_filters_by_tag,
);

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

async fn create_flag(server: &Server, project: &str, name: &str) {
    server
        .post(
            &format!("/api/admin/projects/{project}/features"),
            json!({ "name": name }),
        )
        .await
        .expect(201);
}

const SIMPLE: &str = "Used to simplify filtering of features";

async fn tag_types_life_cycle(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    // Unleash's built-in type is there from the start.
    let simple = json!({"name": "simple", "description": SIMPLE, "icon": "#", "color": "#FFFFFF"});
    assert_eq!(
        server.get("/api/admin/tag-types").await.expect(200),
        &json!({"version": 1, "tagTypes": [simple]})
    );
    assert_eq!(
        server.get("/api/admin/tag-types/simple").await.expect(200),
        &simple
    );

    let team = json!({"name": "team", "description": "owning team", "color": "#1E88E5"});
    assert_eq!(
        server
            .post("/api/admin/tag-types", team.clone())
            .await
            .expect(201),
        &team
    );
    server
        .post("/api/admin/tag-types", json!({"name": "team"}))
        .await
        .expect_error(409, "NameExistsError");
    for (bad, field) in [
        (json!({"name": "t"}), "name"),
        (json!({"name": "a b"}), "name"),
        (json!({"name": "x".repeat(51)}), "name"),
        (json!({"name": "colour", "color": "blue"}), "color"),
        (json!({"description": "no name"}), "name"),
        (json!({"name": 7}), "name"),
    ] {
        let message = server
            .post("/api/admin/tag-types", bad.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{bad}: {message}");
    }

    // Validation: 200 with the type for a free name, 409 for a taken one, 400 for a bad one; nothing stored.
    let before = event_count(&server).await;
    assert_eq!(
        server
            .post(
                "/api/admin/tag-types/validate",
                json!({"name": "component"})
            )
            .await
            .expect(200),
        &json!({"valid": true, "tagType": {"name": "component"}})
    );
    server
        .post("/api/admin/tag-types/validate", json!({"name": "team"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post("/api/admin/tag-types/validate", json!({"name": "c"}))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(event_count(&server).await, before);
    server
        .get("/api/admin/tag-types/component")
        .await
        .expect_error(404, "NotFoundError");

    // Update keeps absent fields.
    let answer = server
        .put(
            "/api/admin/tag-types/team",
            json!({"description": "the owners"}),
        )
        .await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        server.get("/api/admin/tag-types/team").await.expect(200),
        &json!({"name": "team", "description": "the owners", "color": "#1E88E5"})
    );
    server
        .put("/api/admin/tag-types/team", json!({"color": "#12345"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .put("/api/admin/tag-types/nobody", json!({"description": "x"}))
        .await
        .expect_error(404, "NotFoundError");
    // The same values again: no change, no event.
    let before = event_count(&server).await;
    server
        .put(
            "/api/admin/tag-types/team",
            json!({"description": "the owners"}),
        )
        .await
        .expect(200);
    assert_eq!(event_count(&server).await, before);

    assert_eq!(server.delete("/api/admin/tag-types/team").await.status, 200);
    server
        .get("/api/admin/tag-types/team")
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete("/api/admin/tag-types/team")
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(
        server.get("/api/admin/tag-types").await.expect(200)["tagTypes"],
        json!([simple])
    );

    let created = events_of_type(&server, "tag-type-created").await;
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["data"], team);
    let updated = events_of_type(&server, "tag-type-updated").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["data"]["description"], "the owners");
    assert_eq!(updated[0]["preData"]["description"], "owning team");
    let deleted = events_of_type(&server, "tag-type-deleted").await;
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0]["preData"]["name"], "team");
    assert_eq!(deleted[0]["data"], Value::Null);
}

async fn tags_and_flag_tags(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "default", "beta").await;

    // A tag: the value is trimmed; 2 to 50 characters.
    assert_eq!(
        server
            .post(
                "/api/admin/tags",
                json!({"type": "simple", "value": "  foo "})
            )
            .await
            .expect(201),
        &json!({"version": 1, "tag": {"type": "simple", "value": "foo"}})
    );
    server
        .post("/api/admin/tags", json!({"type": "simple", "value": "foo"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post("/api/admin/tags", json!({"type": "nope", "value": "foo"}))
        .await
        .expect_error(404, "NotFoundError");
    for bad in [
        json!({"type": "simple", "value": " a "}),
        json!({"type": "simple", "value": "v".repeat(51)}),
        json!({"type": "simple"}),
        json!({"type": "simple", "value": 12}),
    ] {
        let message = server
            .post("/api/admin/tags", bad.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("value"), "{bad}: {message}");
    }
    let foo_tag = json!({"value": "foo", "type": "simple", "color": "#FFFFFF"});
    assert_eq!(
        server.get("/api/admin/tags").await.expect(200),
        &json!({"version": 1, "tags": [foo_tag]})
    );
    assert_eq!(
        server.get("/api/admin/tags/simple").await.expect(200),
        &json!({"version": 1, "tags": [foo_tag]})
    );
    assert_eq!(
        server.get("/api/admin/tags/nope").await.expect(200),
        &json!({"version": 1, "tags": []})
    );
    assert_eq!(
        server.get("/api/admin/tags/simple/foo").await.expect(200),
        &json!({"version": 1, "tag": foo_tag})
    );
    server
        .get("/api/admin/tags/simple/bar")
        .await
        .expect_error(404, "NotFoundError");

    // A flag's tags: a new tag is created on the way.
    assert_eq!(
        server
            .post(
                "/api/admin/features/beta/tags",
                json!({"type": "simple", "value": "bar"})
            )
            .await
            .expect(201),
        &json!({"type": "simple", "value": "bar"})
    );
    server.get("/api/admin/tags/simple/bar").await.expect(200);
    server
        .post(
            "/api/admin/features/nobody/tags",
            json!({"type": "simple", "value": "bar"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .post(
            "/api/admin/features/beta/tags",
            json!({"type": "nope", "value": "bar"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    // Tagging again changes nothing.
    let before = event_count(&server).await;
    server
        .post(
            "/api/admin/features/beta/tags",
            json!({"type": "simple", "value": "bar"}),
        )
        .await
        .expect(201);
    assert_eq!(event_count(&server).await, before);
    let bar = json!({"value": "bar", "type": "simple", "color": "#FFFFFF"});
    assert_eq!(
        server
            .get("/api/admin/features/beta/tags")
            .await
            .expect(200),
        &json!({"version": 1, "tags": [bar]})
    );
    server
        .get("/api/admin/features/nobody/tags")
        .await
        .expect_error(404, "NotFoundError");

    // PUT adds and removes, and answers the tags after.
    assert_eq!(
        server
            .put(
                "/api/admin/features/beta/tags",
                json!({"addedTags": [{"type": "simple", "value": "foo"}, {"type": "simple", "value": "new-one"}],
                       "removedTags": [{"type": "simple", "value": "bar"}]}),
            )
            .await
            .expect(200),
        &json!({"version": 1, "tags": [foo_tag, {"value": "new-one", "type": "simple", "color": "#FFFFFF"}]})
    );
    // A bad tag anywhere in the body changes nothing.
    let before = event_count(&server).await;
    let message = server
        .put(
            "/api/admin/features/beta/tags",
            json!({"addedTags": [{"type": "simple", "value": "fine"}],
                   "removedTags": [{"type": "simple", "value": "x"}]}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("removedTags[0].value"), "{message}");
    server
        .put("/api/admin/features/beta/tags", json!({"addedTags": []}))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(event_count(&server).await, before);
    server
        .get("/api/admin/tags/simple/fine")
        .await
        .expect_error(404, "NotFoundError");

    assert_eq!(
        server
            .delete("/api/admin/features/beta/tags/simple/new-one")
            .await
            .status,
        200
    );
    assert_eq!(
        server
            .get("/api/admin/features/beta/tags")
            .await
            .expect(200)["tags"],
        json!([foo_tag])
    );
    // Not on the flag: nothing to do.
    let before = event_count(&server).await;
    assert_eq!(
        server
            .delete("/api/admin/features/beta/tags/simple/new-one")
            .await
            .status,
        200
    );
    assert_eq!(event_count(&server).await, before);
    server
        .delete("/api/admin/features/nobody/tags/simple/foo")
        .await
        .expect_error(404, "NotFoundError");

    // A new flag with tags, in the same write; a bad tag leaves no flag behind.
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "gamma", "tags": [{"type": "simple", "value": "foo"}]}),
        )
        .await
        .expect(201);
    assert_eq!(
        server
            .get("/api/admin/features/gamma/tags")
            .await
            .expect(200)["tags"],
        json!([foo_tag])
    );
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "delta", "tags": [{"type": "nope", "value": "foo"}]}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/projects/default/features/delta")
        .await
        .expect_error(404, "NotFoundError");

    // Events: the tags created, each tagging and untagging with the flag and its project.
    let created: Vec<Value> = events_of_type(&server, "tag-created")
        .await
        .iter()
        .map(|e| e["data"].clone())
        .collect();
    assert_eq!(created.len(), 3, "{created:?}");
    assert!(created.contains(&json!({"type": "simple", "value": "new-one"})));
    let tagged = events_of_type(&server, "feature-tagged").await;
    assert_eq!(tagged.len(), 4);
    assert_eq!(tagged[0]["featureName"], "gamma");
    for event in &tagged[1..] {
        assert_eq!(event["featureName"], "beta");
        assert_eq!(event["project"], "default");
    }
    let untagged = events_of_type(&server, "feature-untagged").await;
    assert_eq!(untagged.len(), 2);
    assert_eq!(
        untagged[0]["preData"],
        json!({"type": "simple", "value": "new-one"})
    );
    assert_eq!(
        untagged[1]["preData"],
        json!({"type": "simple", "value": "bar"})
    );
}

async fn deleting_a_tag_or_its_type_untags_flags(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "default", "beta").await;
    server
        .post("/api/admin/tag-types", json!({"name": "team"}))
        .await
        .expect(201);
    for tag in [
        json!({"type": "team", "value": "growth"}),
        json!({"type": "team", "value": "platform"}),
        json!({"type": "simple", "value": "perf"}),
    ] {
        server
            .post("/api/admin/features/beta/tags", tag)
            .await
            .expect(201);
    }
    assert_eq!(
        server.delete("/api/admin/tags/simple/perf").await.status,
        200
    );
    server
        .delete("/api/admin/tags/simple/perf")
        .await
        .expect_error(404, "NotFoundError");
    let types = |body: &Value| -> Vec<String> {
        body["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                format!(
                    "{}:{}",
                    t["type"].as_str().unwrap(),
                    t["value"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        types(
            server
                .get("/api/admin/features/beta/tags")
                .await
                .expect(200)
        ),
        ["team:growth", "team:platform"]
    );
    let deleted = events_of_type(&server, "tag-deleted").await;
    assert_eq!(
        deleted[0]["preData"],
        json!({"type": "simple", "value": "perf"})
    );

    assert_eq!(server.delete("/api/admin/tag-types/team").await.status, 200);
    assert_eq!(
        server
            .get("/api/admin/features/beta/tags")
            .await
            .expect(200)["tags"],
        json!([])
    );
    assert_eq!(
        server.get("/api/admin/tags").await.expect(200)["tags"],
        json!([])
    );
    // The flag can be deleted with tags on it.
    server
        .post(
            "/api/admin/features/beta/tags",
            json!({"type": "simple", "value": "last"}),
        )
        .await
        .expect(201);
    server
        .delete("/api/admin/projects/default/features/beta")
        .await
        .expect(202);
    server.delete("/api/admin/archive/beta").await.expect(200);
    server
        .get("/api/admin/features/beta/tags")
        .await
        .expect_error(404, "NotFoundError");
    server.get("/api/admin/tags/simple/last").await.expect(200);
}

async fn tag_writes_need_an_editor(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "default", "beta").await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let writes: [(&str, &str, Option<Value>); 7] = [
        (
            "POST",
            "/api/admin/tag-types",
            Some(json!({"name": "team"})),
        ),
        (
            "PUT",
            "/api/admin/tag-types/team",
            Some(json!({"description": "d"})),
        ),
        (
            "POST",
            "/api/admin/tags",
            Some(json!({"type": "team", "value": "growth"})),
        ),
        (
            "POST",
            "/api/admin/features/beta/tags",
            Some(json!({"type": "team", "value": "mobile"})),
        ),
        (
            "PUT",
            "/api/admin/features/beta/tags",
            Some(json!({"addedTags": [], "removedTags": [{"type": "team", "value": "mobile"}]})),
        ),
        ("DELETE", "/api/admin/tags/team/growth", None),
        ("DELETE", "/api/admin/tag-types/team", None),
    ];
    let before = event_count(&server).await;
    for (method, path, body) in &writes {
        server
            .send(method, path, body.clone(), Some(&viewer))
            .await
            .expect_error(403, "NoAccessError");
    }
    server
        .send(
            "POST",
            "/api/admin/tag-types/validate",
            Some(json!({"name": "x1"})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert_eq!(event_count(&server).await, before);
    for (method, path, body) in &writes {
        let answer = server.send(method, path, body.clone(), Some(&editor)).await;
        assert!(
            answer.status == 200 || answer.status == 201,
            "{method} {path}: {} {}",
            answer.status,
            answer.body
        );
    }
    for path in [
        "/api/admin/tag-types",
        "/api/admin/tag-types/simple",
        "/api/admin/tags",
        "/api/admin/tags/simple",
        "/api/admin/features/beta/tags",
    ] {
        server
            .send("GET", path, None, Some(&viewer))
            .await
            .expect(200);
    }
}

/// The flag names of a client API answer.
fn names(body: &Value) -> Vec<String> {
    body["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn the_client_api_filters_by_tag(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post("/api/admin/tag-types", json!({"name": "team"}))
        .await
        .expect(201);
    for name in ["a", "b", "c"] {
        create_flag(&server, "default", name).await;
    }
    for (flag, tag) in [
        ("a", json!({"type": "simple", "value": "foo"})),
        ("b", json!({"type": "team", "value": "x:y"})),
        ("c", json!({"type": "simple", "value": "other"})),
    ] {
        server
            .post(&format!("/api/admin/features/{flag}/tags"), tag)
            .await
            .expect(201);
    }
    let client = |query: &'static str| {
        let server = &server;
        async move {
            let response = server
                .client
                .get(format!("{}/api/client/features{query}", server.base))
                .header("Authorization", CLIENT_TOKEN)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let etag = response
                .headers()
                .get("etag")
                .map(|value| value.to_str().unwrap().to_owned());
            let body: Value = response.json().await.unwrap();
            (status, etag, body)
        }
    };
    let (status, all_etag, all) = client("").await;
    assert_eq!(status, 200);
    assert_eq!(names(&all), ["a", "b", "c"]);
    for feature in all["features"].as_array().unwrap() {
        assert!(feature.get("tags").is_none(), "{feature}");
    }
    assert!(all["query"].get("tag").is_none());

    let (_, foo_etag, foo_answer) = client("?tag=simple:foo").await;
    assert_eq!(names(&foo_answer), ["a"]);
    assert_eq!(foo_answer["query"]["tag"], json!([["simple", "foo"]]));
    assert_ne!(foo_etag, all_etag);
    // Repeated: any of the tags; a value may hold colons (split at the first).
    let (_, _, either) = client("?tag=simple:foo&tag=team:x:y").await;
    assert_eq!(names(&either), ["a", "b"]);
    let (_, _, none) = client("?tag=simple:nothing").await;
    assert_eq!(names(&none), Vec::<String>::new());
    let (_, _, with_prefix) = client("?tag=simple:foo&tag=simple:other&namePrefix=c").await;
    assert_eq!(names(&with_prefix), ["c"]);
    let (status, _, error) = client("?tag=simple").await;
    assert_eq!(status, 400);
    assert_eq!(error["name"], "ValidationError");
    // One flag: the filter applies too.
    let one = server
        .client
        .get(format!(
            "{}/api/client/features/b?tag=simple:foo",
            server.base
        ))
        .header("Authorization", CLIENT_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(one.status().as_u16(), 404);

    // A tag taken off reaches the served document.
    server
        .delete("/api/admin/features/a/tags/simple/foo")
        .await
        .expect(200);
    let (_, _, after) = client("?tag=simple:foo").await;
    assert_eq!(names(&after), Vec::<String>::new());
    // Deleting a tag re-reads everything.
    server
        .delete("/api/admin/tags/simple/other")
        .await
        .expect(200);
    let (_, _, after) = client("?tag=simple:other").await;
    assert_eq!(names(&after), Vec::<String>::new());
}
