//! Signal endpoints through the real binary, on SQLite and Postgres: their CRUD and statuses, tokens shown
//! once and stored hashed, the receiver (401 without the right token, 403 disabled, 400 not JSON, 413 too
//! large), the latest signals, the limits (400 past them, reported in ui-config) and the events.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{assert_timestamp, Answer, Server};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    signal_endpoints_tokens_and_the_receiver,
    signal_endpoint_limits_are_enforced_and_reported,
);

pub(crate) const ENDPOINTS: &str = "/api/admin/signal-endpoints";

/// Posts `body` to the receiver of endpoint `name` with `token` (none: no `Authorization`).
pub(crate) async fn signal(
    server: &Server,
    name: &str,
    token: Option<&str>,
    body: Value,
) -> Answer {
    let bearer = token.map(|token| format!("Bearer {token}"));
    let headers: Vec<(&str, &str)> = bearer
        .as_deref()
        .map(|value| ("Authorization", value))
        .into_iter()
        .collect();
    server
        .send_with_headers(
            "POST",
            &format!("/api/signal-endpoint/{name}"),
            Some(body),
            &headers,
        )
        .await
}

/// A new endpoint and a token of it: `(endpoint id, secret)`.
pub(crate) async fn endpoint_with_token(server: &Server, name: &str) -> (i64, String) {
    let created = server.post(ENDPOINTS, json!({"name": name})).await;
    let id = created.expect(201)["id"].as_i64().unwrap();
    let token = server
        .post(
            &format!("{ENDPOINTS}/{id}/tokens"),
            json!({"name": "alertmanager"}),
        )
        .await;
    let secret = token.expect(201)["token"].as_str().unwrap().to_owned();
    (id, secret)
}

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn stored_token_hashes(db: &TestDb) -> Vec<String> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    sqlx::query_scalar("SELECT token_hash FROM signal_endpoint_tokens ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap()
}

