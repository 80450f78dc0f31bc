//! More admin routes of Unleash 8.2 through the real binary, on SQLite and Postgres: where strategies use
//! segments and context fields, constraint validation, legal values, flag types, creators, and the
//! applications views. (Project API tokens and the users' routes are in `admin_accounts.rs`.)

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    strategy_usage_segments_and_constraints,
    context_field_names_and_legal_values,
    types_creators_and_project_environments,
    application_views,
);

pub(crate) const PROJECT: &str = "/api/admin/projects/default";

async fn create_flag(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
}

async fn add_strategy(server: &Server, flag: &str, body: Value) -> String {
    let answer = server
        .post(
            &format!("{PROJECT}/features/{flag}/environments/development/strategies"),
            body,
        )
        .await;
    answer.expect(200)["id"].as_str().unwrap().to_owned()
}

async fn strategy_usage_segments_and_constraints(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/context",
            json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]}),
        )
        .await
        .expect(201);
    let beta = server
        .post(
            "/api/admin/segments",
            json!({"name": "beta", "constraints": []}),
        )
        .await;
    let beta = beta.expect(201)["id"].as_i64().unwrap();
    let gamma = server
        .post(
            "/api/admin/segments",
            json!({"name": "gamma", "constraints": []}),
        )
        .await;
    let gamma = gamma.expect(201)["id"].as_i64().unwrap();
    create_flag(&server, "a").await;
    create_flag(&server, "b").await;
    let with_both = add_strategy(
        &server,
        "a",
        json!({"name": "default", "segments": [beta],
               "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}),
    )
    .await;
    add_strategy(&server, "b", json!({"name": "default"})).await;

    let used = server
        .get(&format!("/api/admin/segments/{beta}/strategies"))
        .await;
    assert_eq!(
        used.expect(200)["strategies"],
        json!([{"id": with_both, "featureName": "a", "projectId": "default",
                "environment": "development", "strategyName": "default"}])
    );
    let unused = server
        .get(&format!("/api/admin/segments/{gamma}/strategies"))
        .await;
    assert_eq!(unused.expect(200)["strategies"], json!([]));
    server
        .get("/api/admin/segments/999/strategies")
        .await
        .expect_error(404, "NotFoundError");
    let by_field = server.get("/api/admin/context/region/strategies").await;
    let by_field = by_field.expect(200)["strategies"].clone();
    assert_eq!(by_field.as_array().unwrap().len(), 1);
    assert_eq!(by_field[0]["id"], with_both.as_str());
    let by_user = server.get("/api/admin/context/userId/strategies").await;
    assert_eq!(by_user.expect(200)["strategies"], json!([]));
    server
        .get("/api/admin/context/nope/strategies")
        .await
        .expect_error(404, "NotFoundError");

    // A strategy's segments by its id alone.
    let segments = server
        .get(&format!("/api/admin/segments/strategies/{with_both}"))
        .await;
    let segments = segments.expect(200)["segments"].clone();
    assert_eq!(segments.as_array().unwrap().len(), 1);
    assert_eq!(segments[0]["name"], "beta");
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let set = json!({"projectId": "default", "strategyId": with_both, "environmentId": "development",
                     "segmentIds": [gamma]});
    server
        .send(
            "POST",
            "/api/admin/segments/strategies",
            Some(set.clone()),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    let answer = server.post("/api/admin/segments/strategies", set).await;
    assert_eq!(answer.expect(201)["segmentIds"], json!([gamma]));
    let strategy = server
        .get(&format!(
            "{PROJECT}/features/a/environments/development/strategies/{with_both}"
        ))
        .await;
    assert_eq!(strategy.expect(200)["segments"], json!([gamma]));
    server
        .post(
            "/api/admin/segments/strategies",
            json!({"projectId": "default", "strategyId": with_both, "environmentId": "production",
                   "segmentIds": []}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/segments/strategies",
            json!({"projectId": "default", "strategyId": with_both, "environmentId": "development",
                   "segmentIds": [4242]}),
        )
        .await
        .expect_error(400, "ValidationError");
    // Through the change-request gate, as a strategy PUT.
    server
        .put(
            &format!("{PROJECT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/admin/segments/strategies",
            json!({"projectId": "default", "strategyId": with_both, "environmentId": "development",
                   "segmentIds": [beta]}),
        )
        .await
        .expect_error(403, "NoAccessError");

    // Segment names.
    server
        .post("/api/admin/segments/validate", json!({"name": "fresh"}))
        .await
        .expect(204);
    server
        .post("/api/admin/segments/validate", json!({"name": "beta"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post("/api/admin/segments/validate", json!({"name": ""}))
        .await
        .expect_error(400, "ValidationError");

    // Constraints.
    let validate = "/api/admin/constraints/validate";
    for good in [
        json!({"contextName": "userId", "operator": "IN", "values": ["1", "2"]}),
        json!({"contextName": "version", "operator": "SEMVER_GT", "value": "1.2.3"}),
        json!({"contextName": "age", "operator": "NUM_GTE", "value": "18"}),
        json!({"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2026-01-01T00:00:00.000Z"}),
        json!({"contextName": "region", "operator": "IN", "values": ["eu", "us"]}),
    ] {
        let answer = server.post(validate, good.clone()).await;
        assert_eq!(answer.status, 204, "{good}: {}", answer.body);
    }
    for bad in [
        json!({"contextName": "age", "operator": "NUM_GT", "value": "old"}),
        json!({"contextName": "version", "operator": "SEMVER_EQ", "value": "v1"}),
        json!({"contextName": "currentTime", "operator": "DATE_BEFORE", "value": "tomorrow"}),
        json!({"contextName": "email", "operator": "REGEX", "value": "(unclosed"}),
        json!({"contextName": "userId", "operator": "LIKE", "values": []}),
        json!({"contextName": "region", "operator": "IN", "values": ["mars"]}),
        json!({"operator": "IN", "values": []}),
    ] {
        let answer = server.post(validate, bad.clone()).await;
        assert_eq!(answer.status, 400, "{bad}: {}", answer.body);
        assert_eq!(answer.body["name"], "ValidationError", "{bad}");
    }
    server
        .send(
            "POST",
            validate,
            Some(json!({"contextName": "userId", "operator": "IN", "values": []})),
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
}

async fn context_field_names_and_legal_values(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post("/api/admin/context", json!({"name": "region"}))
        .await
        .expect(201);
    server
        .post("/api/admin/context/validate", json!({"name": "tier"}))
        .await
        .expect(200);
    server
        .post("/api/admin/context/validate", json!({"name": "region"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post("/api/admin/context/validate", json!({"name": "bad name"}))
        .await
        .expect_error(400, "ValidationError");

    let legal = "/api/admin/context/region/legal-values";
    server
        .post(legal, json!({"value": "eu", "description": "Europe"}))
        .await
        .expect(200);
    server.post(legal, json!({"value": "us"})).await.expect(200);
    server
        .post(
            legal,
            json!({"value": "eu", "description": "European Union"}),
        )
        .await
        .expect(200);
    let field = server.get("/api/admin/context/region").await;
    assert_eq!(
        field.expect(200)["legalValues"],
        json!([{"value": "eu", "description": "European Union"}, {"value": "us"}])
    );
    server.delete(&format!("{legal}/eu")).await.expect(200);
    let field = server.get("/api/admin/context/region").await;
    assert_eq!(field.expect(200)["legalValues"], json!([{"value": "us"}]));
    server
        .post(legal, json!({"value": ""}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/context/nope/legal-values",
            json!({"value": "x"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    server
        .send("POST", legal, Some(json!({"value": "apac"})), Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    let updates = server
        .get("/api/admin/events?type=context-field-updated")
        .await;
    assert_eq!(updates.expect(200)["events"].as_array().unwrap().len(), 4);
}

async fn types_creators_and_project_environments(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let types = server.get("/api/admin/feature-types").await;
    let types = types.expect(200).clone();
    assert_eq!(types["version"], 1);
    let ids: Vec<&str> = types["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kind| kind["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "release",
            "experiment",
            "operational",
            "kill-switch",
            "permission",
            "sunset"
        ]
    );
    assert_eq!(types["types"][0]["lifetimeDays"], 40);
    assert!(types["types"][3]["lifetimeDays"].is_null());
    assert!(types["types"][0]["description"].is_string());

    let (editor_id, editor) = user_with_pat(&server, "ed", "Editor").await;
    server
        .send(
            "POST",
            &format!("{PROJECT}/features"),
            Some(json!({"name": "by-editor"})),
            Some(&editor),
        )
        .await
        .expect(201);
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
            json!({"name": "by-token"}),
        )
        .await
        .expect(201);
    let creators = server.get(&format!("{PROJECT}/flag-creators")).await;
    assert_eq!(
        creators.expect(200),
        &json!([{"id": editor_id, "name": "ed"}])
    );
    let everyone = server.get("/api/admin/event-creators").await;
    let everyone = everyone.expect(200).clone();
    assert!(everyone
        .as_array()
        .unwrap()
        .contains(&json!({"id": editor_id, "name": "ed"})));
    assert!(everyone.as_array().unwrap().len() >= 2, "{everyone}");
    server
        .get("/api/admin/projects/nowhere/flag-creators")
        .await
        .expect_error(404, "NotFoundError");

    // The environments of a project, with what the project has there.
    server
        .post(
            &format!("{PROJECT}/features/by-editor/environments/development/on"),
            json!({}),
        )
        .await
        .expect(200);
    server
        .post(
            &format!("{PROJECT}/api-tokens"),
            json!({"tokenName": "shop", "type": "client", "environment": "development"}),
        )
        .await
        .expect(201);
    server
        .put(
            &format!("{PROJECT}/environments/production/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 2}),
        )
        .await
        .expect(200);
    let environments = server.get("/api/admin/environments/project/default").await;
    let environments = environments.expect(200).clone();
    assert_eq!(environments["version"], 1);
    let find = |name: &str| {
        environments["environments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|environment| environment["name"] == name)
            .unwrap()
            .clone()
    };
    let development = find("development");
    assert_eq!(development["projectEnabledToggleCount"], 1);
    assert_eq!(development["projectApiTokenCount"], 3, "{development}");
    assert!(development["requiredApprovals"].is_null());
    let production = find("production");
    assert_eq!(production["projectEnabledToggleCount"], 0);
    assert_eq!(production["requiredApprovals"], 2);
    assert_eq!(production["type"], "production");
    server
        .get("/api/admin/environments/project/nowhere")
        .await
        .expect_error(404, "NotFoundError");

    let statistics = server.get("/api/admin/instance-admin/statistics").await;
    let statistics = statistics.expect(200).clone();
    let instance_id = statistics["instanceId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(instance_id).is_ok(), "{statistics}");
    assert_eq!(statistics["featureToggles"], 2);
    assert_eq!(statistics["projects"], 2);
    assert_eq!(statistics["users"], 1);
    assert_eq!(statistics["environments"], 2);
    assert_eq!(statistics["roles"], 3);
    assert_eq!(statistics["apiTokens"]["client"], 2, "{statistics}");
    assert_eq!(statistics["SAMLenabled"], false);
    assert!(statistics["versionOSS"].is_string());
    let telemetry = server.get("/api/admin/telemetry/settings").await;
    assert_eq!(
        telemetry.expect(200),
        &json!({"versionInfoCollectionEnabled": false, "featureInfoCollectionEnabled": false})
    );
}

fn register_body(app: &str, instance: &str, strategies: &[&str]) -> Value {
    json!({
        "appName": app, "instanceId": instance, "sdkVersion": "unleash-client-node:6.12.1",
        "environment": "development", "strategies": strategies,
        "started": "2026-11-22T00:00:00.000Z", "interval": 10000
    })
}

async fn application_views(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let post = |path: &'static str, body: Value| {
        let server = &server;
        async move {
            server
                .send("POST", path, Some(body), Some(CLIENT_TOKEN))
                .await
                .expect(202);
        }
    };
    post(
        "/api/client/register",
        register_body("shop", "i1", &["default", "myCustom"]),
    )
    .await;
    post(
        "/api/client/metrics",
        json!({"appName": "shop", "instanceId": "i2", "sdkVersion": "unleash-client-java:9.2.0",
               "environment": "development",
               "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z",
                          "toggles": {"checkout": {"yes": 1, "no": 0}, "ghost": {"yes": 0, "no": 3}}}}),
    )
    .await;

    let overview = server
        .get("/api/admin/metrics/applications/shop/overview")
        .await;
    let overview = overview.expect(200).clone();
    assert_eq!(overview["projects"], json!(["default"]));
    assert_eq!(overview["featureCount"], 2);
    assert_eq!(overview["issues"]["missingStrategies"], json!(["myCustom"]));
    let environments = overview["environments"].as_array().unwrap();
    assert_eq!(environments.len(), 1, "{overview}");
    let development = &environments[0];
    assert_eq!(development["name"], "development");
    assert_eq!(development["instanceCount"], 2);
    assert_eq!(
        development["sdks"],
        json!(["unleash-client-java:9.2.0", "unleash-client-node:6.12.1"])
    );
    assert_eq!(development["backendSdks"], development["sdks"]);
    assert_eq!(development["frontendSdks"], json!([]));
    assert_eq!(development["issues"]["missingFeatures"], json!(["ghost"]));
    assert!(development["lastSeen"].is_string());
    server
        .get("/api/admin/metrics/applications/nobody/overview")
        .await
        .expect_error(404, "NotFoundError");

    let instances = server
        .get("/api/admin/metrics/instances/shop/environment/development")
        .await;
    let instances = instances.expect(200)["instances"].clone();
    let ids: Vec<&str> = instances
        .as_array()
        .unwrap()
        .iter()
        .map(|instance| instance["instanceId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"i1") && ids.contains(&"i2"));
    let none = server
        .get("/api/admin/metrics/instances/shop/environment/production")
        .await;
    assert_eq!(none.expect(200)["instances"], json!([]));

    let unknown = server.get("/api/admin/metrics/unknown-flags").await;
    let unknown = unknown.expect(200)["unknownFlags"].clone();
    assert_eq!(unknown.as_array().unwrap().len(), 1, "{unknown}");
    assert_eq!(unknown[0]["name"], "ghost");
    assert_eq!(unknown[0]["reports"][0]["appName"], "shop");
    assert_eq!(
        unknown[0]["reports"][0]["environments"][0]["environment"],
        "development"
    );
    assert!(unknown[0]["lastSeenAt"].is_string());

    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    server
        .send(
            "DELETE",
            "/api/admin/metrics/applications/shop",
            None,
            Some(&viewer),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "DELETE",
            "/api/admin/metrics/applications/shop",
            None,
            Some(ADMIN_TOKEN),
        )
        .await
        .expect(200);
    server
        .get("/api/admin/metrics/applications/shop")
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/metrics/applications/shop/overview")
        .await
        .expect_error(404, "NotFoundError");
}
