//! The admin web UI over HTTP, through the real binary: each page's status and key elements, user input shown
//! as text, sign-in and sign-out, the CSRF token, a Viewer's refused writes, change-request drafts and the
//! error pages. The strategy form (under a base path) is in `ui_strategy_form.rs`, the search in
//! `ui_search.rs`. (The browser walk is `edge/tests/e2e/ui.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    token_sign_in_flag_list_and_escaping,
    forms_need_the_csrf_token,
    a_viewer_sees_no_edit_controls_and_cannot_post,
    a_protected_environment_gets_a_change_request_draft,
    a_new_project_shows_how_to_connect_an_sdk,
);

pub(crate) async fn signed_in_with_token(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let page = browser.get("/projects/default").await;
    assert_eq!(page.status, 303);
    assert_eq!(
        page.location.as_deref(),
        Some("/login?next=%2Fprojects%2Fdefault")
    );
    let login = browser.get("/login?next=%2Fprojects%2Fdefault").await;
    let text = login.expect(200);
    for fragment in [
        "<label for=\"username\">Username</label>",
        "<label for=\"password\">Password</label>",
        "<label for=\"token\">Admin token</label>",
        ">Sign in</button>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/projects/default")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert_eq!(signed.location.as_deref(), Some("/projects/default"));
    let cookie = &signed.set_cookies[0];
    for attribute in ["vexil-admin-token=", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "{cookie}");
    browser
}

async fn flag(server: &Server, name: &str) -> Value {
    flag_at(server, "", name).await
}

pub(crate) async fn flag_at(server: &Server, base: &str, name: &str) -> Value {
    server
        .get(&format!(
            "{base}/api/admin/projects/default/features/{name}"
        ))
        .await
        .expect(200)
        .clone()
}

