//! The SDK usage routes and the metrics views over HTTP, on SQLite and on Postgres: exact counts in
//! endpoints 1–5, bad bodies 400 with nothing stored, the token kinds, application metadata.

use crate::database::TestDb;
use crate::server::{
    assert_error_body, assert_timestamp, Server, ADMIN_TOKEN, CLIENT_TOKEN, FRONTEND_TOKEN,
};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    sdk_posts_show_up_in_the_five_views,
    bad_usage_bodies_are_refused_and_store_nothing,
);

fn metrics_body(app: &str, instance: &str, toggles: Value) -> Value {
    json!({
        "appName": app,
        "instanceId": instance,
        "sdkVersion": "unleash-client-node:6.12.1",
        "environment": "development",
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z", "toggles": toggles}
    })
}

fn register_body(app: &str, instance: &str, strategies: &[&str]) -> Value {
    json!({
        "appName": app,
        "instanceId": instance,
        "sdkVersion": "unleash-client-node:6.12.1",
        "strategies": strategies,
        "started": "2026-11-22T00:00:00.000Z",
        "interval": 10000
    })
}

async fn post(server: &Server, path: &str, token: &str, body: Value) -> u16 {
    server
        .send("POST", path, Some(body), Some(token))
        .await
        .status
}

async fn views(server: &Server) -> Vec<Value> {
    let mut all = Vec::new();
    for path in [
        "/api/admin/metrics/seen-toggles",
        "/api/admin/metrics/feature-toggles",
        "/api/admin/metrics/applications",
        "/api/admin/metrics/seen-apps",
    ] {
        all.push(server.get(path).await.expect(200).clone());
    }
    all
}

