//! The publisher re-reads only what a revision's audit events name. Checked against the store: after each
//! kind of write, the client API the control plane serves from its delta-built snapshot must equal the
//! client document read afresh from the database, in both environments.

use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};
use vexil_control_plane::domain::client_document;
use vexil_control_plane::store::Store;

crate::on_sqlite_and_postgres!(the_served_document_follows_every_kind_of_write);

const A: &str = "/api/admin/projects/default/features/alpha";
const B: &str = "/api/admin/projects/default/features/beta";

/// Waits until the control plane serves the store's latest revision, then compares its client API in
/// `environment` with the document read from the store.
async fn assert_served_as_stored(server: &Server, store: &Store, secret: &str, environment: &str) {
    let revision = store.revision().await.expect("revision");
    let mut served = Value::Null;
    for _ in 0..200 {
        let response = server
            .client
            .get(format!("{}/api/client/features", server.base))
            .header("Authorization", secret)
            // Segments by id, as the store keeps them.
            .header("Unleash-Client-Spec", "5.1.0")
            .send()
            .await
            .expect("client API");
        let at: i64 = response
            .headers()
            .get("x-vexil-revision")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        served = response.json().await.expect("JSON");
        if at == revision {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mut conn = store.read().await.expect("connection");
    let stored_document = client_document::features_document(&mut conn, environment)
        .await
        .expect("document");
    let stored: Vec<Value> = stored_document
        .features
        .iter()
        .filter(|f| f.project == "default")
        .map(|f| serde_json::to_value(f).expect("serializes"))
        .collect();
    assert_eq!(
        served["features"],
        Value::Array(stored),
        "revision {revision}, {environment}"
    );
    let stored_segments: Vec<i64> = stored_document.segments.iter().map(|s| s.id).collect();
    let served_segments: Vec<i64> = served["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .map(|s| s["id"].as_i64().expect("segment id"))
        .collect();
    assert_eq!(served_segments, stored_segments);
}

async fn the_served_document_follows_every_kind_of_write(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let store = Store::connect(&db.url).await.expect("store");
    let development = crate::server::CLIENT_TOKEN.to_owned();
    // A token write (tokens are re-read) whose token must work at once.
    let production = server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "prod", "type": "client", "environment": "production", "projects": ["default"]}),
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let check = || async {
        assert_served_as_stored(&server, &store, &development, "development").await;
        assert_served_as_stored(&server, &store, &production, "production").await;
    };
    check().await;

    for name in ["alpha", "beta"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name, "description": "first"}),
            )
            .await
            .expect(201);
    }
    check().await;
    let strategy = server
        .post(
            &format!("{A}/environments/development/strategies"),
            json!({"name": "flexibleRollout", "parameters": {"rollout": "40", "stickiness": "default", "groupId": "alpha"},
                   "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        )
        .await
        .expect(200)["id"]
        .as_str()
        .expect("strategy id")
        .to_owned();
    let second = server
        .post(
            &format!("{A}/environments/development/strategies"),
            json!({"name": "userWithId", "parameters": {"userIds": "ann,bob"}}),
        )
        .await
        .expect(200)["id"]
        .as_str()
        .expect("strategy id")
        .to_owned();
    server
        .post_empty(&format!("{A}/environments/development/on"))
        .await
        .expect(200);
    check().await;
    server
        .put(
            &format!("{A}/environments/development/strategies/{strategy}"),
            json!({"name": "flexibleRollout", "parameters": {"rollout": "70", "stickiness": "default", "groupId": "alpha"}}),
        )
        .await
        .expect(200);
    check().await;
    server
        .post(
            &format!("{A}/environments/development/strategies/set-sort-order"),
            json!([{"id": second, "sortOrder": 0}, {"id": strategy, "sortOrder": 1}]),
        )
        .await
        .expect(200);
    check().await;
    server
        .put(
            &format!("{B}/environments/production/variants"),
            json!([{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}]),
        )
        .await
        .expect(200);
    check().await;
    server
        .post_empty(&format!("{B}/environments/production/on"))
        .await
        .expect(200);
    check().await;
    server
        .patch(
            B,
            json!([{"op": "replace", "path": "/description", "value": "second"}]),
        )
        .await
        .expect(200);
    check().await;
    // A segment write re-reads everything; a flag then uses it.
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "beta-testers", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["ann"]}]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .expect("segment id");
    server
        .post(
            &format!("{B}/environments/production/strategies"),
            json!({"name": "default", "segments": [segment]}),
        )
        .await
        .expect(200);
    check().await;
    server
        .delete(&format!("{A}/environments/development/strategies/{second}"))
        .await
        .expect(200);
    check().await;
    server.delete(B).await.expect(202);
    check().await;
    server
        .post_empty("/api/admin/archive/revive/beta")
        .await
        .expect(200);
    check().await;
    server
        .post_empty(&format!("{A}/environments/development/off"))
        .await
        .expect(200);
    check().await;
}
