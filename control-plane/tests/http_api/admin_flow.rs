//! The flow on SQLite and on Postgres: a project, a flag with three constrained strategies, toggles,
//! a reorder, archive and revive, every body checked field by field, and the events recorded. At the end the
//! store's client document is compiled and evaluated: admin writes reach evaluation.

use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::{json, Value};
use vexil_control_plane::domain::client_document;
use vexil_control_plane::store::Store;
use vexil_shared::{Context, Snapshot};

crate::on_sqlite_and_postgres!(project_flag_strategies_toggle_reorder_archive_revive);

const TOKEN_NAME: &str = "init-admin-token-1";
const PROJECT: &str = "/api/admin/projects/checkout";
const FLAG: &str = "/api/admin/projects/checkout/features/new-checkout";
const DEV: &str = "/api/admin/projects/checkout/features/new-checkout/environments/development";

fn assert_uuid(value: &Value) -> String {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    uuid::Uuid::parse_str(text).unwrap_or_else(|_| panic!("not a UUID: {text}"));
    text.to_owned()
}

/// Checks an answer's strategy against what was sent (defaults filled in) and returns its id.
fn check_strategy(body: &Value, expected: Value) -> String {
    let id = assert_uuid(&body["id"]);
    let mut expected = expected;
    expected["id"] = json!(id);
    assert_eq!(body, &expected);
    id
}

