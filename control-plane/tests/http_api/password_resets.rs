//! Issue 32 §6: password reset links. An Admin's `POST /api/admin/user-admin/reset-password` answers the link
//! (no SMTP server here, so the Admin passes it on); `/auth/reset/validate` names its user; `/auth/reset/password`
//! sets the password once, ending the user's sessions; an expired, used, replaced or forged link is refused
//! with 401; a bad password with 400, the link still usable. A user created without a password comes with a
//! welcome link (`inviteLink`). `/auth/reset/password-email` answers the same for any address, and is
//! throttled as sign-in is.

use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};
use sqlx::{AnyConnection, Connection};

crate::on_sqlite_and_postgres!(
    a_reset_link_sets_the_password_once,
    reset_links_expire_and_are_replaced,
    reset_refusals_change_nothing,
    a_user_created_without_a_password_gets_a_welcome_link,
    no_password_is_set_while_password_sign_in_is_off,
);

async fn anonymous(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> crate::server::Answer {
    server.send(method, path, body, None).await
}

async fn create_user(server: &Server, email: &str, password: Option<&str>) -> Value {
    let mut body = json!({"email": email, "name": "Grace", "rootRole": 3});
    if let Some(password) = password {
        body["password"] = json!(password);
    }
    server
        .post("/api/admin/user-admin", body)
        .await
        .expect(201)
        .clone()
}

/// The reset link of `email`, from the Admin's route; its token.
async fn reset_token(server: &Server, email: &str) -> String {
    let answer = server
        .post("/api/admin/user-admin/reset-password", json!({"id": email}))
        .await
        .expect(200)
        .clone();
    let url = answer["resetPasswordUrl"].as_str().unwrap();
    let prefix = format!("{}/reset-password?token=", server.base);
    assert!(url.starts_with(&prefix), "{url}");
    url[prefix.len()..].to_owned()
}

async fn sign_in(server: &Server, username: &str, password: &str) -> crate::server::Answer {
    anonymous(
        server,
        "POST",
        "/auth/simple/login",
        Some(json!({"username": username, "password": password})),
    )
    .await
}

async fn total_events(server: &Server) -> Value {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"].clone()
}

async fn a_reset_link_sets_the_password_once(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let user = create_user(&server, "grace@example.com", Some("old password")).await;
    assert!(user.get("inviteLink").is_none(), "{user}");
    assert_eq!(user["emailSent"], false);
    // A session from before the reset ends with it.
    let signed_in = server
        .client
        .post(format!("{}/auth/simple/login", server.base))
        .json(&json!({"username": "grace@example.com", "password": "old password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status().as_u16(), 200);
    let cookie = signed_in
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let session = [("Cookie", cookie.as_str())];
    server
        .send_with_headers("GET", "/api/admin/user", None, &session)
        .await
        .expect(200);

    let token = reset_token(&server, "grace@example.com").await;
    let validated = anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={token}"),
        None,
    )
    .await
    .expect(200)
    .clone();
    assert_eq!(validated["id"], user["id"]);
    assert_eq!(validated["email"], "grace@example.com");
    assert_eq!(validated["name"], "Grace");
    assert_eq!(validated["token"], token);
    assert_eq!(validated["role"]["id"], 3);
    // The store keeps only the verifier's hash.
    let (_, verifier) = token.split_once('.').unwrap();
    let mut conn = AnyConnection::connect(&db.url).await.unwrap();
    let stored: String = sqlx::query_scalar("SELECT verifier_hash FROM password_reset_tokens")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(stored.len(), 64);
    assert_ne!(stored, verifier);
    conn.close().await.unwrap();

    let updated_before = server
        .get("/api/admin/events?type=user-updated&limit=100")
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .len();
    anonymous(
        &server,
        "POST",
        "/auth/reset/password",
        Some(json!({"token": token, "password": "new password!"})),
    )
    .await
    .expect(200);
    sign_in(&server, "grace@example.com", "old password")
        .await
        .expect_error(401, "AuthenticationRequired");
    sign_in(&server, "grace@example.com", "new password!")
        .await
        .expect(200);
    server
        .send_with_headers("GET", "/api/admin/user", None, &session)
        .await
        .expect_error(401, "AuthenticationRequired");
    let updated_after = server
        .get("/api/admin/events?type=user-updated&limit=100")
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(updated_after, updated_before + 1);

    // Once only.
    anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={token}"),
        None,
    )
    .await
    .expect_error(401, "AuthenticationRequired");
    let before = total_events(&server).await;
    anonymous(
        &server,
        "POST",
        "/auth/reset/password",
        Some(json!({"token": token, "password": "third password"})),
    )
    .await
    .expect_error(401, "AuthenticationRequired");
    assert_eq!(total_events(&server).await, before);
    sign_in(&server, "grace@example.com", "third password")
        .await
        .expect_error(401, "AuthenticationRequired");
}

async fn reset_links_expire_and_are_replaced(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_user(&server, "grace@example.com", Some("old password")).await;
    // A newer link replaces the earlier one.
    let first = reset_token(&server, "grace@example.com").await;
    let second = reset_token(&server, "grace@example.com").await;
    anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={first}"),
        None,
    )
    .await
    .expect_error(401, "AuthenticationRequired");
    anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={second}"),
        None,
    )
    .await
    .expect(200);
    // Its expiry passes (moved into the past in the store: links last two hours).
    let mut conn = AnyConnection::connect(&db.url).await.unwrap();
    sqlx::query("UPDATE password_reset_tokens SET expires_at = '2000-01-01T00:00:00.000Z'")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={second}"),
        None,
    )
    .await
    .expect_error(401, "AuthenticationRequired");
    anonymous(
        &server,
        "POST",
        "/auth/reset/password",
        Some(json!({"token": second, "password": "new password!"})),
    )
    .await
    .expect_error(401, "AuthenticationRequired");
    sign_in(&server, "grace@example.com", "old password")
        .await
        .expect(200);
}

