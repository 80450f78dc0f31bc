//! The admin web UI over HTTP, through the real binary: each page's status and key elements, user input shown
//! as text, sign-in and sign-out, the CSRF token, a Viewer's refused writes, change-request drafts, the
//! error pages and the base path. (The browser walk is `edge/tests/e2e/ui.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    token_sign_in_flag_list_and_escaping,
    forms_need_the_csrf_token,
    a_viewer_sees_no_edit_controls_and_cannot_post,
    a_protected_environment_gets_a_change_request_draft,
    strategy_form_variants_archive_and_revive,
    archive_and_segments_are_searched_and_paged,
    one_search_finds_flags_segments_and_projects,
    a_new_project_shows_how_to_connect_an_sdk,
);

async fn signed_in_with_token(server: &Server) -> Browser {
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

async fn flag_at(server: &Server, base: &str, name: &str) -> Value {
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

async fn strategy_form_variants_archive_and_revive(db: TestDb) {
    let server = Server::start(&db, &["--base-path", "/vexil"]).await;
    server
        .post(
            "/vexil/api/admin/projects/default/features",
            json!({"name": "rollout"}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    browser.base = format!("{}/vexil", server.base);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/vexil/")])
        .await;
    assert!(
        signed.set_cookies[0].contains("Path=/vexil"),
        "{:?}",
        signed.set_cookies
    );
    let slash = browser.get("/").await;
    assert_eq!(slash.location.as_deref(), Some("/vexil"));
    let home = browser.get("").await;
    assert_eq!(home.location.as_deref(), Some("/vexil/projects/default"));
    let flag_path = "/projects/default/features/rollout";
    let form = browser
        .get(&format!(
            "{flag_path}/strategies/create?environmentId=development"
        ))
        .await;
    let text = form.expect(200);
    for fragment in [
        "<label for=\"strategy\">Strategy</label>",
        "<label for=\"param-rollout\">Rollout</label>",
        "<label for=\"param-stickiness\">Stickiness</label>",
        "<label for=\"param-groupId\">Group</label>",
        ">Add constraint</button>",
        ">Add strategy variant</button>",
        ">Save strategy</button>",
        "action=\"/vexil/projects/default/features/rollout/strategies/create\"",
        "href=\"/vexil/ui-assets/vexil.css\"",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let csrf = form.csrf();
    let base_fields = [
        ("csrf", csrf.as_str()),
        ("environment", "development"),
        ("strategy", "flexibleRollout"),
        ("param.rollout", "50"),
        ("param.stickiness", "default"),
        ("param.groupId", "rollout"),
    ];
    // "Add constraint" draws the form again with what was typed and a new constraint.
    let mut fields = base_fields.to_vec();
    fields.extend([("constraintCount", "0"), ("intent", "add-constraint")]);
    let grown = browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    let text = grown.expect(200);
    for fragment in [
        "<label for=\"c0-context\">Context field</label>",
        "<label for=\"c0-operator\">Operator</label>",
        "<label for=\"c0-values\">Values</label>",
        "Case insensitive",
        "Inverted",
        "value=\"50\"",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    // A refused constraint: the message, the form kept.
    let mut fields = base_fields.to_vec();
    fields.extend([
        ("constraintCount", "1"),
        ("c0.contextName", "bad name"),
        ("c0.operator", "IN"),
        ("c0.values", "x"),
        ("intent", "save"),
    ]);
    let refused = browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    assert!(refused
        .expect(400)
        .contains("<p class=\"field-error\" id=\"c0-context-error\""));
    assert!(refused.has("value=\"bad name\""));
    assert!(
        refused.has("Context field must be URL-safe"),
        "{}",
        refused.text
    );
    let mut fields = base_fields.to_vec();
    fields.extend([
        ("constraintCount", "1"),
        ("c0.contextName", "country"),
        ("c0.operator", "IN"),
        ("c0.values", "NO\nSE"),
        ("c0.caseInsensitive", "true"),
        ("svCount", "1"),
        ("sv0.name", "fast"),
        ("sv0.weight", ""),
        ("sv0.stickiness", "default"),
        ("sv0.payloadType", "string"),
        ("sv0.payload", "yes"),
        ("intent", "save"),
    ]);
    let saved = browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    assert_eq!(
        saved.location.as_deref(),
        Some("/vexil/projects/default/features/rollout#env-development"),
        "{}",
        saved.text
    );
    let mut fields = base_fields.to_vec();
    fields.extend([
        ("constraintCount", "0"),
        ("intent", "save"),
        ("strategy", "default"),
    ]);
    browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    let stored = flag_at(&server, "/vexil", "rollout").await;
    let strategies = stored["environments"][0]["strategies"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(strategies.len(), 2);
    assert_eq!(strategies[0]["parameters"]["rollout"], "50");
    assert_eq!(
        strategies[0]["constraints"][0],
        json!({"contextName": "country", "operator": "IN", "values": ["NO", "SE"],
               "caseInsensitive": true, "inverted": false})
    );
    assert_eq!(
        strategies[0]["variants"],
        json!([{"name": "fast", "weight": 1000, "weightType": "variable", "stickiness": "default",
                "payload": {"type": "string", "value": "yes"}}])
    );
    let first = strategies[0]["id"].as_str().unwrap().to_owned();
    // Move the first down: the order is the API's.
    let page = browser.get(flag_path).await;
    assert!(
        page.has(
            "<span class=\"chip\" title=\"country IN [NO, SE] (case insensitive)\">\
             country is one of NO, SE (ignoring case)</span>"
        ),
        "{}",
        page.text
    );
    let moved = browser
        .post(
            &format!("{flag_path}/strategies/move"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("strategyId", &first),
                ("direction", "down"),
            ],
        )
        .await;
    assert_eq!(moved.status, 303);
    let stored = flag_at(&server, "/vexil", "rollout").await;
    assert_eq!(
        stored["environments"][0]["strategies"][1]["id"],
        first.as_str()
    );
    // Drag and drop posts the place it was dropped on.
    for (position, expected) in [("0", 0), ("9", 1)] {
        let moved = browser
            .post(
                &format!("{flag_path}/strategies/move"),
                &[
                    ("csrf", &csrf),
                    ("environment", "development"),
                    ("strategyId", &first),
                    ("position", position),
                ],
            )
            .await;
        assert_eq!(moved.status, 303);
        let stored = flag_at(&server, "/vexil", "rollout").await;
        assert_eq!(
            stored["environments"][0]["strategies"][expected]["id"],
            first.as_str()
        );
    }
    // Edit: the form holds the stored strategy.
    let edit = browser
        .get(&format!(
            "{flag_path}/strategies/edit?environmentId=development&strategyId={first}"
        ))
        .await;
    assert!(
        edit.expect(200).contains(">NO\nSE</textarea>"),
        "{}",
        edit.text
    );

    // Variants with a JSON payload.
    let variants = browser
        .get(&format!("{flag_path}/variants?environment=development"))
        .await;
    assert!(variants.expect(200).contains("No variants"));
    let grown = browser
        .post(
            &format!("{flag_path}/variants"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("vCount", "0"),
                ("intent", "add-v"),
            ],
        )
        .await;
    for fragment in [
        "Variant name",
        "Weight",
        "Payload type",
        "Payload",
        "Save variants",
    ] {
        assert!(grown.has(fragment), "{fragment}");
    }
    let saved = browser
        .post(
            &format!("{flag_path}/variants"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("vCount", "1"),
                ("v0.name", "blue"),
                ("v0.weight", ""),
                ("v0.stickiness", "default"),
                ("v0.payloadType", "json"),
                ("v0.payload", "{\"color\": \"blue\"}"),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let stored = flag_at(&server, "/vexil", "rollout").await;
    assert_eq!(
        stored["environments"][0]["variants"][0]["payload"],
        json!({"type": "json", "value": "{\"color\": \"blue\"}"})
    );
    assert_eq!(stored["environments"][0]["variants"][0]["weight"], 1000);

    // Archive with a confirmation, then revive from the archive.
    let confirm = browser.get(&format!("{flag_path}/archive")).await;
    assert!(confirm.expect(200).contains(">Confirm</button>"));
    let archived = browser
        .post(&format!("{flag_path}/archive"), &[("csrf", &csrf)])
        .await;
    assert_eq!(archived.location.as_deref(), Some("/vexil/archive"));
    let archive = browser.get("/archive").await;
    assert!(archive
        .expect(200)
        .contains("aria-label=\"Revive rollout\""));
    let revived = browser
        .post("/archive/rollout/revive", &[("csrf", &csrf)])
        .await;
    assert_eq!(
        revived.location.as_deref(),
        Some("/vexil/projects/default/features/rollout")
    );
    assert_eq!(
        flag_at(&server, "/vexil", "rollout").await["archived"],
        false
    );
    let segments = browser.get("/segments").await;
    assert!(segments.expect(200).contains("No segments yet."));
}

/// `/archive` and `/segments` are searched by name or description and shown 25 rows a page, the pager's
/// links keeping the search; the archive lists the last archived first; a segment's "Used by" names the
/// flags and environments whose strategies add it.
async fn archive_and_segments_are_searched_and_paged(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for index in 1..=30 {
        let name = format!("old-{index:02}");
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name, "description": if index == 7 { "the <b>lucky</b> one" } else { "" }}),
            )
            .await
            .expect(201);
        server
            .delete(&format!("/api/admin/projects/default/features/{name}"))
            .await
            .expect(202);
    }
    for index in 1..=27 {
        server
            .post(
                "/api/admin/segments",
                json!({"name": format!("segment-{index:02}"), "constraints": []}),
            )
            .await
            .expect(201);
    }
    let segment_id = server.get("/api/admin/segments").await.expect(200)["segments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|segment| segment["name"] == "segment-03")
        .unwrap()["id"]
        .clone();
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "live"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/default/features/live/environments/development/strategies",
            json!({"name": "default", "segments": [segment_id]}),
        )
        .await
        .expect(200);
    let mut browser = signed_in_with_token(&server).await;

    let first = browser.page("/archive").await;
    assert!(first.contains("Showing 1–25 of 30"), "{first}");
    assert!(first.contains("<label for=\"search\">Search archived flags</label>"));
    // The last archived first.
    let newest = first.find("Revive old-30").expect("old-30 on page 1");
    let older = first.find("Revive old-29").expect("old-29 on page 1");
    assert!(newest < older);
    assert!(!first.contains("Revive old-05\""));
    assert!(first.contains("href=\"/archive?page=2\""));
    let second = browser.page("/archive?page=2").await;
    assert!(second.contains("Showing 26–30 of 30"), "{second}");
    assert_eq!(second.matches("aria-label=\"Revive ").count(), 5);
    // Past the end: the last page.
    assert!(browser
        .page("/archive?page=99")
        .await
        .contains("Showing 26–30 of 30"));
    let found = browser.page("/archive?query=LUCKY").await;
    assert_eq!(found.matches("aria-label=\"Revive ").count(), 1);
    assert!(found.contains("aria-label=\"Revive old-07\""));
    assert!(found.contains("the &lt;b&gt;lucky&lt;/b&gt; one"));
    let none = browser.page("/archive?query=%3Cscript%3E").await;
    assert!(none.contains("No archived flag matches \u{201c}&lt;script&gt;\u{201d}."));
    assert!(none.contains(">Clear the search</a>"));

    let segments = browser.page("/segments").await;
    assert!(segments.contains("Showing 1–25 of 27"), "{segments}");
    assert!(segments.contains("live (development)"));
    assert_eq!(segments.matches("aria-label=\"Delete segment-").count(), 25);
    let last = browser.page("/segments?page=2").await;
    assert_eq!(last.matches("aria-label=\"Delete segment-").count(), 2);
    let searched = browser.page("/segments?query=segment-2").await;
    // segment-20 … segment-27.
    assert_eq!(searched.matches("aria-label=\"Delete segment-").count(), 8);
    assert!(!searched.contains("class=\"pager\""));
    assert!(browser
        .page("/segments?query=nothing")
        .await
        .contains("No segment matches \u{201c}nothing\u{201d}."));
}

async fn one_search_finds_flags_segments_and_projects(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "shop", "name": "Web shop", "description": "Checkout and cart"}),
        )
        .await
        .expect(201);
    for (project, name, description) in [
        ("shop", "checkout-v2", "One-page checkout"),
        ("default", "dark-mode", "A darker theme, also at checkout"),
        ("default", "search-box", "Unrelated"),
    ] {
        server
            .post(
                &format!("/api/admin/projects/{project}/features"),
                json!({"name": name, "description": description}),
            )
            .await
            .expect(201);
    }
    server
        .post(
            "/api/admin/segments",
            json!({"name": "checkout-testers", "constraints": []}),
        )
        .await
        .expect(201);
    let mut browser = signed_in_with_token(&server).await;
    // The header of every page has the search.
    let list = browser.get("/projects/default").await;
    assert!(list.expect(200).contains(
        "<form class=\"global-search\" method=\"get\" action=\"/search\" role=\"search\">"
    ));
    let found = browser.get("/search?q=CHECKOUT").await;
    let text = found.expect(200);
    for fragment in [
        "<p id=\"search-count\" role=\"status\">4 matches.</p>",
        "Flags (2)",
        "<a href=\"/projects/shop/features/checkout-v2\">checkout-v2</a>",
        "<a href=\"/projects/default/features/dark-mode\">dark-mode</a>",
        "Segments (1)",
        ">checkout-testers</a>",
        "Projects (1)",
        "<a href=\"/projects/shop/overview\">Web shop</a>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    assert!(!text.contains("search-box"), "{text}");
    // Text is text: a comma or markup finds nothing and is shown escaped.
    let nothing = browser.get("/search?q=%3Cb%3Ex%2Cy").await;
    let text = nothing.expect(200);
    assert!(text.contains("Nothing matches “&lt;b&gt;x,y”."), "{text}");
    // Empty: the form only.
    assert!(!browser
        .get("/search?q=")
        .await
        .expect(200)
        .contains("search-count"));
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
