//! Segments, strategy definitions, context fields and flag-level variants over HTTP, on SQLite and on
//! Postgres: bodies, statuses, events, and what reaches the client document the engine evaluates.

use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::{json, Value};
use vexil_control_plane::domain::client_document;
use vexil_control_plane::store::Store;
use vexil_shared::{Context, Snapshot};

crate::on_sqlite_and_postgres!(
    segments_are_used_by_strategies_and_evaluated,
    strategy_definitions_deprecation_and_custom_strategies,
    context_fields_with_built_ins,
    flag_variants_are_normalised_and_evaluated,
);

const FLAG: &str = "/api/admin/projects/default/features/beta";
const DEV: &str = "/api/admin/projects/default/features/beta/environments/development";

/// The types of the events recorded so far, oldest first.
async fn event_types(server: &Server) -> Vec<String> {
    let events = server
        .get("/api/admin/events?limit=1000")
        .await
        .expect(200)
        .clone();
    let mut types: Vec<String> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    types.reverse();
    types
}

async fn event_count(server: &Server) -> i64 {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap()
}

fn context(json: Value) -> Context {
    serde_json::from_value(json).unwrap()
}

async fn segments_are_used_by_strategies_and_evaluated(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let pro = json!({"contextName": "plan", "operator": "IN", "values": ["pro", "team"]});
    let created = server
        .post(
            "/api/admin/segments",
            json!({"name": "paying", "description": "Paying plans", "constraints": [pro]}),
        )
        .await
        .expect(201)
        .clone();
    let id = created["id"].as_i64().expect("integer id");
    assert!(id >= 1);
    assert_timestamp(&created["createdAt"]);
    assert_eq!(
        created,
        json!({
            "id": id, "name": "paying", "description": "Paying plans",
            "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro", "team"],
                             "caseInsensitive": false, "inverted": false}],
            "usedInFeatures": 0, "usedInProjects": 0, "project": null,
            "createdBy": "init-admin-token-1", "createdAt": created["createdAt"]
        })
    );
    server
        .post(
            "/api/admin/segments",
            json!({"name": "paying", "constraints": []}),
        )
        .await
        .expect_error(409, "NameExistsError");
    let message = server
        .post(
            "/api/admin/segments",
            json!({"name": "bad", "constraints": [{"contextName": "plan", "operator": "LIKE"}]}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("constraints[0].operator"), "{message}");
    server
        .post(
            "/api/admin/segments",
            json!({"name": "x", "project": "nowhere", "constraints": []}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .get("/api/admin/segments/abc")
        .await
        .expect_error(400, "ValidationError");
    server
        .get("/api/admin/segments/999")
        .await
        .expect_error(404, "NotFoundError");

    // A project's segment.
    server
        .post(
            "/api/admin/projects",
            json!({"id": "checkout", "name": "Checkout"}),
        )
        .await
        .expect(201);
    let scoped = server
        .post(
            "/api/admin/segments",
            json!({"name": "checkout-staff", "project": "checkout", "constraints": []}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let message = server
        .delete("/api/admin/projects/checkout")
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("segments"), "{message}");

    // A flag whose strategy uses the global segment.
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "beta"}),
        )
        .await
        .expect(201);
    let message = server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "default", "segments": [999]}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("segment 999 does not exist"), "{message}");
    let message = server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "default", "segments": [scoped]}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("project checkout"), "{message}");
    let strategy = server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "userWithId", "parameters": {"userIds": "ann,bob"}, "segments": [id]}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(strategy["segments"], json!([id]));
    let strategy_id = strategy["id"].as_str().unwrap().to_owned();
    server.post_empty(&format!("{DEV}/on")).await.expect(200);

    let listed = server.get("/api/admin/segments").await.expect(200).clone();
    let paying = listed["segments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap()
        .clone();
    assert_eq!(paying["usedInFeatures"], 1);
    assert_eq!(paying["usedInProjects"], 1);
    assert_eq!(listed["segments"].as_array().unwrap().len(), 2);

    // In use: no delete, no move into another project.
    let message = server
        .delete(&format!("/api/admin/segments/{id}"))
        .await
        .expect_error(409, "NameExistsError");
    assert!(message.contains("beta"), "{message}");
    server
        .put(
            &format!("/api/admin/segments/{id}"),
            json!({"name": "paying", "project": "checkout", "constraints": [pro]}),
        )
        .await
        .expect_error(400, "ValidationError");

    // The client document carries the segment; the engine evaluates it.
    let store = Store::connect(&db.url).await.unwrap();
    let evaluate = |plan: &'static str, user: &'static str| {
        let store = store.clone();
        async move {
            let mut conn = store.read().await.unwrap();
            let document = client_document::features_document(&mut conn, "development")
                .await
                .unwrap();
            assert_eq!(document.segments.len(), 2);
            assert_eq!(document.features[0].strategies[0].segments, vec![id]);
            Snapshot::compile(&document).is_enabled(
                "beta",
                &context(json!({"userId": user, "properties": {"plan": plan}})),
            )
        }
    };
    assert!(evaluate("pro", "ann").await);
    assert!(
        !evaluate("free", "ann").await,
        "the segment's constraint fails"
    );
    assert!(!evaluate("pro", "carol").await, "the strategy's rule fails");

    // An update reaches evaluation.
    server
        .put(
            &format!("/api/admin/segments/{id}"),
            json!({"name": "paying", "description": "Any plan", "constraints": [
                {"contextName": "plan", "operator": "IN", "values": ["pro", "team", "free"]}]}),
        )
        .await
        .expect(204);
    let updated = server
        .get(&format!("/api/admin/segments/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["description"], "Any plan");
    assert_eq!(
        updated["constraints"][0]["values"],
        json!(["pro", "team", "free"])
    );
    assert!(evaluate("free", "ann").await);

    // Unused again: delete.
    server
        .delete(&format!("{DEV}/strategies/{strategy_id}"))
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/segments/{id}"))
        .await
        .expect(204);
    server
        .get(&format!("/api/admin/segments/{id}"))
        .await
        .expect_error(404, "NotFoundError");
    let types = event_types(&server).await;
    for expected in ["segment-created", "segment-updated", "segment-deleted"] {
        assert!(types.iter().any(|t| t == expected), "{expected}: {types:?}");
    }
    assert_eq!(types.iter().filter(|t| *t == "segment-created").count(), 2);
}

async fn strategy_definitions_deprecation_and_custom_strategies(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let listed = server
        .get("/api/admin/strategies")
        .await
        .expect(200)
        .clone();
    assert_eq!(listed["version"], 1);
    let names: Vec<&str> = listed["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for built_in in [
        "default",
        "flexibleRollout",
        "userWithId",
        "gradualRolloutUserId",
        "gradualRolloutSessionId",
        "gradualRolloutRandom",
        "remoteAddress",
        "applicationHostname",
    ] {
        assert!(names.contains(&built_in), "{built_in} in {names:?}");
    }
    let rollout = server
        .get("/api/admin/strategies/flexibleRollout")
        .await
        .expect(200)
        .clone();
    assert_eq!(rollout["editable"], false);
    assert_eq!(rollout["deprecated"], false);
    assert_eq!(rollout["parameters"][0]["name"], "rollout");
    server
        .get("/api/admin/strategies/nope")
        .await
        .expect_error(404, "NotFoundError");

    // A custom definition.
    let created = server
        .post(
            "/api/admin/strategies",
            json!({"name": "region", "title": "Region", "description": "By region",
                   "parameters": [{"name": "regions", "type": "list", "required": true}]}),
        )
        .await
        .expect(201)
        .clone();
    assert_eq!(
        created,
        json!({"name": "region", "displayName": "Region", "description": "By region", "editable": true,
               "deprecated": false,
               "parameters": [{"name": "regions", "type": "list", "description": "", "required": true}]})
    );
    server
        .post(
            "/api/admin/strategies",
            json!({"name": "region", "parameters": []}),
        )
        .await
        .expect_error(409, "NameExistsError");
    server
        .post(
            "/api/admin/strategies",
            json!({"name": "odd", "parameters": [{"name": "x", "type": "colour"}]}),
        )
        .await
        .expect_error(400, "ValidationError");
    let updated = server
        .put(
            "/api/admin/strategies/region",
            json!({"description": "By sales region", "parameters": [{"name": "regions", "type": "list"}]}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["description"], "By sales region");
    assert_eq!(updated["displayName"], "Region");
    server
        .put("/api/admin/strategies/default", json!({"parameters": []}))
        .await
        .expect_error(400, "ValidationError");
    server
        .delete("/api/admin/strategies/default")
        .await
        .expect_error(400, "ValidationError");

    // Flags may use custom strategies, not undefined ones.
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "beta"}),
        )
        .await
        .expect(201);
    let message = server
        .post(&format!("{DEV}/strategies"), json!({"name": "nope"}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("nope"), "{message}");
    let custom = server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "region", "parameters": {"regions": "eu"}}),
        )
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .delete("/api/admin/strategies/region")
        .await
        .expect_error(400, "ValidationError");

    // Deprecate, still usable; reactivate twice; unknown → 404.
    server
        .post_empty("/api/admin/strategies/flexibleRollout/deprecate")
        .await
        .expect(200);
    let rollout = server
        .get("/api/admin/strategies/flexibleRollout")
        .await
        .expect(200)
        .clone();
    assert_eq!(rollout["deprecated"], true);
    server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "flexibleRollout"}),
        )
        .await
        .expect(200);
    server
        .post_empty("/api/admin/strategies/flexibleRollout/reactivate")
        .await
        .expect(200);
    let before = event_count(&server).await;
    server
        .post_empty("/api/admin/strategies/flexibleRollout/reactivate")
        .await
        .expect(200);
    assert_eq!(
        event_count(&server).await,
        before,
        "reactivating an active strategy changes nothing"
    );
    assert_eq!(
        server
            .get("/api/admin/strategies/flexibleRollout")
            .await
            .expect(200)["deprecated"],
        false
    );
    server
        .post_empty("/api/admin/strategies/nope/reactivate")
        .await
        .expect_error(404, "NotFoundError");
    server
        .post_empty("/api/admin/strategies/nope/deprecate")
        .await
        .expect_error(404, "NotFoundError");

    // Unused: delete.
    server
        .delete(&format!("{DEV}/strategies/{custom}"))
        .await
        .expect(200);
    server
        .delete("/api/admin/strategies/region")
        .await
        .expect(200);
    server
        .get("/api/admin/strategies/region")
        .await
        .expect_error(404, "NotFoundError");
    let types = event_types(&server).await;
    let definition_events: Vec<&String> = types
        .iter()
        .filter(|t| t.starts_with("strategy-") && *t != "strategy-order-changed")
        .collect();
    assert_eq!(
        definition_events,
        [
            "strategy-created",
            "strategy-updated",
            "strategy-deprecated",
            "strategy-reactivated",
            "strategy-deleted"
        ]
    );
}

