//! A project environment's default strategy through the real binary on SQLite and Postgres: set (one
//! environment and `*`), shown by the project's environments, recorded as `default-strategy-updated`, and
//! added when a flag without strategies is switched on — through the admin API, a bulk toggle and an applied
//! change request; without one, `flexibleRollout` at 100 % as before. Bad input changes nothing.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(default_strategies);

const PROJECT: &str = "/api/admin/projects/default";

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

async fn strategies(server: &Server, flag: &str, environment: &str) -> Value {
    server
        .get(&format!(
            "{PROJECT}/features/{flag}/environments/{environment}/strategies"
        ))
        .await
        .expect(200)
        .clone()
}

async fn project_environment(server: &Server, name: &str) -> Value {
    let listing = server
        .get("/api/admin/environments/project/default")
        .await
        .expect(200)
        .clone();
    listing["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} in {listing}"))
}

async fn default_strategies(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for flag in ["checkout", "plain", "bulk", "banner"] {
        server
            .post(&format!("{PROJECT}/features"), json!({"name": flag}))
            .await
            .expect(201);
    }
    let development = format!("{PROJECT}/environments/development/default-strategy");
    let set = server
        .post(
            &development,
            json!({"name": "flexibleRollout", "title": "Quarter",
                   "parameters": {"rollout": 25, "stickiness": "userId", "groupId": ""},
                   "constraints": [{"contextName": "userId", "operator": "IN", "values": ["a"]}]}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(set["name"], "flexibleRollout");
    assert_eq!(
        set["parameters"],
        json!({"rollout": "25", "stickiness": "userId"})
    );
    let shown = project_environment(&server, "development").await;
    assert_eq!(shown["defaultStrategy"]["title"], "Quarter");
    assert_eq!(shown["defaultStrategy"]["parameters"]["rollout"], "25");
    assert!(project_environment(&server, "production")
        .await
        .get("defaultStrategy")
        .is_none());
    let events = events_of_type(&server, "default-strategy-updated").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["environment"], "development");
    assert_eq!(events[0]["project"], "default");
    assert_eq!(events[0]["data"]["title"], "Quarter");
    assert!(events[0]["preData"].is_null());

    // Bad input: nothing changes, no event.
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;
    let before = event_count(&server).await;
    for (path, body, status) in [
        (
            development.clone(),
            json!({"name": "no-such-strategy"}),
            400,
        ),
        (
            development.clone(),
            json!({"name": "default", "disabled": true}),
            400,
        ),
        (
            development.clone(),
            json!({"name": "default", "title": "t".repeat(101)}),
            400,
        ),
        (
            development.clone(),
            json!({"name": "flexibleRollout", "parameters": {"rollout": 140}}),
            400,
        ),
        (
            development.clone(),
            json!({"name": "default", "segments": [99]}),
            400,
        ),
        (
            format!("{PROJECT}/environments/nowhere/default-strategy"),
            json!({"name": "default"}),
            404,
        ),
        (
            "/api/admin/projects/nope/environments/development/default-strategy".to_owned(),
            json!({"name": "default"}),
            404,
        ),
    ] {
        let answer = server.post(&path, body.clone()).await;
        assert_eq!(answer.status, status, "{path} {body}: {:?}", answer.body);
    }
    server
        .send(
            "POST",
            &development,
            Some(json!({"name": "default"})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert_eq!(event_count(&server).await, before);
    assert_eq!(
        project_environment(&server, "development").await["defaultStrategy"]["title"],
        "Quarter"
    );

    // Switched on through the API: the default, with the flag's name as groupId.
    server
        .post_empty(&format!(
            "{PROJECT}/features/checkout/environments/development/on"
        ))
        .await
        .expect(200);
    let added = strategies(&server, "checkout", "development").await;
    assert_eq!(added.as_array().unwrap().len(), 1, "{added}");
    assert_eq!(added[0]["name"], "flexibleRollout");
    assert_eq!(added[0]["title"], "Quarter");
    assert_eq!(
        added[0]["parameters"],
        json!({"rollout": "25", "stickiness": "userId", "groupId": "checkout"})
    );
    assert_eq!(added[0]["constraints"][0]["values"], json!(["a"]));
    // Without a default (production): flexibleRollout at 100 %, as before.
    server
        .post_empty(&format!(
            "{PROJECT}/features/plain/environments/production/on"
        ))
        .await
        .expect(200);
    let plain = strategies(&server, "plain", "production").await;
    assert_eq!(plain[0]["name"], "flexibleRollout");
    assert_eq!(plain[0]["parameters"]["rollout"], "100");

    // `*`: every environment of the project; an event for each default that changed.
    server
        .post(
            &format!("{PROJECT}/environments/*/default-strategy"),
            json!({"name": "userWithId", "parameters": {"userIds": "alice,bob"}}),
        )
        .await
        .expect(200);
    let events = events_of_type(&server, "default-strategy-updated").await;
    assert_eq!(events.len(), 3, "{events:?}");
    for name in ["development", "production"] {
        assert_eq!(
            project_environment(&server, name).await["defaultStrategy"]["name"],
            "userWithId"
        );
    }
    let changed = events
        .iter()
        .find(|event| event["environment"] == "development" && !event["preData"].is_null())
        .expect("development's change");
    assert_eq!(changed["preData"]["title"], "Quarter");

    // A bulk toggle.
    server
        .post(
            &format!("{PROJECT}/bulk_features/environments/production/on"),
            json!({"features": ["bulk"]}),
        )
        .await
        .expect(200);
    let bulk = strategies(&server, "bulk", "production").await;
    assert_eq!(bulk[0]["name"], "userWithId");
    assert_eq!(bulk[0]["parameters"], json!({"userIds": "alice,bob"}));

    // An applied change request.
    server
        .put(
            &format!("{PROJECT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (_, carol) = user_with_pat(&server, "carol", "Editor").await;
    let id = server
        .send(
            "POST",
            &format!("{PROJECT}/environments/development/change-requests"),
            Some(json!({"feature": "banner", "action": "updateEnabled", "payload": {"enabled": true}})),
            Some(&bob),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let state = format!("{PROJECT}/change-requests/{id}/state");
    server
        .send(
            "PUT",
            &state,
            Some(json!({"state": "In review"})),
            Some(&bob),
        )
        .await
        .expect(200);
    server
        .send(
            "PUT",
            &state,
            Some(json!({"state": "Approved"})),
            Some(&carol),
        )
        .await
        .expect(200);
    assert_eq!(
        strategies(&server, "banner", "development").await,
        json!([])
    );
    server
        .put(&state, json!({"state": "Applied"}))
        .await
        .expect(200);
    let applied = strategies(&server, "banner", "development").await;
    assert_eq!(applied.as_array().unwrap().len(), 1, "{applied}");
    assert_eq!(applied[0]["name"], "userWithId");
    let flag = server
        .get(&format!("{PROJECT}/features/banner"))
        .await
        .expect(200)
        .clone();
    let environment = flag["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "development")
        .unwrap()
        .clone();
    assert_eq!(environment["enabled"], true);

    // Adding an environment to a project with a default strategy (projectEnvironmentSchema): one write;
    // a bad default adds nothing.
    server
        .post(
            "/api/admin/projects",
            json!({"id": "web", "name": "Web", "environments": ["development"]}),
        )
        .await
        .expect(201);
    let before = event_count(&server).await;
    server
        .post(
            "/api/admin/projects/web/environments",
            json!({"environment": "production", "defaultStrategy": {"name": "no-such-strategy"}}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(event_count(&server).await, before);
    let web = server
        .get("/api/admin/projects/web")
        .await
        .expect(200)
        .clone();
    assert_eq!(web["environments"], json!(["development"]));
    server
        .post(
            "/api/admin/projects/web/environments",
            json!({"environment": "production", "defaultStrategy": {"name": "default"}}),
        )
        .await
        .expect(200);
    let listing = server
        .get("/api/admin/environments/project/web")
        .await
        .expect(200)
        .clone();
    let production = listing["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "production")
        .cloned()
        .unwrap_or_else(|| panic!("{listing}"));
    assert_eq!(production["defaultStrategy"]["name"], "default");
}
