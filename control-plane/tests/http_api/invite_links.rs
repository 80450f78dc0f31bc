//! Issue 32 §6: invite links (`/api/admin/invite-link/tokens…`, Unleash's public sign-up tokens) and the
//! anonymous `/invite/:token/validate` and `/invite/:token/signup`. A link's secret is shown once, stored
//! hashed; it signs up one user, with the link's root role, until it expires or is disabled; every refusal
//! is `{id,name,message}` and changes nothing.

use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::{json, Value};
use sqlx::{AnyConnection, Connection, Row};

crate::on_sqlite_and_postgres!(
    an_invite_link_signs_up_one_user_with_its_role,
    invite_links_expire_and_can_be_disabled,
    invite_link_refusals_change_nothing,
);

const LINKS: &str = "/api/admin/invite-link/tokens";

async fn create_link(server: &Server, body: Value) -> Value {
    server.post(LINKS, body).await.expect(201).clone()
}

fn in_a_day() -> String {
    (chrono::Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

async fn anonymous(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> crate::server::Answer {
    server.send(method, path, body, None).await
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

async fn total_events(server: &Server) -> Value {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"].clone()
}

async fn sign_in(server: &Server, username: &str, password: &str) -> u16 {
    anonymous(
        server,
        "POST",
        "/auth/simple/login",
        Some(json!({"username": username, "password": password})),
    )
    .await
    .status
}

async fn an_invite_link_signs_up_one_user_with_its_role(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let expires = in_a_day();
    let link = create_link(
        &server,
        json!({"name": "New editors", "expiresAt": expires, "rootRole": "Editor"}),
    )
    .await;
    let secret = link["secret"].as_str().unwrap().to_owned();
    let (selector, verifier) = secret.split_once('.').unwrap();
    assert_eq!((selector.len(), verifier.len()), (16, 48), "{secret}");
    assert_eq!(
        link["url"],
        format!("{}/new-user?invite={secret}", server.base)
    );
    assert_eq!(link["name"], "New editors");
    assert_eq!(link["enabled"], true);
    assert_eq!(link["expiresAt"], expires);
    assert_eq!(link["role"]["id"], 2);
    assert_eq!(link["role"]["name"], "Editor");
    assert_eq!(link["role"]["type"], "root");
    assert!(link["createdBy"].is_string(), "{link}");
    assert_timestamp(&link["createdAt"]);

    // The list and a GET never show the secret again; the store keeps only the verifier's hash.
    let list = server.get(LINKS).await.expect(200).clone();
    let tokens = list["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 1);
    assert!(tokens[0]["secret"].is_null() && tokens[0]["url"].is_null());
    assert!(!list.to_string().contains(verifier));
    let got = server
        .get(&format!("{LINKS}/{secret}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(got["name"], "New editors");
    assert!(got["secret"].is_null());
    let mut conn = AnyConnection::connect(&db.url).await.unwrap();
    let row = sqlx::query("SELECT selector, verifier_hash FROM invite_links")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("selector"), selector);
    let stored: String = row.get("verifier_hash");
    assert_eq!(stored.len(), 64);
    assert_ne!(stored, verifier);
    conn.close().await.unwrap();
    let created = events_of_type(&server, "public-signup-token-created").await;
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["data"]["name"], "New editors");
    assert!(!created[0].to_string().contains(verifier));

    // Validate, then sign up: the user gets the link's role and can sign in with their password.
    anonymous(&server, "GET", &format!("/invite/{secret}/validate"), None)
        .await
        .expect(200);
    let user = anonymous(
        &server,
        "POST",
        &format!("/invite/{secret}/signup"),
        Some(json!({"email": "ada@example.com", "name": "Ada", "password": "correct horse"})),
    )
    .await
    .expect(200)
    .clone();
    assert_eq!(user["email"], "ada@example.com");
    assert_eq!(user["name"], "Ada");
    assert_eq!(user["rootRole"], 2);
    assert_eq!(
        sign_in(&server, "ada@example.com", "correct horse").await,
        200
    );
    let added = events_of_type(&server, "public-signup-token-user-added").await;
    assert_eq!(added.len(), 1);
    assert_eq!(added[0]["data"]["name"], "New editors");
    assert_eq!(added[0]["data"]["userId"], user["id"]);
    assert_eq!(events_of_type(&server, "user-created").await.len(), 1);

    // It worked once: now refused, and listed as used by Ada.
    let message = anonymous(&server, "GET", &format!("/invite/{secret}/validate"), None)
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("already been used"), "{message}");
    let before = total_events(&server).await;
    let message = anonymous(
        &server,
        "POST",
        &format!("/invite/{secret}/signup"),
        Some(json!({"email": "eve@example.com", "name": "Eve", "password": "correct horse"})),
    )
    .await
    .expect_error(400, "ValidationError");
    assert!(message.contains("already been used"), "{message}");
    assert_eq!(total_events(&server).await, before);
    assert_eq!(
        sign_in(&server, "eve@example.com", "correct horse").await,
        401
    );
    let listed = server.get(LINKS).await.expect(200)["tokens"][0].clone();
    assert_eq!(listed["enabled"], false);
    assert_eq!(listed["users"][0]["email"], "ada@example.com");
    // The default role is Viewer.
    let viewer = create_link(&server, json!({"name": "Viewers", "expiresAt": in_a_day()})).await;
    assert_eq!(viewer["role"]["id"], 3);
}

async fn invite_links_expire_and_can_be_disabled(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    // Expires in three seconds (room for a loaded machine between the create and the first check).
    let soon = (chrono::Utc::now() + chrono::Duration::milliseconds(3000))
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let short = create_link(&server, json!({"name": "Short", "expiresAt": soon})).await;
    let secret = short["secret"].as_str().unwrap().to_owned();
    anonymous(&server, "GET", &format!("/invite/{secret}/validate"), None)
        .await
        .expect(200);
    tokio::time::sleep(std::time::Duration::from_millis(3300)).await;
    let message = anonymous(&server, "GET", &format!("/invite/{secret}/validate"), None)
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("expired"), "{message}");
    anonymous(
        &server,
        "POST",
        &format!("/invite/{secret}/signup"),
        Some(json!({"email": "late@example.com", "name": "Late", "password": "correct horse"})),
    )
    .await
    .expect_error(400, "ValidationError");
    assert_eq!(
        server.get(&format!("{LINKS}/{secret}")).await.expect(200)["enabled"],
        false
    );

    // A new expiry brings it back; disabling ends it; each change is an event.
    let later = in_a_day();
    let updated = server
        .put(&format!("{LINKS}/{secret}"), json!({"expiresAt": later}))
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["expiresAt"], later);
    assert_eq!(updated["enabled"], true);
    anonymous(&server, "GET", &format!("/invite/{secret}/validate"), None)
        .await
        .expect(200);
    let disabled = server
        .put(&format!("{LINKS}/{secret}"), json!({"enabled": false}))
        .await
        .expect(200)
        .clone();
    assert_eq!(disabled["enabled"], false);
    let message = anonymous(&server, "GET", &format!("/invite/{secret}/validate"), None)
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("disabled"), "{message}");
    let updates = events_of_type(&server, "public-signup-token-updated").await;
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[0]["data"]["enabled"], false);
    assert_eq!(updates[0]["preData"]["enabled"], true);
}