async fn signal_endpoints_tokens_and_the_receiver(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let created = server.post(ENDPOINTS, json!({"name": "alerts"})).await;
    let endpoint = created.expect(201).clone();
    let id = endpoint["id"].as_i64().unwrap();
    assert_eq!(endpoint["name"], "alerts");
    assert_eq!(endpoint["enabled"], true);
    assert_eq!(endpoint["tokens"], json!([]));
    assert_eq!(endpoint["description"], Value::Null);
    assert_eq!(
        endpoint["url"],
        format!("{}/api/signal-endpoint/alerts", server.base)
    );
    assert_timestamp(&endpoint["createdAt"]);
    assert_eq!(endpoint["createdByUserId"], -1337);
    server
        .post(ENDPOINTS, json!({"name": "alerts"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post(ENDPOINTS, json!({"name": "a b"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(ENDPOINTS, json!({}))
        .await
        .expect_error(400, "ValidationError");

    // A token: its secret in the answer that created it, never again; only its SHA-256 is stored.
    let path = format!("{ENDPOINTS}/{id}/tokens");
    let token = server
        .post(&path, json!({"name": "am"}))
        .await
        .expect(201)
        .clone();
    let secret = token["token"].as_str().unwrap().to_owned();
    assert!(secret.len() >= 32, "{secret}");
    assert_eq!(token["name"], "am");
    assert_eq!(token["signalEndpointId"], id);
    let token_id = token["id"].as_i64().unwrap();
    let listed = server.get(&path).await.expect(200).clone();
    assert_eq!(listed["signalEndpointTokens"][0]["name"], "am");
    assert!(
        listed["signalEndpointTokens"][0].get("token").is_none(),
        "{listed}"
    );
    let all = server.get(ENDPOINTS).await.expect(200).clone();
    assert_eq!(all["signalEndpoints"][0]["tokens"][0]["id"], token_id);
    assert!(!all.to_string().contains(&secret));
    assert_eq!(
        stored_token_hashes(&db).await,
        [vexil_shared::token::sha256_hex(&secret)]
    );

    // The receiver.
    let alert = json!({"status": "firing", "alerts": [{"labels": {"severity": "critical"}}]});
    signal(&server, "alerts", Some(&secret), alert.clone())
        .await
        .expect(200);
    signal(&server, "alerts", Some("not-the-token"), alert.clone())
        .await
        .expect_error(401, "AuthenticationRequired");
    signal(&server, "alerts", None, alert.clone())
        .await
        .expect_error(401, "AuthenticationRequired");
    signal(&server, "nowhere", Some(&secret), alert.clone())
        .await
        .expect_error(404, "NotFoundError");
    let not_json = server
        .send_with_headers(
            "POST",
            "/api/signal-endpoint/alerts",
            None,
            &[
                ("Authorization", &format!("Bearer {secret}")),
                ("Content-Type", "application/json"),
            ],
        )
        .await;
    not_json.expect_error(400, "ValidationError");
    let large = json!({"text": "x".repeat(70 * 1024)});
    signal(&server, "alerts", Some(&secret), large)
        .await
        .expect_error(413, "PayloadTooLargeError");
    signal(&server, "alerts", Some(&secret), json!([1, "two"]))
        .await
        .expect(200);

    // The latest signals, the newest first.
    let signals = server.get(&format!("{ENDPOINTS}/{id}/signals")).await;
    let signals = signals.expect(200)["signalEndpointSignals"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(signals.len(), 2, "{signals:?}");
    assert_eq!(signals[0]["payload"], json!([1, "two"]));
    assert_eq!(signals[1]["payload"], alert);
    assert_eq!(signals[1]["source"], "signal-endpoint");
    assert_eq!(signals[1]["sourceId"], id);
    assert_eq!(signals[1]["tokenName"], "am");
    assert_timestamp(&signals[1]["createdAt"]);

    // Disabled, it refuses; renamed, the receiver follows the name.
    let updated = server
        .put(
            &format!("{ENDPOINTS}/{id}"),
            json!({"name": "alerts", "enabled": false, "description": " Alertmanager pages "}),
        )
        .await;
    assert_eq!(updated.expect(200)["enabled"], false);
    assert_eq!(updated.expect(200)["description"], "Alertmanager pages");
    server
        .put(
            &format!("{ENDPOINTS}/{id}"),
            json!({"name": "alerts", "description": "x".repeat(1001)}),
        )
        .await
        .expect_error(400, "ValidationError");
    signal(&server, "alerts", Some(&secret), alert.clone())
        .await
        .expect_error(403, "NoAccessError");
    server
        .put(
            &format!("{ENDPOINTS}/{id}"),
            json!({"name": "paging", "enabled": true}),
        )
        .await
        .expect(200);
    signal(&server, "paging", Some(&secret), alert.clone())
        .await
        .expect(200);
    let listed = server.get(ENDPOINTS).await.expect(200)["signalEndpoints"][0].clone();
    assert_eq!(
        listed["description"], "Alertmanager pages",
        "kept when absent"
    );
    assert_eq!(
        listed["url"],
        format!("{}/api/signal-endpoint/paging", server.base)
    );

    // A token renamed, then deleted: it stops working at once.
    let token_path = format!("{path}/{token_id}");
    server
        .put(&token_path, json!({"name": "pager"}))
        .await
        .expect(200);
    assert_eq!(
        server.get(&path).await.expect(200)["signalEndpointTokens"][0]["name"],
        "pager"
    );
    server.delete(&token_path).await.expect(200);
    server
        .delete(&token_path)
        .await
        .expect_error(404, "NotFoundError");
    signal(&server, "paging", Some(&secret), alert.clone())
        .await
        .expect_error(401, "AuthenticationRequired");

    // Admins only, as in Unleash.
    let (_, editor) = user_with_pat(&server, "eddie", "Editor").await;
    server
        .send("GET", ENDPOINTS, None, Some(&editor))
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "POST",
            ENDPOINTS,
            Some(json!({"name": "mine"})),
            Some(&editor),
        )
        .await
        .expect_error(403, "NoAccessError");

    server
        .delete(&format!("{ENDPOINTS}/{id}"))
        .await
        .expect(200);
    server
        .get(&format!("{ENDPOINTS}/{id}/signals"))
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(
        server.get(ENDPOINTS).await.expect(200)["signalEndpoints"],
        json!([])
    );

    // The events, none carrying a secret or a hash.
    for event_type in [
        "signal-endpoint-created",
        "signal-endpoint-updated",
        "signal-endpoint-deleted",
        "signal-endpoint-token-created",
        "signal-endpoint-token-updated",
        "signal-endpoint-token-deleted",
    ] {
        let events = events_of_type(&server, event_type).await;
        assert!(!events.is_empty(), "no {event_type}");
        let text = serde_json::to_string(&events).unwrap();
        assert!(!text.contains(&secret), "{text}");
        assert!(
            !text.contains(&vexil_shared::token::sha256_hex(&secret)),
            "{text}"
        );
    }
    assert_eq!(
        events_of_type(&server, "signal-endpoint-updated")
            .await
            .len(),
        2
    );
    let created = events_of_type(&server, "signal-endpoint-token-created").await;
    assert_eq!(created[0]["data"]["name"], "am");
}

async fn signal_endpoint_limits_are_enforced_and_reported(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let limits = server.get("/api/admin/ui-config").await.expect(200)["resourceLimits"].clone();
    assert_eq!(limits["signalEndpoints"], 5);
    assert_eq!(limits["signalTokensPerEndpoint"], 5);
    for index in 0..5 {
        server
            .post(ENDPOINTS, json!({"name": format!("endpoint-{index}")}))
            .await
            .expect(201);
    }
    let message = server
        .post(ENDPOINTS, json!({"name": "one-too-many"}))
        .await
        .expect_error(400, "ExceedsLimitError");
    assert!(message.contains("signalEndpoints"), "{message}");
    let first = server.get(ENDPOINTS).await.expect(200)["signalEndpoints"][0]["id"]
        .as_i64()
        .unwrap();
    let path = format!("{ENDPOINTS}/{first}/tokens");
    for index in 0..5 {
        server
            .post(&path, json!({"name": format!("token-{index}")}))
            .await
            .expect(201);
    }
    let message = server
        .post(&path, json!({"name": "one-too-many"}))
        .await
        .expect_error(400, "ExceedsLimitError");
    assert!(message.contains("signalTokensPerEndpoint"), "{message}");

    drop(server);
    let limited = Server::start(
        &db,
        &[
            "--limit-signal-endpoints",
            "7",
            "--limit-signal-tokens-per-endpoint",
            "6",
        ],
    )
    .await;
    let limits = limited.get("/api/admin/ui-config").await.expect(200)["resourceLimits"].clone();
    assert_eq!(limits["signalEndpoints"], 7);
    limited
        .post(&path, json!({"name": "sixth"}))
        .await
        .expect(201);
}