async fn sdk_posts_show_up_in_the_five_views(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    assert_eq!(
        post(
            &server,
            "/api/client/register",
            CLIENT_TOKEN,
            register_body("shop", "i1", &["default", "userWithId"])
        )
        .await,
        202
    );
    assert_eq!(
        post(
            &server,
            "/api/client/metrics",
            CLIENT_TOKEN,
            metrics_body("shop", "i1", json!({"checkout": {"yes": 3, "no": 1, "variants": {"red": 2}}, "search": {"yes": 0, "no": 2}}))
        )
        .await,
        202
    );
    assert_eq!(
        post(
            &server,
            "/api/client/metrics",
            CLIENT_TOKEN,
            metrics_body("shop", "i2", json!({"checkout": {"yes": 1, "no": 1}}))
        )
        .await,
        202
    );
    assert_eq!(
        post(
            &server,
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            metrics_body("web", "browser", json!({"checkout": {"yes": 5, "no": 0}}))
        )
        .await,
        200
    );
    assert_eq!(
        post(
            &server,
            "/api/frontend/client/register",
            FRONTEND_TOKEN,
            register_body("web", "browser", &[])
        )
        .await,
        200
    );
    assert_eq!(
        post(
            &server,
            "/api/client/metrics/bulk",
            CLIENT_TOKEN,
            json!({
                "applications": [{"appName": "batch", "instanceId": "b1", "environment": "development", "strategies": ["default"]}],
                "metrics": [{"featureName": "search", "appName": "batch", "environment": "development", "yes": 4, "no": 4, "variants": {}}]
            })
        )
        .await,
        202
    );

    // 1
    let seen = server.get("/api/admin/metrics/seen-toggles").await;
    assert_eq!(
        seen.expect(200),
        &json!([
            {"appName": "batch", "seenToggles": ["search"], "metricsCount": 8},
            {"appName": "shop", "seenToggles": ["checkout", "search"], "metricsCount": 8},
            {"appName": "web", "seenToggles": ["checkout"], "metricsCount": 5}
        ])
    );
    // 2: variants never add to yes/no.
    let toggles = server.get("/api/admin/metrics/feature-toggles").await;
    assert_eq!(
        toggles.expect(200),
        &json!({
            "lastHour": {"checkout": {"yes": 9, "no": 2}, "search": {"yes": 4, "no": 6}},
            "lastMinute": {"checkout": {"yes": 9, "no": 2}, "search": {"yes": 4, "no": 6}}
        })
    );
    let one = server
        .get("/api/admin/metrics/feature-toggles/checkout")
        .await;
    assert_eq!(one.expect(200)["lastHour"], json!({"yes": 9, "no": 2}));
    // 3
    let apps = server.get("/api/admin/metrics/applications").await;
    let apps = apps.expect(200);
    assert_eq!(apps["total"], 3);
    let names: Vec<&str> = apps["applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["appName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["batch", "shop", "web"]);
    assert_eq!(
        apps["applications"][1]["strategies"],
        json!(["default", "userWithId"])
    );
    assert_eq!(
        apps["applications"][1]["links"]["appDetails"],
        "/api/admin/metrics/applications/shop"
    );
    assert_timestamp(&apps["applications"][1]["createdAt"]);
    let filtered = server
        .get("/api/admin/metrics/applications?strategyName=userWithId")
        .await;
    assert_eq!(filtered.expect(200)["total"], 1);
    // 4
    let shop = server.get("/api/admin/metrics/applications/shop").await;
    let shop = shop.expect(200);
    assert_eq!(shop["appName"], "shop");
    assert_eq!(shop["seenToggles"], json!(["checkout", "search"]));
    assert_eq!(
        shop["strategies"],
        json!([{"appName": "shop", "strategies": ["default", "userWithId"]}])
    );
    let instances = shop["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 2);
    for instance in instances {
        assert_eq!(instance["clientIp"], "127.0.0.1");
        assert_eq!(instance["environment"], "development");
        assert_timestamp(&instance["lastSeen"]);
        assert_timestamp(&instance["createdAt"]);
    }
    server
        .get("/api/admin/metrics/applications/nobody")
        .await
        .expect_error(404, "NotFoundError");
    // 5
    let seen_apps = server.get("/api/admin/metrics/seen-apps").await;
    let seen_apps = seen_apps.expect(200);
    let of = |flag: &str| -> Vec<String> {
        seen_apps[flag]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["appName"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(of("checkout"), ["shop", "web"]);
    assert_eq!(of("search"), ["batch", "shop"]);
    assert_eq!(seen_apps["checkout"][0]["description"], Value::Null);

    // Metadata, then visible in 3 and 5.
    let status = server
        .post(
            "/api/admin/metrics/applications/shop",
            json!({"description": "The shop", "url": "https://shop.example", "color": "red", "icon": "cart"}),
        )
        .await
        .status;
    assert_eq!(status, 202);
    let seen_apps = server.get("/api/admin/metrics/seen-apps").await;
    assert_eq!(
        seen_apps.expect(200)["checkout"][0]["description"],
        "The shop"
    );
    assert_eq!(seen_apps.body["checkout"][0]["icon"], "cart");

    // One flag's hours.
    let usage = server
        .get("/api/admin/client-metrics/features/checkout")
        .await;
    let usage = usage.expect(200);
    assert_eq!(usage["version"], 1);
    let total: i64 = usage["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["yes"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 9);

    // No audit event per report.
    let events = server.get("/api/admin/events?type=client-metrics").await;
    assert_eq!(events.expect(200)["totalEvents"], 0);

    // In the OpenAPI document.
    let doc = server.send("GET", "/docs/openapi.json", None, None).await;
    for path in [
        "/api/admin/metrics/seen-toggles",
        "/api/admin/metrics/feature-toggles",
        "/api/admin/metrics/applications",
        "/api/admin/metrics/applications/{appName}",
        "/api/admin/metrics/seen-apps",
        "/api/admin/metrics/edges",
        "/api/admin/client-metrics/features/{name}",
        "/api/client/metrics",
        "/api/client/register",
        "/api/client/metrics/bulk",
        "/api/frontend/client/metrics",
        "/api/frontend/client/register",
    ] {
        assert!(
            doc.body["paths"].get(path).is_some(),
            "{path} is documented"
        );
    }
}

async fn bad_usage_bodies_are_refused_and_store_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let before = views(&server).await;
    let good_bucket = json!({"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z", "toggles": {"a": {"yes": 1, "no": 1}}});
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            json!({"bucket": good_bucket}),
            "appName",
        ),
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            json!({"appName": "x"}),
            "bucket",
        ),
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            json!({"appName": "x", "bucket": {"start": "2026-11-22T00:00:00Z", "stop": "2026-11-22T00:00:00Z"}}),
            "toggles",
        ),
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            json!({"appName": "x", "bucket": {"start": "soon", "stop": "2026-11-22T00:00:00Z", "toggles": {}}}),
            "bucket.start",
        ),
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            json!({"appName": "x", "bucket": {"start": 1, "stop": 2, "toggles": {"a": {"yes": -1, "no": 0}}}}),
            "body",
        ),
        (
            "/api/client/metrics",
            CLIENT_TOKEN,
            json!({"appName": "x", "bucket": {"start": 1, "stop": 2, "toggles": {"a": {"yes": "many"}}}}),
            "body",
        ),
        ("/api/client/metrics", CLIENT_TOKEN, json!([1, 2]), "body"),
        (
            "/api/client/register",
            CLIENT_TOKEN,
            json!({"appName": "x", "strategies": [], "started": "2026-11-22T00:00:00Z"}),
            "interval",
        ),
        (
            "/api/client/register",
            CLIENT_TOKEN,
            json!({"appName": "x", "started": "2026-11-22T00:00:00Z", "interval": 1}),
            "strategies",
        ),
        (
            "/api/client/register",
            CLIENT_TOKEN,
            json!({"appName": "", "strategies": [], "started": 1, "interval": 1}),
            "appName",
        ),
        (
            "/api/client/metrics/bulk",
            CLIENT_TOKEN,
            json!({"metrics": [{"featureName": "a", "appName": "x", "yes": 1}]}),
            "environment",
        ),
        (
            "/api/client/metrics/bulk",
            CLIENT_TOKEN,
            json!({"applications": [{"appName": "x", "environment": "development"}]}),
            "instanceId",
        ),
        (
            "/api/frontend/client/metrics",
            FRONTEND_TOKEN,
            json!({"appName": "x", "bucket": {"start": 1}}),
            "stop",
        ),
        (
            "/api/frontend/client/register",
            FRONTEND_TOKEN,
            json!({"strategies": []}),
            "appName",
        ),
    ];
    for (path, token, body, mentions) in cases {
        let answer = server
            .send("POST", path, Some(body.clone()), Some(token))
            .await;
        assert_eq!(answer.status, 400, "{path} {body}: {}", answer.body);
        let message = assert_error_body(&answer.body, "ValidationError");
        assert!(message.contains(mentions), "{path} {body}: {message}");
    }
    // Not JSON at all.
    let answer = server
        .send_with_headers(
            "POST",
            "/api/client/metrics",
            None,
            &[("Authorization", CLIENT_TOKEN)],
        )
        .await;
    assert_eq!(answer.status, 400);
    // Wrong or no token.
    let body = metrics_body("x", "i", json!({"a": {"yes": 1, "no": 0}}));
    assert_eq!(
        post(&server, "/api/client/metrics", FRONTEND_TOKEN, body.clone()).await,
        403
    );
    assert_eq!(
        post(&server, "/api/client/metrics", ADMIN_TOKEN, body.clone()).await,
        403
    );
    assert_eq!(
        post(
            &server,
            "/api/frontend/client/metrics",
            CLIENT_TOKEN,
            body.clone()
        )
        .await,
        403
    );
    let answer = server
        .send("POST", "/api/client/metrics", Some(body), None)
        .await;
    assert_eq!(answer.status, 401);
    // Admin views need an admin credential.
    let answer = server
        .send(
            "GET",
            "/api/admin/metrics/feature-toggles",
            None,
            Some(CLIENT_TOKEN),
        )
        .await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        server
            .post(
                "/api/admin/metrics/applications/x",
                json!({"description": 3})
            )
            .await
            .status,
        400
    );
    assert_eq!(views(&server).await, before, "nothing was stored");
    assert_eq!(
        server.get("/api/admin/metrics/applications/x").await.status,
        404
    );
}
