//! What an Unleash Edge in front of Vexil calls besides the client API: `POST /edge/validate` (the tokens it
//! is shown, with their scopes) and `POST /api/client/metrics/bulk` with Unleash Edge's body.

use serde_json::json;

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN, EDGE_TOKEN, FRONTEND_TOKEN};

#[tokio::test]
async fn edge_validate_lists_the_client_and_frontend_tokens_it_is_shown() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let body = json!({"tokens": [CLIENT_TOKEN, FRONTEND_TOKEN, ADMIN_TOKEN, EDGE_TOKEN, "default:development.bogus"]});
    let answer = server
        .send("POST", "/edge/validate", Some(body), None)
        .await
        .expect(200)
        .clone();
    assert_eq!(
        answer,
        json!({"tokens": [
            {"token": CLIENT_TOKEN, "type": "client", "environment": "development", "projects": ["default"]},
            {"token": FRONTEND_TOKEN, "type": "frontend", "environment": "development", "projects": ["default"]},
        ]})
    );
    server
        .send("POST", "/edge/validate", Some(json!({"tokens": "x"})), None)
        .await
        .expect_error(400, "ValidationError");
}

#[tokio::test]
async fn unleash_edges_bulk_metrics_body_is_accepted() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let body = json!({
        "applications": [{
            "appName": "checkout", "instanceId": "pod-1", "environment": "development",
            "connectVia": [{"appName": "unleash-edge", "instanceId": "edge-1"}],
            "sdkVersion": "unleash-client-node:6.1.0", "interval": 15000,
            "started": "2026-01-01T00:00:00.000Z", "strategies": ["default"], "projects": ["default"]
        }],
        "metrics": [{
            "featureName": "f", "appName": "checkout", "environment": "development",
            "timestamp": "2026-01-01T00:00:00.000Z", "yes": 3, "no": 1, "variants": {"red": 2}
        }],
        "seenTokens": []
    });
    server
        .send(
            "POST",
            "/api/client/metrics/bulk",
            Some(body),
            Some(CLIENT_TOKEN),
        )
        .await
        .expect(202);
}