async fn reset_refusals_change_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_user(&server, "grace@example.com", Some("old password")).await;
    let token = reset_token(&server, "grace@example.com").await;
    let before = total_events(&server).await;
    // Bad bodies and bad passwords: 400, the link still usable.
    for body in [
        json!({"token": token, "password": "short"}),
        json!({"token": token}),
        json!({"password": "long enough"}),
        json!("text"),
    ] {
        anonymous(&server, "POST", "/auth/reset/password", Some(body))
            .await
            .expect_error(400, "ValidationError");
    }
    anonymous(&server, "GET", "/auth/reset/validate", None)
        .await
        .expect_error(400, "ValidationError");
    anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={token}"),
        None,
    )
    .await
    .expect(200);
    // Forged tokens: 401.
    let (selector, _) = token.split_once('.').unwrap();
    for forged in [
        format!("{selector}.{}", "0".repeat(48)),
        "nonsense".to_owned(),
    ] {
        anonymous(
            &server,
            "GET",
            &format!("/auth/reset/validate?token={forged}"),
            None,
        )
        .await
        .expect_error(401, "AuthenticationRequired");
        anonymous(
            &server,
            "POST",
            "/auth/reset/password",
            Some(json!({"token": forged, "password": "new password!"})),
        )
        .await
        .expect_error(401, "AuthenticationRequired");
    }
    assert_eq!(total_events(&server).await, before);
    sign_in(&server, "grace@example.com", "old password")
        .await
        .expect(200);
    // The password rules, without a link.
    anonymous(
        &server,
        "POST",
        "/auth/reset/validate-password",
        Some(json!({"password": "short"})),
    )
    .await
    .expect_error(400, "ValidationError");
    anonymous(
        &server,
        "POST",
        "/auth/reset/validate-password",
        Some(json!({"password": "long enough"})),
    )
    .await
    .expect(200);
    // The Admin's route: an unknown user 404, a bad body 400, no credential 401.
    server
        .post(
            "/api/admin/user-admin/reset-password",
            json!({"id": "nobody@example.com"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .post(
            "/api/admin/user-admin/reset-password",
            json!({"email": "grace@example.com"}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .send(
            "POST",
            "/api/admin/user-admin/reset-password",
            Some(json!({"id": "grace@example.com"})),
            None,
        )
        .await
        .expect_error(401, "AuthenticationRequired");
    // The anonymous e-mail request: the same answer for a user and for nobody; not an address is 400.
    for email in ["grace@example.com", "nobody@example.com"] {
        let answer = anonymous(
            &server,
            "POST",
            "/auth/reset/password-email",
            Some(json!({"email": email})),
        )
        .await;
        assert_eq!((answer.status, answer.body.clone()), (200, Value::Null));
    }
    anonymous(
        &server,
        "POST",
        "/auth/reset/password-email",
        Some(json!({"email": "no at sign"})),
    )
    .await
    .expect_error(400, "ValidationError");
    // Without SMTP nothing was issued: the Admin's link still works.
    anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={token}"),
        None,
    )
    .await
    .expect(200);
    // Throttled as sign-in: ten requests for one address in five minutes, then 429.
    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(
            anonymous(
                &server,
                "POST",
                "/auth/reset/password-email",
                Some(json!({"email": "Grace@example.com"})),
            )
            .await
            .status,
        );
    }
    assert_eq!(
        statuses.iter().filter(|status| **status == 200).count(),
        9,
        "{statuses:?}"
    );
    let limited = anonymous(
        &server,
        "POST",
        "/auth/reset/password-email",
        Some(json!({"email": "grace@example.com"})),
    )
    .await;
    limited.expect_error(429, "RateLimitError");
}

async fn a_user_created_without_a_password_gets_a_welcome_link(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let created = create_user(&server, "new@example.com", None).await;
    assert_eq!(created["email"], "new@example.com");
    assert_eq!(created["emailSent"], false);
    let link = created["inviteLink"].as_str().unwrap();
    let prefix = format!("{}/new-user?token=", server.base);
    assert!(link.starts_with(&prefix), "{link}");
    let token = &link[prefix.len()..];
    let validated = anonymous(
        &server,
        "GET",
        &format!("/auth/reset/validate?token={token}"),
        None,
    )
    .await
    .expect(200)
    .clone();
    assert_eq!(validated["id"], created["id"]);
    anonymous(
        &server,
        "POST",
        "/auth/reset/password",
        Some(json!({"token": token, "password": "first password"})),
    )
    .await
    .expect(200);
    sign_in(&server, "new@example.com", "first password")
        .await
        .expect(200);
    // `ui-config` says no e-mail is sent here.
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["emailEnabled"],
        false
    );
    // `--public-url` sets where links point.
    drop(server);
    let server = Server::start(&db, &["--public-url", "https://flags.example.com/"]).await;
    let created = create_user(&server, "other@example.com", None).await;
    assert!(
        created["inviteLink"]
            .as_str()
            .unwrap()
            .starts_with("https://flags.example.com/new-user?token="),
        "{created}"
    );
}

async fn no_password_is_set_while_password_sign_in_is_off(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_user(&server, "grace@example.com", Some("old password")).await;
    let token = reset_token(&server, "grace@example.com").await;
    let invite = server
        .post(
            "/api/admin/invite-link/tokens",
            json!({"name": "Team", "expiresAt": "2099-01-01T00:00:00.000Z"}),
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    // Single sign-on on, password sign-in off.
    server
        .post(
            "/api/admin/auth/oidc/settings",
            json!({"enabled": true, "discoverUrl": "https://idp.example.com", "clientId": "vexil", "secret": "s"}),
        )
        .await
        .expect(200);
    server
        .post("/api/admin/auth/simple/settings", json!({"disabled": true}))
        .await
        .expect(200);
    let before = total_events(&server).await;
    anonymous(
        &server,
        "POST",
        "/auth/reset/password",
        Some(json!({"token": token, "password": "new password!"})),
    )
    .await
    .expect_error(404, "NotFoundError");
    anonymous(
        &server,
        "POST",
        "/auth/reset/password-email",
        Some(json!({"email": "grace@example.com"})),
    )
    .await
    .expect_error(404, "NotFoundError");
    anonymous(
        &server,
        "POST",
        &format!("/invite/{invite}/signup"),
        Some(json!({"email": "new@example.com", "name": "New", "password": "long enough"})),
    )
    .await
    .expect_error(404, "NotFoundError");
    assert_eq!(total_events(&server).await, before);
    // Back on: the link still works.
    server
        .post(
            "/api/admin/auth/simple/settings",
            json!({"disabled": false}),
        )
        .await
        .expect(200);
    anonymous(
        &server,
        "POST",
        "/auth/reset/password",
        Some(json!({"token": token, "password": "new password!"})),
    )
    .await
    .expect(200);
}
