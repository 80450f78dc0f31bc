//! The admin web UI's SCIM provisioning over HTTP, through the real binary: the page with the base URL to give
//! the provider, switched on, a token shown once that works on `/scim/v2`; provisioned users and groups marked
//! in the lists, their details disabled and explained, their root role still changed in the UI; and the API's
//! rule for who may see the page. (The browser walk is `edge/tests/e2e/ui_scim.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::json;

crate::on_sqlite_and_postgres!(scim_provisioning_in_the_ui,);

/// The value of the read-only field "Secret".
fn secret_of(page: &Html) -> String {
    let at = page
        .text
        .find("id=\"token-secret\"")
        .expect("a Secret field");
    let rest = &page.text[at..];
    let value = rest.find("value=\"").unwrap() + "value=\"".len();
    rest[value..value + rest[value..].find('"').unwrap()].to_owned()
}

async fn scim_provisioning_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = Browser::new(&server);
    assert_eq!(browser.sign_in(&[("token", ADMIN_TOKEN)]).await.status, 303);
    let page = browser.get("/admin/scim").await;
    let text = page.expect(200);
    assert!(
        text.contains("aria-current=\"page\">SCIM provisioning</a>"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}/scim/v2</code>", server.base)),
        "{text}"
    );
    assert!(
        text.contains("Provisioning is <strong>off</strong>"),
        "{text}"
    );
    let csrf = page.csrf();

    let saved = browser
        .post(
            "/admin/scim/settings",
            &[("csrf", &csrf), ("enabled", "true")],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert!(browser
        .page("/admin/scim")
        .await
        .contains("Provisioning is <strong>on</strong>"));
    assert_eq!(
        server.get("/api/admin/scim-settings").await.expect(200)["enabled"],
        true
    );

    // A token, shown once, working on /scim/v2; never on the page again.
    let created = browser.post("/admin/scim/token", &[("csrf", &csrf)]).await;
    assert_eq!(created.status, 201, "{}", created.text);
    let token = secret_of(&created);
    assert!(token.starts_with("scim:"), "{token}");
    let bearer = format!("Bearer {token}");
    let user = server
        .send_with_headers(
            "POST",
            "/scim/v2/Users",
            Some(json!({"userName": "sam@example.com", "displayName": "Sam"})),
            &[("Authorization", &bearer)],
        )
        .await
        .expect(201)
        .clone();
    let group = server
        .send_with_headers(
            "POST",
            "/scim/v2/Groups",
            Some(json!({"displayName": "Support", "members": [{"value": user["id"]}]})),
            &[("Authorization", &bearer)],
        )
        .await
        .expect(201)
        .clone();
    let again = browser.page("/admin/scim").await;
    assert!(
        !again.contains(&token) && again.contains("A token is set"),
        "{again}"
    );
    assert!(
        again.contains("1 user</a>") && again.contains("1 group</a>"),
        "{again}"
    );

    // Marked in the lists; details disabled and explained; the root role still changes.
    let users = browser.page("/admin/users").await;
    assert!(
        users.contains("SCIM<span class=\"sr-only\">: managed by your identity provider"),
        "{users}"
    );
    let stored = server
        .get("/api/admin/user-admin")
        .await
        .expect(200)
        .clone();
    let id = stored["users"][0]["id"].as_i64().unwrap();
    let page = browser.get(&format!("/admin/users/{id}")).await;
    let text = page.expect(200);
    assert!(
        text.contains("Managed by SCIM") && text.contains("<fieldset class=\"plain\" disabled>"),
        "{text}"
    );
    assert!(
        !text.contains("Reset password") && !text.contains("Delete user"),
        "{text}"
    );
    let saved = browser
        .post(
            &format!("/admin/users/{id}"),
            &[("csrf", &page.csrf()), ("rootRole", "2")],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let user = server
        .get(&format!("/api/admin/user-admin/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        (user["rootRole"].clone(), user["name"].clone()),
        (json!(2), json!("Sam"))
    );

    let groups = browser.page("/admin/groups").await;
    assert!(groups.contains("SCIM<span class=\"sr-only\">"), "{groups}");
    let stored = server.get("/api/admin/groups").await.expect(200).clone();
    let group_id = stored["groups"][0]["id"].as_i64().unwrap();
    assert_eq!(stored["groups"][0]["scimId"], group["id"]);
    let page = browser.get(&format!("/admin/groups/{group_id}")).await;
    let text = page.expect(200);
    assert!(
        text.contains("Managed by SCIM") && !text.contains("Delete group"),
        "{text}"
    );
    let saved = browser
        .post(
            &format!("/admin/groups/{group_id}"),
            &[("csrf", &page.csrf()), ("rootRole", "2")],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let group = server
        .get(&format!("/api/admin/groups/{group_id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        (
            group["rootRole"].clone(),
            group["name"].clone(),
            group["userCount"].clone()
        ),
        (json!(2), json!("Support"), json!(1))
    );

    // Only Admins: an Editor gets the 403 page.
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "ed", "password": "correct horse battery", "rootRole": 2}),
        )
        .await
        .expect(201);
    let mut editor = Browser::new(&server);
    let signed = editor
        .sign_in(&[("username", "ed"), ("password", "correct horse battery")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert_eq!(editor.get("/admin/scim").await.status, 403);
}
