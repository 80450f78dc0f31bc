//! Issue 35 §3's reports through the real binary on SQLite and Postgres: the advanced playground (the
//! cartesian product of the context's values in several environments, each answer the plain playground's,
//! the product bounded), outdated SDKs from what applications registered, the instance statistics as CSV
//! (Admins only), and Unleash Edge's `POST /edge/issue-token` (client tokens that work, hashed, their events).

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    the_advanced_playground_evaluates_every_combination,
    outdated_sdks_come_from_registrations,
    the_statistics_csv_is_for_admins,
    edge_issues_client_tokens_for_pairs,
);

const DEFAULT: &str = "/api/admin/projects/default/features";

async fn the_advanced_playground_evaluates_every_combination(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(DEFAULT, json!({"name": "for-some"}))
        .await
        .expect(201);
    server
        .post(DEFAULT, json!({"name": "everyone"}))
        .await
        .expect(201);
    server
        .post(
            &format!("{DEFAULT}/for-some/environments/development/strategies"),
            json!({"name": "userWithId", "parameters": {"userIds": "1,3"}}),
        )
        .await
        .expect(200);
    for environment in ["development", "production"] {
        server
            .post(
                &format!("{DEFAULT}/everyone/environments/{environment}/strategies"),
                json!({"name": "default"}),
            )
            .await
            .expect(200);
        for flag in ["for-some", "everyone"] {
            server
                .post_empty(&format!("{DEFAULT}/{flag}/environments/{environment}/on"))
                .await;
        }
    }
    let request = json!({
        "environments": ["development", "production"],
        "projects": "*",
        "context": {"appName": "shop", "userId": "1,2, 3", "properties": {"tier": "gold,silver"}}
    });
    let answer = server
        .post("/api/admin/playground/advanced", request.clone())
        .await
        .expect(200)
        .clone();
    assert_eq!(answer["input"], request);
    let names: Vec<&str> = answer["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|feature| feature["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["everyone", "for-some"]);
    let for_some = &answer["features"][1];
    assert_eq!(for_some["projectId"], "default");
    for environment in ["development", "production"] {
        let answers = for_some["environments"][environment].as_array().unwrap();
        // 3 users × 2 tiers.
        assert_eq!(answers.len(), 6, "{environment}: {answers:?}");
        for one in answers {
            assert_eq!(one["name"], "for-some");
            assert_eq!(one["environment"], environment);
            // Each answer is the plain playground's for the same context.
            let plain = server
                .post(
                    "/api/admin/playground",
                    json!({"environment": environment, "context": one["context"]}),
                )
                .await
                .expect(200)
                .clone();
            let same = plain["features"]
                .as_array()
                .unwrap()
                .iter()
                .find(|feature| feature["name"] == "for-some")
                .unwrap();
            assert_eq!(one["isEnabled"], same["isEnabled"], "{one}");
            assert_eq!(one["strategies"], same["strategies"]);
            assert_eq!(one["variant"], same["variant"]);
        }
        let enabled_users: Vec<&str> = answers
            .iter()
            .filter(|one| one["isEnabled"] == true)
            .map(|one| one["context"]["userId"].as_str().unwrap())
            .collect();
        match environment {
            // The fields in name order: properties.tier varies slowest.
            "development" => assert_eq!(enabled_users, ["1", "3", "1", "3"]),
            // No strategy in production: on for everyone.
            _ => assert_eq!(enabled_users.len(), 6),
        }
    }
    assert_eq!(
        answer["features"][1]["environments"]["development"][0]["context"],
        json!({"appName": "shop", "userId": "1", "properties": {"tier": "gold"}})
    );

    // Fields that are not text are left out of the evaluation and named, as Unleash does; none, no warnings.
    let warned = server
        .post(
            "/api/admin/playground/advanced",
            json!({"environments": ["development"],
                   "context": {"appName": "shop", "userId": "1", "age": 5, "beta": true,
                               "properties": {"tier": "gold"}}}),
        )
        .await
        .expect(200)
        .clone();
    let mut left_out: Vec<&str> = warned["warnings"]["invalidContextProperties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    left_out.sort();
    assert_eq!(left_out, ["age", "beta"]);
    assert_eq!(
        warned["features"][1]["environments"]["development"][0]["context"],
        json!({"appName": "shop", "userId": "1", "properties": {"tier": "gold"}})
    );
    assert!(answer.get("warnings").is_none(), "{answer}");

    // Refusals: the product over 1,000, no environment, an unknown one, no appName.
    let many: Vec<String> = (0..501).map(|n| n.to_string()).collect();
    let message = server
        .post(
            "/api/admin/playground/advanced",
            json!({"environments": ["development", "production"],
                   "context": {"appName": "a", "userId": many.join(",")}}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("1002 evaluations"), "{message}");
    assert!(message.contains("at most 1000"), "{message}");
    for (body, says) in [
        (
            json!({"environments": [], "context": {"appName": "a"}}),
            "environments",
        ),
        (
            json!({"environments": ["nowhere"], "context": {"appName": "a"}}),
            "nowhere does not exist",
        ),
        (
            json!({"environments": ["bad name"], "context": {"appName": "a"}}),
            "environments",
        ),
        (
            json!({"environments": ["development"], "context": {"userId": "1,2"}}),
            "appName",
        ),
        (
            json!({"environments": ["development"], "context": "x"}),
            "context",
        ),
    ] {
        let message = server
            .post("/api/admin/playground/advanced", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(says), "{body}: {message}");
    }
    // A Viewer may ask, as with the plain playground.
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    server
        .send(
            "POST",
            "/api/admin/playground/advanced",
            Some(json!({"environments": ["development"], "context": {"appName": "a"}})),
            Some(&viewer),
        )
        .await
        .expect(200);
}

fn register(app: &str, instance: &str, sdk: &str) -> Value {
    json!({
        "appName": app,
        "instanceId": instance,
        "sdkVersion": sdk,
        "strategies": ["default"],
        "started": "2026-11-22T00:00:00.000Z",
        "interval": 10000
    })
}

async fn outdated_sdks_come_from_registrations(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other"}),
        )
        .await
        .expect(201);
    server
        .post(DEFAULT, json!({"name": "in-default"}))
        .await
        .expect(201);
    for (app, instance, sdk) in [
        ("old-shop", "a", "unleash-client-node:4.2.0"),
        ("old-shop", "b", "unleash-client-node:6.1.0"),
        ("old-api", "c", "unleash-client-node:4.2.0"),
        ("old-java", "d", "unleash-client-java:8.4.0"),
        ("new-java", "e", "unleash-client-java:9.2.0"),
        ("custom", "f", "my-own-sdk:0.0.1"),
    ] {
        let answer = server
            .send(
                "POST",
                "/api/client/register",
                Some(register(app, instance, sdk)),
                Some(CLIENT_TOKEN),
            )
            .await;
        assert_eq!(answer.status, 202, "{}", answer.body);
    }
    let all = server
        .get("/api/admin/metrics/sdks/outdated")
        .await
        .expect(200)
        .clone();
    assert_eq!(
        all,
        json!({"sdks": [
            {"sdkVersion": "unleash-client-java:8.4.0", "applications": ["old-java"]},
            {"sdkVersion": "unleash-client-node:4.2.0", "applications": ["old-api", "old-shop"]},
        ]})
    );
    // By project: only applications that reported one of its flags.
    let metrics = json!({
        "appName": "old-shop", "instanceId": "a", "environment": "development",
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z",
                   "toggles": {"in-default": {"yes": 1, "no": 0}}}
    });
    let answer = server
        .send(
            "POST",
            "/api/client/metrics",
            Some(metrics),
            Some(CLIENT_TOKEN),
        )
        .await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(
        server
            .get("/api/admin/projects/default/sdks/outdated")
            .await
            .expect(200),
        &json!({"sdks": [{"sdkVersion": "unleash-client-node:4.2.0", "applications": ["old-shop"]}]})
    );
    assert_eq!(
        server
            .get("/api/admin/projects/other/sdks/outdated")
            .await
            .expect(200),
        &json!({"sdks": []})
    );
    server
        .get("/api/admin/projects/nowhere/sdks/outdated")
        .await
        .expect_error(404, "NotFoundError");
    // Everyone signed in reads it.
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    server
        .send(
            "GET",
            "/api/admin/metrics/sdks/outdated",
            None,
            Some(&viewer),
        )
        .await
        .expect(200);
}

