//! The SDK usage routes and the metrics views over HTTP, on SQLite and on Postgres: exact counts in
//! endpoints 1–5, bad bodies 400 with nothing stored, the token kinds, application metadata; poisonous posts
//! (over-long names, control characters, too many entries) refused, counts near 2^63 saturated, and the
//! edges' gRPC batches held to the same bounds.

use crate::database::TestDb;
use crate::server::{
    assert_error_body, assert_timestamp, Server, ADMIN_TOKEN, CLIENT_TOKEN, EDGE_TOKEN,
    FRONTEND_TOKEN,
};
use serde_json::{json, Value};
use vexil_proto::v1;
use vexil_proto::v1::usage_client::UsageClient;

crate::on_sqlite_and_postgres!(
    sdk_posts_show_up_in_the_five_views,
    bad_usage_bodies_are_refused_and_store_nothing,
    poisonous_usage_posts_are_refused_or_counted_safely,
    edge_batches_are_held_to_the_bounds_of_the_posts,
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

/// Every metrics view (and one flag's hours) answers 200; returns feature-toggles' `lastHour`.
async fn every_view_answers(server: &Server, flag: &str) -> Value {
    for path in [
        "/api/admin/metrics/seen-toggles".to_owned(),
        "/api/admin/metrics/applications".to_owned(),
        "/api/admin/metrics/seen-apps".to_owned(),
        "/api/admin/metrics/edges".to_owned(),
        format!("/api/admin/metrics/feature-toggles/{flag}"),
        format!("/api/admin/client-metrics/features/{flag}"),
    ] {
        server.get(&path).await.expect(200);
    }
    server
        .get("/api/admin/metrics/feature-toggles")
        .await
        .expect(200)["lastHour"]
        .clone()
}

async fn poisonous_usage_posts_are_refused_or_counted_safely(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let before = views(&server).await;
    let long = "x".repeat(256);
    let nul = "bad\u{0}name";
    let one = json!({"a": {"yes": 1, "no": 0}});
    let many_toggles: serde_json::Map<String, Value> = (0..10_001)
        .map(|i| (format!("f{i}"), json!({"yes": 1})))
        .collect();
    let many_variants: serde_json::Map<String, Value> =
        (0..101).map(|i| (format!("v{i}"), json!(1))).collect();
    let many_strategies: Vec<String> = (0..101).map(|i| format!("s{i}")).collect();
    let many_strategies: Vec<&str> = many_strategies.iter().map(String::as_str).collect();
    let many_applications: Vec<Value> = (0..1_001)
        .map(|i| json!({"appName": "batch", "instanceId": format!("b{i}"), "environment": "development"}))
        .collect();
    let with = |mut body: Value, field: &str, value: Value| {
        body[field] = value;
        body
    };
    const FRONTEND: &str = "/api/frontend/client/metrics";
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (FRONTEND, FRONTEND_TOKEN, metrics_body(&long, "i", one.clone()), "appName must be at most 255 characters"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body(nul, "i", one.clone()), "appName must not contain control characters (found U+0000)"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", &long, one.clone()), "instanceId must be at most 255 characters"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", nul, one.clone()), "instanceId must not contain control characters"),
        (FRONTEND, FRONTEND_TOKEN, with(metrics_body("web", "i", one.clone()), "sdkVersion", json!("v\u{1b}[31m")), "sdkVersion must not contain control characters (found U+001B)"),
        (FRONTEND, FRONTEND_TOKEN, with(metrics_body("web", "i", one.clone()), "environment", json!("e".repeat(101))), "environment must be at most 100 characters"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", "i", json!({long.clone(): {"yes": 1}})), "bucket.toggles[\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…\"] must be at most 255 characters"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", "i", json!({nul: {"yes": 1}})), "bucket.toggles[\"bad\\u0000name\"] must not contain control characters"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", "i", json!({"a": {"yes": 1, "variants": {long.clone(): 1}}})), "bucket.toggles[\"a\"].variants[\"xxxx"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", "i", json!({"a": {"yes": 1, "variants": {nul: 1}}})), "bucket.toggles[\"a\"].variants[\"bad\\u0000name\"] must not contain control characters"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", "i", Value::Object(many_toggles)), "bucket.toggles must have at most 10000 entries, not 10001"),
        (FRONTEND, FRONTEND_TOKEN, metrics_body("web", "i", json!({"a": {"yes": 1, "variants": many_variants}})), "bucket.toggles[\"a\"].variants must have at most 100 entries, not 101"),
        ("/api/frontend/client/register", FRONTEND_TOKEN, register_body("web", nul, &[]), "instanceId must not contain control characters"),
        ("/api/client/metrics", CLIENT_TOKEN, metrics_body(nul, "i", one.clone()), "appName must not contain control characters"),
        ("/api/client/register", CLIENT_TOKEN, register_body("shop", "i1", &many_strategies), "strategies must have at most 100 entries, not 101"),
        ("/api/client/register", CLIENT_TOKEN, register_body("shop", "i1", &["default", nul]), "strategies[1] must not contain control characters"),
        ("/api/client/register", CLIENT_TOKEN, register_body("shop", &long, &[]), "instanceId must be at most 255 characters"),
        (
            "/api/client/metrics/bulk",
            CLIENT_TOKEN,
            json!({"applications": [{"appName": "batch", "instanceId": long.clone(), "environment": "development"}]}),
            "applications[0].instanceId must be at most 255 characters",
        ),
        (
            "/api/client/metrics/bulk",
            CLIENT_TOKEN,
            json!({"metrics": [{"featureName": nul, "appName": "batch", "environment": "development", "yes": 1}]}),
            "metrics[0].featureName must not contain control characters",
        ),
        ("/api/client/metrics/bulk", CLIENT_TOKEN, json!({"applications": many_applications}), "applications must have at most 1000 entries, not 1001"),
    ];
    for (path, token, body, message) in cases {
        let answer = server.send("POST", path, Some(body), Some(token)).await;
        let said = answer.expect_error(400, "ValidationError");
        assert!(said.starts_with(message), "{path}: {said}");
    }
    assert_eq!(views(&server).await, before, "nothing was counted");

    // Counts near 2^63, twice into the same bucket (and once more from another application and the bulk
    // route): saturated, not an error.
    let most =
        json!({"checkout": {"yes": u64::MAX, "no": i64::MAX, "variants": {"red": u64::MAX}}});
    for _ in 0..2 {
        let answer = server
            .send(
                "POST",
                FRONTEND,
                Some(metrics_body("web", "browser", most.clone())),
                Some(FRONTEND_TOKEN),
            )
            .await;
        answer.expect(200);
        assert_eq!(
            post(
                &server,
                "/api/client/metrics",
                CLIENT_TOKEN,
                metrics_body("shop", "i1", most.clone())
            )
            .await,
            202
        );
    }
    let bulk = json!({"metrics": [{"featureName": "checkout", "appName": "batch", "environment": "development",
        "yes": u64::MAX, "no": u64::MAX, "variants": {"red": u64::MAX}}]});
    assert_eq!(
        post(&server, "/api/client/metrics/bulk", CLIENT_TOKEN, bulk).await,
        202
    );
    let last_hour = every_view_answers(&server, "checkout").await;
    assert_eq!(
        last_hour["checkout"],
        json!({"yes": i64::MAX, "no": i64::MAX})
    );
    let seen = server.get("/api/admin/metrics/seen-toggles").await;
    for app in seen.expect(200).as_array().unwrap() {
        assert_eq!(app["metricsCount"], i64::MAX, "{app}");
    }
    let hours = server
        .get("/api/admin/client-metrics/features/checkout")
        .await;
    for hour in hours.expect(200)["data"].as_array().unwrap() {
        assert_eq!(hour["yes"], i64::MAX, "{hour}");
    }

    // Ordinary posts are still counted exactly.
    assert_eq!(
        post(
            &server,
            "/api/client/metrics",
            CLIENT_TOKEN,
            metrics_body("shop", "i1", json!({"ordinary": {"yes": 3, "no": 1}}))
        )
        .await,
        202
    );
    let answer = server
        .send(
            "POST",
            FRONTEND,
            Some(metrics_body(
                "web",
                "browser",
                json!({"ordinary": {"yes": 2, "no": 0}}),
            )),
            Some(FRONTEND_TOKEN),
        )
        .await;
    answer.expect(200);
    let last_hour = every_view_answers(&server, "ordinary").await;
    assert_eq!(last_hour["ordinary"], json!({"yes": 5, "no": 1}));
}

/// The start of the current minute, in Unix milliseconds.
fn this_minute_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    now - now % 60_000
}

fn flag_count(flag: &str, app: &str, n: u64) -> v1::FlagCount {
    v1::FlagCount {
        feature_name: flag.to_owned(),
        app_name: app.to_owned(),
        environment: "development".to_owned(),
        minute_ms: this_minute_ms(),
        yes: n,
        no: n,
        variants: [("red".to_owned(), n)].into_iter().collect(),
    }
}

fn edge_batch(batch_id: &str, counts: Vec<v1::FlagCount>) -> v1::UsageBatch {
    v1::UsageBatch {
        edge_id: "edge-t".to_owned(),
        batch_id: batch_id.to_owned(),
        applied_revision: 1,
        edge_version: "0.1.0".to_owned(),
        counts,
        ..v1::UsageBatch::default()
    }
}

async fn edge_batches_are_held_to_the_bounds_of_the_posts(db: TestDb) {
    let server = Server::start(&db, &["--init-edge-tokens", EDGE_TOKEN]).await;
    let channel = tonic::transport::Endpoint::from_shared(server.grpc.clone())
        .expect("the gRPC URL")
        .connect()
        .await
        .expect("connect to the gRPC listener");
    let authorization: tonic::metadata::MetadataValue<_> =
        format!("Bearer {EDGE_TOKEN}").parse().expect("ASCII");
    let mut client =
        UsageClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
            Ok(request)
        })
        .max_encoding_message_size(64 * 1024 * 1024);
    let before = views(&server).await;
    let long = "x".repeat(256);
    let mut too_many_variants = flag_count("a", "shop", 1);
    too_many_variants.variants = (0..101).map(|i| (format!("v{i}"), 1)).collect();
    let mut nul_environment = flag_count("a", "shop", 1);
    nul_environment.environment = "develop\u{0}ment".to_owned();
    let cases = vec![
        (
            edge_batch("b", vec![flag_count("bad\u{0}name", "shop", 1)]),
            "counts[0].feature_name must not contain control characters",
        ),
        (
            edge_batch("b", vec![flag_count("a", &long, 1)]),
            "counts[0].app_name must be at most 255 characters",
        ),
        (
            edge_batch("b", vec![nul_environment]),
            "counts[0].environment must not contain control characters",
        ),
        (
            edge_batch("b", vec![too_many_variants]),
            "counts[0].variants must have at most 100 entries",
        ),
        (
            v1::UsageBatch {
                edge_id: long.clone(),
                ..edge_batch("b", vec![])
            },
            "edge_id must be at most 255 characters",
        ),
        (
            v1::UsageBatch {
                instances: vec![v1::InstanceSeen {
                    app_name: "shop".to_owned(),
                    instance_id: long.clone(),
                    ..Default::default()
                }],
                ..edge_batch("b", vec![])
            },
            "instances[0].instance_id must be at most 255 characters",
        ),
        (
            v1::UsageBatch {
                applications: vec![v1::ApplicationSeen {
                    app_name: "shop".to_owned(),
                    strategies: vec!["a\u{7f}".to_owned()],
                    ..Default::default()
                }],
                ..edge_batch("b", vec![])
            },
            "applications[0].strategies[0] must not contain control characters",
        ),
    ];
    for (batch, message) in cases {
        let status = client.report(batch).await.expect_err("refused");
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(message), "{status:?}");
    }
    // Larger than a batch may be: refused before it is read.
    let big: Vec<v1::FlagCount> = (0..16_000)
        .map(|i| flag_count(&format!("{}{i}", "f".repeat(250)), "shop", 1))
        .collect();
    let status = client
        .report(edge_batch("big", big))
        .await
        .expect_err("too large");
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert_eq!(views(&server).await, before, "nothing was counted");

    // Counts near 2^63 from two batches (and a retry of one): saturated.
    for batch_id in ["b1", "b2", "b1"] {
        let mut batch = edge_batch(batch_id, vec![flag_count("checkout", "shop", u64::MAX)]);
        batch.evaluations = vec![v1::EvaluationCount {
            environment: "development".to_owned(),
            feature_name: "checkout".to_owned(),
            minute_ms: this_minute_ms(),
            enabled: u64::MAX,
            disabled: u64::MAX,
        }];
        client.report(batch).await.expect("accepted");
    }
    let last_hour = every_view_answers(&server, "checkout").await;
    assert_eq!(
        last_hour["checkout"],
        json!({"yes": i64::MAX, "no": i64::MAX})
    );
    let edges = server.get("/api/admin/metrics/edges").await;
    assert_eq!(
        edges.expect(200)["edges"][0]["evaluationsLastHour"],
        json!({"enabled": i64::MAX, "notEnabled": i64::MAX})
    );
    // An ordinary batch is counted exactly, and so is an ordinary post.
    client
        .report(edge_batch("b3", vec![flag_count("ordinary", "shop", 3)]))
        .await
        .expect("accepted");
    assert_eq!(
        post(
            &server,
            "/api/client/metrics",
            CLIENT_TOKEN,
            metrics_body("shop", "i1", json!({"ordinary": {"yes": 1, "no": 0}}))
        )
        .await,
        202
    );
    let last_hour = every_view_answers(&server, "ordinary").await;
    assert_eq!(last_hour["ordinary"], json!({"yes": 4, "no": 3}));
}
