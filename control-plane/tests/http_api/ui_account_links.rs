//! The web UI's invite links and password reset over HTTP, through the real binary: an Admin makes an invite
//! link (shown once, with Copy) and disables another; the sign-up page at the link makes the account once; an
//! Admin's "Create a reset link" on a user's page shows the link (no SMTP here); the reset page sets the
//! password once; "Forgot password?" says it cannot e-mail; refusals are drawn beside their fields and change
//! nothing; a form without the visitor's CSRF token is refused. (The browser walk, with a real SMTP server, is
//! `edge/tests/e2e/ui_account_links.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::json;

crate::on_sqlite_and_postgres!(invite_links_in_the_ui, reset_links_in_the_ui,);

/// The value of the read-only field with this id.
fn value_of(page: &Html, id: &str) -> String {
    let at = page
        .text
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no field {id} in {}", page.text));
    let rest = &page.text[at..];
    let value = rest.find("value=\"").unwrap() + "value=\"".len();
    rest[value..value + rest[value..].find('"').unwrap()].replace("&amp;", "&")
}

/// `http://host/path?query` → `/path?query`.
fn path_of(url: &str) -> String {
    let after_scheme = url.split_once("://").unwrap().1;
    after_scheme[after_scheme.find('/').unwrap()..].to_owned()
}

