//! Issue 32 §4: SCIM 2.0 provisioning at `/scim/v2`, on SQLite and Postgres. The settings and the token
//! (Admins only, the token shown once and replaced by a new one, never in an event); Users created, read,
//! filtered, paged, replaced, patched and deleted, each checked in what the admin API then reads; SCIM errors in
//! the SCIM schema; deprovisioning (`active: false`, delete) ending the user's sessions and personal access
//! tokens at once. Groups, and the admin API's side: `scim_groups.rs`.

use crate::database::TestDb;
use crate::server::{Answer, Server, ADMIN_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    settings_and_token,
    users_created_read_filtered_replaced_patched_deleted,
    deprovisioning_ends_sessions_and_tokens,
);

pub(crate) const USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub(crate) const GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub(crate) const PATCH: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/// Switches provisioning on and returns a fresh token.
pub(crate) async fn enable(server: &Server) -> String {
    server
        .post("/api/admin/scim-settings", json!({"enabled": true}))
        .await
        .expect(200);
    server
        .post_empty("/api/admin/scim-settings/generate-new-token")
        .await
        .expect(200)["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub(crate) async fn scim(
    server: &Server,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Answer {
    let bearer = format!("Bearer {token}");
    server
        .send_with_headers(
            method,
            &format!("/scim/v2{path}"),
            body,
            &[("Authorization", &bearer)],
        )
        .await
}

/// Asserts a SCIM error: status, the Error schema with `status` as a string, the `scimType` if any.
pub(crate) fn scim_error(answer: &Answer, status: u16, scim_type: Option<&str>) -> String {
    assert_eq!(answer.status, status, "body: {}", answer.body);
    let body = &answer.body;
    assert_eq!(
        body["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:Error"]),
        "{body}"
    );
    assert_eq!(body["status"], json!(status.to_string()), "{body}");
    match scim_type {
        Some(scim_type) => assert_eq!(body["scimType"], scim_type, "{body}"),
        None => assert!(body.get("scimType").is_none(), "{body}"),
    }
    body["detail"].as_str().unwrap().to_owned()
}

pub(crate) async fn create_user(
    server: &Server,
    token: &str,
    user_name: &str,
    display: &str,
) -> Value {
    let body = json!({
        "schemas": [USER], "userName": user_name, "displayName": display,
        "name": {"givenName": "Given", "familyName": "Family"},
        "emails": [{"value": user_name, "type": "work", "primary": true}], "active": true,
        "externalId": format!("ext-{user_name}")
    });
    scim(server, token, "POST", "/Users", Some(body))
        .await
        .expect(201)
        .clone()
}

/// The admin API's view of the user with this SCIM id.
pub(crate) async fn admin_user(server: &Server, scim_id: &str) -> Option<Value> {
    let users = server
        .get("/api/admin/user-admin")
        .await
        .expect(200)
        .clone();
    users["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|user| user["scimId"] == scim_id)
        .cloned()
}

pub(crate) async fn events(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn settings_and_token(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    assert_eq!(
        server.get("/api/admin/scim-settings").await.expect(200),
        &json!({"enabled": false, "hasToken": false})
    );
    // Off: every SCIM request is refused, as a SCIM error, as application/scim+json.
    let response = reqwest::Client::new()
        .get(format!("{}/scim/v2/Users", server.base))
        .header("Authorization", "Bearer whatever")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/scim+json");
    let answer = Answer::read(response).await;
    assert!(scim_error(&answer, 403, None).contains("SCIM provisioning is off"));
    // Bad input changes nothing.
    server
        .post("/api/admin/scim-settings", json!({"enabled": "yes"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post("/api/admin/scim-settings", json!({"enabled": true}))
        .await
        .expect(200);
    assert_eq!(
        server.get("/api/admin/scim-settings").await.expect(200),
        &json!({"enabled": true, "hasToken": false})
    );
    let answer = scim(&server, "scim:nothing", "GET", "/Users", None).await;
    assert!(scim_error(&answer, 401, None).contains("No SCIM token"));
    let first = server
        .post_empty("/api/admin/scim-settings/generate-new-token")
        .await
        .expect(200)["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(first.starts_with("scim:") && first.len() == 61, "{first}");
    assert_eq!(
        server.get("/api/admin/scim-settings").await.expect(200),
        &json!({"enabled": true, "hasToken": true})
    );
    scim(&server, &first, "GET", "/Users", None)
        .await
        .expect(200);
    scim_error(
        &scim(&server, "scim:wrong", "GET", "/Users", None).await,
        401,
        None,
    );
    scim_error(
        &scim(&server, ADMIN_TOKEN, "GET", "/Users", None).await,
        401,
        None,
    );
    // The SCIM token is no admin credential.
    server
        .send("GET", "/api/admin/projects", None, Some(&first))
        .await
        .expect_error(401, "AuthenticationRequired");
    // A new token replaces the old one at once.
    let second = enable(&server).await;
    assert_ne!(first, second);
    scim_error(
        &scim(&server, &first, "GET", "/Users", None).await,
        401,
        None,
    );
    scim(&server, &second, "GET", "/Users", None)
        .await
        .expect(200);
    // Never the token or its hash in an event.
    let updates = events(&server, "setting-updated").await;
    assert!(updates.len() >= 3, "{updates:?}");
    let text = serde_json::to_string(&updates).unwrap();
    for secret in [&first, &second] {
        let hash = vexil_shared::token::sha256_hex(secret);
        assert!(
            !text.contains(secret.as_str()) && !text.contains(&hash),
            "{text}"
        );
    }
    assert!(text.contains("hasToken"), "{text}");
    // Admins only: an Editor is refused, reads included.
    let cookie = editor_cookie(&server).await;
    let editor = [
        ("Cookie", cookie.as_str()),
        ("Sec-Fetch-Site", "same-origin"),
    ];
    for (method, path) in [
        ("GET", "/api/admin/scim-settings"),
        ("POST", "/api/admin/scim-settings/generate-new-token"),
        ("DELETE", "/api/admin/user-admin/scim-users"),
        ("DELETE", "/api/admin/groups/scim-groups"),
    ] {
        server
            .send_with_headers(method, path, None, &editor)
            .await
            .expect_error(403, "NoAccessError");
    }
    scim(&server, &second, "GET", "/Users", None)
        .await
        .expect(200);
    // Off again: refused, whatever the token.
    server
        .post("/api/admin/scim-settings", json!({"enabled": false}))
        .await
        .expect(200);
    scim_error(
        &scim(&server, &second, "GET", "/Users", None).await,
        403,
        None,
    );
}

async fn users_created_read_filtered_replaced_patched_deleted(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let token = enable(&server).await;
    let ada = create_user(&server, &token, "ada@example.com", "Ada Lovelace").await;
    let id = ada["id"].as_str().unwrap().to_owned();
    assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
    assert_eq!(ada["schemas"], json!([USER]));
    assert_eq!(ada["userName"], "ada@example.com");
    assert_eq!(ada["externalId"], "ext-ada@example.com");
    assert_eq!(ada["meta"]["resourceType"], "User");
    assert_eq!(
        ada["meta"]["location"],
        format!("{}/scim/v2/Users/{id}", server.base)
    );
    // Stored: a Viewer with the username, name and e-mail the attributes give, and the SCIM id.
    let stored = admin_user(&server, &id).await.expect("the user is stored");
    assert_eq!(stored["username"], "ada@example.com");
    assert_eq!(stored["email"], "ada@example.com");
    assert_eq!(stored["name"], "Ada Lovelace");
    assert_eq!(stored["rootRole"], 3);
    assert!(stored.get("active").is_none(), "{stored}");
    let created = events(&server, "user-created").await;
    assert_eq!(created[0]["data"]["scimId"], id.as_str());
    assert_eq!(created[0]["createdBy"], "scim");
    // Read, and read with only some attributes.
    assert_eq!(
        scim(&server, &token, "GET", &format!("/Users/{id}"), None)
            .await
            .expect(200),
        &ada
    );
    let only = scim(
        &server,
        &token,
        "GET",
        &format!("/Users/{id}?attributes=userName"),
        None,
    )
    .await;
    assert_eq!(
        only.expect(200),
        &json!({"schemas": [USER], "id": id, "userName": "ada@example.com"})
    );
    scim_error(
        &scim(&server, &token, "GET", "/Users/nobody", None).await,
        404,
        None,
    );
    // Filters and paging.
    create_user(&server, &token, "bob@example.com", "Bob").await;
    create_user(&server, &token, "cy@example.com", "Cy").await;
    let found = scim(
        &server,
        &token,
        "GET",
        "/Users?filter=userName%20eq%20%22ADA@example.com%22",
        None,
    )
    .await;
    let found = found.expect(200);
    assert_eq!(found["totalResults"], 1);
    assert_eq!(found["Resources"][0]["id"], id.as_str());
    let none = scim(
        &server,
        &token,
        "GET",
        "/Users?filter=userName%20eq%20%22eve%22",
        None,
    )
    .await;
    assert_eq!(none.expect(200)["totalResults"], 0);
    let page = scim(&server, &token, "GET", "/Users?startIndex=2&count=1", None).await;
    let page = page.expect(200).clone();
    assert_eq!(
        (
            page["totalResults"].clone(),
            page["startIndex"].clone(),
            page["itemsPerPage"].clone()
        ),
        (json!(3), json!(2), json!(1))
    );
    assert_eq!(page["Resources"][0]["userName"], "bob@example.com");
    let bad = scim(
        &server,
        &token,
        "GET",
        "/Users?filter=userName%20xx%20%22a%22",
        None,
    )
    .await;
    scim_error(&bad, 400, Some("invalidFilter"));
    // Replace.
    let replaced = scim(
        &server,
        &token,
        "PUT",
        &format!("/Users/{id}"),
        Some(json!({
            "schemas": [USER], "userName": "ada@example.com", "name": {"formatted": "Ada King"},
            "emails": [{"value": "ada.king@example.com", "primary": true}], "active": true
        })),
    )
    .await;
    let replaced = replaced.expect(200).clone();
    assert!(replaced.get("displayName").is_none() && replaced.get("externalId").is_none());
    let stored = admin_user(&server, &id).await.unwrap();
    assert_eq!(
        (stored["name"].clone(), stored["email"].clone()),
        (json!("Ada King"), json!("ada.king@example.com"))
    );
    // PATCH: replace, add, remove; Entra's capitalised op.
    let patched = scim(&server, &token, "PATCH", &format!("/Users/{id}"), Some(json!({
        "schemas": [PATCH], "Operations": [
            {"op": "Replace", "path": "displayName", "value": "Countess"},
            {"op": "add", "path": "emails[type eq \"home\"].value", "value": "ada@home.example"},
            {"op": "remove", "path": "name"}
        ]
    }))).await;
    let patched = patched.expect(200).clone();
    assert_eq!(patched["displayName"], "Countess");
    assert_eq!(
        patched["emails"][1],
        json!({"type": "home", "value": "ada@home.example"})
    );
    assert!(patched.get("name").is_none());
    let stored = admin_user(&server, &id).await.unwrap();
    assert_eq!(stored["name"], "Countess");
    let updated = events(&server, "user-updated").await;
    assert_eq!(updated[0]["data"]["name"], "Countess");
    // Refusals change nothing.
    let taken = scim(&server, &token, "PATCH", &format!("/Users/{id}"), Some(json!({
        "schemas": [PATCH], "Operations": [{"op": "replace", "path": "userName", "value": "bob@example.com"}]
    }))).await;
    scim_error(&taken, 409, Some("uniqueness"));
    let duplicate = scim(
        &server,
        &token,
        "POST",
        "/Users",
        Some(json!({"schemas": [USER], "userName": "bob@example.com"})),
    )
    .await;
    scim_error(&duplicate, 409, Some("uniqueness"));
    let bad = scim(
        &server,
        &token,
        "POST",
        "/Users",
        Some(json!({"schemas": [USER], "userName": "has space"})),
    )
    .await;
    scim_error(&bad, 400, Some("invalidValue"));
    let bad = scim(
        &server,
        &token,
        "PATCH",
        &format!("/Users/{id}"),
        Some(json!({"Operations": [{"op": "frob"}]})),
    )
    .await;
    scim_error(&bad, 400, Some("invalidSyntax"));
    let bad = scim(&server, &token, "POST", "/Users", None).await;
    scim_error(&bad, 400, Some("invalidSyntax"));
    assert_eq!(
        admin_user(&server, &id).await.unwrap()["username"],
        "ada@example.com"
    );
    // Delete: gone from both APIs, with an event.
    let deleted = scim(&server, &token, "DELETE", &format!("/Users/{id}"), None).await;
    assert_eq!(deleted.status, 204);
    assert!(admin_user(&server, &id).await.is_none());
    scim_error(
        &scim(&server, &token, "GET", &format!("/Users/{id}"), None).await,
        404,
        None,
    );
    assert_eq!(
        events(&server, "user-deleted").await[0]["preData"]["scimId"],
        id.as_str()
    );
    // An unknown path below /scim/v2 is a SCIM 404; a wrong method 405.
    scim_error(
        &scim(&server, &token, "GET", "/Nothing", None).await,
        404,
        None,
    );
    let wrong = scim(&server, &token, "DELETE", "/ServiceProviderConfig", None).await;
    assert!(
        scim_error(&wrong, 405, None).contains("DELETE"),
        "{}",
        wrong.body
    );
    let config = scim(&server, &token, "GET", "/ServiceProviderConfig", None).await;
    assert_eq!(config.expect(200)["patch"]["supported"], true);
}

/// A session and a personal access token for `user_id`, written as the control plane writes them.
async fn session_and_token(db: &TestDb, user_id: i64, secret: &str) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let session = vexil_shared::token::sha256_hex(&format!("session-{secret}"));
    let pat = vexil_shared::token::sha256_hex(&format!("user:{secret}"));
    conn.execute(
        format!(
            "INSERT INTO user_sessions (session_hash, user_id, created_at, expires_at) VALUES \
         ('{session}', {user_id}, '2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z')"
        )
        .as_str(),
    )
    .await
    .unwrap();
    conn.execute(format!(
        "INSERT INTO personal_access_tokens (id, secret_hash, user_id, description, expires_at, created_at) \
         VALUES ({}, '{pat}', {user_id}, 'laptop', '2099-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
        1000 + user_id
    ).as_str()).await.unwrap();
}

async fn count(db: &TestDb, table: &str, user_id: i64) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE user_id = $1"))
        .bind(user_id)
        .fetch_one(&mut conn)
        .await
        .unwrap()
}

async fn deprovisioning_ends_sessions_and_tokens(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let token = enable(&server).await;
    for (user_name, deprovision) in [
        ("dee@example.com", "deactivate"),
        ("del@example.com", "delete"),
    ] {
        let user = create_user(&server, &token, user_name, "Someone").await;
        let id = user["id"].as_str().unwrap().to_owned();
        let user_id = admin_user(&server, &id).await.unwrap()["id"]
            .as_i64()
            .unwrap();
        session_and_token(&db, user_id, deprovision).await;
        let cookie = format!("vexil-session=session-{deprovision}");
        let pat = format!("user:{deprovision}");
        assert_eq!(
            signed_in(&server, &cookie).await.expect(200)["user"]["username"],
            user_name
        );
        server
            .send("GET", "/api/admin/user", None, Some(&pat))
            .await
            .expect(200);
        if deprovision == "deactivate" {
            // Entra's way: a path-less Replace with "False" as a string.
            let answer = scim(&server, &token, "PATCH", &format!("/Users/{id}"), Some(json!({
                "schemas": [PATCH], "Operations": [{"op": "Replace", "value": {"active": "False"}}]
            }))).await;
            assert_eq!(answer.expect(200)["active"], false);
            assert_eq!(admin_user(&server, &id).await.unwrap()["active"], false);
        } else {
            assert_eq!(
                scim(&server, &token, "DELETE", &format!("/Users/{id}"), None)
                    .await
                    .status,
                204
            );
        }
        assert_eq!(count(&db, "user_sessions", user_id).await, 0);
        assert_eq!(count(&db, "personal_access_tokens", user_id).await, 0);
        signed_in(&server, &cookie)
            .await
            .expect_error(401, "AuthenticationRequired");
        server
            .send("GET", "/api/admin/user", None, Some(&pat))
            .await
            .expect_error(401, "AuthenticationRequired");
        if deprovision == "deactivate" {
            // A session that would be made again does not authenticate while deactivated.
            session_and_token(&db, user_id, "again").await;
            server
                .send_with_headers(
                    "GET",
                    "/api/admin/user",
                    None,
                    &[("Cookie", "vexil-session=session-again")],
                )
                .await
                .expect_error(401, "AuthenticationRequired");
            let answer = scim(&server, &token, "PATCH", &format!("/Users/{id}"), Some(json!({
                "schemas": [PATCH], "Operations": [{"op": "replace", "path": "active", "value": true}]
            }))).await;
            assert_eq!(answer.expect(200)["active"], true);
            assert!(admin_user(&server, &id)
                .await
                .unwrap()
                .get("active")
                .is_none());
            server
                .send_with_headers(
                    "GET",
                    "/api/admin/user",
                    None,
                    &[("Cookie", "vexil-session=session-again")],
                )
                .await
                .expect(200);
        }
    }
}

/// `GET /api/admin/user` with this session cookie.
async fn signed_in(server: &Server, cookie: &str) -> Answer {
    server
        .send_with_headers("GET", "/api/admin/user", None, &[("Cookie", cookie)])
        .await
}

/// The session cookie of a new Editor, signed in with a password.
pub(crate) async fn editor_cookie(server: &Server) -> String {
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "ed", "password": "correct horse battery", "rootRole": 2}),
        )
        .await
        .expect(201);
    let login = reqwest::Client::new()
        .post(format!("{}/auth/simple/login", server.base))
        .json(&json!({"username": "ed", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    login.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}