async fn token_sign_in_flag_list_and_escaping(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = signed_in_with_token(&server).await;
    let list = browser.get("/projects/default").await;
    assert_eq!(list.content_type, "text/html; charset=utf-8");
    assert!(list.csp.contains("default-src 'self'"), "{}", list.csp);
    let text = list.expect(200);
    for fragment in [
        "<label for=\"search\">Search flags</label>",
        ">New flag</a>",
        "No flags in this project yet.",
        ">Flags</a>",
        ">Segments</a>",
        ">Archive</a>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let csrf = list.csrf();

    let form = browser.get("/projects/default/create-flag").await;
    for fragment in [
        "<label for=\"name\">Name</label>",
        "<label for=\"type\">Type</label>",
        "<label for=\"description\">Description</label>",
        ">Create flag</button>",
    ] {
        assert!(form.has(fragment), "{fragment}");
    }
    // A name the rule refuses: the form again, 400, the message next to the name, what was typed kept.
    let refused = browser
        .post(
            "/projects/default/create-flag",
            &[
                ("csrf", &csrf),
                ("name", "bad name"),
                ("type", "experiment"),
                ("description", "kept text"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("id=\"name-error\" aria-live=\"polite\">name must be URL-safe"),
        "{text}"
    );
    assert!(text.contains("value=\"bad name\""), "{text}");
    assert!(text.contains(">kept text</textarea>"), "{text}");
    assert!(text.contains("value=\"experiment\" selected"), "{text}");

    let script = "<script>alert(1)</script> & more";
    let created = browser
        .post(
            "/projects/default/create-flag",
            &[
                ("csrf", &csrf),
                ("name", "checkout"),
                ("type", "release"),
                ("description", script),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    assert_eq!(
        created.location.as_deref(),
        Some("/projects/default/features/checkout")
    );
    assert_eq!(flag(&server, "checkout").await["description"], script);
    // A taken name: the message next to the name (409).
    let taken = browser
        .post(
            "/projects/default/create-flag",
            &[("csrf", &csrf), ("name", "checkout")],
        )
        .await;
    assert!(taken
        .expect(409)
        .contains("id=\"name-error\" aria-live=\"polite\">A flag named checkout already exists"));

    for path in ["/projects/default", "/projects/default/features/checkout"] {
        let page = browser.get(path).await;
        let text = page.expect(200);
        assert!(!text.contains("<script>alert"), "{path}: unescaped input");
        assert!(
            text.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"),
            "{path}: {text}"
        );
    }
    let list = browser.get("/projects/default").await;
    for environment in ["development", "production"] {
        assert!(list.has(&format!(
            "role=\"switch\" aria-checked=\"false\" aria-label=\"checkout in {environment}\""
        )));
    }
    assert!(list.has("<span class=\"muted\">never</span>"));
    let page = browser.get("/projects/default/features/checkout").await;
    for fragment in [
        "aria-label=\"Enabled in development\"",
        "aria-label=\"Add strategy to production\"",
        ">Archive flag</a>",
        ">Event log</h2>",
        "created the flag <span class=\"subject\">checkout</span>",
    ] {
        assert!(page.has(fragment), "{fragment}");
    }

    // The switch: on in development, through the same domain as the API.
    let switched = browser
        .post(
            "/projects/default/features/checkout/environments/development/switch",
            &[
                ("csrf", &csrf),
                ("enabled", "true"),
                ("back", "/projects/default"),
            ],
        )
        .await;
    assert_eq!(switched.location.as_deref(), Some("/projects/default"));
    let stored = flag(&server, "checkout").await;
    assert_eq!(stored["environments"][0]["name"], "development");
    assert_eq!(stored["environments"][0]["enabled"], true);
    assert_eq!(
        stored["environments"][0]["strategies"][0]["name"],
        "flexibleRollout"
    );
    let list = browser.get("/projects/default?query=CHECK").await;
    assert!(list.has("aria-checked=\"true\" aria-label=\"checkout in development\""));
    let none = browser.get("/projects/default?query=nothing-like-it").await;
    assert!(none.expect(200).contains("No flags match these filters."));

    // Error pages: the API's {id, name, message} as a page, with its status.
    let missing = browser.get("/projects/default/features/nope").await;
    let text = missing.expect(404);
    assert!(text.contains("<code>NotFoundError</code>"), "{text}");
    assert!(text.contains("Flag nope does not exist in project default"));
    let no_project = browser.get("/projects/nope").await;
    assert_eq!(no_project.status, 404);

    // Sign-out clears the cookie; the pages ask for a sign-in again.
    let out = browser.post("/logout", &[("csrf", &csrf)]).await;
    assert_eq!(out.location.as_deref(), Some("/login"));
    assert_eq!(browser.get("/projects/default").await.status, 303);
}

async fn forms_need_the_csrf_token(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "guarded"}),
        )
        .await
        .expect(201);
    let mut browser = signed_in_with_token(&server).await;
    let csrf = browser.get("/projects/default").await.csrf();
    for token in ["", "0000", &csrf[..csrf.len() - 1]] {
        let refused = browser
            .post(
                "/projects/default/features/guarded/environments/development/switch",
                &[("csrf", token), ("enabled", "true")],
            )
            .await;
        let text = refused.expect(403);
        assert!(text.contains("CSRF token"), "{text}");
        let created = browser
            .post(
                "/projects/default/create-flag",
                &[("csrf", token), ("name", "forged")],
            )
            .await;
        assert_eq!(created.status, 403);
    }
    assert_eq!(
        flag(&server, "guarded").await["environments"][0]["enabled"],
        false
    );
    server
        .get("/api/admin/projects/default/features/forged")
        .await
        .expect_error(404, "NotFoundError");
    // Another session's token is not this one's.
    let other = signed_in_with_token(&server).await;
    let _ = other;
    assert_eq!(browser.get("/projects/default").await.csrf(), csrf);
}

async fn a_viewer_sees_no_edit_controls_and_cannot_post(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "watched"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "vera", "password": "correct horse battery", "rootRole": "Viewer"}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    // Users exist: the admin token is behind its own link.
    let login = browser.get("/login").await;
    assert!(login.has("Sign in with an admin token"));
    let wrong = browser
        .sign_in(&[("username", "vera"), ("password", "wrong password")])
        .await;
    assert!(wrong.expect(401).contains("Wrong username or password"));
    assert!(wrong.has("value=\"vera\""));
    // Login CSRF: a form posted from elsewhere (no CSRF cookie, or a token not of this visitor's cookie)
    // signs no one in, even with the right password.
    let mut elsewhere = Browser::new(&server);
    let forged = elsewhere
        .post(
            "/login",
            &[("username", "vera"), ("password", "correct horse battery")],
        )
        .await;
    assert!(forged.expect(403).contains("did not come from this site"));
    assert!(
        !forged
            .set_cookies
            .iter()
            .any(|c| c.starts_with("vexil-session=")),
        "{:?}",
        forged.set_cookies
    );
    let other_visitor = browser.get("/login").await.csrf();
    let mut third = Browser::new(&server);
    third.get("/login").await;
    let crossed = third
        .post(
            "/login",
            &[
                ("username", "vera"),
                ("password", "correct horse battery"),
                ("csrf", &other_visitor),
            ],
        )
        .await;
    crossed.expect(403);
    assert_eq!(third.get("/projects/default").await.status, 303);
    let signed = browser
        .sign_in(&[
            ("username", "vera"),
            ("password", "correct horse battery"),
            ("next", "/projects/default"),
        ])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert!(signed.set_cookies[0].starts_with("vexil-session="));
    let list = browser.get("/projects/default").await;
    let text = list.expect(200);
    assert!(text.contains(">watched</a>"));
    assert!(!text.contains("New flag"), "{text}");
    assert!(!text.contains("role=\"switch\""), "{text}");
    let page = browser.get("/projects/default/features/watched").await;
    for absent in [
        "Add strategy",
        "Archive flag",
        "Save settings",
        "role=\"switch\"",
    ] {
        assert!(!page.has(absent), "a Viewer sees {absent}");
    }
    let csrf = page.csrf();
    let forged = browser
        .post(
            "/projects/default/features/watched/environments/development/switch",
            &[("csrf", &csrf), ("enabled", "true")],
        )
        .await;
    let text = forged.expect(403);
    assert!(
        text.contains("You need the UPDATE_FEATURE_ENVIRONMENT permission in project default's environment development"),
        "{text}"
    );
    assert_eq!(
        browser.get("/projects/default/create-flag").await.status,
        403
    );
    assert_eq!(
        flag(&server, "watched").await["environments"][0]["enabled"],
        false
    );
    // A Viewer signs out (with the CSRF token); the session ends in the store too.
    let session = browser.cookies["vexil-session"].clone();
    let out = browser.post("/logout", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, 303);
    let answer = server
        .send_with_headers(
            "GET",
            "/api/admin/user",
            None,
            &[("Cookie", &format!("vexil-session={session}"))],
        )
        .await;
    answer.expect_error(401, "AuthenticationRequired");
}

async fn a_protected_environment_gets_a_change_request_draft(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "careful"}),
        )
        .await
        .expect(201);
    server
        .put(
            "/api/admin/projects/default/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let mut browser = signed_in_with_token(&server).await;
    let csrf = browser.get("/projects/default").await.csrf();
    let switched = browser
        .post(
            "/projects/default/features/careful/environments/production/switch",
            &[
                ("csrf", &csrf),
                ("enabled", "true"),
                ("back", "/projects/default/features/careful"),
            ],
        )
        .await;
    assert_eq!(switched.status, 303);
    let location = switched.location.clone().unwrap();
    assert!(
        location.starts_with("/projects/default/features/careful?notice=proposed-"),
        "{location}"
    );
    let page = browser.get(&location).await;
    assert!(
        page.has("your change was added to change request #"),
        "{}",
        page.text
    );
    let stored = flag(&server, "careful").await;
    assert_eq!(stored["environments"][1]["name"], "production");
    assert_eq!(stored["environments"][1]["enabled"], false);
    let requests = server
        .get("/api/admin/projects/default/change-requests")
        .await;
    let requests = requests.expect(200);
    let request = &requests.as_array().unwrap()[0];
    assert_eq!(request["state"], "Draft");
    assert_eq!(request["environment"], "production");
    assert_eq!(
        request["features"][0]["changes"][0]["action"],
        "updateEnabled"
    );
    // A notice code the UI did not make shows nothing.
    let forged = browser
        .get("/projects/default/features/careful?notice=Your+account+is+locked")
        .await;
    assert!(!forged.has("locked"));
}

