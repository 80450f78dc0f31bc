//! What an Unleash Edge in front of Vexil calls besides the client API: `POST /edge/validate` (the tokens it
//! is shown, with their scopes), `POST /api/client/metrics/bulk` with Unleash Edge's body, and
//! `POST /api/client/metrics/edge` (its instance data: kept, listed by the admin API and the Edges page).

use serde_json::{json, Value};

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN, EDGE_TOKEN, FRONTEND_TOKEN};
use crate::ui_browser::Browser;

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

crate::on_sqlite_and_postgres!(unleash_edge_instance_data_is_kept_and_shown);

/// An instance's report as Unleash Edge 20.x serializes its `EdgeInstanceData` (unleash-edge-types,
/// `metrics/instance_data.rs`): `region` and `processMetrics` may be null, the consumption fields are sent.
fn instance_data(identifier: &str, requests_200: u64, connected: Vec<Value>) -> Value {
    let latency = json!({"avg": 1.5, "count": 40.0, "p99": 4.9});
    json!({
        "identifier": identifier,
        "appName": "unleash-edge-eu",
        "hosting": "self-hosted",
        "region": null,
        "edgeVersion": "20.4.1",
        "processMetrics": {"cpuUsage": 1.25, "memoryUsage": 23456789.0},
        "started": "2026-11-30T10:00:00.123456789Z",
        "traffic": {
            "cachedResponses": {},
            "get": {"/api/client/features": latency, "/api/frontend": latency},
            "post": {"/api/client/metrics": latency},
            "accessDenied": {}
        },
        "latencyUpstream": {"features": latency, "metrics": latency, "edge": latency},
        "requestsSinceLastReport": {
            "/api/client/features": {"requests200": requests_200, "requests304": 30},
            "/api/frontend": {"requests200": 5, "requests304": 0}
        },
        "connectedStreamingClients": 0,
        "connectedEdges": connected,
        "connectionConsumptionSinceLastReport": {
            "features": [{"meteredGroup": "default", "dataPoints": [{"interval": [0, 15000], "requests": 42}]}],
            "metrics": [{"meteredGroup": "default", "dataPoints": []}]
        },
        "requestConsumptionSinceLastReport": [{"meteredGroup": "default", "requests": 5}],
        "edgeApiKeyRevisionIds": [{
            "environment": "development", "projects": ["default"], "revisionId": 1,
            "lastUpdated": "2026-11-30T10:00:15.500Z"
        }]
    })
}

async fn unleash_edge_instance_data_is_kept_and_shown(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let behind = instance_data("01JDCHAINED0000000000000B", 7, vec![]);
    let front = "01JDFRONT00000000000000000";
    let post = |body: Value, token: Option<&'static str>| {
        let server = &server;
        async move {
            server
                .send("POST", "/api/client/metrics/edge", Some(body), token)
                .await
        }
    };
    let answer = post(
        instance_data(front, 12, vec![behind.clone()]),
        Some(CLIENT_TOKEN),
    )
    .await;
    assert_eq!(answer.status, 202, "{:?}", answer.body);
    // The next report replaces the previous one.
    let answer = post(instance_data(front, 99, vec![behind]), Some(CLIENT_TOKEN)).await;
    assert_eq!(answer.status, 202, "{:?}", answer.body);

    let edges = server
        .get("/api/admin/metrics/edges")
        .await
        .expect(200)
        .clone();
    let instances = edges["unleashEdges"].as_array().unwrap();
    assert_eq!(instances.len(), 2, "{edges}");
    let find = |id: &str| {
        instances
            .iter()
            .find(|i| i["identifier"] == id)
            .unwrap_or_else(|| panic!("{id} in {edges}"))
    };
    let kept = find(front);
    assert_eq!(kept["appName"], "unleash-edge-eu");
    assert_eq!(kept["edgeVersion"], "20.4.1");
    assert_eq!(kept["environment"], "development");
    assert_eq!(kept["via"], Value::Null);
    assert_eq!(kept["started"], "2026-11-30T10:00:00.123Z");
    assert_eq!(
        kept["requestsSinceLastReport"]["/api/client/features"],
        json!({"requests200": 99, "requests304": 30})
    );
    assert_eq!(kept["traffic"]["get"]["/api/frontend"]["count"], 40.0);
    assert_eq!(kept["processMetrics"]["memoryUsage"], 23456789.0);
    assert_eq!(kept["revisions"][0]["revisionId"], 1);
    crate::server::assert_timestamp(&kept["lastReport"]);
    let chained = find("01JDCHAINED0000000000000B");
    assert_eq!(chained["via"], front);

    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await
        .expect(303);
    let page = browser.page("/edges").await;
    for fragment in [
        "No edge has reported yet.",
        "<h2 id=\"unleash-edges\">Unleash Edge</h2>",
        "unleash-edge-eu<br><code>01JDFRONT00000000000000000</code>",
        "<td>20.4.1</td>",
        // 99 + 30 + 5 + 0.
        "<td>134<br>",
        "through <code>01JDFRONT00000000000000000</code>, development",
        "itself, development",
    ] {
        assert!(page.contains(fragment), "{fragment} in {page}");
    }

    // Bad bodies: 400 naming the field, nothing kept.
    let mut missing = instance_data("01JDBAD0000000000000000000", 1, vec![]);
    missing.as_object_mut().unwrap().remove("identifier");
    let mut negative = instance_data("01JDBAD0000000000000000000", 1, vec![]);
    negative["latencyUpstream"]["edge"]["p99"] = json!(-1.0);
    let mut not_a_date = instance_data("01JDBAD0000000000000000000", 1, vec![]);
    not_a_date["started"] = json!("yesterday");
    let mut bad_chained = instance_data("x", 1, vec![]);
    bad_chained["appName"] = json!("");
    let in_chain = instance_data("01JDBAD0000000000000000000", 1, vec![bad_chained]);
    for (body, field) in [
        (missing, "identifier"),
        (negative, "latencyUpstream.edge.p99"),
        (not_a_date, "started"),
        (in_chain, "connectedEdges[0].appName"),
        (json!([]), ""),
    ] {
        let answer = post(body, Some(CLIENT_TOKEN)).await;
        let message = answer.expect_error(400, "ValidationError");
        assert!(message.contains(field), "{field} in {message}");
    }
    post(instance_data("01JDBAD0000000000000000000", 1, vec![]), None)
        .await
        .expect_error(401, "AuthenticationRequired");
    post(
        instance_data("01JDBAD0000000000000000000", 1, vec![]),
        Some(FRONTEND_TOKEN),
    )
    .await
    .expect_error(403, "NoAccessError");
    let edges = server
        .get("/api/admin/metrics/edges")
        .await
        .expect(200)
        .clone();
    assert_eq!(
        edges["unleashEdges"].as_array().unwrap().len(),
        2,
        "{edges}"
    );
}
