//! API tokens (their life cycle, edge tokens, the limit) and no secret in lists, events or logs, through the
//! real binary on SQLite and Postgres; and the users with a password or a personal access token that other
//! tests sign in as.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, EDGE_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    api_token_life_cycle,
    api_token_limit,
    edge_tokens,
    no_secret_in_lists_events_or_logs,
);

pub(crate) const PAST: &str = "2020-01-01T00:00:00.000Z";
pub(crate) const FUTURE: &str = "2099-01-01T00:00:00.000Z";

/// A path segment with every reserved character percent-encoded (token secrets hold `:`, `*`, `[`…).
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
                (byte as char).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

pub(crate) fn is_hex(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

pub(crate) async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

pub(crate) async fn create_token(server: &Server, body: Value) -> String {
    let created = server.post("/api/admin/api-tokens", body).await;
    created.expect(201)["secret"]
        .as_str()
        .expect("the secret")
        .to_owned()
}

async fn api_token_life_cycle(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other"}),
        )
        .await
        .expect(201);

    // Create: the secret comes once, in the answer.
    let created = server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "ops", "type": "admin", "expiresAt": FUTURE}),
        )
        .await;
    let body = created.expect(201).clone();
    let admin = body["secret"].as_str().unwrap().to_owned();
    let random = admin.strip_prefix("*:*.").expect("admin prefix");
    assert!(random.len() >= 32 && is_hex(random), "{admin}");
    assert_eq!(body["tokenName"], "ops");
    assert_eq!(body["type"], "admin");
    assert_eq!(body["environment"], "*");
    assert_eq!(body["projects"], json!(["*"]));
    assert_eq!(body["expiresAt"], FUTURE);
    let backend = create_token(
        &server,
        json!({"tokenName": "sdk", "type": "backend", "environment": "production", "projects": ["default"]}),
    )
    .await;
    assert!(backend.starts_with("default:production."), "{backend}");
    let frontend = create_token(
        &server,
        json!({"tokenName": "web", "type": "frontend", "projects": ["default", "other"]}),
    )
    .await;
    assert!(frontend.starts_with("[]:development."), "{frontend}");
    assert_ne!(
        admin,
        create_token(&server, json!({"tokenName": "ops", "type": "admin"})).await
    );

    // Use on the right API, then on a wrong one.
    server
        .send("GET", "/api/admin/projects", None, Some(&admin))
        .await
        .expect(200);
    server
        .send(
            "GET",
            "/api/admin/projects",
            None,
            Some(&format!("Bearer {admin}")),
        )
        .await
        .expect(200);
    for wrong in [&backend, &frontend] {
        server
            .send("GET", "/api/admin/projects", None, Some(wrong))
            .await
            .expect_error(403, "NoAccessError");
    }

    // The list: every token, no secret.
    let list = server
        .get("/api/admin/api-tokens")
        .await
        .expect(200)
        .clone();
    let tokens = list["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 3 + 4, "{list}");
    assert!(
        tokens.iter().all(|token| token["secret"].is_null()),
        "{list}"
    );
    let sdk = tokens
        .iter()
        .find(|token| token["tokenName"] == "sdk")
        .unwrap();
    assert_eq!(sdk["type"], "client");
    assert_eq!(sdk["environment"], "production");
    assert_eq!(sdk["projects"], json!(["default"]));
    let web = tokens
        .iter()
        .find(|token| token["tokenName"] == "web")
        .unwrap();
    assert_eq!(web["projects"], json!(["default", "other"]));
    assert_eq!(web["project"], "[]");

    // Expire it: 401.
    let path = format!("/api/admin/api-tokens/{}", encode(&admin));
    server
        .put(&path, json!({"expiresAt": PAST}))
        .await
        .expect(200);
    let message = server
        .send("GET", "/api/admin/projects", None, Some(&admin))
        .await
        .expect_error(401, "AuthenticationRequired");
    assert!(message.contains("expired"), "{message}");
    server
        .put(&path, json!({"expiresAt": "tomorrow"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .put(
            &format!("/api/admin/api-tokens/{}", encode("*:*.nope")),
            json!({"expiresAt": FUTURE}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .put(&path, json!({"expiresAt": FUTURE}))
        .await
        .expect(200);
    server
        .send("GET", "/api/admin/projects", None, Some(&admin))
        .await
        .expect(200);

    // Delete by secret: gone, 401; deleting again or an unknown secret is a 200 no-op.
    server.delete(&path).await.expect(200);
    server
        .send("GET", "/api/admin/projects", None, Some(&admin))
        .await
        .expect_error(401, "AuthenticationRequired");
    let revision_events =
        server.get("/api/admin/events?limit=1000").await.expect(200)["totalEvents"].clone();
    server.delete(&path).await.expect(200);
    server
        .delete(&format!("/api/admin/api-tokens/{}", encode("x:y.unknown")))
        .await
        .expect(200);
    assert_eq!(
        server.get("/api/admin/events?limit=1000").await.expect(200)["totalEvents"],
        revision_events,
        "a no-op delete records nothing"
    );
    let list = server
        .get("/api/admin/api-tokens")
        .await
        .expect(200)
        .clone();
    assert_eq!(list["tokens"].as_array().unwrap().len(), 6);

    // Events: created, updated (twice), deleted once; none holds a secret.
    assert_eq!(
        events_of_type(&server, "api-token-created").await.len(),
        3 + 4
    );
    let updated = events_of_type(&server, "api-token-updated").await;
    assert_eq!(updated.len(), 2);
    assert_eq!(updated[1]["data"]["expiresAt"], PAST);
    assert_eq!(updated[1]["preData"]["expiresAt"], FUTURE);
    let deleted = events_of_type(&server, "api-token-deleted").await;
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0]["preData"]["tokenName"], "ops");
    let all = server
        .get("/api/admin/events?limit=1000")
        .await
        .expect(200)
        .to_string();
    for secret in [&admin, &backend, &frontend] {
        assert!(!all.contains(secret.as_str()), "an event holds {secret}");
    }

    // Bad input changes nothing.
    for (body, field) in [
        (json!({"tokenName": "x", "type": "superuser"}), "type"),
        (json!({"type": "client"}), "tokenName"),
        (
            json!({"tokenName": "x", "type": "client", "environment": "nowhere"}),
            "environment",
        ),
        (
            json!({"tokenName": "x", "type": "client", "projects": ["nowhere"]}),
            "projects",
        ),
        (
            json!({"tokenName": "x", "type": "client", "projects": []}),
            "projects",
        ),
        (
            json!({"tokenName": "x", "type": "client", "expiresAt": "soon"}),
            "expiresAt",
        ),
        (
            json!({"tokenName": "x", "type": "admin", "environment": "development"}),
            "environment",
        ),
    ] {
        let message = server
            .post("/api/admin/api-tokens", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{body}: {message}");
    }
    assert_eq!(
        server.get("/api/admin/api-tokens").await.expect(200)["tokens"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
}

/// Edge tokens: made like the others (secret once, hash stored), scoped to `*` (the default) or one
/// environment, for every project; refused on the admin API and the control plane's SDK APIs; described in
/// the OpenAPI document.
async fn edge_tokens(db: TestDb) {
    let server = Server::start(&db, &["--init-edge-tokens", EDGE_TOKEN]).await;
    let all = server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "edges", "type": "edge"}),
        )
        .await
        .expect(201)
        .clone();
    let secret = all["secret"].as_str().unwrap();
    let random = secret.strip_prefix("*:*.").expect("all environments");
    assert!(random.len() >= 32 && is_hex(random), "{secret}");
    assert_eq!(all["type"], "edge");
    assert_eq!(all["environment"], "*");
    assert_eq!(all["projects"], json!(["*"]));
    let production = create_token(
        &server,
        json!({"tokenName": "edges-eu", "type": "edge", "environment": "production", "projects": ["*"]}),
    )
    .await;
    assert!(production.starts_with("*:production."), "{production}");

    let list = server
        .get("/api/admin/api-tokens")
        .await
        .expect(200)
        .clone();
    let edges: Vec<&Value> = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|token| token["type"] == "edge")
        .collect();
    let names: Vec<&str> = edges
        .iter()
        .map(|token| token["tokenName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["init-edge-token-1", "edges", "edges-eu"], "{list}");
    assert!(edges.iter().all(|token| token["secret"].is_null()));
    assert_eq!(edges[2]["environment"], "production");

    for token in [EDGE_TOKEN, secret, production.as_str()] {
        for path in [
            "/api/admin/projects",
            "/api/admin/api-tokens",
            "/api/frontend",
            "/api/client/features",
        ] {
            server
                .send("GET", path, None, Some(token))
                .await
                .expect_error(403, "NoAccessError");
        }
    }

    for (body, field) in [
        (
            json!({"tokenName": "x", "type": "edge", "environment": "nowhere"}),
            "environment",
        ),
        (
            json!({"tokenName": "x", "type": "edge", "projects": ["default"]}),
            "projects",
        ),
        (
            json!({"tokenName": "x", "type": "edge", "project": "default"}),
            "projects",
        ),
    ] {
        let message = server
            .post("/api/admin/api-tokens", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{body}: {message}");
    }

    // The OpenAPI document names the type and its scope.
    let document = server
        .send("GET", "/docs/openapi.json", None, None)
        .await
        .expect(200)
        .clone();
    let create = &document["components"]["schemas"]["CreateApiToken"]["properties"];
    let described = format!("{} {}", create["type"], create["environment"]);
    assert!(described.contains("edge"), "{described}");
}

async fn api_token_limit(db: TestDb) {
    // The three start-up tokens count.
    let server = Server::start(&db, &["--limit-api-tokens", "5"]).await;
    for name in ["a", "b"] {
        create_token(&server, json!({"tokenName": name, "type": "client"})).await;
    }
    let message = server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "c", "type": "client"}),
        )
        .await
        .expect_error(400, "ExceedsLimitError");
    assert!(message.contains('5'), "{message}");
    // Personal access tokens do not count.
    let (_, pat) = user_with_pat(&server, "limited", "Admin").await;
    server
        .send("GET", "/api/admin/api-tokens", None, Some(&pat))
        .await
        .expect(200);
    assert_eq!(
        server.get("/api/admin/api-tokens").await.expect(200)["tokens"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

/// Creates a user with a password, signs in and returns the session cookie (`name=value`).
pub(crate) async fn sign_in(server: &Server, username: &str, password: &str) -> String {
    let response = server
        .client
        .post(format!("{}/auth/simple/login", server.base))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let set_cookie = response
        .headers()
        .get("set-cookie")
        .expect("a session cookie")
        .to_str()
        .unwrap()
        .to_owned();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    set_cookie.split(';').next().unwrap().to_owned()
}

pub(crate) async fn create_user(server: &Server, username: &str, role: Value) -> i64 {
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": username, "password": "correct horse battery", "rootRole": role}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap()
}

/// A new user of this role, signed in, with a personal access token made with the session: `(id, secret)`.
pub(crate) async fn user_with_pat(server: &Server, username: &str, role: &str) -> (i64, String) {
    let id = create_user(server, username, json!(role)).await;
    let cookie = sign_in(server, username, "correct horse battery").await;
    let pat = server
        .send_with_headers(
            "POST",
            "/api/admin/user/tokens",
            Some(json!({"description": "tests", "expiresAt": FUTURE})),
            &[("Cookie", &cookie)],
        )
        .await;
    let secret = pat.expect(201)["secret"].as_str().unwrap().to_owned();
    (id, secret)
}

async fn no_secret_in_lists_events_or_logs(db: TestDb) {
    let server = Server::start_logged(&db, &[]).await;
    let token = create_token(
        &server,
        json!({"tokenName": "leak-check", "type": "client"}),
    )
    .await;
    let password = "a very secret password";
    let user = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "carol", "password": password, "rootRole": 1}),
        )
        .await
        .expect(201)["id"]
        .clone();
    let cookie = sign_in(&server, "carol", password).await;
    let session_id = cookie.split_once('=').unwrap().1.to_owned();
    let pat = server
        .send_with_headers(
            "POST",
            "/api/admin/user/tokens",
            Some(json!({"description": "leak", "expiresAt": FUTURE})),
            &[("Cookie", &cookie)],
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    // Use every secret, including failed attempts, so they pass through the request path.
    server
        .send("GET", "/api/admin/projects", None, Some(&pat))
        .await
        .expect(200);
    server
        .send("GET", "/api/admin/projects", None, Some(&token))
        .await
        .expect(403);
    server
        .send(
            "POST",
            "/auth/simple/login",
            Some(json!({"username": "carol", "password": "not the password"})),
            None,
        )
        .await
        .expect(401);
    server
        .put(
            &format!("/api/admin/api-tokens/{}", encode(&token)),
            json!({"expiresAt": FUTURE}),
        )
        .await
        .expect(200);
    server
        .put(
            &format!("/api/admin/user-admin/{user}"),
            json!({"name": "Carol"}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/api-tokens/{}", encode(&token)))
        .await
        .expect(200);

    let mut seen = String::new();
    for path in [
        "/api/admin/api-tokens",
        "/api/admin/user-admin",
        "/api/admin/events?limit=1000",
    ] {
        seen.push_str(&server.get(path).await.expect(200).to_string());
    }
    seen.push_str(
        &server
            .send("GET", "/api/admin/user/tokens", None, Some(&pat))
            .await
            .expect(200)
            .to_string(),
    );
    assert!(
        seen.contains("leak-check") && seen.contains("carol"),
        "the lists hold the resources"
    );
    let logs = server.logs();
    assert!(
        logs.contains("/api/admin/api-tokens"),
        "the log captured the requests:\n{logs}"
    );
    let secrets = [
        ("API token", token.as_str()),
        ("its random part", token.split_once('.').unwrap().1),
        ("PAT", pat.as_str()),
        ("session id", session_id.as_str()),
        ("password", password),
        ("wrong password", "not the password"),
        ("admin token", ADMIN_TOKEN),
    ];
    for (what, secret) in secrets {
        assert!(!seen.contains(secret), "a list or event holds the {what}");
        assert!(!logs.contains(secret), "the log holds the {what}");
    }
    assert!(
        !seen.contains("$argon2"),
        "a list or event holds a password hash"
    );
}
