//! Admin routes of Unleash 8.2 for credentials and users through the real binary, on SQLite and Postgres:
//! project API tokens, the caller's profile, roles and password, and user administration.

use crate::access::{sign_in, user_with_pat};
use crate::admin_more::PROJECT;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;

crate::on_sqlite_and_postgres!(
    project_api_tokens,
    profile_roles_and_passwords,
    user_administration,
);

async fn project_api_tokens(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let tokens = format!("{PROJECT}/api-tokens");
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let body = json!({"tokenName": "shop", "type": "client", "environment": "development"});
    server
        .send("POST", &tokens, Some(body.clone()), Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    let created = server
        .send("POST", &tokens, Some(body), Some(&editor))
        .await;
    let created = created.expect(201).clone();
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("default:development."), "{secret}");
    assert_eq!(created["projects"], json!(["default"]));
    assert_eq!(created["type"], "client");
    // It works on the client API.
    server
        .send("GET", "/api/client/features", None, Some(&secret))
        .await
        .expect(200);

    server
        .post(&tokens, json!({"tokenName": "root", "type": "admin"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            &tokens,
            json!({"tokenName": "web", "type": "FRONTEND", "environment": "nowhere"}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/projects/nowhere/api-tokens",
            json!({"tokenName": "x", "type": "client"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    // A token of all projects is not the project's.
    server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "everything", "type": "client"}),
        )
        .await
        .expect(201);

    let list = server.send("GET", &tokens, None, Some(&viewer)).await;
    let list = list.expect(200)["tokens"].clone();
    // The start-up client and frontend tokens are for project default too; `everything` is not listed.
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|token| token["tokenName"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{list}");
    assert!(
        names.contains(&"shop") && !names.contains(&"everything"),
        "{names:?}"
    );
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .all(|token| token["secret"].is_null()));

    let by_name = server.get("/api/admin/api-tokens/shop").await;
    let by_name = by_name.expect(200)["tokens"].clone();
    assert_eq!(by_name.as_array().unwrap().len(), 1);
    assert!(by_name[0]["secret"].is_null());
    let none = server.get("/api/admin/api-tokens/nobody").await;
    assert_eq!(none.expect(200)["tokens"], json!([]));
    server
        .send("GET", "/api/admin/api-tokens/shop", None, Some(&editor))
        .await
        .expect_error(403, "NoAccessError");

    server
        .delete(&format!("{tokens}/default:development.not-a-token"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .send("DELETE", &format!("{tokens}/{secret}"), None, Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("DELETE", &format!("{tokens}/{secret}"), None, Some(&editor))
        .await
        .expect(200);
    let list = server.get(&tokens).await;
    assert_eq!(list.expect(200)["tokens"].as_array().unwrap().len(), 2);
    server
        .send("GET", "/api/client/features", None, Some(&secret))
        .await
        .expect_error(401, "AuthenticationRequired");
    let deleted = server.get("/api/admin/events?type=api-token-deleted").await;
    assert_eq!(deleted.expect(200)["events"].as_array().unwrap().len(), 1);
}

async fn profile_roles_and_passwords(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (id, pat) = user_with_pat(&server, "ed", "Editor").await;
    server
        .post(
            "/api/admin/groups",
            json!({"name": "reviewers", "users": [{"user": {"id": id}}]}),
        )
        .await
        .expect(201);
    let profile = server
        .send("GET", "/api/admin/user/profile", None, Some(&pat))
        .await;
    let profile = profile.expect(200).clone();
    assert_eq!(profile["rootRole"]["name"], "Editor");
    assert_eq!(profile["rootRole"]["id"], 2);
    assert_eq!(profile["rootRole"]["type"], "root");
    assert_eq!(profile["groups"][0]["name"], "reviewers");
    assert_eq!(profile["projects"], json!([]));
    assert_eq!(profile["features"], json!([]));
    assert_eq!(profile["subscriptions"], json!([]));
    assert_eq!(profile["canChangePassword"], true);
    server
        .get("/api/admin/user/profile")
        .await
        .expect_error(403, "NoAccessError");

    let roles = server
        .send("GET", "/api/admin/user/roles", None, Some(&pat))
        .await;
    let roles = roles.expect(200).clone();
    assert_eq!(roles["version"], 1);
    assert_eq!(roles["roles"][0]["name"], "Editor");
    let in_project = server
        .send(
            "GET",
            "/api/admin/user/roles?projectId=default",
            None,
            Some(&pat),
        )
        .await;
    assert_eq!(in_project.expect(200)["roles"], json!([]));

    let change = "/api/admin/user/change-password";
    let cookie = sign_in(&server, "ed", "correct horse battery").await;
    server
        .send(
            "POST",
            change,
            Some(json!({"password": "a new secret", "oldPassword": "wrong one!"})),
            Some(&pat),
        )
        .await
        .expect_error(401, "AuthenticationRequired");
    server
        .send(
            "POST",
            change,
            Some(json!({"password": "a new secret", "confirmPassword": "another", "oldPassword": "correct horse battery"})),
            Some(&pat),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .send(
            "POST",
            change,
            Some(json!({"password": "short", "oldPassword": "correct horse battery"})),
            Some(&pat),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .send(
            "POST",
            change,
            Some(json!({"password": "a new secret", "oldPassword": "correct horse battery"})),
            Some(&pat),
        )
        .await
        .expect(200);
    // The old session ended; the new password signs in, the old one does not.
    server
        .send_with_headers("GET", "/api/admin/user", None, &[("Cookie", &cookie)])
        .await
        .expect_error(401, "AuthenticationRequired");
    sign_in(&server, "ed", "a new secret").await;
    let old = server
        .client
        .post(format!("{}/auth/simple/login", server.base))
        .json(&json!({"username": "ed", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(old.status().as_u16(), 401);
    server
        .post(change, json!({"password": "a new secret"}))
        .await
        .expect_error(403, "NoAccessError");
    let updated = server.get("/api/admin/events?type=user-updated").await;
    let text = updated.expect(200).to_string();
    assert!(
        !text.contains("a new secret") && !text.contains("argon2"),
        "{text}"
    );
}

async fn user_administration(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (editor_id, editor) = user_with_pat(&server, "editor.one", "Editor").await;
    user_with_pat(&server, "boss", "Admin").await;
    server
        .post(
            "/api/admin/user-admin",
            json!({"email": "Service@Example.com", "rootRole": "Admin"}),
        )
        .await
        .expect(201);

    let found = server.get("/api/admin/user-admin/search?q=EDITOR").await;
    let found = found.expect(200).clone();
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(found[0]["id"], editor_id);
    let by_mail = server
        .get("/api/admin/user-admin/search?q=example.com")
        .await;
    assert_eq!(by_mail.expect(200).as_array().unwrap().len(), 1);
    let none = server.get("/api/admin/user-admin/search?q=zzz").await;
    assert_eq!(none.expect(200), &json!([]));
    server
        .send(
            "GET",
            "/api/admin/user-admin/search?q=a",
            None,
            Some(&editor),
        )
        .await
        .expect_error(403, "NoAccessError");

    let access = server.get("/api/admin/user-admin/access").await;
    let access = access.expect(200).clone();
    assert_eq!(access["users"].as_array().unwrap().len(), 3);
    assert_eq!(access["groups"], json!([]));
    server
        .send("GET", "/api/admin/user-admin/access", None, Some(&editor))
        .await
        .expect_error(403, "NoAccessError");

    let count = server.get("/api/admin/user-admin/admin-count").await;
    assert_eq!(
        count.expect(200),
        &json!({"password": 1, "noPassword": 1, "service": 0})
    );

    let validate = "/api/admin/user-admin/validate-password";
    server
        .post(validate, json!({"password": "long enough"}))
        .await
        .expect(200);
    server
        .post(validate, json!({"password": "short"}))
        .await
        .expect_error(400, "ValidationError");

    let change = format!("/api/admin/user-admin/{editor_id}/change-password");
    server
        .send(
            "POST",
            &change,
            Some(json!({"password": "set by admin"})),
            Some(&editor),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .post(&change, json!({"password": "set by admin"}))
        .await
        .expect(200);
    sign_in(&server, "editor.one", "set by admin").await;
    server
        .post(&change, json!({"password": "tiny"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/user-admin/999/change-password",
            json!({"password": "set by admin"}),
        )
        .await
        .expect_error(404, "NotFoundError");

    // Inactive users: one created long ago and never signed in.
    let old = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "old", "rootRole": "Viewer"}),
        )
        .await;
    let old = old.expect(201)["id"].as_i64().unwrap();
    let inactive = server.get("/api/admin/user-admin/inactive").await;
    assert_eq!(inactive.expect(200)["inactiveUsers"], json!([]));
    age_user(&db, old).await;
    let inactive = server.get("/api/admin/user-admin/inactive").await;
    let inactive = inactive.expect(200).clone();
    assert_eq!(inactive["version"], 1);
    assert_eq!(inactive["inactiveUsers"].as_array().unwrap().len(), 1);
    assert_eq!(inactive["inactiveUsers"][0]["id"], old);
    assert_eq!(inactive["inactiveUsers"][0]["username"], "old");
    assert!(inactive["inactiveUsers"][0]["seenAt"].is_null());
    let delete = "/api/admin/user-admin/inactive/delete";
    // An active user in the list: nothing deleted.
    server
        .post(delete, json!({"ids": [old, editor_id]}))
        .await
        .expect_error(400, "ValidationError");
    server
        .get(&format!("/api/admin/user-admin/{old}"))
        .await
        .expect(200);
    server
        .send("POST", delete, Some(json!({"ids": [old]})), Some(&editor))
        .await
        .expect_error(403, "NoAccessError");
    server.post(delete, json!({"ids": [old]})).await.expect(200);
    server
        .get(&format!("/api/admin/user-admin/{old}"))
        .await
        .expect_error(404, "NotFoundError");
}

/// Makes a user look created long ago (the control plane has no clock to wind).
async fn age_user(db: &TestDb, id: i64) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    conn.execute(
        format!("UPDATE users SET created_at = '2020-01-01T00:00:00.000Z' WHERE id = {id}")
            .as_str(),
    )
    .await
    .unwrap();
}
