//! Issue 32 §5: service accounts (`/api/admin/service-account…`, Unleash's schemas). A token acts on the admin
//! API with the account's root role and is named in events as the account; deleting a token or the account
//! ends it at once; accounts are not people (no user list, no sign-in, not an Admin for the last-Admin rule);
//! bad input is a 400 that changes nothing, an unknown id 404, anyone but an Admin 403.

use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    a_service_account_token_acts_with_the_accounts_role,
    service_account_refusals_change_nothing,
    service_accounts_are_not_people,
);

const ACCOUNTS: &str = "/api/admin/service-account";

async fn create_account(server: &Server, username: &str, role: i64) -> Value {
    server
        .post(
            ACCOUNTS,
            json!({"username": username, "name": format!("{username} bot"), "rootRole": role}),
        )
        .await
        .expect(201)
        .clone()
}

async fn create_token(server: &Server, id: i64, description: &str) -> Value {
    server
        .post(
            &format!("{ACCOUNTS}/{id}/token"),
            json!({"description": description, "expiresAt": "2099-01-01T00:00:00.000Z"}),
        )
        .await
        .expect(201)
        .clone()
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

async fn a_service_account_token_acts_with_the_accounts_role(db: TestDb) {
    let server = Server::start(&db, &["--token-seen-interval", "200ms"]).await;
    let account = create_account(&server, "ci-bot", 3).await;
    let id = account["id"].as_i64().unwrap();
    assert_eq!(account["username"], "ci-bot");
    assert_eq!(account["name"], "ci-bot bot");
    assert_eq!(account["rootRole"], 3);
    assert_eq!(account["tokens"], json!([]));
    assert!(account["seenAt"].is_null());
    assert_timestamp(&account["createdAt"]);

    // The token: its secret shown once, `user:` and 56 hex characters; never in a list.
    let token = create_token(&server, id, "deploys").await;
    let secret = token["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("user:") && secret.len() == 61,
        "{secret}"
    );
    assert_eq!(token["userId"], id);
    assert_eq!(token["description"], "deploys");
    assert_eq!(token["expiresAt"], "2099-01-01T00:00:00.000Z");
    let tokens = server
        .get(&format!("{ACCOUNTS}/{id}/token"))
        .await
        .expect(200)
        .clone();
    assert_eq!(tokens["pats"].as_array().unwrap().len(), 1);
    assert!(tokens["pats"][0]["secret"].is_null());
    let list = server.get(ACCOUNTS).await.expect(200).clone();
    assert_eq!(list["serviceAccounts"].as_array().unwrap().len(), 1);
    assert_eq!(list["serviceAccounts"][0]["tokens"][0]["id"], token["id"]);
    assert!(list["serviceAccounts"][0]["tokens"][0]["secret"].is_null());
    assert_eq!(list["rootRoles"].as_array().unwrap().len(), 3);
    assert!(!list.to_string().contains(&secret));

    // A Viewer account reads and changes nothing.
    let as_account = |method: &'static str, path: &'static str, body: Option<Value>| {
        let secret = secret.clone();
        let server = &server;
        async move { server.send(method, path, body, Some(&secret)).await }
    };
    as_account("GET", "/api/admin/projects", None)
        .await
        .expect(200);
    let flag = json!({"name": "bot-made"});
    as_account(
        "POST",
        "/api/admin/projects/default/features",
        Some(flag.clone()),
    )
    .await
    .expect_error(403, "NoAccessError");
    // Nor does it reach the access area, or an own account (it has none).
    as_account("GET", ACCOUNTS, None)
        .await
        .expect_error(403, "NoAccessError");
    as_account("GET", "/api/admin/user", None)
        .await
        .expect_error(403, "NoAccessError");
    as_account(
        "POST",
        "/api/admin/user/tokens",
        Some(json!({"description": "more", "expiresAt": "2099-01-01T00:00:00.000Z"})),
    )
    .await
    .expect_error(403, "NoAccessError");

    // Made an Editor, the same token creates a flag, and the event names the account.
    let updated = server
        .put(&format!("{ACCOUNTS}/{id}"), json!({"rootRole": 2}))
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["rootRole"], 2);
    assert_eq!(updated["name"], "ci-bot bot");
    as_account("POST", "/api/admin/projects/default/features", Some(flag))
        .await
        .expect(201);
    let created = events_of_type(&server, "feature-created").await;
    assert_eq!(created[0]["createdBy"], "ci-bot");
    assert_eq!(created[0]["createdByUserId"], id);
    let events = events_of_type(&server, "service-account-created").await;
    assert_eq!(events[0]["data"]["username"], "ci-bot");
    let events = events_of_type(&server, "service-account-updated").await;
    assert_eq!(events[0]["data"]["rootRole"], 2);
    assert_eq!(events[0]["preData"]["rootRole"], 3);
    assert!(!events_of_type(&server, "pat-created").await.is_empty());
    // Its use is noted on the token (written within the interval).
    let mut seen = Value::Null;
    for _ in 0..50 {
        seen = server
            .get(&format!("{ACCOUNTS}/{id}/token"))
            .await
            .expect(200)["pats"][0]["seenAt"]
            .clone();
        if !seen.is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_timestamp(&seen);
    // What its root role grants.
    let permissions = server
        .get(&format!("{ACCOUNTS}/{id}/permissions?project=default"))
        .await
        .expect(200)
        .clone();
    assert_eq!(permissions["rootRole"]["name"], "Editor");
    assert!(permissions["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|permission| permission["permission"] == "CREATE_FEATURE"));

    // Deleting the token ends it at once; another token works until the account goes, with it.
    let token_id = token["id"].as_i64().unwrap();
    server
        .delete(&format!("{ACCOUNTS}/{id}/token/{token_id}"))
        .await
        .expect(200);
    as_account("GET", "/api/admin/projects", None)
        .await
        .expect_error(401, "AuthenticationRequired");
    let second = create_token(&server, id, "second").await;
    let second = second["secret"].as_str().unwrap().to_owned();
    server
        .send("GET", "/api/admin/projects", None, Some(&second))
        .await
        .expect(200);
    server.delete(&format!("{ACCOUNTS}/{id}")).await.expect(200);
    server
        .send("GET", "/api/admin/projects", None, Some(&second))
        .await
        .expect_error(401, "AuthenticationRequired");
    let deleted = events_of_type(&server, "service-account-deleted").await;
    assert_eq!(deleted[0]["preData"]["username"], "ci-bot");
    server
        .get(&format!("{ACCOUNTS}/{id}/token"))
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(
        server.get(ACCOUNTS).await.expect(200)["serviceAccounts"],
        json!([])
    );
}

async fn service_account_refusals_change_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let account = create_account(&server, "terraform", 2).await;
    let id = account["id"].as_i64().unwrap();
    let before = server.get(ACCOUNTS).await.expect(200).clone();
    let events = total_events(&server).await;

    let bad_accounts = [
        json!({"name": "No username", "rootRole": 3}),
        json!({"username": "x", "rootRole": 3}),
        json!({"username": "has space", "name": "N", "rootRole": 3}),
        json!({"username": "", "name": "N", "rootRole": 3}),
        json!({"username": "x", "name": "  ", "rootRole": 3}),
        json!({"username": "x", "name": "N", "rootRole": 4}),
        json!({"username": "x", "name": "N", "rootRole": "Admin"}),
        json!({"username": "x".repeat(101), "name": "N", "rootRole": 3}),
        json!([]),
    ];
    for body in bad_accounts {
        let message = server
            .post(ACCOUNTS, body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(!message.is_empty(), "{body}");
    }
    server
        .post(
            ACCOUNTS,
            json!({"username": "terraform", "name": "Again", "rootRole": 3}),
        )
        .await
        .expect_error(409, "NameExistsError");
    for body in [
        json!({"rootRole": 0}),
        json!({"name": ""}),
        json!({"rootRole": "x"}),
    ] {
        server
            .put(&format!("{ACCOUNTS}/{id}"), body)
            .await
            .expect_error(400, "ValidationError");
    }
    for body in [
        json!({"description": "", "expiresAt": "2099-01-01T00:00:00.000Z"}),
        json!({"description": "old", "expiresAt": "2001-01-01T00:00:00.000Z"}),
        json!({"description": "bad", "expiresAt": "tomorrow"}),
        json!({"description": "none"}),
    ] {
        server
            .post(&format!("{ACCOUNTS}/{id}/token"), body)
            .await
            .expect_error(400, "ValidationError");
    }
    server
        .get("/api/admin/service-account/abc/token")
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(server.get(ACCOUNTS).await.expect(200).clone(), before);
    assert_eq!(total_events(&server).await, events);

    // Unknown ids.
    let unknown = id + 1000;
    let token = json!({"description": "t", "expiresAt": "2099-01-01T00:00:00.000Z"});
    for answer in [
        server
            .put(&format!("{ACCOUNTS}/{unknown}"), json!({"name": "N"}))
            .await,
        server.delete(&format!("{ACCOUNTS}/{unknown}")).await,
        server.get(&format!("{ACCOUNTS}/{unknown}/token")).await,
        server
            .post(&format!("{ACCOUNTS}/{unknown}/token"), token.clone())
            .await,
        server
            .delete(&format!("{ACCOUNTS}/{unknown}/token/1"))
            .await,
        server.delete(&format!("{ACCOUNTS}/{id}/token/999")).await,
        server
            .get(&format!("{ACCOUNTS}/{unknown}/permissions"))
            .await,
    ] {
        answer.expect_error(404, "NotFoundError");
    }
    // A token of another account is not this one's.
    let other = create_account(&server, "other", 3).await["id"]
        .as_i64()
        .unwrap();
    let other_token = create_token(&server, other, "theirs").await["id"]
        .as_i64()
        .unwrap();
    server
        .delete(&format!("{ACCOUNTS}/{id}/token/{other_token}"))
        .await
        .expect_error(404, "NotFoundError");

    // Anyone but an Admin: 403 (an Editor user's personal access token, an Admin service account's is fine).
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
    let cookie = login
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let pat = server
        .send_with_headers(
            "POST",
            "/api/admin/user/tokens",
            Some(json!({"description": "mine", "expiresAt": "2099-01-01T00:00:00.000Z"})),
            &[("Cookie", &cookie), ("Sec-Fetch-Site", "same-origin")],
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    for (method, path, body) in [
        ("GET", ACCOUNTS.to_owned(), None),
        (
            "POST",
            ACCOUNTS.to_owned(),
            Some(json!({"username": "sneaky", "name": "S", "rootRole": 1})),
        ),
        ("DELETE", format!("{ACCOUNTS}/{id}"), None),
        (
            "POST",
            format!("{ACCOUNTS}/{id}/token"),
            Some(token.clone()),
        ),
    ] {
        server
            .send(method, &path, body, Some(&pat))
            .await
            .expect_error(403, "NoAccessError");
    }
    let admin_account = create_account(&server, "admin-bot", 1).await["id"]
        .as_i64()
        .unwrap();
    let admin_secret = create_token(&server, admin_account, "all").await["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .send("GET", ACCOUNTS, None, Some(&admin_secret))
        .await
        .expect(200);
    server
        .send("GET", ACCOUNTS, None, None)
        .await
        .expect_error(401, "AuthenticationRequired");
}

async fn service_accounts_are_not_people(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let ada = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "ada", "password": "correct horse battery", "rootRole": 1}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let bot = create_account(&server, "admin-bot", 1).await["id"]
        .as_i64()
        .unwrap();
    // Not in the user list, nor reachable as a user; no user may take its username.
    let users = server
        .get("/api/admin/user-admin")
        .await
        .expect(200)
        .clone();
    assert_eq!(users["users"].as_array().unwrap().len(), 1);
    server
        .get(&format!("/api/admin/user-admin/{bot}"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete(&format!("/api/admin/user-admin/{bot}"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "admin-bot", "rootRole": 3}),
        )
        .await
        .expect_error(409, "NameExistsError");
    // Counted apart, and not an Admin for the last-Admin rule.
    let count = server
        .get("/api/admin/user-admin/admin-count")
        .await
        .expect(200)
        .clone();
    assert_eq!(count, json!({"password": 1, "noPassword": 0, "service": 1}));
    server
        .delete(&format!("/api/admin/user-admin/{ada}"))
        .await
        .expect_error(400, "ValidationError");
    // No group takes it.
    server
        .post(
            "/api/admin/groups",
            json!({"name": "bots", "users": [{"user": {"id": bot}}]}),
        )
        .await
        .expect_error(400, "ValidationError");
    // No password sign-in.
    let login = server
        .send_with_headers(
            "POST",
            "/auth/simple/login",
            Some(json!({"username": "admin-bot", "password": "anything at all"})),
            &[],
        )
        .await;
    login.expect_error(401, "AuthenticationRequired");
}
