//! The admin web UI's access pages over HTTP, through the real binary: API tokens (create, the secret once,
//! revoke after a confirmation), the own profile (personal access tokens, password change), validation beside
//! the field, user input shown as text, and the API's rule for who may see them. Users and groups are in
//! `ui_users.rs`. (The browser walk is `edge/tests/e2e/ui_access.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    tokens_are_created_shown_once_and_revoked,
    token_form_errors_stay_beside_their_fields,
    editors_and_viewers_are_refused_the_access_pages,
    the_profile_manages_own_tokens_and_password,
    without_authentication_there_is_no_own_account,
);

impl Html {
    /// The text of the element with this id (up to its closing tag), e.g. a field's error.
    pub(crate) fn text_of(&self, id: &str) -> String {
        let marker = format!("id=\"{id}\"");
        let at = self
            .text
            .find(&marker)
            .unwrap_or_else(|| panic!("no #{id} in {}", self.text));
        let rest = &self.text[at..];
        let start = rest.find('>').unwrap() + 1;
        let end = rest[start..].find('<').unwrap() + start;
        rest[start..end].to_owned()
    }

    /// The `action` of the form whose button has this accessible name.
    fn action_of(&self, label: &str) -> String {
        let at = self
            .text
            .find(&format!("aria-label=\"{label}\""))
            .unwrap_or_else(|| panic!("no button {label}"));
        let form = self.text[..at].rfind("action=\"").unwrap() + "action=\"".len();
        let rest = &self.text[form..];
        rest[..rest.find('"').unwrap()].to_owned()
    }

    /// The value of the read-only field "Secret".
    fn secret(&self) -> String {
        let at = self
            .text
            .find("id=\"token-secret\"")
            .expect("a Secret field");
        let rest = &self.text[at..];
        let value = rest.find("value=\"").unwrap() + "value=\"".len();
        rest[value..value + rest[value..].find('"').unwrap()].to_owned()
    }
}

pub(crate) const PASSWORD: &str = "correct horse battery";

pub(crate) async fn with_token(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/admin/api")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

pub(crate) async fn create_user(server: &Server, username: &str, role: &str) -> i64 {
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": username, "password": PASSWORD, "rootRole": role}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap()
}

pub(crate) async fn signed_in_as(server: &Server, username: &str, password: &str) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser
        .sign_in(&[
            ("username", username),
            ("password", password),
            ("next", "/profile"),
        ])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

/// The API's token list.
async fn token_names(server: &Server) -> Vec<String> {
    server.get("/api/admin/api-tokens").await.expect(200)["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|token| {
            assert_eq!(token["secret"], Value::Null);
            token["tokenName"].as_str().unwrap().to_owned()
        })
        .collect()
}

async fn frontend_status(server: &Server, secret: &str) -> u16 {
    server
        .send("GET", "/api/frontend", None, Some(secret))
        .await
        .status
}

