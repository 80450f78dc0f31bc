//! Issue 30: an instance cannot lose its last way in. The last user with the Admin root role can be neither
//! deleted nor demoted (admin API and UI forms; a second Admin makes it possible), and the sign-in page always
//! offers the operator's admin token, also once users exist.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::json;

crate::on_sqlite_and_postgres!(
    the_last_admin_stays_an_admin,
    the_admin_token_signs_in_while_users_exist,
);

async fn create_user(server: &Server, username: &str, role: &str) -> i64 {
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

async fn root_role(server: &Server, id: i64) -> i64 {
    server
        .get(&format!("/api/admin/user-admin/{id}"))
        .await
        .expect(200)["rootRole"]
        .as_i64()
        .unwrap()
}

async fn token_browser(server: &Server) -> (Browser, String) {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let csrf = browser.get("/admin/users").await.csrf();
    (browser, csrf)
}

async fn the_last_admin_stays_an_admin(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let editor = create_user(&server, "ed", "Editor").await;
    let ada = create_user(&server, "ada", "Admin").await;
    // The API refuses to demote or delete the only Admin user, and changes nothing.
    let message = server
        .put(
            &format!("/api/admin/user-admin/{ada}"),
            json!({"rootRole": "Editor"}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("last Admin user"), "{message}");
    let message = server
        .delete(&format!("/api/admin/user-admin/{ada}"))
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("last Admin user cannot be deleted"),
        "{message}"
    );
    assert_eq!(root_role(&server, ada).await, 1);
    // The same rule in the UI's user forms, the message shown.
    let (mut browser, csrf) = token_browser(&server).await;
    let demote = |role: &'static str| {
        [
            ("csrf", csrf.clone()),
            ("name", "Ada".to_owned()),
            ("email", String::new()),
            ("rootRole", role.to_owned()),
        ]
    };
    let fields = demote("2");
    let form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refused = browser.post(&format!("/admin/users/{ada}"), &form).await;
    let text = refused.expect(400);
    assert!(
        text.contains("the last Admin user must keep the Admin root role"),
        "{text}"
    );
    assert_eq!(root_role(&server, ada).await, 1);
    let refused = browser
        .post(&format!("/admin/users/{ada}/delete"), &[("csrf", &csrf)])
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("The last Admin user cannot be deleted"),
        "{text}"
    );
    assert_eq!(root_role(&server, ada).await, 1);
    // Other users are not concerned.
    server
        .put(
            &format!("/api/admin/user-admin/{editor}"),
            json!({"rootRole": "Viewer"}),
        )
        .await
        .expect(200);
    // A second Admin makes both possible; then that one is the last.
    let bea = create_user(&server, "bea", "Admin").await;
    let saved = browser.post(&format!("/admin/users/{ada}"), &form).await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert_eq!(root_role(&server, ada).await, 2);
    server
        .put(
            &format!("/api/admin/user-admin/{bea}"),
            json!({"rootRole": "Viewer"}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .put(
            &format!("/api/admin/user-admin/{ada}"),
            json!({"rootRole": "Admin"}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/user-admin/{bea}"))
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/user-admin/{ada}"))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(root_role(&server, ada).await, 1);
}

async fn the_admin_token_signs_in_while_users_exist(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    // The first user is an Editor: no user can administer the instance, the operator's token still can.
    create_user(&server, "ed", "Editor").await;
    let mut browser = Browser::new(&server);
    let login = browser.get("/login").await;
    let text = login.expect(200);
    assert!(text.contains("Sign in with an admin token"), "{text}");
    assert!(text.contains("name=\"token\""), "{text}");
    let wrong = browser.sign_in(&[("token", "*:*.not-the-token")]).await;
    assert!(wrong.expect(401).contains("not valid"), "{}", wrong.text);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/admin/users")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert_eq!(signed.location.as_deref(), Some("/admin/users"));
    assert!(signed.set_cookies[0].starts_with("vexil-admin-token="));
    let users = browser.get("/admin/users").await;
    let text = users.expect(200);
    assert!(text.contains("ed"));
    // The header says a token is signed in, and offers no profile: a token has no account.
    assert!(
        text.contains("<span class=\"who\">Admin token init-admin-token-1</span>"),
        "{text}"
    );
    assert!(!text.contains(">Profile</a>"), "{text}");
}
