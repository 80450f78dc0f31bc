//! Users, sessions, personal access tokens and groups, through the real binary on SQLite and Postgres.

use crate::access::{create_user, events_of_type, is_hex, sign_in, FUTURE, PAST};
use crate::database::TestDb;
use crate::server::{Answer, Server, ADMIN_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(users_sessions_and_personal_access_tokens, group_round_trip);

async fn users_sessions_and_personal_access_tokens(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let created = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "alice", "email": "Alice@example.com", "name": "Alice",
                   "password": "correct horse battery", "rootRole": "Editor"}),
        )
        .await;
    let mut alice = created.expect(201).clone();
    // createUserResponseSchema: the user, and whether a welcome e-mail went (none: she has a password).
    assert_eq!(alice["emailSent"], false);
    assert!(alice.get("inviteLink").is_none(), "{alice}");
    alice.as_object_mut().unwrap().remove("emailSent");
    let id = alice["id"].as_i64().unwrap();
    assert!(id >= 1);
    assert_eq!(alice["rootRole"], 2);
    assert_eq!(alice["username"], "alice");
    assert!(alice.get("password").is_none() && !alice.to_string().contains("argon2"));
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "alice", "rootRole": 3}),
        )
        .await
        .expect_error(409, "NameExistsError");
    for (body, field) in [
        (json!({"name": "x", "rootRole": 3}), "username or email"),
        (json!({"username": "bob", "rootRole": 9}), "rootRole"),
        (
            json!({"username": "bob", "rootRole": 3, "password": "short"}),
            "password",
        ),
        (json!({"email": "not-an-email", "rootRole": 3}), "email"),
    ] {
        let message = server
            .post("/api/admin/user-admin", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{body}: {message}");
    }
    let list = server
        .get("/api/admin/user-admin")
        .await
        .expect(200)
        .clone();
    assert_eq!(list["users"].as_array().unwrap().len(), 1);
    assert_eq!(list["rootRoles"][0]["name"], "Admin");
    assert_eq!(list["rootRoles"][2]["id"], 3);
    assert_eq!(
        server
            .get(&format!("/api/admin/user-admin/{id}"))
            .await
            .expect(200),
        &alice
    );
    server
        .get("/api/admin/user-admin/999")
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/user-admin/abc")
        .await
        .expect_error(400, "ValidationError");

    // Sign in: wrong password and unknown user are the same 401; the e-mail works in any case.
    for (username, password) in [
        ("alice", "wrong password"),
        ("nobody", "correct horse battery"),
    ] {
        let message = server
            .send(
                "POST",
                "/auth/simple/login",
                Some(json!({"username": username, "password": password})),
                None,
            )
            .await
            .expect_error(401, "AuthenticationRequired");
        assert_eq!(message, "Wrong username or password");
    }
    sign_in(&server, "alice@EXAMPLE.com", "correct horse battery").await;
    let cookie = sign_in(&server, "alice", "correct horse battery").await;
    let session = [("Cookie", cookie.as_str())];
    let me = server
        .send_with_headers("GET", "/api/admin/user", None, &session)
        .await;
    assert_eq!(me.expect(200)["user"]["id"], id);
    assert!(me.body["user"]["seenAt"].is_string());
    server
        .send_with_headers(
            "GET",
            "/api/admin/user",
            None,
            &[("Cookie", "vexil-session=forged")],
        )
        .await
        .expect_error(401, "AuthenticationRequired");
    // An admin token has no user.
    server
        .get("/api/admin/user")
        .await
        .expect_error(403, "NoAccessError");
    server
        .get("/api/admin/user/tokens")
        .await
        .expect_error(403, "NoAccessError");

    // A personal access token, made with the session, acts as alice (an Editor).
    server
        .send_with_headers(
            "POST",
            "/api/admin/user/tokens",
            Some(json!({"description": "ci", "expiresAt": PAST})),
            &session,
        )
        .await
        .expect_error(400, "ValidationError");
    let pat = server
        .send_with_headers(
            "POST",
            "/api/admin/user/tokens",
            Some(json!({"description": "ci", "expiresAt": FUTURE})),
            &session,
        )
        .await
        .expect(201)
        .clone();
    let secret = pat["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("user:") && is_hex(&secret[5..]) && secret.len() >= 5 + 32,
        "{secret}"
    );
    assert_eq!(pat["userId"], id);
    let pats = server
        .send("GET", "/api/admin/user/tokens", None, Some(&secret))
        .await
        .expect(200)
        .clone();
    assert_eq!(pats["pats"].as_array().unwrap().len(), 1);
    assert!(pats["pats"][0]["secret"].is_null());
    server
        .send(
            "POST",
            "/api/admin/projects",
            Some(json!({"id": "alices", "name": "Alice's"})),
            Some(&secret),
        )
        .await
        .expect(201);
    server
        .send("GET", "/api/admin/user-admin", None, Some(&secret))
        .await
        .expect_error(403, "NoAccessError");
    let created = events_of_type(&server, "project-created").await;
    assert_eq!(created[0]["createdBy"], "alice");
    assert_eq!(created[0]["createdByUserId"], id);

    // Down to Viewer: read only.
    let updated = server
        .put(
            &format!("/api/admin/user-admin/{id}"),
            json!({"rootRole": 3, "name": "Alice V."}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["rootRole"], 3);
    assert_eq!(updated["email"], "Alice@example.com");
    server
        .send(
            "POST",
            "/api/admin/projects",
            Some(json!({"id": "more", "name": "More"})),
            Some(&secret),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("GET", "/api/admin/projects", None, Some(&secret))
        .await
        .expect(200);

    // Delete the PAT: 401 with it; delete the user: the session goes too.
    let pat_id = pat["id"].as_i64().unwrap();
    server
        .send_with_headers("DELETE", "/api/admin/user/tokens/999", None, &session)
        .await
        .expect_error(404, "NotFoundError");
    server
        .send_with_headers(
            "DELETE",
            &format!("/api/admin/user/tokens/{pat_id}"),
            None,
            &session,
        )
        .await
        .expect(200);
    server
        .send("GET", "/api/admin/projects", None, Some(&secret))
        .await
        .expect_error(401, "AuthenticationRequired");
    server
        .delete(&format!("/api/admin/user-admin/{id}"))
        .await
        .expect(200);
    server
        .send_with_headers("GET", "/api/admin/user", None, &session)
        .await
        .expect_error(401, "AuthenticationRequired");
    server
        .delete(&format!("/api/admin/user-admin/{id}"))
        .await
        .expect_error(404, "NotFoundError");

    for (event_type, count) in [
        ("user-created", 1),
        ("user-updated", 1),
        ("user-deleted", 1),
        ("pat-created", 1),
        ("pat-deleted", 1),
    ] {
        assert_eq!(
            events_of_type(&server, event_type).await.len(),
            count,
            "{event_type}"
        );
    }
    assert_eq!(
        events_of_type(&server, "pat-created").await[0]["createdBy"],
        "alice"
    );

    // With password sign-in off, there is no login.
    drop(server);
    let server = Server::start(&db, &["--disable-password-auth"]).await;
    server
        .send(
            "POST",
            "/auth/simple/login",
            Some(json!({"username": "alice", "password": "correct horse battery"})),
            None,
        )
        .await
        .expect_error(404, "NotFoundError");
}

async fn group_round_trip(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let one = create_user(&server, "one", json!(3)).await;
    let two = create_user(&server, "two", json!(3)).await;
    let three = create_user(&server, "three", json!(3)).await;

    let response = server
        .client
        .post(format!("{}/api/admin/groups", server.base))
        .header("Authorization", ADMIN_TOKEN)
        .json(&json!({"name": "ops", "description": "On call", "mappingsSSO": ["sso-ops"], "rootRole": 2,
                      "users": [{"user": {"id": one}}, {"user": {"id": two}}]}))
        .send()
        .await
        .unwrap();
    let location = response
        .headers()
        .get("location")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let created = Answer::read(response).await.expect(201).clone();
    let id = created["id"].as_i64().unwrap();
    assert_eq!(location, format!("/api/admin/groups/{id}"));
    assert_eq!(created["name"], "ops");
    assert_eq!(created["rootRole"], 2);
    assert_eq!(created["userCount"], 2);
    assert_eq!(created["projects"], json!([]));
    assert_eq!(created["createdBy"], "init-admin-token-1");
    let member = &created["users"][0];
    assert_eq!(member["user"]["id"], one);
    assert_eq!(member["user"]["username"], "one");
    assert_eq!(member["createdBy"], "init-admin-token-1");
    assert!(member["joinedAt"].is_string());
    let two_joined = created["users"][1]["joinedAt"].clone();

    server
        .post("/api/admin/groups", json!({"name": "ops"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .get("/api/admin/groups/abc")
        .await
        .expect_error(400, "ValidationError");
    server
        .get("/api/admin/groups/999")
        .await
        .expect_error(404, "NotFoundError");
    server
        .put("/api/admin/groups/999", json!({"name": "x"}))
        .await
        .expect_error(404, "NotFoundError");

    // PUT replaces everything; GET returns exactly what PUT returned.
    let written = json!({"name": "operations", "description": null, "mappingsSSO": [], "rootRole": null,
                         "users": [{"user": {"id": two}}, {"user": {"id": three}}]});
    let path = format!("/api/admin/groups/{id}");
    let replaced = server.put(&path, written).await.expect(200).clone();
    assert_eq!(server.get(&path).await.expect(200), &replaced);
    assert_eq!(replaced["name"], "operations");
    assert!(replaced["description"].is_null());
    assert_eq!(replaced["mappingsSSO"], json!([]));
    assert!(replaced["rootRole"].is_null());
    let ids: Vec<&Value> = replaced["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["user"]["id"])
        .collect();
    assert_eq!(ids, [&json!(two), &json!(three)]);
    assert_eq!(
        replaced["users"][0]["joinedAt"], two_joined,
        "a member who stays keeps joinedAt"
    );
    assert_eq!(replaced["userCount"], 2);
    let list = server.get("/api/admin/groups").await.expect(200).clone();
    assert_eq!(list["groups"], json!([replaced]));

    // Bad writes change nothing.
    for (body, field) in [
        (
            json!({"name": "x", "users": [{"user": {"id": 999}}]}),
            "users[0].user.id",
        ),
        (json!({"name": "x", "rootRole": 7}), "rootRole"),
        (json!({"name": ""}), "name"),
        (json!({"description": "no name"}), "name"),
    ] {
        let message = server
            .put(&path, body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{body}: {message}");
    }
    server
        .post("/api/admin/groups", json!({"name": "other"}))
        .await
        .expect(201);
    server
        .put(&path, json!({"name": "other"}))
        .await
        .expect_error(409, "NameExistsError");
    assert_eq!(server.get(&path).await.expect(200), &replaced);

    // Membership events: one, two added; one removed, three added.
    let added = events_of_type(&server, "group-user-added").await;
    let removed = events_of_type(&server, "group-user-removed").await;
    assert_eq!(added.len(), 3);
    assert_eq!(added[0]["data"], json!({"groupId": id, "userId": three}));
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["preData"], json!({"groupId": id, "userId": one}));
    assert_eq!(events_of_type(&server, "group-created").await.len(), 2);
    let updated = events_of_type(&server, "group-updated").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["preData"]["name"], "ops");

    server.delete(&path).await.expect(200);
    server.get(&path).await.expect_error(404, "NotFoundError");
    server
        .delete(&path)
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(events_of_type(&server, "group-deleted").await.len(), 1);
    server
        .get(&format!("/api/admin/user-admin/{two}"))
        .await
        .expect(200);
}