async fn tokens_are_created_shown_once_and_revoked(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = with_token(&server).await;
    let page = browser.get("/admin/api").await;
    let text = page.expect(200);
    for fragment in [
        "<h1>API tokens</h1>",
        "href=\"/admin/api/create\">New token</a>",
        "aria-label=\"Revoke init-frontend-token-1\"",
        "aria-current=\"page\">API tokens</a>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    // Creating is a page of its own, as every "New …" is.
    let page = browser.get("/admin/api/create").await;
    let text = page.expect(200);
    for fragment in [
        "<h1>New API token</h1>",
        "<label for=\"token-name\">Token name</label>",
        "<label for=\"token-type\">Token type</label>",
        "<label for=\"token-environment\">Environment</label>",
        "<label for=\"token-projects\">Projects</label>",
        ">Create token</button>",
        "<option value=\"frontend\">",
        "<option value=\"edge\">",
        "<option value=\"*\" selected>All projects</option>",
        "aria-current=\"page\">API tokens</a>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    assert!(!text.contains("test-frontend-secret"), "a secret is listed");
    let name = "web <script>alert(1)</script>";
    let created = browser
        .post(
            "/admin/api",
            &[
                ("csrf", &page.csrf()),
                ("name", name),
                ("type", "frontend"),
                ("environment", "development"),
                ("projects", "default"),
            ],
        )
        .await;
    let text = created.expect(201);
    assert!(text.contains("<label for=\"token-secret\">Secret</label>"));
    assert!(text.contains("data-copy=\"token-secret\">Copy</button>"));
    assert!(text.contains("web &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!text.contains("<script>alert(1)"), "{text}");
    let secret = created.secret();
    assert!(secret.starts_with("default:development."), "{secret}");
    assert!(token_names(&server).await.contains(&name.to_owned()));
    assert_eq!(frontend_status(&server, &secret).await, 200);
    // Shown once: the list never holds it again.
    let again = browser.get("/admin/api").await;
    assert!(!again.has(&secret));
    assert!(!again.has("id=\"token-secret\""));
    // Revoke: a confirmation page first, then the POST (with the CSRF token only).
    let confirm_path = again.action_of("Revoke web &lt;script&gt;alert(1)&lt;/script&gt;");
    let confirm = browser.get(&confirm_path).await;
    let text = confirm.expect(200);
    assert!(text.contains("Revoke web &lt;script&gt;"), "{text}");
    assert!(text.contains(">Revoke token</button>"));
    assert!(token_names(&server).await.contains(&name.to_owned()));
    let forged = browser.post(&confirm_path, &[("csrf", "nope")]).await;
    assert_eq!(forged.status, 403);
    assert_eq!(frontend_status(&server, &secret).await, 200);
    let revoked = browser
        .post(&confirm_path, &[("csrf", &confirm.csrf())])
        .await;
    assert_eq!(revoked.status, 303, "{}", revoked.text);
    assert_eq!(revoked.location.as_deref(), Some("/admin/api"));
    assert!(!token_names(&server).await.contains(&name.to_owned()));
    assert_eq!(frontend_status(&server, &secret).await, 401);
    // The notice shows on the next page drawn, once.
    let after = browser.get("/admin/api").await;
    assert!(after.expect(200).contains(
        "<p class=\"notice success\" role=\"status\">The token was revoked: it stops working"
    ));
    let again = browser.get("/admin/api").await;
    assert!(!again.expect(200).contains("The token was revoked"));
    assert_eq!(browser.get(&confirm_path).await.status, 404);
    // A long list is paged.
    for index in 0..30 {
        server
            .post(
                "/api/admin/api-tokens",
                json!({"tokenName": format!("bulk-{index:02}"), "type": "client"}),
            )
            .await
            .expect(201);
    }
    let first = browser.get("/admin/api").await;
    assert!(first.has(">Next page</a>"), "{}", first.text);
    assert!(
        first.has("Revoke bulk-29") && !first.has("Revoke init-admin-token-1"),
        "{}",
        first.text
    );
    let second = browser.get("/admin/api?page=2").await;
    assert!(second.has("Revoke init-admin-token-1") && second.has(">Previous page</a>"));
}

async fn token_form_errors_stay_beside_their_fields(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let before = token_names(&server).await;
    let mut browser = with_token(&server).await;
    let csrf = browser.get("/admin/api").await.csrf();
    let empty = browser
        .post(
            "/admin/api",
            &[
                ("csrf", &csrf),
                ("name", "  "),
                ("type", "client"),
                ("environment", "development"),
                ("projects", "*"),
            ],
        )
        .await;
    empty.expect(400);
    assert!(empty
        .text_of("token-name-error")
        .contains("Token name must be 1 to 100"));
    let unknown = browser
        .post(
            "/admin/api",
            &[
                ("csrf", &csrf),
                ("name", "kept <b>name</b>"),
                ("type", "client"),
                ("environment", "development"),
                ("projects", "nope"),
            ],
        )
        .await;
    unknown.expect(400);
    assert_eq!(
        unknown.text_of("token-projects-error"),
        "projects: nope does not exist"
    );
    assert_eq!(unknown.text_of("token-name-error"), "");
    assert!(unknown.has("value=\"kept &lt;b&gt;name&lt;/b&gt;\""));
    let admin_in_one = browser
        .post(
            "/admin/api",
            &[
                ("csrf", &csrf),
                ("name", "ops"),
                ("type", "admin"),
                ("environment", "development"),
                ("projects", "*"),
            ],
        )
        .await;
    admin_in_one.expect(400);
    assert!(admin_in_one
        .text_of("token-environment-error")
        .contains("environment of an admin token must be *"));
    assert!(admin_in_one.has("<option value=\"admin\" selected>"));
    assert_eq!(token_names(&server).await, before);
}

async fn editors_and_viewers_are_refused_the_access_pages(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let before = token_names(&server).await;
    create_user(&server, "eddie", "Editor").await;
    create_user(&server, "vera", "Viewer").await;
    for (username, role) in [("eddie", "Editor"), ("vera", "Viewer")] {
        let mut browser = signed_in_as(&server, username, PASSWORD).await;
        let profile = browser.get("/profile").await;
        let text = profile.expect(200);
        assert!(
            !text.contains(">API tokens</a>"),
            "the nav links Access for {role}"
        );
        assert!(!text.contains(">Users</a>") && !text.contains(">Groups</a>"));
        assert!(text.contains("aria-current=\"page\">Profile</a>"));
        let csrf = profile.csrf();
        for path in [
            "/admin/api",
            "/admin/users",
            "/admin/groups",
            "/admin/users/create",
            "/admin/groups/create",
            "/admin/api/create",
        ] {
            let page = browser.get(path).await;
            let text = page.expect(403);
            assert!(text.contains("Not allowed"), "{path}: {text}");
            assert!(
                text.contains(&format!("The {role} role may not")),
                "{path}: {text}"
            );
            assert!(!text.contains("Create token") && !text.contains("New user"));
        }
        let forged = browser
            .post(
                "/admin/api",
                &[
                    ("csrf", &csrf),
                    ("name", "sneaky"),
                    ("type", "admin"),
                    ("environment", "*"),
                ],
            )
            .await;
        assert!(forged.expect(403).contains("may not change this"));
        let forged_user = browser
            .post(
                "/admin/users/create",
                &[
                    ("csrf", &csrf),
                    ("username", "mallory"),
                    ("password", PASSWORD),
                    ("rootRole", "1"),
                ],
            )
            .await;
        assert_eq!(forged_user.status, 403);
    }
    assert_eq!(token_names(&server).await, before);
    let users = server.get("/api/admin/user-admin").await;
    assert_eq!(users.expect(200)["users"].as_array().unwrap().len(), 2);
}

async fn the_profile_manages_own_tokens_and_password(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    // An admin-token sign-in has no own account.
    let mut token_browser = with_token(&server).await;
    let none = token_browser.get("/profile").await;
    let text = none.expect(200);
    assert!(text.contains("there is no own account here"), "{text}");
    assert!(!text.contains("Change password"));
    create_user(&server, "vera", "Viewer").await;
    let mut browser = signed_in_as(&server, "vera", PASSWORD).await;
    let page = browser.get("/profile").await;
    let text = page.expect(200);
    for fragment in [
        "<h1>Profile</h1>",
        "<strong>Viewer</strong>",
        "No personal access tokens.",
        "<label for=\"pat-description\">Description</label>",
        "<label for=\"pat-expiry\">Expires on</label>",
        "<label for=\"old-password\">Current password</label>",
        "<label for=\"new-password\">New password</label>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let csrf = page.csrf();
    let past = browser
        .post(
            "/profile/tokens",
            &[
                ("csrf", &csrf),
                ("description", "ci <bot>"),
                ("expires", "2001-01-01"),
            ],
        )
        .await;
    past.expect(400);
    assert!(past.text_of("pat-expiry-error").contains("in the future"));
    assert!(past.has("value=\"ci &lt;bot&gt;\""));
    let next_year = (chrono::Utc::now() + chrono::Duration::days(365))
        .format("%Y-%m-%d")
        .to_string();
    let created = browser
        .post(
            "/profile/tokens",
            &[
                ("csrf", &csrf),
                ("description", "ci <bot>"),
                ("expires", &next_year),
            ],
        )
        .await;
    let text = created.expect(201);
    assert!(text.contains("Token ci &lt;bot&gt; created"));
    let secret = created.secret();
    assert!(secret.starts_with("user:"), "{secret}");
    let me = server
        .send("GET", "/api/admin/user", None, Some(&secret))
        .await;
    assert_eq!(me.expect(200)["user"]["username"], "vera");
    let again = browser.get("/profile").await;
    assert!(!again.has(&secret));
    let revoke = again.action_of("Revoke ci &lt;bot&gt;");
    let revoked = browser.post(&revoke, &[("csrf", &csrf)]).await;
    assert_eq!(revoked.status, 303, "{}", revoked.text);
    let me = server
        .send("GET", "/api/admin/user", None, Some(&secret))
        .await;
    assert_eq!(me.status, 401);
    // Password: the old one must be right, the confirmation must match.
    let wrong = browser
        .post(
            "/profile/password",
            &[
                ("csrf", &csrf),
                ("oldPassword", "not it at all"),
                ("password", "brand new pass"),
                ("confirmPassword", "brand new pass"),
            ],
        )
        .await;
    wrong.expect(401);
    assert!(wrong
        .text_of("old-password-error")
        .contains("Old password is incorrect"));
    let mismatch = browser
        .post(
            "/profile/password",
            &[
                ("csrf", &csrf),
                ("oldPassword", PASSWORD),
                ("password", "brand new pass"),
                ("confirmPassword", "other"),
            ],
        )
        .await;
    mismatch.expect(400);
    assert!(mismatch
        .text_of("confirm-password-error")
        .contains("does not match"));
    let changed = browser
        .post(
            "/profile/password",
            &[
                ("csrf", &csrf),
                ("oldPassword", PASSWORD),
                ("password", "brand new pass"),
                ("confirmPassword", "brand new pass"),
            ],
        )
        .await;
    assert_eq!(changed.status, 303, "{}", changed.text);
    assert_eq!(changed.location.as_deref(), Some("/login?next=%2Fprofile"));
    // Every session ended; the new password signs in.
    let gone = browser.get("/profile").await;
    assert_eq!(gone.status, 303);
    let mut again = signed_in_as(&server, "vera", "brand new pass").await;
    again.get("/profile").await.expect(200);
}

async fn without_authentication_there_is_no_own_account(db: TestDb) {
    let server = Server::start(&db, &["--auth-type", "none"]).await;
    let mut browser = Browser::new(&server);
    let page = browser.get("/profile").await;
    let text = page.expect(200);
    assert!(text.contains("there is no own account here"), "{text}");
    assert!(!text.contains("Create personal access token"));
    let refused = browser
        .post(
            "/profile/password",
            &[
                ("csrf", &page.csrf()),
                ("oldPassword", "x"),
                ("password", "whatever at all"),
            ],
        )
        .await;
    assert!(refused
        .expect(403)
        .contains("An admin token has no user account"));
    // The access pages work as for an Admin.
    assert!(browser
        .get("/admin/api/create")
        .await
        .expect(200)
        .contains(">Create token</button>"));
}