async fn context_fields_with_built_ins(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let fields = server.get("/api/admin/context").await.expect(200).clone();
    let names: Vec<&str> = fields
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    for built_in in [
        "appName",
        "currentTime",
        "environment",
        "sessionId",
        "userId",
        "remoteAddress",
    ] {
        assert!(names.contains(&built_in), "{built_in} in {names:?}");
    }
    let user_id = fields
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "userId")
        .unwrap();
    assert_eq!(user_id["stickiness"], true);

    let created = server
        .post(
            "/api/admin/context",
            json!({"name": "plan", "description": "Plan", "stickiness": true,
                   "legalValues": [{"value": "pro", "description": "Paying"}, {"value": "free"}]}),
        )
        .await
        .expect(201)
        .clone();
    assert_timestamp(&created["createdAt"]);
    assert_eq!(
        created,
        json!({"name": "plan", "description": "Plan", "stickiness": true, "sortOrder": 6,
               "legalValues": [{"value": "pro", "description": "Paying"}, {"value": "free"}],
               "createdAt": created["createdAt"]})
    );
    server
        .post("/api/admin/context", json!({"name": "plan"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post("/api/admin/context", json!({"name": "a b"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/context",
            json!({"name": "tier", "legalValues": [{"value": "x"}, {"value": "x"}]}),
        )
        .await
        .expect_error(400, "ValidationError");
    let updated = server
        .put(
            "/api/admin/context/plan",
            json!({"description": "Billing plan", "stickiness": false}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["description"], "Billing plan");
    assert_eq!(updated["stickiness"], false);
    assert_eq!(
        updated["legalValues"].as_array().unwrap().len(),
        2,
        "absent: kept"
    );
    server
        .put(
            "/api/admin/context/userId",
            json!({"description": "The user"}),
        )
        .await
        .expect(200);
    server
        .delete("/api/admin/context/userId")
        .await
        .expect_error(400, "ValidationError");
    server.delete("/api/admin/context/plan").await.expect(200);
    server
        .get("/api/admin/context/plan")
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete("/api/admin/context/plan")
        .await
        .expect_error(404, "NotFoundError");
    let types = event_types(&server).await;
    let field_events: Vec<&String> = types
        .iter()
        .filter(|t| t.starts_with("context-field-"))
        .collect();
    assert_eq!(
        field_events,
        [
            "context-field-created",
            "context-field-updated",
            "context-field-updated",
            "context-field-deleted"
        ]
    );
}

async fn flag_variants_are_normalised_and_evaluated(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "beta"}),
        )
        .await
        .expect(201);
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
    let empty = server
        .get(&format!("{DEV}/variants"))
        .await
        .expect(200)
        .clone();
    assert_eq!(empty, json!({"version": 1, "variants": []}));

    let body = server
        .put(
            &format!("{DEV}/variants"),
            json!([
                {"name": "blue", "weight": 0},
                {"name": "amber", "weightType": "fix", "weight": 200, "stickiness": "userId",
                 "payload": {"type": "json", "value": "{\"a\":1}"},
                 "overrides": [{"contextName": "userId", "values": ["ann"]}]},
                {"name": "cyan", "weight": 5}
            ]),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(
        body,
        json!({"version": 1, "variants": [
            {"name": "amber", "weight": 200, "weightType": "fix", "stickiness": "userId",
             "payload": {"type": "json", "value": "{\"a\":1}"},
             "overrides": [{"contextName": "userId", "values": ["ann"]}]},
            {"name": "blue", "weight": 400, "weightType": "variable", "stickiness": "default", "overrides": []},
            {"name": "cyan", "weight": 400, "weightType": "variable", "stickiness": "default", "overrides": []}
        ]})
    );
    assert_eq!(
        server.get(&format!("{DEV}/variants")).await.expect(200),
        &body
    );
    let flag = server.get(FLAG).await.expect(200).clone();
    let development = flag["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "development")
        .unwrap();
    assert_eq!(development["variants"], body["variants"]);

    // Same again: no event. Bad weights: 400 and nothing changes.
    let before = event_count(&server).await;
    server
        .put(&format!("{DEV}/variants"), body["variants"].clone())
        .await
        .expect(200);
    assert_eq!(event_count(&server).await, before);
    for bad in [
        json!([{"name": "a", "weight": 600, "weightType": "fix"}, {"name": "b", "weight": 600, "weightType": "fix"}]),
        json!([{"name": "a", "weight": 1001, "weightType": "fix"}]),
        json!([{"name": "a"}, {"name": "a"}]),
        json!([{"name": "a", "weight": 500, "weightType": "fix"}]),
        json!([{"name": "a", "overrides": [{"contextName": "a b", "values": []}]}]),
    ] {
        server
            .put(&format!("{DEV}/variants"), bad.clone())
            .await
            .expect_error(400, "ValidationError");
    }
    assert_eq!(event_count(&server).await, before);
    assert_eq!(
        server.get(&format!("{DEV}/variants")).await.expect(200),
        &body
    );

    // PATCH: drop cyan, blue takes what amber leaves.
    let patched = server
        .patch(
            &format!("{DEV}/variants"),
            json!([{"op": "remove", "path": "/2"}]),
        )
        .await
        .expect(200)
        .clone();
    let weights: Vec<(String, i64)> = patched["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["weight"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        weights,
        [("amber".to_owned(), 200), ("blue".to_owned(), 800)]
    );
    let types = event_types(&server).await;
    assert_eq!(
        types
            .iter()
            .filter(|t| *t == "feature-environment-variants-updated")
            .count(),
        2
    );
    // Strategy variants follow the same rules.
    server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "default", "variants": [{"name": "a", "weight": 1001, "weightType": "fix"}]}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .put(
            "/api/admin/projects/default/features/nope/environments/development/variants",
            json!([]),
        )
        .await
        .expect_error(404, "NotFoundError");

    // The client document carries them: ann is forced to amber; others get amber or blue.
    let store = Store::connect(&db.url).await.unwrap();
    let mut conn = store.read().await.unwrap();
    let document = client_document::features_document(&mut conn, "development")
        .await
        .unwrap();
    assert_eq!(document.features[0].variants.len(), 2);
    assert_eq!(document.features[0].variants[0].overrides.len(), 1);
    let snapshot = Snapshot::compile(&document);
    let ann = snapshot.variant("beta", &context(json!({"userId": "ann"})));
    assert_eq!(ann.name, "amber");
    assert_eq!(ann.payload.unwrap().value, "{\"a\":1}");
    let mut seen = std::collections::BTreeSet::new();
    for n in 0..100 {
        let user = format!("user-{n}");
        seen.insert(
            snapshot
                .variant("beta", &context(json!({"userId": user})))
                .name
                .to_owned(),
        );
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["amber", "blue"]);
}