/// `(header, row)` of a two-line CSV document, split on commas outside quotes.
fn csv_cells(text: &str) -> (Vec<String>, Vec<String>) {
    fn split(line: &str) -> Vec<String> {
        let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cell.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => cells.push(std::mem::take(&mut cell)),
                _ => cell.push(c),
            }
        }
        cells.push(cell);
        cells
    }
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    (split(lines[0]), split(lines[1]))
}

async fn the_statistics_csv_is_for_admins(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(DEFAULT, json!({"name": "counted"}))
        .await
        .expect(201);
    server
        .post(
            &format!("{DEFAULT}/counted/environments/production/strategies"),
            json!({"name": "default", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["a", "b", "c"]},
                {"contextName": "appName", "operator": "IN", "values": ["x"]}
            ]}),
        )
        .await
        .expect(200);
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let response = server
        .client
        .get(format!(
            "{}/api/admin/instance-admin/statistics/csv",
            server.base
        ))
        .header("Authorization", ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/csv; charset=utf-8"
    );
    let text = response.text().await.unwrap();
    let (header, row) = csv_cells(&text);
    assert_eq!(header.len(), 31);
    assert_eq!(header.len(), row.len(), "{text}");
    assert_eq!(header[0], "instanceId");
    assert_eq!(header[30], "sum");
    let cell = |name: &str| row[header.iter().position(|column| column == name).unwrap()].clone();
    let stats = server
        .get("/api/admin/instance-admin/statistics")
        .await
        .expect(200)
        .clone();
    assert_eq!(cell("instanceId"), stats["instanceId"].as_str().unwrap());
    assert_eq!(cell("featureToggles"), "1");
    assert_eq!(cell("users"), "1");
    assert_eq!(cell("projects"), stats["projects"].to_string());
    assert_eq!(cell("environments"), stats["environments"].to_string());
    assert_eq!(cell("maxEnvironmentStrategies"), "1");
    assert_eq!(cell("maxConstraints"), "2");
    assert_eq!(cell("maxConstraintValues"), "3");
    assert_eq!(cell("OIDCenabled"), "false");
    let tokens: Value = serde_json::from_str(&cell("apiTokens")).unwrap();
    assert_eq!(tokens["admin"], stats["apiTokens"]["admin"]);
    // The strategy was added in production: one production change in the last 30 days.
    let production: Value = serde_json::from_str(&cell("productionChanges")).unwrap();
    assert!(production["last30"].as_i64().unwrap() >= 1, "{production}");
    let apps: Value = serde_json::from_str(&cell("clientApps")).unwrap();
    assert_eq!(apps[0], json!({"range": "allTime", "count": 0}));
    assert_eq!(cell("sum").len(), 64);
    // Admins only.
    server
        .send(
            "GET",
            "/api/admin/instance-admin/statistics/csv",
            None,
            Some(&editor),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "GET",
            "/api/admin/instance-admin/statistics/csv",
            None,
            None,
        )
        .await
        .expect_error(401, "AuthenticationRequired");
}

