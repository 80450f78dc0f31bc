//! The admin web UI's service accounts page over HTTP, through the real binary: the empty list's guidance, a
//! refused form drawn again with the error beside its field, an account created with its root role, a token
//! whose secret is shown once and works on the admin API, a token and an account deleted; and the API's rule
//! for who may see the page. (The browser walk is `edge/tests/e2e/ui_service_accounts.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::json;

crate::on_sqlite_and_postgres!(
    service_accounts_are_made_in_the_ui,
    only_admins_see_the_service_accounts_page,
);

const PASSWORD: &str = "correct horse battery";

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

async fn admin_browser(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn service_accounts_are_made_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = admin_browser(&server).await;
    let list = browser.get("/admin/service-accounts").await;
    let text = list.expect(200);
    assert!(text.contains("No service accounts yet."), "{text}");
    assert!(
        text.contains("aria-current=\"page\">Service accounts</a>"),
        "{text}"
    );
    let csrf = list.csrf();
    let form = browser.get("/admin/service-accounts/create").await;
    assert!(form.expect(200).contains("Create service account"));

    // Refused: drawn again, what was typed kept, the error beside the field; nothing created.
    let refused = browser
        .post(
            "/admin/service-accounts",
            &[
                ("csrf", &csrf),
                ("username", "ci bot"),
                ("name", "CI <bot>"),
                ("rootRole", "2"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(text.contains("id=\"account-username-error\""), "{text}");
    assert!(text.contains("without spaces"), "{text}");
    assert!(text.contains("value=\"CI &lt;bot&gt;\""), "{text}");
    let accounts = server.get("/api/admin/service-account").await;
    assert_eq!(accounts.expect(200)["serviceAccounts"], json!([]));

    let created = browser
        .post(
            "/admin/service-accounts",
            &[
                ("csrf", &csrf),
                ("username", "ci-bot"),
                ("name", "CI <bot>"),
                ("rootRole", "2"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let location = created.location.clone().unwrap();
    let accounts = server.get("/api/admin/service-account").await;
    let account = accounts.expect(200)["serviceAccounts"][0].clone();
    assert_eq!(account["username"], "ci-bot");
    assert_eq!(account["rootRole"], 2);
    let id = account["id"].as_i64().unwrap();
    assert_eq!(location, format!("/admin/service-accounts/{id}"));
    let page = browser.get(&location).await;
    let text = page.expect(200);
    assert!(text.contains("Service account ci-bot created"), "{text}");
    assert!(text.contains("CI &lt;bot&gt;") && !text.contains("CI <bot>"));

    // A token with a past expiry is refused beside the field; a good one shows its secret once.
    let refused = browser
        .post(
            &format!("{location}/tokens"),
            &[
                ("csrf", &csrf),
                ("description", "old"),
                ("expires", "2001-01-01"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(text.contains("id=\"token-expiry-error\""), "{text}");
    assert!(text.contains("value=\"old\""), "{text}");
    let made = browser
        .post(
            &format!("{location}/tokens"),
            &[
                ("csrf", &csrf),
                ("description", "pipeline"),
                ("expires", "2099-01-01"),
            ],
        )
        .await;
    made.expect(201);
    let secret = secret_of(&made);
    assert!(secret.starts_with("user:"), "{secret}");
    let flag = server
        .send(
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": "from-ui-token"})),
            Some(&secret),
        )
        .await;
    flag.expect(201);
    let again = browser.get(&location).await;
    assert!(!again.expect(200).contains(&secret));
    assert!(again.text.contains("pipeline"));

    // Delete the token: refused at once; then the account.
    let token_id = server
        .get(&format!("/api/admin/service-account/{id}/token"))
        .await
        .expect(200)["pats"][0]["id"]
        .as_i64()
        .unwrap();
    let deleted = browser
        .post(
            &format!("{location}/tokens/{token_id}/delete"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(deleted.status, 303, "{}", deleted.text);
    server
        .send("GET", "/api/admin/projects", None, Some(&secret))
        .await
        .expect_error(401, "AuthenticationRequired");
    let confirm = browser.get(&format!("{location}/delete")).await;
    assert!(confirm.expect(200).contains("Delete CI &lt;bot&gt;?"));
    let gone = browser
        .post(&format!("{location}/delete"), &[("csrf", &csrf)])
        .await;
    assert_eq!(gone.status, 303, "{}", gone.text);
    let accounts = server.get("/api/admin/service-account").await;
    assert_eq!(accounts.expect(200)["serviceAccounts"], json!([]));
    browser.get(&location).await.expect(404);
}

async fn only_admins_see_the_service_accounts_page(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "eddie", "password": PASSWORD, "rootRole": 2}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    let signed = browser
        .sign_in(&[
            ("username", "eddie"),
            ("password", PASSWORD),
            ("next", "/profile"),
        ])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let profile = browser.get("/profile").await;
    assert!(!profile.expect(200).contains(">Service accounts</a>"));
    let csrf = profile.csrf();
    for path in ["/admin/service-accounts", "/admin/service-accounts/create"] {
        let page = browser.get(path).await;
        assert!(
            page.expect(403).contains("The Editor role may not"),
            "{path}"
        );
    }
    let forged = browser
        .post(
            "/admin/service-accounts",
            &[
                ("csrf", &csrf),
                ("username", "sneaky"),
                ("name", "Sneaky"),
                ("rootRole", "1"),
            ],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.text);
    let accounts = server.get("/api/admin/service-account").await;
    assert_eq!(accounts.expect(200)["serviceAccounts"], json!([]));
    // A service account's token cannot sign in to the UI.
    let bot = server
        .post(
            "/api/admin/service-account",
            json!({"username": "bot", "name": "Bot", "rootRole": 1}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let secret = server
        .post(
            &format!("/api/admin/service-account/{bot}/token"),
            json!({"description": "t", "expiresAt": "2099-01-01T00:00:00.000Z"}),
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut bot_browser = Browser::new(&server);
    let refused = bot_browser.sign_in(&[("token", &secret)]).await;
    assert_eq!(refused.status, 401, "{}", refused.text);
}
