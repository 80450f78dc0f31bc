//! Flag dependencies over HTTP, on SQLite and on Postgres: Unleash's rules, the events, permissions, the
//! parent options, and the dependency in the client document and in the frontend API's answer.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, CLIENT_TOKEN, FRONTEND_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    dependencies_follow_unleash_rules,
    archive_and_change_requests_with_dependencies,
    dependency_writes_need_an_editor,
    a_dependency_reaches_sdks_and_changes_the_answer,
);

const FLAGS: &str = "/api/admin/projects/default/features";

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

async fn depend(server: &Server, child: &str, body: Value) -> crate::server::Answer {
    server
        .post(&format!("{FLAGS}/{child}/dependencies"), body)
        .await
}

/// Sends the change request whose state route is `state` for review (as the admin token, its author) and
/// approves it as `reviewer`.
async fn submit_and_approve(server: &Server, state: &str, reviewer: &str) {
    server
        .put(state, json!({"state": "In review"}))
        .await
        .expect(200);
    server
        .send(
            "PUT",
            state,
            Some(json!({"state": "Approved"})),
            Some(reviewer),
        )
        .await
        .expect(200);
}

async fn dependencies_follow_unleash_rules(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other"}),
        )
        .await
        .expect(201);
    for name in ["parent", "child", "second", "old"] {
        create_flag(&server, "default", name).await;
    }
    create_flag(&server, "other", "elsewhere").await;
    server.delete(&format!("{FLAGS}/old")).await.expect(202);
    assert_eq!(
        server
            .get("/api/admin/projects/default/dependencies")
            .await
            .expect(200),
        &json!(false)
    );

    let answer = depend(&server, "child", json!({"feature": "parent"})).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        server
            .get("/api/admin/projects/default/dependencies")
            .await
            .expect(200),
        &json!(true)
    );
    assert_eq!(
        server
            .get("/api/admin/projects/other/dependencies")
            .await
            .expect(200),
        &json!(false)
    );
    server
        .get("/api/admin/projects/nowhere/dependencies")
        .await
        .expect_error(404, "NotFoundError");
    let child = server
        .get(&format!("{FLAGS}/child"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        child["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": []}])
    );
    assert_eq!(child["children"], json!([]));
    let parent = server
        .get(&format!("{FLAGS}/parent"))
        .await
        .expect(200)
        .clone();
    assert_eq!(parent["dependencies"], json!([]));
    assert_eq!(parent["children"], json!(["child"]));

    // The rules, each a 400 that changes nothing.
    let before = event_count(&server).await;
    for (child, body, expected) in [
        ("child", json!({"feature": "child"}), "itself"),
        (
            "child",
            json!({"feature": "missing"}),
            "no flag named missing",
        ),
        ("child", json!({"feature": "elsewhere"}), "project"),
        ("child", json!({"feature": "old"}), "archived"),
        // A parent cannot have parents…
        ("second", json!({"feature": "child"}), "cannot be a parent"),
        // …and a child cannot be a parent.
        (
            "parent",
            json!({"feature": "second"}),
            "parent of other flags",
        ),
        (
            "second",
            json!({"feature": "parent", "variants": [""]}),
            "variants[0]",
        ),
        ("second", json!({"enabled": true}), "feature"),
        (
            "second",
            json!({"feature": "parent", "enabled": "yes"}),
            "enabled",
        ),
    ] {
        let message = depend(&server, child, body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(expected), "{body}: {message}");
    }
    depend(&server, "nobody", json!({"feature": "parent"}))
        .await
        .expect_error(404, "NotFoundError");
    server
        .post(
            "/api/admin/projects/nowhere/features/child/dependencies",
            json!({"feature": "parent"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    let message = depend(&server, "old", json!({"feature": "parent"}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("archived"), "{message}");
    assert_eq!(event_count(&server).await, before);

    // The same parent again replaces the dependency; `enabled: false` drops variants.
    depend(
        &server,
        "child",
        json!({"feature": "parent", "enabled": true, "variants": ["blue", " red", "blue"]}),
    )
    .await
    .expect(200);
    assert_eq!(
        server.get(&format!("{FLAGS}/child")).await.expect(200)["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": ["blue", "red"]}])
    );
    depend(
        &server,
        "second",
        json!({"feature": "parent", "enabled": false, "variants": ["blue"]}),
    )
    .await
    .expect(200);
    assert_eq!(
        server.get(&format!("{FLAGS}/second")).await.expect(200)["dependencies"],
        json!([{"feature": "parent", "enabled": false, "variants": []}])
    );
    assert_eq!(
        server.get(&format!("{FLAGS}/parent")).await.expect(200)["children"],
        json!(["child", "second"])
    );

    // Parent options: live flags of the project without parents, not the flag itself.
    create_flag(&server, "default", "third").await;
    assert_eq!(
        server
            .get(&format!("{FLAGS}/third/parents"))
            .await
            .expect(200),
        &json!(["parent"])
    );
    assert_eq!(
        server
            .get(&format!("{FLAGS}/parent/parents"))
            .await
            .expect(200),
        &json!(["third"])
    );
    server
        .get(&format!("{FLAGS}/nobody/parents"))
        .await
        .expect_error(404, "NotFoundError");

    // Parent variants: strategy variants and flag variants of every environment, each once, sorted.
    server
        .post(
            &format!("{FLAGS}/parent/environments/development/strategies"),
            json!({"name": "default", "variants": [
                {"name": "red", "weight": 500, "weightType": "variable", "stickiness": "default"},
                {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default"}]}),
        )
        .await
        .expect(200);
    server
        .put(
            &format!("{FLAGS}/parent/environments/production/variants"),
            json!([{"name": "green", "weight": 1000, "weightType": "variable", "stickiness": "default"},
                   {"name": "blue", "weight": 0, "weightType": "variable", "stickiness": "default"}]),
        )
        .await
        .expect(200);
    assert_eq!(
        server
            .get(&format!("{FLAGS}/parent/parent-variants"))
            .await
            .expect(200),
        &json!(["blue", "green", "red"])
    );
    assert_eq!(
        server
            .get(&format!("{FLAGS}/third/parent-variants"))
            .await
            .expect(200),
        &json!([])
    );

    // Removing one, then all.
    let before = event_count(&server).await;
    assert_eq!(
        server
            .delete(&format!("{FLAGS}/child/dependencies/nobody"))
            .await
            .status,
        200
    );
    assert_eq!(event_count(&server).await, before, "nothing removed");
    assert_eq!(
        server
            .delete(&format!("{FLAGS}/child/dependencies/parent"))
            .await
            .status,
        200
    );
    assert_eq!(
        server.get(&format!("{FLAGS}/child")).await.expect(200)["dependencies"],
        json!([])
    );
    assert_eq!(
        server
            .delete(&format!("{FLAGS}/second/dependencies"))
            .await
            .status,
        200
    );
    assert_eq!(
        server
            .get("/api/admin/projects/default/dependencies")
            .await
            .expect(200),
        &json!(false)
    );
    server
        .delete(&format!("{FLAGS}/nobody/dependencies"))
        .await
        .expect_error(404, "NotFoundError");

    let added = events_of_type(&server, "feature-dependency-added").await;
    assert_eq!(added.len(), 3);
    let first = added.last().unwrap();
    assert_eq!(first["featureName"], "child");
    assert_eq!(first["project"], "default");
    assert_eq!(
        first["data"],
        json!({"feature": "parent", "enabled": true, "variants": []})
    );
    let removed = events_of_type(&server, "feature-dependency-removed").await;
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["featureName"], "child");
    assert_eq!(removed[0]["data"], json!({"feature": "parent"}));
    let cleared = events_of_type(&server, "feature-dependencies-removed").await;
    assert_eq!(cleared.len(), 1);
    assert_eq!(cleared[0]["featureName"], "second");
}

async fn archive_and_change_requests_with_dependencies(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["parent", "child", "lone"] {
        create_flag(&server, "default", name).await;
    }
    depend(&server, "child", json!({"feature": "parent"}))
        .await
        .expect(200);
    // A parent with a live child stays.
    let message = server
        .delete(&format!("{FLAGS}/parent"))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("child"), "{message}");
    server.get(&format!("{FLAGS}/parent")).await.expect(200);
    // Archived together, in any order.
    server
        .post(
            "/api/admin/projects/default/archive",
            json!({"features": ["parent", "child"]}),
        )
        .await
        .expect(202);
    let cleared = events_of_type(&server, "feature-dependencies-removed").await;
    assert_eq!(cleared.len(), 1);
    assert_eq!(cleared[0]["featureName"], "child");
    for name in ["parent", "child"] {
        server
            .post_empty(&format!("/api/admin/archive/revive/{name}"))
            .await
            .expect(200);
    }
    assert_eq!(
        server.get(&format!("{FLAGS}/child")).await.expect(200)["dependencies"],
        json!([])
    );

    // With change requests on in an environment of the project, dependencies change only through them.
    depend(&server, "child", json!({"feature": "parent"}))
        .await
        .expect(200);
    server
        .put(
            "/api/admin/projects/default/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let message = depend(&server, "lone", json!({"feature": "parent"}))
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("Change requests"), "{message}");
    server
        .delete(&format!("{FLAGS}/child/dependencies/parent"))
        .await
        .expect_error(403, "NoAccessError");
    server
        .delete(&format!("{FLAGS}/child/dependencies"))
        .await
        .expect_error(403, "NoAccessError");
    // Reads still answer.
    server
        .get(&format!("{FLAGS}/lone/parents"))
        .await
        .expect(200);

    // The changes go through a change request (addDependency, deleteDependency; API.md §3.6).
    let requests = "/api/admin/projects/default/change-requests";
    let proposed = server
        .post(
            "/api/admin/projects/default/environments/production/change-requests",
            json!([
                {"feature": "lone", "action": "addDependency", "payload": {"feature": "parent", "variants": ["blue"]}},
                {"feature": "child", "action": "deleteDependency"},
            ]),
        )
        .await
        .expect(200)
        .clone();
    let id = proposed["id"].as_i64().unwrap();
    assert_eq!(
        proposed["features"][0]["changes"][0]["payload"],
        json!({"feature": "parent", "variants": ["blue"]})
    );
    assert_eq!(proposed["features"][1]["changes"][0]["payload"], json!({}));
    assert_eq!(
        server.get(&format!("{FLAGS}/lone")).await.expect(200)["dependencies"],
        json!([]),
        "nothing changes before it is applied"
    );
    let (_, reviewer) = user_with_pat(&server, "reviewer", "Editor").await;
    let state = format!("{requests}/{id}/state");
    submit_and_approve(&server, &state, &reviewer).await;
    server
        .put(&state, json!({"state": "Applied"}))
        .await
        .expect(200);
    assert_eq!(
        server.get(&format!("{FLAGS}/lone")).await.expect(200)["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": ["blue"]}])
    );
    assert_eq!(
        server.get(&format!("{FLAGS}/child")).await.expect(200)["dependencies"],
        json!([])
    );
    let added = events_of_type(&server, "feature-dependency-added").await;
    assert_eq!(added[0]["featureName"], "lone");

    // A dependency the rules refuse fails the apply, which changes nothing.
    let refused = server
        .post(
            "/api/admin/projects/default/environments/production/change-requests",
            json!({"feature": "parent", "action": "addDependency", "payload": {"feature": "parent"}}),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let state = format!("{requests}/{refused}/state");
    submit_and_approve(&server, &state, &reviewer).await;
    let message = server
        .put(&state, json!({"state": "Applied"}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("itself"), "{message}");
    assert_eq!(
        server.get(&format!("{FLAGS}/parent")).await.expect(200)["dependencies"],
        json!([])
    );
}

async fn dependency_writes_need_an_editor(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["parent", "child"] {
        create_flag(&server, "default", name).await;
    }
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let add = format!("{FLAGS}/child/dependencies");
    let remove = format!("{FLAGS}/child/dependencies/parent");
    let before = event_count(&server).await;
    for (method, path, body) in [
        ("POST", add.as_str(), Some(json!({"feature": "parent"}))),
        ("DELETE", remove.as_str(), None),
        ("DELETE", add.as_str(), None),
    ] {
        server
            .send(method, path, body, Some(&viewer))
            .await
            .expect_error(403, "NoAccessError");
    }
    assert_eq!(event_count(&server).await, before);
    for path in [
        format!("{FLAGS}/child/parents"),
        format!("{FLAGS}/parent/parent-variants"),
        "/api/admin/projects/default/dependencies".to_owned(),
    ] {
        server
            .send("GET", &path, None, Some(&viewer))
            .await
            .expect(200);
    }
    let answer = server
        .send(
            "POST",
            &add,
            Some(json!({"feature": "parent"})),
            Some(&editor),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = server.send("DELETE", &remove, None, Some(&editor)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = server.send("DELETE", &add, None, Some(&editor)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        events_of_type(&server, "feature-dependency-added").await[0]["createdBy"],
        "editor"
    );
}

/// The names of the flags `/api/frontend` answers as enabled (development, no context), with variants.
async fn frontend(server: &Server) -> Vec<(String, String)> {
    let body: Value = server
        .client
        .get(format!("{}/api/frontend", server.base))
        .header("Authorization", FRONTEND_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["toggles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["variant"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn client_feature(server: &Server, name: &str) -> Value {
    server
        .client
        .get(format!("{}/api/client/features/{name}", server.base))
        .header("Authorization", CLIENT_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

async fn a_dependency_reaches_sdks_and_changes_the_answer(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["parent", "child", "fallback"] {
        create_flag(&server, "default", name).await;
    }
    let dev = |flag: &str| format!("{FLAGS}/{flag}/environments/development");
    server
        .post(
            &format!("{}/strategies", dev("parent")),
            json!({"name": "default", "variants": [
                {"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}]}),
        )
        .await
        .expect(200);
    for flag in ["parent", "child", "fallback"] {
        server
            .post_empty(&format!("{}/on", dev(flag)))
            .await
            .expect(200);
    }
    assert_eq!(
        frontend(&server).await,
        pairs(&[
            ("child", "disabled"),
            ("fallback", "disabled"),
            ("parent", "blue")
        ])
    );

    // The child needs the parent on; the fallback needs it off.
    depend(&server, "child", json!({"feature": "parent"}))
        .await
        .expect(200);
    depend(
        &server,
        "fallback",
        json!({"feature": "parent", "enabled": false}),
    )
    .await
    .expect(200);
    assert_eq!(
        client_feature(&server, "child").await["dependencies"],
        json!([{"feature": "parent", "enabled": true}])
    );
    assert_eq!(
        client_feature(&server, "fallback").await["dependencies"],
        json!([{"feature": "parent", "enabled": false}])
    );
    assert!(client_feature(&server, "parent")
        .await
        .get("dependencies")
        .is_none());
    assert_eq!(
        frontend(&server).await,
        pairs(&[("child", "disabled"), ("parent", "blue")])
    );
    server
        .post_empty(&format!("{}/off", dev("parent")))
        .await
        .expect(200);
    assert_eq!(frontend(&server).await, pairs(&[("fallback", "disabled")]));
    server
        .post_empty(&format!("{}/on", dev("parent")))
        .await
        .expect(200);

    // On a variant of the parent.
    depend(
        &server,
        "child",
        json!({"feature": "parent", "variants": ["red"]}),
    )
    .await
    .expect(200);
    assert_eq!(
        client_feature(&server, "child").await["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": ["red"]}])
    );
    assert_eq!(frontend(&server).await, pairs(&[("parent", "blue")]));
    depend(
        &server,
        "child",
        json!({"feature": "parent", "variants": ["red", "blue"]}),
    )
    .await
    .expect(200);
    assert_eq!(
        frontend(&server).await,
        pairs(&[("child", "disabled"), ("parent", "blue")])
    );

    // Removed: the child answers on its own again, and the document no longer lists the dependency.
    server
        .delete(&format!("{FLAGS}/fallback/dependencies"))
        .await
        .expect(200);
    server
        .delete(&format!("{FLAGS}/child/dependencies/parent"))
        .await
        .expect(200);
    assert!(client_feature(&server, "child")
        .await
        .get("dependencies")
        .is_none());
    assert_eq!(
        frontend(&server).await,
        pairs(&[
            ("child", "disabled"),
            ("fallback", "disabled"),
            ("parent", "blue")
        ])
    );
}
