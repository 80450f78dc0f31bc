//! The publisher re-reads only what a revision's audit events name. Checked against the store: after each
//! kind of write, the client API the control plane serves from its delta-built snapshot must equal the
//! client document read afresh from the database, in both environments.

use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use vexil_control_plane::domain::client_document;
use vexil_control_plane::store::Store;

crate::on_sqlite_and_postgres!(the_served_document_follows_every_kind_of_write);

const A: &str = "/api/admin/projects/default/features/alpha";
const B: &str = "/api/admin/projects/default/features/beta";

/// Waits until the control plane serves the store's latest revision, then compares its client API in
/// `environment` with the document read from the store (whose tags SDKs do not receive, but which the
/// `?tag=` filter must find).
async fn assert_served_as_stored(server: &Server, store: &Store, secret: &str, environment: &str) {
    let revision = store.revision().await.expect("revision");
    let served = served_at(server, secret, "", revision).await;
    let mut conn = store.read().await.expect("connection");
    let stored_document = client_document::features_document(&mut conn, environment)
        .await
        .expect("document");
    let default_project = || {
        stored_document
            .features
            .iter()
            .filter(|f| f.project == "default")
    };
    let stored: Vec<Value> = default_project()
        .map(|f| {
            let mut without_tags = f.clone();
            without_tags.tags.clear();
            serde_json::to_value(without_tags).expect("serializes")
        })
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
    let tags: BTreeSet<_> = default_project().flat_map(|f| f.tags.iter()).collect();
    for tag in tags {
        let query = format!("?tag={}:{}", tag.tag_type, tag.value);
        let served = served_at(server, secret, &query, revision).await;
        let served_names: Vec<&str> = served["features"]
            .as_array()
            .expect("features")
            .iter()
            .map(|f| f["name"].as_str().expect("name"))
            .collect();
        let stored_names: Vec<&str> = default_project()
            .filter(|f| f.tags.contains(tag))
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(served_names, stored_names, "{query}, {environment}");
    }
}

/// The client API's answer to `query` once it serves `revision`.
async fn served_at(server: &Server, secret: &str, query: &str, revision: i64) -> Value {
    let mut served = Value::Null;
    for _ in 0..200 {
        let response = server
            .client
            .get(format!("{}/api/client/features{query}", server.base))
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
    served
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
    // Tags and dependencies are flag events; deleting a tag or a tag type re-reads everything.
    server
        .post(
            "/api/admin/features/alpha/tags",
            json!({"type": "simple", "value": "checkout"}),
        )
        .await
        .expect(201);
    server
        .put(
            "/api/admin/features/beta/tags",
            json!({"addedTags": [{"type": "simple", "value": "checkout"}, {"type": "simple", "value": "old"}],
                   "removedTags": []}),
        )
        .await
        .expect(200);
    check().await;
    server
        .post(
            &format!("{B}/dependencies"),
            json!({"feature": "alpha", "variants": ["blue"]}),
        )
        .await
        .expect(200);
    check().await;
    server
        .delete("/api/admin/features/alpha/tags/simple/checkout")
        .await
        .expect(200);
    check().await;
    server
        .delete("/api/admin/tags/simple/old")
        .await
        .expect(200);
    check().await;
    server
        .delete(&format!("{B}/dependencies/alpha"))
        .await
        .expect(200);
    check().await;
    server
        .delete("/api/admin/tag-types/simple")
        .await
        .expect(200);
    check().await;
}
