//! The rest of a flag's life through the real binary, on SQLite and Postgres: batch switches, revive, delete
//! and stale marking (each one transaction), clone, variants for several environments, one environment of a
//! flag, environment order; each with its permissions and the change-request gate, asserting on answers,
//! events and stored state.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    bulk_switches_are_one_transaction_and_gated,
    revive_delete_and_stale_in_batches,
    clone_copies_the_configuration,
    variants_for_several_environments_and_one_environment_view,
    environment_sort_order,
);

const PROJECT: &str = "/api/admin/projects/default";

async fn create_flag(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
}

async fn enabled(server: &Server, flag: &str, environment: &str) -> bool {
    let body = server
        .get(&format!(
            "{PROJECT}/features/{flag}/environments/{environment}"
        ))
        .await;
    body.expect(200)["enabled"].as_bool().unwrap()
}

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    let events = server.get("/api/admin/events?limit=1000").await;
    events.expect(200)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == event_type)
        .cloned()
        .collect()
}

async fn enable_change_requests(server: &Server, environment: &str) {
    server
        .put(
            &format!("{PROJECT}/environments/{environment}/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
}

async fn bulk_switches_are_one_transaction_and_gated(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "a").await;
    create_flag(&server, "b").await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let on = format!("{PROJECT}/bulk_features/environments/development/on");
    let off = format!("{PROJECT}/bulk_features/environments/development/off");
    let both = json!({"features": ["a", "b"]});

    server
        .send("POST", &on, Some(both.clone()), Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    assert!(!enabled(&server, "a", "development").await);

    server
        .send("POST", &on, Some(both.clone()), Some(&editor))
        .await
        .expect(200);
    assert!(enabled(&server, "a", "development").await);
    assert!(enabled(&server, "b", "development").await);
    assert!(!enabled(&server, "a", "production").await);
    // Turned on without a strategy: the default one, as the single switch adds.
    let view = server
        .get(&format!("{PROJECT}/features/a/environments/development"))
        .await;
    assert_eq!(view.expect(200)["strategies"][0]["name"], "flexibleRollout");
    assert_eq!(
        events_of_type(&server, "feature-environment-enabled")
            .await
            .len(),
        2
    );

    // One unknown flag: 404 and the others stay as they were.
    server
        .post(&off, json!({"features": ["a", "nope"]}))
        .await
        .expect_error(404, "NotFoundError");
    assert!(enabled(&server, "a", "development").await);

    server
        .post(&off, json!({"features": []}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(&off, json!({"features": "a"}))
        .await
        .expect_error(400, "ValidationError");

    server.post(&off, both.clone()).await.expect(200);
    assert!(!enabled(&server, "a", "development").await);
    assert!(!enabled(&server, "b", "development").await);
    assert_eq!(
        events_of_type(&server, "feature-environment-disabled")
            .await
            .len(),
        2
    );

    // Change requests on in production: refused like the single switch, nothing changes.
    enable_change_requests(&server, "production").await;
    let message = server
        .post(
            &format!("{PROJECT}/bulk_features/environments/production/on"),
            both.clone(),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("Change requests"), "{message}");
    assert!(!enabled(&server, "a", "production").await);
    assert!(!enabled(&server, "b", "production").await);
    // Development has none: still allowed.
    server.post(&on, both).await.expect(200);

    server
        .post(
            "/api/admin/projects/nowhere/bulk_features/environments/development/on",
            json!({"features": ["a"]}),
        )
        .await
        .expect_error(404, "NotFoundError");
}

async fn revive_delete_and_stale_in_batches(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["a", "b", "c"] {
        create_flag(&server, name).await;
    }
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/other/features",
            json!({"name": "elsewhere"}),
        )
        .await
        .expect(201);
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;

    // Stale.
    let stale = format!("{PROJECT}/stale");
    server
        .send(
            "POST",
            &stale,
            Some(json!({"features": ["a", "b"], "stale": true})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "POST",
            &stale,
            Some(json!({"features": ["a", "b"], "stale": true})),
            Some(&editor),
        )
        .await
        .expect(202);
    for (name, want) in [("a", true), ("b", true), ("c", false)] {
        let flag = server.get(&format!("{PROJECT}/features/{name}")).await;
        assert_eq!(flag.expect(200)["stale"], want, "{name}");
    }
    assert_eq!(events_of_type(&server, "feature-stale-on").await.len(), 2);
    server
        .post(
            &stale,
            json!({"features": ["a", "elsewhere"], "stale": false}),
        )
        .await
        .expect_error(400, "ValidationError");
    let flag = server.get(&format!("{PROJECT}/features/a")).await;
    assert_eq!(flag.expect(200)["stale"], true, "rolled back");
    server
        .post(&stale, json!({"features": ["a"]}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(&stale, json!({"features": ["a"], "stale": false}))
        .await
        .expect(202);
    assert_eq!(events_of_type(&server, "feature-stale-off").await.len(), 1);

    // Archive three, revive one, delete one.
    server
        .post(
            &format!("{PROJECT}/archive"),
            json!({"features": ["a", "b", "c"]}),
        )
        .await
        .expect(202);
    let revive = format!("{PROJECT}/revive");
    server
        .send(
            "POST",
            &revive,
            Some(json!({"features": ["a"]})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .post(&revive, json!({"features": ["a", "elsewhere"]}))
        .await
        .expect_error(400, "ValidationError");
    server
        .get(&format!("{PROJECT}/features/a"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .send(
            "POST",
            &revive,
            Some(json!({"features": ["a"]})),
            Some(&editor),
        )
        .await
        .expect(200);
    server
        .get(&format!("{PROJECT}/features/a"))
        .await
        .expect(200);
    assert_eq!(events_of_type(&server, "feature-revived").await.len(), 1);

    let delete = format!("{PROJECT}/delete");
    // A live flag in the list: 400, nothing deleted.
    let message = server
        .post(&delete, json!({"features": ["b", "a"]}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("not archived"), "{message}");
    let archived = server.get("/api/admin/archive/features/default").await;
    assert_eq!(
        archived.expect(200)["features"].as_array().unwrap().len(),
        2
    );
    server
        .send(
            "POST",
            &delete,
            Some(json!({"features": ["b"]})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "POST",
            &delete,
            Some(json!({"features": ["b", "b"]})),
            Some(&editor),
        )
        .await
        .expect(200);
    let archived = server.get("/api/admin/archive/features/default").await;
    let names: Vec<&str> = archived.expect(200)["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c"]);
    assert_eq!(events_of_type(&server, "feature-deleted").await.len(), 1);
    // The name is free again.
    create_flag(&server, "b").await;
}

async fn clone_copies_the_configuration(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "source").await;
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "beta", "constraints": []}),
        )
        .await;
    let segment = segment.expect(201)["id"].as_i64().unwrap();
    let dev = format!("{PROJECT}/features/source/environments/development");
    server
        .post(
            &format!("{dev}/strategies"),
            json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": "50", "stickiness": "default", "groupId": "source"},
                "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}],
                "segments": [segment]
            }),
        )
        .await
        .expect(200);
    server
        .put(
            &format!("{dev}/variants"),
            json!([{"name": "red", "weight": 1000, "weightType": "variable", "stickiness": "default"}]),
        )
        .await
        .expect(200);
    server.post_empty(&format!("{dev}/on")).await.expect(200);
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let clone = format!("{PROJECT}/features/source/clone");

    server
        .send("POST", &clone, Some(json!({"name": "copy"})), Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    let copy = server
        .send("POST", &clone, Some(json!({"name": "copy"})), Some(&editor))
        .await;
    let copy = copy.expect(200).clone();
    assert_eq!(copy["name"], "copy");
    assert_eq!(copy["project"], "default");
    let development = copy["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "development")
        .unwrap()
        .clone();
    assert_eq!(development["enabled"], true);
    let strategy = &development["strategies"][0];
    assert_eq!(strategy["parameters"]["groupId"], "copy");
    assert_eq!(strategy["parameters"]["rollout"], "50");
    assert_eq!(strategy["constraints"][0]["values"], json!(["eu"]));
    assert_eq!(strategy["segments"], json!([segment]));
    assert_eq!(development["variants"][0]["name"], "red");
    assert!(!enabled(&server, "copy", "production").await);
    let created = events_of_type(&server, "feature-created").await;
    assert!(created.iter().any(|event| event["featureName"] == "copy"));
    // The clone is served to SDKs like any flag.
    let client = server
        .send(
            "GET",
            "/api/client/features",
            None,
            Some(crate::server::CLIENT_TOKEN),
        )
        .await;
    let names: Vec<&str> = client.expect(200)["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"copy"), "{names:?}");

    let kept = server
        .post(
            &clone,
            json!({"name": "copy-kept", "replaceGroupId": false}),
        )
        .await;
    let kept = kept.expect(200).clone();
    let group = kept["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "development")
        .unwrap()["strategies"][0]["parameters"]["groupId"]
        .clone();
    assert_eq!(group, "source");

    server
        .post(&clone, json!({"name": "copy"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post(&clone, json!({"name": "bad name!"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            &format!("{PROJECT}/features/none/clone"),
            json!({"name": "x"}),
        )
        .await
        .expect_error(404, "NotFoundError");

    // A clone that would write into an environment with change requests on is refused as a whole.
    enable_change_requests(&server, "development").await;
    server
        .post(&clone, json!({"name": "copy-gated"}))
        .await
        .expect_error(403, "NoAccessError");
    server
        .get(&format!("{PROJECT}/features/copy-gated"))
        .await
        .expect_error(404, "NotFoundError");
}

async fn variants_for_several_environments_and_one_environment_view(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "paint").await;
    let batch = format!("{PROJECT}/features/paint/variants-batch");
    let body = json!({
        "variants": [
            {"name": "red", "weight": 500, "weightType": "variable", "stickiness": "default"},
            {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default"}
        ],
        "environments": ["development", "production"]
    });
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    server
        .send("PUT", &batch, Some(body.clone()), Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    let answer = server.put(&batch, body.clone()).await;
    let answer = answer.expect(200).clone();
    assert_eq!(answer["version"], 1);
    let names: Vec<&str> = answer["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| variant["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["blue", "red"]);
    for environment in ["development", "production"] {
        let stored = server
            .get(&format!(
                "{PROJECT}/features/paint/environments/{environment}/variants"
            ))
            .await;
        assert_eq!(stored.expect(200)["variants"], answer["variants"]);
    }
    assert_eq!(
        events_of_type(&server, "feature-environment-variants-updated")
            .await
            .len(),
        2
    );

    // One environment of the flag.
    let view = server
        .get(&format!("{PROJECT}/features/paint/environments/production"))
        .await;
    let view = view.expect(200).clone();
    assert_eq!(view["name"], "production");
    assert_eq!(view["environment"], "production");
    assert_eq!(view["featureName"], "paint");
    assert_eq!(view["type"], "production");
    assert_eq!(view["enabled"], false);
    assert_eq!(view["variantCount"], 2);
    assert_eq!(view["hasStrategies"], false);
    assert_eq!(view["hasEnabledStrategies"], false);
    assert_eq!(view["strategies"], json!([]));
    assert!(view["lastSeenAt"].is_null());
    assert!(view["sortOrder"].is_i64());
    server
        .get(&format!("{PROJECT}/features/paint/environments/nowhere"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .get(&format!("{PROJECT}/features/none/environments/production"))
        .await
        .expect_error(404, "NotFoundError");

    // Change requests on in production: the whole batch is refused, development included.
    enable_change_requests(&server, "production").await;
    let clear = json!({"variants": [], "environments": ["development", "production"]});
    server
        .put(&batch, clear)
        .await
        .expect_error(403, "NoAccessError");
    let development = server
        .get(&format!(
            "{PROJECT}/features/paint/environments/development/variants"
        ))
        .await;
    assert_eq!(
        development.expect(200)["variants"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    server
        .put(&batch, json!({"variants": [], "environments": []}))
        .await
        .expect_error(400, "ValidationError");
    server
        .put(
            &batch,
            json!({"variants": [{"name": "x", "weight": 2000}], "environments": ["development"]}),
        )
        .await
        .expect_error(400, "ValidationError");
}

async fn environment_sort_order(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let order = json!({"development": 9, "production": 1});
    server
        .send(
            "PUT",
            "/api/admin/environments/sort-order",
            Some(order.clone()),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "PUT",
            "/api/admin/environments/sort-order",
            Some(order),
            Some(&editor),
        )
        .await
        .expect(200);
    let sort_order = |list: &Value, name: &str| {
        list["environments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|environment| environment["name"] == name)
            .unwrap()["sortOrder"]
            .clone()
    };
    let list = server
        .get("/api/admin/environments")
        .await
        .expect(200)
        .clone();
    assert_eq!(sort_order(&list, "development"), 9);
    assert_eq!(sort_order(&list, "production"), 1);
    let updated = events_of_type(&server, "environment-updated").await;
    assert_eq!(updated.len(), 2);
    assert_timestamp(&updated[0]["createdAt"]);

    // An unknown environment: 404, nothing moved.
    server
        .put(
            "/api/admin/environments/sort-order",
            json!({"development": 1, "nowhere": 2}),
        )
        .await
        .expect_error(404, "NotFoundError");
    let list = server
        .get("/api/admin/environments")
        .await
        .expect(200)
        .clone();
    assert_eq!(sort_order(&list, "development"), 9);
    server
        .put(
            "/api/admin/environments/sort-order",
            json!({"development": "first"}),
        )
        .await
        .expect_error(400, "ValidationError");
}