async fn edge_issues_client_tokens_for_pairs(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(DEFAULT, json!({"name": "served"}))
        .await
        .expect(201);
    server
        .post(
            &format!("{DEFAULT}/served/environments/production/strategies"),
            json!({"name": "default"}),
        )
        .await
        .expect(200);
    server
        .post_empty(&format!("{DEFAULT}/served/environments/production/on"))
        .await
        .expect(200);
    let before = server.get("/api/admin/api-tokens").await.expect(200)["tokens"]
        .as_array()
        .unwrap()
        .len();
    let answer = server
        .post(
            "/edge/issue-token",
            json!({"tokens": [
                {"environment": "production", "projects": ["*"]},
                {"environment": "development", "projects": ["default"]}
            ]}),
        )
        .await
        .expect(200)
        .clone();
    let tokens = answer["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0]["type"], "client");
    assert_eq!(tokens[0]["environment"], "production");
    assert_eq!(tokens[0]["projects"], json!(["*"]));
    assert_eq!(tokens[1]["projects"], json!(["default"]));
    let secret = tokens[0]["token"].as_str().unwrap();
    assert!(secret.starts_with("*:production."), "{secret}");
    assert!(tokens[1]["token"]
        .as_str()
        .unwrap()
        .starts_with("default:development."));
    // The token works on the SDK routes.
    let features = server
        .send("GET", "/api/client/features", None, Some(secret))
        .await;
    assert_eq!(features.expect(200)["features"][0]["name"], "served");
    // Stored, listed without their secrets, each with its event.
    let listed = server
        .get("/api/admin/api-tokens")
        .await
        .expect(200)
        .clone();
    let listed = listed["tokens"].as_array().unwrap();
    assert_eq!(listed.len(), before + 2);
    let issued: Vec<&Value> = listed
        .iter()
        .filter(|token| token["tokenName"] == "unleash-edge")
        .collect();
    assert_eq!(issued.len(), 2);
    assert!(issued.iter().all(|token| token["secret"].is_null()));
    let events = server.get("/api/admin/events").await.expect(200).clone();
    let created: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| {
            event["type"] == "api-token-created" && event["data"]["tokenName"] == "unleash-edge"
        })
        .collect();
    assert_eq!(created.len(), 2);
    assert!(!events.to_string().contains(secret));

    // Refusals change nothing: one bad pair refuses the whole request.
    for (body, says) in [
        (json!({"tokens": []}), "tokens"),
        (json!({}), "tokens"),
        (
            json!({"tokens": [{"environment": "production", "projects": ["*"]},
                              {"environment": "nowhere", "projects": ["*"]}]}),
            "tokens[1].environment",
        ),
        (
            json!({"tokens": [{"environment": "production", "projects": ["missing"]}]}),
            "tokens[0].projects",
        ),
        (
            json!({"tokens": [{"environment": "production", "projects": []}]}),
            "tokens[0].projects",
        ),
    ] {
        let message = server
            .post("/edge/issue-token", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(says), "{body}: {message}");
    }
    let pairs: Vec<Value> = (0..51)
        .map(|_| json!({"environment": "production", "projects": ["*"]}))
        .collect();
    server
        .post("/edge/issue-token", json!({"tokens": pairs}))
        .await
        .expect_error(400, "ValidationError");
    // Only those who may create API tokens: not an Editor, not a client token, not anonymous.
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let body = json!({"tokens": [{"environment": "production", "projects": ["*"]}]});
    server
        .send(
            "POST",
            "/edge/issue-token",
            Some(body.clone()),
            Some(&editor),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send(
            "POST",
            "/edge/issue-token",
            Some(body.clone()),
            Some(CLIENT_TOKEN),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("POST", "/edge/issue-token", Some(body.clone()), None)
        .await
        .expect_error(401, "AuthenticationRequired");
    let after = server.get("/api/admin/api-tokens").await.expect(200)["tokens"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(after, before + 2);
    // An Admin's personal access token (as Unleash Edge's service-account token) may.
    let (_, admin) = user_with_pat(&server, "admin", "Admin").await;
    server
        .send("POST", "/edge/issue-token", Some(body), Some(&admin))
        .await
        .expect(200);
}