async fn invite_link_refusals_change_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let link = create_link(&server, json!({"name": "Team", "expiresAt": in_a_day()})).await;
    let secret = link["secret"].as_str().unwrap().to_owned();
    let before = total_events(&server).await;
    for body in [
        json!({"name": "", "expiresAt": in_a_day()}),
        json!({"name": "x", "expiresAt": "yesterday"}),
        json!({"name": "x", "expiresAt": "2000-01-01T00:00:00.000Z"}),
        json!({"name": "x", "expiresAt": in_a_day(), "rootRole": 9}),
        json!({"name": "x"}),
        json!([]),
    ] {
        server
            .post(LINKS, body)
            .await
            .expect_error(400, "ValidationError");
    }
    server
        .put(
            &format!("{LINKS}/{secret}"),
            json!({"expiresAt": "2000-01-01T00:00:00.000Z"}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .put(&format!("{LINKS}/{secret}"), json!({"enabled": "no"}))
        .await
        .expect_error(400, "ValidationError");
    // A wrong verifier, another selector, nonsense: not found (admin) or not valid (anonymous).
    let (selector, _) = secret.split_once('.').unwrap();
    let forged = format!("{selector}.{}", "0".repeat(48));
    for wrong in [forged.as_str(), "nonsense", "0123456789abcdef.00"] {
        server
            .get(&format!("{LINKS}/{wrong}"))
            .await
            .expect_error(404, "NotFoundError");
        anonymous(&server, "GET", &format!("/invite/{wrong}/validate"), None)
            .await
            .expect_error(400, "ValidationError");
        anonymous(
            &server,
            "POST",
            &format!("/invite/{wrong}/signup"),
            Some(json!({"email": "x@example.com", "name": "X", "password": "correct horse"})),
        )
        .await
        .expect_error(400, "ValidationError");
    }
    // Bad sign-ups leave the link usable.
    for body in [
        json!({"email": "x@example.com", "name": "X", "password": "short"}),
        json!({"email": "not-an-email", "name": "X", "password": "correct horse"}),
        json!({"email": "x@example.com", "name": "", "password": "correct horse"}),
        json!({"email": "x@example.com", "password": "correct horse"}),
        json!({"email": "x@example.com", "name": "X", "password": "correct horse", "username": "has space"}),
    ] {
        anonymous(
            &server,
            "POST",
            &format!("/invite/{secret}/signup"),
            Some(body),
        )
        .await
        .expect_error(400, "ValidationError");
    }
    // An e-mail already taken: 409, and the link still works.
    anonymous(
        &server,
        "POST",
        &format!("/invite/{secret}/signup"),
        Some(json!({"email": "first@example.com", "name": "First", "password": "correct horse"})),
    )
    .await
    .expect(200);
    let second = create_link(&server, json!({"name": "Second", "expiresAt": in_a_day()})).await;
    let second = second["secret"].as_str().unwrap().to_owned();
    let before_taken = total_events(&server).await;
    anonymous(
        &server,
        "POST",
        &format!("/invite/{second}/signup"),
        Some(json!({"email": "FIRST@example.com", "name": "Again", "password": "correct horse"})),
    )
    .await
    .expect_error(409, "NameExistsError");
    assert_eq!(total_events(&server).await, before_taken);
    anonymous(&server, "GET", &format!("/invite/{second}/validate"), None)
        .await
        .expect(200);
    // Only an Admin manages links.
    server
        .send("GET", LINKS, None, None)
        .await
        .expect_error(401, "AuthenticationRequired");
    let users = server.get("/api/admin/user-admin").await.expect(200)["users"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(users, 1);
    assert!(before.as_i64().unwrap() < total_events(&server).await.as_i64().unwrap());
}