async fn admin_browser(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn invite_links_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut admin = admin_browser(&server).await;
    let list = admin.get("/admin/invite-links").await;
    let text = list.expect(200);
    assert!(text.contains("No invite links yet."), "{text}");
    assert!(
        text.contains("aria-current=\"page\">Invite links</a>"),
        "{text}"
    );
    let csrf = list.csrf();
    assert!(admin
        .get("/admin/invite-links/create")
        .await
        .expect(200)
        .contains("Create invite link"));

    // A past day is refused beside its field, what was typed kept; nothing is made.
    let refused = admin
        .post(
            "/admin/invite-links",
            &[
                ("csrf", &csrf),
                ("name", "Old <one>"),
                ("rootRole", "2"),
                ("expires", "2001-01-01"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(text.contains("id=\"link-expiry-error\""), "{text}");
    assert!(text.contains("value=\"Old &lt;one&gt;\""), "{text}");
    assert_eq!(
        server
            .get("/api/admin/invite-link/tokens")
            .await
            .expect(200)["tokens"],
        json!([])
    );

    let made = admin
        .post(
            "/admin/invite-links",
            &[
                ("csrf", &csrf),
                ("name", "Editors"),
                ("rootRole", "2"),
                ("expires", "2099-01-01"),
            ],
        )
        .await;
    let text = made.expect(201);
    assert!(text.contains("data-copy=\"invite-url\""), "{text}");
    let url = value_of(&made, "invite-url");
    assert!(
        url.starts_with(&format!("{}/new-user?invite=", server.base)),
        "{url}"
    );
    let list = admin.get("/admin/invite-links").await;
    let text = list.expect(200);
    assert!(text.contains("Editors") && text.contains("Open"), "{text}");
    assert!(!text.contains(&url), "the link is shown once");

    // The visitor's sign-up page: a bad password drawn again beside its field; then the account, once.
    let mut visitor = Browser::new(&server);
    let page = visitor.get(&path_of(&url)).await;
    assert!(page.expect(200).contains("Join Vexil"), "{}", page.text);
    let visitor_csrf = page.csrf();
    let invite = url.split_once("invite=").unwrap().1.to_owned();
    let refused = visitor
        .post(
            "/new-user",
            &[
                ("csrf", &visitor_csrf),
                ("invite", &invite),
                ("email", "ana@example.com"),
                ("name", "Ana"),
                ("password", "short"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("id=\"signup-password-error\"") && text.contains("at least 8"),
        "{text}"
    );
    assert!(text.contains("value=\"ana@example.com\""), "{text}");
    // Without the visitor's CSRF token: refused, nothing made.
    let mut stranger = Browser::new(&server);
    let forged = stranger
        .post(
            "/new-user",
            &[
                ("csrf", &visitor_csrf),
                ("invite", &invite),
                ("email", "eve@example.com"),
                ("name", "Eve"),
                ("password", "long enough"),
            ],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.text);
    let created = visitor
        .post(
            "/new-user",
            &[
                ("csrf", &visitor_csrf),
                ("invite", &invite),
                ("email", "ana@example.com"),
                ("name", "Ana"),
                ("password", "long enough"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    assert_eq!(created.location.as_deref(), Some("/login"));
    let login = visitor.get("/login").await;
    assert!(
        login.expect(200).contains("Your account was created"),
        "{}",
        login.text
    );
    let users = server.get("/api/admin/user-admin").await.expect(200)["users"].clone();
    let ana = users
        .as_array()
        .unwrap()
        .iter()
        .find(|user| user["email"] == "ana@example.com")
        .unwrap()
        .clone();
    assert_eq!(ana["rootRole"], 2);
    let signed = visitor
        .sign_in(&[("username", "ana@example.com"), ("password", "long enough")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    // Used: the page says so.
    let used = Browser::new(&server).get(&path_of(&url)).await;
    assert!(
        used.expect(400).contains("already been used"),
        "{}",
        used.text
    );

    // Disable an open one: it no longer works.
    admin
        .post(
            "/admin/invite-links",
            &[
                ("csrf", &csrf),
                ("name", "Viewers"),
                ("rootRole", "3"),
                ("expires", "2099-01-01"),
            ],
        )
        .await
        .expect(201);
    let tokens = server
        .get("/api/admin/invite-link/tokens")
        .await
        .expect(200)["tokens"]
        .clone();
    assert_eq!(tokens[0]["name"], "Viewers");
    let list = admin.get("/admin/invite-links").await;
    let text = list.expect(200).to_owned();
    assert!(text.contains("aria-label=\"Disable Viewers\""), "{text}");
    assert!(
        !text.contains("aria-label=\"Disable Editors\""),
        "a used link has nothing to disable"
    );
    let action = text.split("aria-label=\"Disable Viewers\"").next().unwrap();
    let action = action.rsplit("action=\"").next().unwrap();
    let action = &action[..action.find('"').unwrap()];
    let disabled = admin.post(action, &[("csrf", &csrf)]).await;
    assert_eq!(disabled.status, 303, "{}", disabled.text);
    let tokens = server
        .get("/api/admin/invite-link/tokens")
        .await
        .expect(200)["tokens"]
        .clone();
    assert_eq!(tokens[0]["enabled"], false);
    let list = admin.get("/admin/invite-links").await;
    assert!(list.expect(200).contains("was disabled"), "{}", list.text);
}

async fn reset_links_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let created = server
        .post(
            "/api/admin/user-admin",
            json!({"email": "bo@example.com", "name": "Bo", "password": "old password", "rootRole": 3}),
        )
        .await
        .expect(201)
        .clone();
    let id = created["id"].as_i64().unwrap();
    // The sign-in page offers "Forgot password?"; without SMTP that page says to ask an Admin.
    let mut visitor = Browser::new(&server);
    assert!(visitor
        .get("/login")
        .await
        .expect(200)
        .contains("Forgot password?"));
    let forgot = visitor.get("/forgotten-password").await;
    let text = forgot.expect(200);
    assert!(text.contains("does not send e-mail"), "{text}");
    assert!(!text.contains("name=\"email\""), "{text}");

    // The Admin makes a reset link on the user's page and sees it.
    let mut admin = admin_browser(&server).await;
    let page = admin.get(&format!("/admin/users/{id}")).await;
    let csrf = page.csrf();
    assert!(
        page.expect(200).contains("Create a reset link"),
        "{}",
        page.text
    );
    let made = admin
        .post(&format!("/admin/users/{id}/reset-link"), &[("csrf", &csrf)])
        .await;
    made.expect(200);
    let url = value_of(&made, "reset-url");
    assert!(
        url.starts_with(&format!("{}/reset-password?token=", server.base)),
        "{url}"
    );
    // Still the old password until the link is used.
    let signed = Browser::new(&server)
        .sign_in(&[("username", "bo@example.com"), ("password", "old password")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);

    // The reset page: a mismatch drawn again beside the field; then the password, once.
    let page = visitor.get(&path_of(&url)).await;
    let text = page.expect(200);
    assert!(
        text.contains("Choose a new password") && text.contains("bo@example.com"),
        "{text}"
    );
    let visitor_csrf = page.csrf();
    let token = url.split_once("token=").unwrap().1.to_owned();
    let refused = visitor
        .post(
            "/reset-password",
            &[
                ("csrf", &visitor_csrf),
                ("token", &token),
                ("password", "new password"),
                ("confirmPassword", "other password"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("id=\"confirm-password-error\"") && text.contains("does not match"),
        "{text}"
    );
    let set = visitor
        .post(
            "/reset-password",
            &[
                ("csrf", &visitor_csrf),
                ("token", &token),
                ("password", "new password"),
                ("confirmPassword", "new password"),
            ],
        )
        .await;
    assert_eq!(set.status, 303, "{}", set.text);
    assert!(visitor
        .get("/login")
        .await
        .expect(200)
        .contains("Your password was set"));
    let signed = Browser::new(&server)
        .sign_in(&[("username", "bo@example.com"), ("password", "new password")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let old = Browser::new(&server)
        .sign_in(&[("username", "bo@example.com"), ("password", "old password")])
        .await;
    assert_eq!(old.status, 401, "{}", old.text);
    // Once only.
    let again = visitor.get(&path_of(&url)).await;
    assert!(again.expect(401).contains("not valid"), "{}", again.text);
    let again = visitor
        .post(
            "/reset-password",
            &[
                ("csrf", &visitor_csrf),
                ("token", &token),
                ("password", "third password"),
                ("confirmPassword", "third password"),
            ],
        )
        .await;
    assert_eq!(again.status, 401, "{}", again.text);
    let third = Browser::new(&server)
        .sign_in(&[
            ("username", "bo@example.com"),
            ("password", "third password"),
        ])
        .await;
    assert_eq!(third.status, 401, "{}", third.text);

    // A user created in the UI without a password: their page shows the welcome link, which sets it once.
    let made = admin
        .post(
            "/admin/users/create",
            &[
                ("csrf", &csrf),
                ("username", "cy"),
                ("email", "cy@example.com"),
                ("rootRole", "3"),
            ],
        )
        .await;
    let text = made.expect(201);
    assert!(
        text.contains("created without a password") && text.contains("Welcome link"),
        "{text}"
    );
    let url = value_of(&made, "reset-url");
    assert!(
        url.starts_with(&format!("{}/new-user?token=", server.base)),
        "{url}"
    );
    let page = visitor.get(&path_of(&url)).await;
    assert!(
        page.expect(200).contains("Welcome to Vexil"),
        "{}",
        page.text
    );
    let token = url.split_once("token=").unwrap().1.to_owned();
    let set = visitor
        .post(
            "/reset-password",
            &[
                ("csrf", &visitor_csrf),
                ("token", &token),
                ("welcome", "1"),
                ("password", "cy password"),
                ("confirmPassword", "cy password"),
            ],
        )
        .await;
    assert_eq!(set.status, 303, "{}", set.text);
    let signed = Browser::new(&server)
        .sign_in(&[("username", "cy"), ("password", "cy password")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
}