async fn a_new_project_shows_how_to_connect_an_sdk(db: TestDb) {
    let server = Server::start(&db, &["--sdk-url", "https://flags.example.com/"]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "shop", "name": "Web shop"}),
        )
        .await
        .expect(201);
    let mut browser = signed_in_with_token(&server).await;
    // The empty list says what comes next.
    let empty = browser.get("/projects/shop").await;
    let text = empty.expect(200);
    assert!(text.contains("Create the first flag"), "{text}");
    assert!(
        text.contains("<a class=\"button\" href=\"/projects/shop/connect\">Connect an SDK</a>"),
        "{text}"
    );
    let page = browser.get("/projects/shop/connect").await;
    let text = page.expect(200);
    for fragment in [
        "<h1>Connect an SDK</h1>",
        "<code id=\"sdk-url\">https://flags.example.com</code>",
        "url: &quot;https://flags.example.com/api/frontend&quot;",
        "url: &quot;https://flags.example.com/api/&quot;",
        "appName: &quot;shop-web&quot;",
        "button type=\"button\" data-copy=\"snippet-browser\"",
        // The start-up tokens read project default only.
        "<p class=\"muted\">No token reads this project yet.</p>",
        "href=\"/admin/api/create?type=frontend&amp;projects=shop&amp;environment=development&amp;name=shop-web\"",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    // The link opens the token form filled in.
    let form = browser
        .get("/admin/api/create?type=frontend&projects=shop&environment=development&name=shop-web")
        .await;
    let text = form.expect(200);
    for fragment in [
        "name=\"name\" value=\"shop-web\"",
        "<option value=\"frontend\" selected>",
        "<option value=\"shop\" selected>Web shop</option>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    // An unknown type is not taken from a link.
    let odd = browser.get("/admin/api/create?type=root").await;
    assert!(odd
        .expect(200)
        .contains("<option value=\"client\" selected>"));
    let default = browser.get("/projects/default/connect").await;
    let text = default.expect(200);
    assert!(
        text.contains("<strong>init-frontend-token-1</strong>"),
        "{text}"
    );
    assert!(
        text.contains("<strong>init-client-token-1</strong>"),
        "{text}"
    );
    assert!(!text.contains("init-admin-token-1</strong>"), "{text}");
    assert_eq!(browser.get("/projects/nope/connect").await.status, 404);
}