async fn project_flag_strategies_toggle_reorder_archive_revive(db: TestDb) {
    let server = Server::start(&db, &[]).await;

    // A project.
    let body = server
        .post(
            "/api/admin/projects",
            json!({"id": "checkout", "name": "Checkout", "description": "Payments"}),
        )
        .await
        .expect(201)
        .clone();
    assert_timestamp(&body["createdAt"]);
    assert_eq!(
        body,
        json!({
            "id": "checkout", "name": "Checkout", "description": "Payments", "mode": "open",
            "defaultStickiness": "default", "environments": ["development", "production"], "featureCount": 0,
            "createdAt": body["createdAt"], "updatedAt": null
        })
    );
    let projects = server.get("/api/admin/projects").await.expect(200).clone();
    assert_eq!(projects["version"], 1);
    let ids: Vec<&str> = projects["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["checkout", "default"]);

    // A flag.
    let body = server
        .post(
            &format!("{PROJECT}/features"),
            json!({"name": "new-checkout", "type": "experiment", "description": "New flow", "impressionData": true}),
        )
        .await
        .expect(201)
        .clone();
    assert_timestamp(&body["createdAt"]);
    let created_at = body["createdAt"].clone();
    assert_eq!(
        body,
        json!({
            "name": "new-checkout", "type": "experiment", "description": "New flow", "project": "checkout",
            "stale": false, "impressionData": true, "createdAt": created_at, "archived": false, "archivedAt": null
        })
    );
    // The list counts it and names each project's environments, as each project's own answer does.
    let projects = server.get("/api/admin/projects").await.expect(200).clone();
    for listed in projects["projects"].as_array().unwrap() {
        let id = listed["id"].as_str().unwrap();
        let alone = server.get(&format!("/api/admin/projects/{id}")).await;
        let alone = alone.expect(200);
        assert_eq!(listed["environments"], alone["environments"], "{id}");
        assert_eq!(listed["featureCount"], alone["featureCount"], "{id}");
    }
    assert_eq!(projects["projects"][0]["featureCount"], 1);
    assert_eq!(
        projects["projects"][0]["environments"],
        json!(["development", "production"])
    );

    // Three strategies with constraints.
    let rollout = server
        .post(
            &format!("{DEV}/strategies"),
            json!({
                "name": "flexibleRollout", "title": "Staff",
                "constraints": [{"contextName": "userId", "operator": "IN", "values": ["alice", "bob"]}],
                "parameters": {"rollout": 100, "stickiness": "userId"}
            }),
        )
        .await
        .expect(200)
        .clone();
    let rollout_id = check_strategy(
        &rollout,
        json!({
            "name": "flexibleRollout", "title": "Staff", "disabled": false, "featureName": "new-checkout",
            "sortOrder": 0, "segments": [],
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["alice", "bob"],
                             "caseInsensitive": false, "inverted": false}],
            "variants": [],
            "parameters": {"rollout": "100", "stickiness": "userId", "groupId": "new-checkout"}
        }),
    );
    let by_user = server
        .post(
            &format!("{DEV}/strategies"),
            json!({
                "name": "userWithId",
                "constraints": [{"contextName": "appName", "operator": "STR_STARTS_WITH", "values": ["WEB"],
                                 "caseInsensitive": true}],
                "parameters": {"userIds": "carol"},
                "variants": [{"name": "blue", "weight": 0}, {"name": "green", "weightType": "fix", "weight": 200,
                              "payload": {"type": "string", "value": "g"}}]
            }),
        )
        .await
        .expect(200)
        .clone();
    let by_user_id = check_strategy(
        &by_user,
        json!({
            "name": "userWithId", "title": null, "disabled": false, "featureName": "new-checkout",
            "sortOrder": 1, "segments": [],
            "constraints": [{"contextName": "appName", "operator": "STR_STARTS_WITH", "values": ["WEB"],
                             "caseInsensitive": true, "inverted": false}],
            "variants": [
                {"name": "blue", "weight": 800, "weightType": "variable", "stickiness": "default"},
                {"name": "green", "weight": 200, "weightType": "fix", "stickiness": "default",
                 "payload": {"type": "string", "value": "g"}}
            ],
            "parameters": {"userIds": "carol"}
        }),
    );
    let fallback = server
        .post(
            &format!("{DEV}/strategies"),
            json!({
                "name": "default", "sortOrder": 5,
                "constraints": [{"contextName": "userId", "operator": "NOT_IN", "values": ["mallory"]},
                                {"contextName": "version", "operator": "SEMVER_GTE", "value": "2.0.0"}]
            }),
        )
        .await
        .expect(200)
        .clone();
    let fallback_id = check_strategy(
        &fallback,
        json!({
            "name": "default", "title": null, "disabled": false, "featureName": "new-checkout",
            "sortOrder": 5, "segments": [],
            "constraints": [
                {"contextName": "userId", "operator": "NOT_IN", "values": ["mallory"], "caseInsensitive": false,
                 "inverted": false},
                {"contextName": "version", "operator": "SEMVER_GTE", "values": [], "value": "2.0.0",
                 "caseInsensitive": false, "inverted": false}
            ],
            "variants": [], "parameters": {}
        }),
    );
    let listed = server
        .get(&format!("{DEV}/strategies"))
        .await
        .expect(200)
        .clone();
    assert_eq!(listed, json!([rollout, by_user, fallback]));
    let one = server
        .get(&format!("{DEV}/strategies/{by_user_id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(one, by_user);

    // Toggle: on, off, on.
    assert_eq!(
        server.post_empty(&format!("{DEV}/on")).await.expect(200),
        &Value::Null
    );
    assert_eq!(
        server.post_empty(&format!("{DEV}/on")).await.expect(200),
        &Value::Null,
        "on again: no-op"
    );
    server.post_empty(&format!("{DEV}/off")).await.expect(200);
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
    let flag = server.get(FLAG).await.expect(200).clone();
    assert_eq!(
        flag,
        json!({
            "name": "new-checkout", "type": "experiment", "description": "New flow", "project": "checkout",
            "stale": false, "impressionData": true, "createdAt": created_at, "archived": false, "archivedAt": null,
            "environments": [
                {"name": "development", "enabled": true, "type": "development", "sortOrder": 1,
                 "strategies": [rollout, by_user, fallback], "variants": []},
                {"name": "production", "enabled": false, "type": "production", "sortOrder": 2,
                 "strategies": [], "variants": []}
            ],
            "variants": [], "dependencies": [], "children": [], "links": [], "potentiallyStale": false
        })
    );

    // Reorder: the fallback first.
    let order = json!([
        {"id": fallback_id, "sortOrder": 0}, {"id": rollout_id, "sortOrder": 1}, {"id": by_user_id, "sortOrder": 2}
    ]);
    assert_eq!(
        server
            .post(&format!("{DEV}/strategies/set-sort-order"), order)
            .await
            .expect(200),
        &Value::Null
    );
    let listed = server
        .get(&format!("{DEV}/strategies"))
        .await
        .expect(200)
        .clone();
    let summary: Vec<(String, i64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["sortOrder"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (fallback_id.clone(), 0),
            (rollout_id.clone(), 1),
            (by_user_id.clone(), 2)
        ]
    );

    // Metadata update with PUT and PATCH.
    let updated = server
        .put(FLAG, json!({"description": "Renewed", "stale": true}))
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["description"], "Renewed");
    assert_eq!(updated["stale"], true);
    assert_eq!(updated["type"], "experiment");
    let patched = server
        .patch(FLAG, json!([{"op": "replace", "path": "/stale", "value": false}, {"op": "replace", "path": "/type", "value": "release"}]))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        (patched["stale"].clone(), patched["type"].clone()),
        (json!(false), json!("release"))
    );

    // Archive.
    assert_eq!(server.delete(FLAG).await.expect(202), &Value::Null);
    server.get(FLAG).await.expect_error(404, "NotFoundError");
    assert_eq!(
        server.get(&format!("{PROJECT}/features")).await.expect(200),
        &json!({"version": 2, "features": []})
    );
    let archived = server
        .get("/api/admin/archive/features")
        .await
        .expect(200)
        .clone();
    assert_eq!(archived["version"], 2);
    let entry = &archived["features"][0];
    assert_timestamp(&entry["archivedAt"]);
    assert_eq!(
        entry,
        &json!({
            "name": "new-checkout", "type": "release", "description": "Renewed", "project": "checkout",
            "stale": false, "impressionData": true, "createdAt": created_at, "archivedAt": entry["archivedAt"],
            "lastSeenAt": null,
            "environments": [{"name": "development", "lastSeenAt": null, "enabled": true},
                             {"name": "production", "lastSeenAt": null, "enabled": false}]
        })
    );
    assert_eq!(
        server
            .get("/api/admin/archive/features/checkout")
            .await
            .expect(200),
        &archived
    );
    assert_eq!(
        server
            .get("/api/admin/archive/features/nowhere")
            .await
            .expect(200),
        &json!({"version": 2, "features": []})
    );
    server
        .post(
            &format!("{PROJECT}/features"),
            json!({"name": "new-checkout"}),
        )
        .await
        .expect_error(409, "NameExistsError");
    server
        .post_empty(&format!("{DEV}/on"))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(
        server
            .get(&format!("{DEV}/strategies"))
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // Revive: back, off everywhere, strategies kept.
    assert_eq!(
        server
            .post_empty("/api/admin/archive/revive/new-checkout")
            .await
            .expect(200),
        &Value::Null
    );
    let revived = server.get(FLAG).await.expect(200).clone();
    assert_eq!(revived["archived"], false);
    assert_eq!(revived["archivedAt"], Value::Null);
    assert_eq!(revived["environments"][0]["enabled"], false);
    assert_eq!(revived["environments"][1]["enabled"], false);
    assert_eq!(
        revived["environments"][0]["strategies"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        server.get("/api/admin/archive/features").await.expect(200)["features"],
        json!([])
    );

    // The events, newest first.
    let events = server
        .get("/api/admin/events/new-checkout")
        .await
        .expect(200)
        .clone();
    assert_eq!(events["version"], 1);
    assert_eq!(events["toggleName"], "new-checkout");
    let types: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "feature-revived",
            "feature-archived",
            "feature-type-updated",
            "feature-stale-off",
            "feature-metadata-updated",
            "feature-stale-on",
            "feature-metadata-updated",
            "strategy-order-changed",
            "feature-environment-enabled",
            "feature-environment-disabled",
            "feature-environment-enabled",
            "feature-strategy-add",
            "feature-strategy-add",
            "feature-strategy-add",
            "feature-created",
        ]
    );
    assert_eq!(events["totalEvents"], 15);
    let list = events["events"].as_array().unwrap();
    let ids: Vec<i64> = list.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] > pair[1]),
        "newest first, ids increasing: {ids:?}"
    );
    for event in list {
        let keys: Vec<&str> = event
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 13, "{event}");
        assert!(
            event["createdBy"].as_str().unwrap().starts_with(TOKEN_NAME),
            "{event}"
        );
        assert_eq!(event["createdByUserId"], -1337);
        assert_eq!(event["project"], "checkout");
        assert_eq!(event["featureName"], "new-checkout");
        assert_timestamp(&event["createdAt"]);
    }
    let by_type = |name: &str| list.iter().find(|e| e["type"] == name).unwrap().clone();
    let created = by_type("feature-created");
    assert_eq!(created["environment"], Value::Null);
    assert_eq!(created["data"]["name"], "new-checkout");
    assert_eq!(created["preData"], Value::Null);
    let first_added = list
        .iter()
        .rev()
        .find(|e| e["type"] == "feature-strategy-add")
        .unwrap();
    assert_eq!(first_added["environment"], "development");
    assert_eq!(first_added["data"], rollout);
    // Objects, as the specification's events have: the ids in their order (as Unleash records them).
    let reordered = by_type("strategy-order-changed");
    assert_eq!(
        reordered["data"],
        json!({"strategyIds": [fallback_id, rollout_id, by_user_id]})
    );
    assert_eq!(
        reordered["preData"],
        json!({"strategyIds": [rollout_id, by_user_id, fallback_id]})
    );
    assert_eq!(
        by_type("feature-environment-enabled")["environment"],
        "development"
    );
    assert_eq!(by_type("feature-archived")["data"]["archived"], true);
    assert_eq!(by_type("feature-revived")["preData"]["archived"], true);
    assert_eq!(by_type("feature-stale-on")["data"]["stale"], true);

    // Filters and paging of the event list.
    let archived_events = server
        .get("/api/admin/events?project=checkout&type=feature-archived")
        .await
        .expect(200)
        .clone();
    assert_eq!(archived_events["totalEvents"], 1);
    assert_eq!(
        archived_events["events"][0]["id"],
        by_type("feature-archived")["id"]
    );
    let page = server
        .get("/api/admin/events?feature=new-checkout&offset=1&limit=2")
        .await
        .expect(200)
        .clone();
    assert_eq!(page["totalEvents"], 15);
    assert_eq!(page["events"].as_array().unwrap().len(), 2);
    assert_eq!(page["events"][0]["type"], "feature-archived");
    let project_events = server
        .get("/api/admin/events?project=checkout")
        .await
        .expect(200)
        .clone();
    assert_eq!(
        project_events["events"].as_array().unwrap().last().unwrap()["type"],
        "project-created"
    );

    // Admin writes reach evaluation: turn it on and compile the store's client document.
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
    let store = Store::connect(&db.url).await.unwrap();
    let mut conn = store.read().await.unwrap();
    let document = client_document::features_document(&mut conn, "development")
        .await
        .unwrap();
    let snapshot = Snapshot::compile(&document);
    let user = |id: &str| Context {
        user_id: Some(id.to_owned()),
        ..Context::default()
    };
    let with_version = |id: &str, version: &str| {
        let mut context = user(id);
        context
            .properties
            .insert("version".to_owned(), version.to_owned());
        context
    };
    assert!(
        snapshot.is_enabled("new-checkout", &with_version("zoe", "2.1.0")),
        "the fallback strategy matches"
    );
    assert!(
        !snapshot.is_enabled("new-checkout", &with_version("zoe", "1.9.0")),
        "SEMVER_GTE fails"
    );
    assert!(
        snapshot.is_enabled("new-checkout", &user("alice")),
        "the rollout strategy matches"
    );
    assert!(
        !snapshot.is_enabled("new-checkout", &user("mallory")),
        "no strategy matches mallory"
    );
    let production = client_document::features_document(&mut conn, "production")
        .await
        .unwrap();
    assert!(!Snapshot::compile(&production).is_enabled("new-checkout", &user("alice")));
    drop(conn);
    store.close().await;

    // Delete for good: only once archived.
    server
        .delete("/api/admin/archive/new-checkout")
        .await
        .expect(200);
    server.get(FLAG).await.expect(200);
    server.delete(FLAG).await.expect(202);
    server
        .delete("/api/admin/archive/new-checkout")
        .await
        .expect(200);
    assert_eq!(
        server.get("/api/admin/archive/features").await.expect(200)["features"],
        json!([])
    );
    server.get(FLAG).await.expect_error(404, "NotFoundError");
    let deleted = server
        .get("/api/admin/events?type=feature-deleted")
        .await
        .expect(200)
        .clone();
    assert_eq!(deleted["events"][0]["featureName"], "new-checkout");
    assert_eq!(deleted["events"][0]["data"], Value::Null);
    assert_eq!(deleted["events"][0]["preData"]["name"], "new-checkout");
    server
        .post(
            &format!("{PROJECT}/features"),
            json!({"name": "new-checkout"}),
        )
        .await
        .expect(201);
}
