//! The UI's configuration pages over HTTP, through the real binary: projects (list, create, settings, the
//! environments a project uses, change-request settings, delete), environments, context fields, strategy
//! definitions and the settings page. Each: its page, user input shown as text, a refusal's message beside
//! its field with what was typed kept and nothing stored, and the roles the admin API refuses refused here;
//! the long lists (environments, context fields, strategies) in pages of 25.
//! (The browser walk is `edge/tests/e2e/ui_config.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    projects_settings_change_requests_and_delete,
    environments_context_fields_and_strategies,
    settings_origins_and_facts,
    viewers_and_editors_get_only_what_the_api_allows,
    long_configuration_lists_are_paged,
);

const SCRIPT: &str = "<script>alert(1)</script> & more";
const ESCAPED: &str = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more";

impl Html {
    fn redirects_to(&self, location: &str) {
        assert_eq!(self.status, 303, "{}", self.text);
        assert_eq!(self.location.as_deref(), Some(location));
    }

    fn assert_has(&self, fragments: &[&str]) {
        for fragment in fragments {
            assert!(self.has(fragment), "{fragment} in {}", self.text);
        }
    }
}

impl Browser {
    /// Signed in with the admin token (no user exists yet).
    async fn with_token(server: &Server) -> (Browser, String) {
        let mut browser = Browser::new(server);
        let signed = browser
            .sign_in(&[("token", ADMIN_TOKEN), ("next", "/projects")])
            .await;
        signed.redirects_to("/projects");
        let csrf = browser.get("/projects").await.csrf();
        (browser, csrf)
    }

    async fn as_user(server: &Server, username: &str) -> (Browser, String) {
        let mut browser = Browser::new(server);
        let signed = browser
            .sign_in(&[
                ("username", username),
                ("password", "correct horse battery"),
                ("next", "/projects"),
            ])
            .await;
        signed.redirects_to("/projects");
        let csrf = browser.get("/projects").await.csrf();
        (browser, csrf)
    }
}

async fn api(server: &Server, path: &str) -> Value {
    server.get(path).await.expect(200).clone()
}

async fn change_request_config(server: &Server, project: &str, environment: &str) -> Value {
    let config = api(
        server,
        &format!("/api/admin/projects/{project}/change-requests/config"),
    )
    .await;
    config
        .as_array()
        .expect("a list")
        .iter()
        .find(|entry| entry["environment"] == environment)
        .cloned()
        .unwrap_or(Value::Null)
}

async fn projects_settings_change_requests_and_delete(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (mut browser, csrf) = Browser::with_token(&server).await;
    let list = browser.get("/projects").await;
    list.expect(200);
    list.assert_has(&[
        "<a href=\"/projects\" aria-current=\"page\">Projects</a>",
        "<a href=\"/projects/default/overview\">Default</a>",
        "aria-label=\"Settings of Default\"",
        "href=\"/create-project\">New project</a>",
    ]);
    let form = browser.get("/create-project").await;
    form.expect(200);
    form.assert_has(&[
        "<a href=\"/projects\" aria-current=\"page\">Projects</a>",
        "<label for=\"project-name\">Project name</label>",
        "<label for=\"project-id\">Project id</label>",
        "value=\"development\" checked",
        ">Create project</button>",
    ]);
    // The flag list's project picker still lands on the chosen project's flags.
    browser
        .get("/projects?project=default")
        .await
        .redirects_to("/projects/default");

    // An id the rule refuses: beside the id, what was typed kept, nothing stored.
    let refused = browser
        .post(
            "/projects",
            &[
                ("csrf", &csrf),
                ("name", "Web shop"),
                ("description", "kept text"),
                ("environment", "production"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("id=\"project-id-error\" aria-live=\"polite\">id must be URL-safe"),
        "{text}"
    );
    assert!(text.contains("value=\"Web shop\""), "{text}");
    assert!(text.contains(">kept text</textarea>"), "{text}");
    assert!(text.contains("value=\"production\" checked"), "{text}");
    assert!(!text.contains("value=\"development\" checked"), "{text}");
    assert_eq!(server.get("/api/admin/projects/Web shop").await.status, 404);

    let created = browser
        .post(
            "/projects",
            &[
                ("csrf", &csrf),
                ("name", SCRIPT),
                ("id", "web"),
                ("description", SCRIPT),
                ("environment", "production"),
            ],
        )
        .await;
    created.redirects_to("/projects/web/settings");
    let stored = api(&server, "/api/admin/projects/web").await;
    assert_eq!(stored["name"], SCRIPT);
    assert_eq!(stored["environments"], json!(["production"]));
    let taken = browser
        .post(
            "/projects",
            &[("csrf", &csrf), ("name", "Again"), ("id", "web")],
        )
        .await;
    assert!(taken.expect(409).contains(
        "id=\"project-id-error\" aria-live=\"polite\">A project with id web already exists"
    ));

    for path in ["/projects", "/projects/web/settings"] {
        let page = browser.get(path).await;
        let text = page.expect(200);
        assert!(!text.contains("<script>alert"), "{path}: unescaped input");
        assert!(text.contains(ESCAPED), "{path}: {text}");
    }
    let settings = browser.get("/projects/web/settings").await;
    settings.assert_has(&[
        "role=\"switch\" aria-checked=\"false\" aria-label=\"Use development\"",
        "role=\"switch\" aria-checked=\"true\" aria-label=\"Use production\"",
        "Change requests in production",
        "<label for=\"approvals-production\">Required approvals in production</label>",
        ">Save</button>",
        ">Save project</button>",
        ">Delete project</a>",
    ]);
    assert!(!settings.has("Required approvals in development"));

    // The project starts using development; change requests there, with 2 approvals.
    browser
        .post(
            "/projects/web/environments/development/switch",
            &[("csrf", &csrf), ("enabled", "true")],
        )
        .await
        .redirects_to("/projects/web/settings");
    let stored = api(&server, "/api/admin/projects/web").await;
    assert_eq!(stored["environments"], json!(["development", "production"]));
    let wrong = browser
        .post(
            "/projects/web/environments/development/change-requests",
            &[("csrf", &csrf), ("enabled", "true"), ("approvals", "two")],
        )
        .await;
    let text = wrong.expect(400);
    assert!(
        text.contains("id=\"approvals-development-error\" aria-live=\"polite\">Required approvals must be a whole number"),
        "{text}"
    );
    assert!(text.contains("value=\"two\""), "{text}");
    assert_eq!(
        change_request_config(&server, "web", "development").await["changeRequestEnabled"],
        false
    );
    browser
        .post(
            "/projects/web/environments/development/change-requests",
            &[("csrf", &csrf), ("enabled", "true"), ("approvals", "2")],
        )
        .await
        .redirects_to("/projects/web/settings");
    let config = change_request_config(&server, "web", "development").await;
    assert_eq!(config["changeRequestEnabled"], true, "{config}");
    assert_eq!(config["requiredApprovals"], 2, "{config}");
    let settings = browser.get("/projects/web/settings").await;
    settings.assert_has(&[
        "name=\"enabled\" value=\"true\" checked>Change requests in development",
        "id=\"approvals-development\" type=\"number\" name=\"approvals\" min=\"1\" max=\"10\" step=\"1\" value=\"2\"",
    ]);
    // Off again: an unticked box is off.
    browser
        .post(
            "/projects/web/environments/development/change-requests",
            &[("csrf", &csrf), ("approvals", "2")],
        )
        .await
        .redirects_to("/projects/web/settings");
    assert_eq!(
        change_request_config(&server, "web", "development").await["changeRequestEnabled"],
        false
    );

    // Name and description: an empty name is refused beside the field.
    let empty = browser
        .post(
            "/projects/web/settings",
            &[("csrf", &csrf), ("name", " "), ("description", "typed")],
        )
        .await;
    let text = empty.expect(400);
    assert!(
        text.contains("id=\"project-name-error\" aria-live=\"polite\">name must be 1 to 100"),
        "{text}"
    );
    assert!(text.contains(">typed</textarea>"), "{text}");
    browser
        .post(
            "/projects/web/settings",
            &[("csrf", &csrf), ("name", "Web shop"), ("description", "")],
        )
        .await
        .redirects_to("/projects/web/settings");
    assert_eq!(
        api(&server, "/api/admin/projects/web").await["name"],
        "Web shop"
    );

    // Delete: refused while it holds a flag, then gone once empty.
    server
        .post("/api/admin/projects/web/features", json!({"name": "cart"}))
        .await
        .expect(201);
    let confirm = browser.get("/projects/web/delete").await;
    confirm.expect(200);
    confirm.assert_has(&[">Delete project Web shop</button>", ">Cancel</a>"]);
    let held = browser
        .post("/projects/web/delete", &[("csrf", &csrf)])
        .await;
    assert!(held.expect(400).contains("Project web still holds flags"));
    server
        .delete("/api/admin/projects/web/features/cart")
        .await
        .expect(202);
    server.delete("/api/admin/archive/cart").await.expect(200);
    browser
        .post("/projects/web/delete", &[("csrf", &csrf)])
        .await
        .redirects_to("/projects");
    assert_eq!(server.get("/api/admin/projects/web").await.status, 404);
    assert_eq!(browser.get("/projects/web/settings").await.status, 404);
    // The default project has no delete control.
    assert!(!browser
        .get("/projects/default/settings")
        .await
        .has("Delete project"));
}

async fn environments_context_fields_and_strategies(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (mut browser, csrf) = Browser::with_token(&server).await;

    // Environments.
    let list = browser.get("/environments").await;
    list.expect(200);
    list.assert_has(&[
        "role=\"switch\" aria-checked=\"true\" aria-label=\"development enabled\"",
        "href=\"/environments/create\">New environment</a>",
    ]);
    let form = browser.get("/environments/create").await;
    form.expect(200);
    form.assert_has(&[
        "<label for=\"environment-name\">Environment name</label>",
        ">Create environment</button>",
    ]);
    let refused = browser
        .post(
            "/environments",
            &[
                ("csrf", &csrf),
                ("name", "bad name"),
                ("type", "test"),
                ("sortOrder", ""),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("id=\"environment-name-error\" aria-live=\"polite\">name must be URL-safe"),
        "{text}"
    );
    assert!(text.contains("value=\"bad name\""), "{text}");
    let no_number = browser
        .post(
            "/environments",
            &[
                ("csrf", &csrf),
                ("name", "staging"),
                ("type", "test"),
                ("sortOrder", "soon"),
            ],
        )
        .await;
    assert!(no_number.expect(400).contains(
        "id=\"environment-sort-order-error\" aria-live=\"polite\">Sort order must be a whole number"
    ));
    assert_eq!(
        server.get("/api/admin/environments/staging").await.status,
        404
    );
    browser
        .post(
            "/environments",
            &[
                ("csrf", &csrf),
                ("name", "staging"),
                ("type", "test"),
                ("sortOrder", "5"),
            ],
        )
        .await
        .redirects_to("/environments");
    let stored = api(&server, "/api/admin/environments/staging").await;
    assert_eq!(stored["type"], "test");
    assert_eq!(stored["sortOrder"], 5);
    browser
        .post(
            "/environments/staging/switch",
            &[("csrf", &csrf), ("enabled", "false")],
        )
        .await
        .redirects_to("/environments");
    assert_eq!(
        api(&server, "/api/admin/environments/staging").await["enabled"],
        false
    );
    let edit = browser.get("/environments/edit/staging").await;
    edit.expect(200);
    edit.assert_has(&["value=\"test\"", ">Save environment</button>"]);
    browser
        .post(
            "/environments/edit/staging",
            &[
                ("csrf", &csrf),
                ("type", "preproduction"),
                ("sortOrder", "5"),
            ],
        )
        .await
        .redirects_to("/environments");
    assert_eq!(
        api(&server, "/api/admin/environments/staging").await["type"],
        "preproduction"
    );
    let confirm = browser.get("/environments/staging/delete").await;
    assert!(confirm
        .expect(200)
        .contains(">Delete environment staging</button>"));
    browser
        .post("/environments/staging/delete", &[("csrf", &csrf)])
        .await
        .redirects_to("/environments");
    assert_eq!(
        server.get("/api/admin/environments/staging").await.status,
        404
    );

    // Context fields: legal values as rows added and removed in the form.
    let list = browser.get("/context").await;
    list.expect(200);
    list.assert_has(&["<strong>userId</strong>", ">New context field</a>"]);
    let form = browser.get("/context/create").await;
    form.assert_has(&[
        "<label for=\"context-name\">Name</label>",
        "No legal values: constraints may test any value.",
        ">Add legal value</button>",
    ]);
    let grown = browser
        .post(
            "/context/create",
            &[
                ("csrf", &csrf),
                ("name", "region"),
                ("description", SCRIPT),
                ("valueCount", "1"),
                ("v0.value", "eu"),
                ("v0.description", "Europe"),
                ("intent", "add-value"),
            ],
        )
        .await;
    let text = grown.expect(200);
    assert!(
        text.contains("<label for=\"v1-value\">Legal value 2</label>"),
        "{text}"
    );
    assert!(text.contains("value=\"Europe\""), "{text}");
    let twice = browser
        .post(
            "/context/create",
            &[
                ("csrf", &csrf),
                ("name", "region"),
                ("description", SCRIPT),
                ("stickiness", "true"),
                ("valueCount", "2"),
                ("v0.value", "eu"),
                ("v0.description", "Europe"),
                ("v1.value", "eu"),
                ("v1.description", ""),
                ("intent", "save"),
            ],
        )
        .await;
    let text = twice.expect(400);
    assert!(
        text.contains(
            "id=\"legal-values-error\" aria-live=\"polite\">Legal value 2: eu is listed twice"
        ),
        "{text}"
    );
    assert_eq!(server.get("/api/admin/context/region").await.status, 404);
    browser
        .post(
            "/context/create",
            &[
                ("csrf", &csrf),
                ("name", "region"),
                ("description", SCRIPT),
                ("stickiness", "true"),
                ("valueCount", "2"),
                ("v0.value", "eu"),
                ("v0.description", "Europe"),
                ("v1.value", "us"),
                ("v1.description", ""),
                ("intent", "save"),
            ],
        )
        .await
        .redirects_to("/context");
    let stored = api(&server, "/api/admin/context/region").await;
    assert_eq!(stored["stickiness"], true);
    assert_eq!(
        stored["legalValues"],
        json!([{"value": "eu", "description": "Europe"}, {"value": "us"}])
    );
    let list = browser.get("/context").await;
    assert!(!list.has("<script>alert"));
    list.assert_has(&[
        ESCAPED,
        "<span class=\"tag\" title=\"Europe\">eu</span>",
        "aria-label=\"Delete region\"",
        "<strong>userId</strong> <span class=\"badge\">built in</span>",
    ]);
    assert!(!list.has("aria-label=\"Delete userId\""));
    let edit = browser.get("/context/edit/region").await;
    edit.assert_has(&["value=\"us\"", "aria-label=\"Remove legal value 2\""]);
    let shrunk = browser
        .post(
            "/context/edit/region",
            &[
                ("csrf", &csrf),
                ("description", "Where"),
                ("valueCount", "2"),
                ("v0.value", "eu"),
                ("v0.description", "Europe"),
                ("v1.value", "us"),
                ("intent", "remove-value-0"),
            ],
        )
        .await;
    assert!(shrunk.expect(200).contains("value=\"us\""));
    assert!(!shrunk.has("value=\"eu\""));
    browser
        .post(
            "/context/edit/region",
            &[
                ("csrf", &csrf),
                ("description", "Where"),
                ("valueCount", "1"),
                ("v0.value", "us"),
                ("intent", "save"),
            ],
        )
        .await
        .redirects_to("/context");
    let stored = api(&server, "/api/admin/context/region").await;
    assert_eq!(stored["description"], "Where");
    assert_eq!(stored["stickiness"], false);
    assert_eq!(stored["legalValues"], json!([{"value": "us"}]));
    let built_in = browser
        .post("/context/userId/delete", &[("csrf", &csrf)])
        .await;
    assert!(built_in
        .expect(400)
        .contains("is built in and cannot be deleted"));
    browser
        .post("/context/region/delete", &[("csrf", &csrf)])
        .await
        .redirects_to("/context");
    assert_eq!(server.get("/api/admin/context/region").await.status, 404);

    // Strategy definitions.
    let list = browser.get("/strategies").await;
    list.expect(200);
    list.assert_has(&[
        "flexibleRollout",
        "Built in",
        "aria-label=\"Deprecate default\"",
    ]);
    assert!(!list.has("aria-label=\"Delete flexibleRollout\""));
    let with_row = browser
        .post(
            "/strategies/create",
            &[
                ("csrf", &csrf),
                ("name", "by-tenant"),
                ("parameterCount", "0"),
                ("intent", "add-parameter"),
            ],
        )
        .await;
    with_row.expect(200);
    with_row.assert_has(&[
        "<label for=\"p0-name\">Parameter 1 name</label>",
        "<label for=\"p0-type\">Parameter 1 type</label>",
        "Parameter 1 required",
    ]);
    let blank = browser
        .post(
            "/strategies/create",
            &[
                ("csrf", &csrf),
                ("name", "by-tenant"),
                ("title", SCRIPT),
                ("parameterCount", "1"),
                ("p0.name", ""),
                ("p0.type", "list"),
                ("intent", "save"),
            ],
        )
        .await;
    let text = blank.expect(400);
    assert!(
        text.contains(
            "id=\"parameters-error\" aria-live=\"polite\">Parameter 1 name must be 1 to 100"
        ),
        "{text}"
    );
    assert!(text.contains("value=\"list\" selected"), "{text}");
    assert_eq!(
        server.get("/api/admin/strategies/by-tenant").await.status,
        404
    );
    browser
        .post(
            "/strategies/create",
            &[
                ("csrf", &csrf),
                ("name", "by-tenant"),
                ("title", SCRIPT),
                ("description", "Tenants"),
                ("parameterCount", "1"),
                ("p0.name", "tenants"),
                ("p0.type", "list"),
                ("p0.description", "Who gets it"),
                ("p0.required", "true"),
                ("intent", "save"),
            ],
        )
        .await
        .redirects_to("/strategies");
    let stored = api(&server, "/api/admin/strategies/by-tenant").await;
    assert_eq!(stored["displayName"], SCRIPT);
    assert_eq!(
        stored["parameters"],
        json!([{"name": "tenants", "type": "list", "description": "Who gets it", "required": true}])
    );
    let list = browser.get("/strategies").await;
    assert!(!list.has("<script>alert"));
    list.assert_has(&[
        ESCAPED,
        "<code>tenants</code>",
        "aria-label=\"Delete by-tenant\"",
    ]);
    browser
        .post("/strategies/by-tenant/deprecate", &[("csrf", &csrf)])
        .await
        .redirects_to("/strategies");
    assert_eq!(
        api(&server, "/api/admin/strategies/by-tenant").await["deprecated"],
        true
    );
    assert!(browser
        .get("/strategies")
        .await
        .has("aria-label=\"Reactivate by-tenant\""));
    browser
        .post("/strategies/by-tenant/reactivate", &[("csrf", &csrf)])
        .await
        .redirects_to("/strategies");
    assert_eq!(
        api(&server, "/api/admin/strategies/by-tenant").await["deprecated"],
        false
    );
    browser
        .post(
            "/strategies/edit/by-tenant",
            &[
                ("csrf", &csrf),
                ("title", "By tenant"),
                ("description", "Tenants"),
                ("parameterCount", "1"),
                ("p0.name", "tenants"),
                ("p0.type", "string"),
                ("intent", "save"),
            ],
        )
        .await
        .redirects_to("/strategies");
    let stored = api(&server, "/api/admin/strategies/by-tenant").await;
    assert_eq!(stored["displayName"], "By tenant");
    assert_eq!(stored["parameters"][0]["type"], "string");
    assert_eq!(stored["parameters"][0]["required"], false);
    let built_in = browser
        .post("/strategies/default/delete", &[("csrf", &csrf)])
        .await;
    assert!(built_in.expect(400).contains("is built in"));
    browser
        .post("/strategies/by-tenant/delete", &[("csrf", &csrf)])
        .await
        .redirects_to("/strategies");
    assert_eq!(
        server.get("/api/admin/strategies/by-tenant").await.status,
        404
    );
}

async fn settings_origins_and_facts(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (mut browser, csrf) = Browser::with_token(&server).await;
    let page = browser.get("/admin/settings").await;
    page.expect(200);
    let database = if db.url.starts_with("sqlite") {
        "SQLite"
    } else {
        "PostgreSQL"
    };
    page.assert_has(&[
        "<a href=\"/admin/settings\" aria-current=\"page\">Settings</a>",
        "<label for=\"origins\">Allowed origins</label>",
        ">*</textarea>",
        ">Save origins</button>",
        &format!("<dd>{database}</dd>"),
        &format!("<dd>{}</dd>", env!("CARGO_PKG_VERSION")),
        "<td><code>segmentValues</code></td><td>1000</td>",
    ]);
    let refused = browser
        .post(
            "/admin/settings/origins",
            &[
                ("csrf", &csrf),
                ("origins", "https://app.example.com\n<b>not a url</b>"),
            ],
        )
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("id=\"origins-error\" aria-live=\"polite\">frontendApiOrigins[1]"),
        "{text}"
    );
    assert!(
        text.contains(">https://app.example.com\n&lt;b&gt;not a url&lt;/b&gt;</textarea>"),
        "{text}"
    );
    assert_eq!(
        api(&server, "/api/admin/ui-config").await["frontendApiOrigins"],
        json!(["*"])
    );
    browser
        .post(
            "/admin/settings/origins",
            &[
                ("csrf", &csrf),
                (
                    "origins",
                    "https://App.Example.com/\r\n\r\nhttp://localhost:3000\r\n",
                ),
            ],
        )
        .await
        .redirects_to("/admin/settings");
    assert_eq!(
        api(&server, "/api/admin/ui-config").await["frontendApiOrigins"],
        json!(["https://app.example.com", "http://localhost:3000"])
    );
    assert!(browser
        .get("/admin/settings")
        .await
        .has(">https://app.example.com\nhttp://localhost:3000</textarea>"));
    let empty = browser
        .post(
            "/admin/settings/origins",
            &[("csrf", &csrf), ("origins", "  \n")],
        )
        .await;
    assert!(empty
        .expect(400)
        .contains("frontendApiOrigins must hold at least one origin"));
}

async fn viewers_and_editors_get_only_what_the_api_allows(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for (username, role) in [("vera", "Viewer"), ("eddie", "Editor")] {
        server
            .post(
                "/api/admin/user-admin",
                json!({"username": username, "password": "correct horse battery", "rootRole": role}),
            )
            .await
            .expect(201);
    }
    server
        .post(
            "/api/admin/strategies",
            json!({"name": "by-tenant", "parameters": []}),
        )
        .await
        .expect(201);

    let (mut viewer, csrf) = Browser::as_user(&server, "vera").await;
    for (path, absent) in [
        ("/projects", "Create project"),
        ("/projects/default/settings", "Save project"),
        ("/projects/default/settings", "role=\"switch\""),
        ("/projects/default/settings", "Required approvals in"),
        ("/environments", "Create environment"),
        ("/environments", "role=\"switch\""),
        ("/context", "New context field"),
        ("/strategies", "Deprecate"),
        ("/admin/settings", "Save origins"),
    ] {
        let page = viewer.get(path).await;
        assert!(
            !page.expect(200).contains(absent),
            "a Viewer sees {absent} on {path}"
        );
    }
    assert!(viewer
        .get("/admin/settings")
        .await
        .has("<li><code>*</code></li>"));
    for path in [
        "/context/create",
        "/strategies/create",
        "/environments/edit/development",
    ] {
        assert_eq!(viewer.get(path).await.status, 403, "{path}");
    }
    for (path, form) in [
        ("/projects", vec![("name", "forged")]),
        ("/environments", vec![("name", "forged"), ("type", "test")]),
        ("/context/create", vec![("name", "forged")]),
        ("/strategies/by-tenant/deprecate", vec![]),
        (
            "/projects/default/environments/development/change-requests",
            vec![("enabled", "true"), ("approvals", "2")],
        ),
        (
            "/admin/settings/origins",
            vec![("origins", "https://evil.example")],
        ),
    ] {
        let mut fields = vec![("csrf", csrf.as_str())];
        fields.extend(form);
        let refused = viewer.post(path, &fields).await;
        assert_eq!(refused.status, 403, "{path}: {}", refused.text);
    }
    assert_eq!(server.get("/api/admin/projects/forged").await.status, 404);
    assert_eq!(
        server.get("/api/admin/environments/forged").await.status,
        404
    );
    assert_eq!(server.get("/api/admin/context/forged").await.status, 404);
    assert_eq!(
        api(&server, "/api/admin/strategies/by-tenant").await["deprecated"],
        false
    );
    assert_eq!(
        change_request_config(&server, "default", "development").await["changeRequestEnabled"],
        false
    );

    // An Editor changes configuration, reads the settings, cannot change them.
    let (mut editor, csrf) = Browser::as_user(&server, "eddie").await;
    editor
        .post(
            "/environments",
            &[("csrf", &csrf), ("name", "staging"), ("type", "test")],
        )
        .await
        .redirects_to("/environments");
    let settings = editor.get("/admin/settings").await;
    assert!(!settings.expect(200).contains("Save origins"));
    let refused = editor
        .post(
            "/admin/settings/origins",
            &[("csrf", &csrf), ("origins", "https://evil.example")],
        )
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        api(&server, "/api/admin/ui-config").await["frontendApiOrigins"],
        json!(["*"])
    );
}

/// The names a list page shows, in order (each row's first cell: the text of its first element, a
/// `<strong>` title or a link).
fn row_names(page: &str) -> Vec<String> {
    let marker = "<td class=\"flag-name\"><";
    page.match_indices(marker)
        .map(|(at, _)| {
            let rest = &page[at + marker.len()..];
            let rest = &rest[rest.find('>').unwrap() + 1..];
            rest[..rest.find('<').unwrap()].to_owned()
        })
        .collect()
}

/// Every page of `path` (25 rows each, "Page X of Y", the links between them): their rows are `expected`,
/// in order, each once.
async fn pages_hold(browser: &mut Browser, path: &str, expected: &[String]) {
    let pages = expected.len().div_ceil(25);
    assert!(
        pages >= 2,
        "{path}: {} rows is not more than a page",
        expected.len()
    );
    let mut shown = Vec::new();
    for page in 1..=pages {
        let text = browser.page(&format!("{path}?page={page}")).await;
        assert!(
            text.contains(&format!("Page {page} of {pages}")),
            "{path} {page}: {text}"
        );
        let previous = format!("href=\"{path}?page={}\">Previous page</a>", page - 1);
        let next = format!("href=\"{path}?page={}\">Next page</a>", page + 1);
        assert_eq!(text.contains(&previous), page > 1, "{path} {page}: {text}");
        assert_eq!(text.contains(&next), page < pages, "{path} {page}: {text}");
        let names = row_names(&text);
        assert_eq!(
            names.len(),
            if page < pages {
                25
            } else {
                expected.len() - 25 * (pages - 1)
            }
        );
        shown.extend(names);
    }
    assert_eq!(shown, expected, "{path}");
    // Without a page: the first; past the last: the last.
    let first = browser.page(path).await;
    assert!(first.contains(&format!("Page 1 of {pages}")), "{first}");
    let past = browser.page(&format!("{path}?page=99")).await;
    assert!(past.contains(&format!("Page {pages} of {pages}")), "{past}");
}

async fn long_configuration_lists_are_paged(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for i in 0..27 {
        server
            .post(
                "/api/admin/environments",
                json!({"name": format!("env-{i:02}"), "type": "test", "sortOrder": 100 + i}),
            )
            .await
            .expect(201);
        server
            .post(
                "/api/admin/context",
                json!({"name": format!("field-{i:02}")}),
            )
            .await
            .expect(201);
        server
            .post(
                "/api/admin/strategies",
                json!({"name": format!("strategy-{i:02}"), "parameters": []}),
            )
            .await
            .expect(201);
        server
            .post(
                "/api/admin/projects",
                json!({"id": format!("project-{i:02}"), "name": format!("Project {i:02}")}),
            )
            .await
            .expect(201);
    }
    let (mut browser, _) = Browser::with_token(&server).await;

    let environments: Vec<String> = api(&server, "/api/admin/environments").await["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|environment| environment["name"].as_str().unwrap().to_owned())
        .collect();
    pages_hold(&mut browser, "/environments", &environments).await;
    // A switch on page 2 brings page 2 back.
    let second = browser.page("/environments?page=2").await;
    assert!(
        second.contains("name=\"back\" value=\"/environments?page=2\""),
        "{second}"
    );

    let fields: Vec<String> = api(&server, "/api/admin/context")
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|field| field["name"].as_str().unwrap().to_owned())
        .collect();
    pages_hold(&mut browser, "/context", &fields).await;

    let strategies: Vec<String> = api(&server, "/api/admin/strategies").await["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|strategy| {
            // The built-ins by the UI's names (ui::vocabulary), the custom ones by their title or name.
            let built_in = match strategy["name"].as_str().unwrap() {
                "default" => Some("Standard (on for everyone)"),
                "userWithId" => Some("User IDs"),
                "gradualRolloutUserId" => Some("Gradual rollout by user ID"),
                "gradualRolloutSessionId" => Some("Gradual rollout by session ID"),
                _ => None,
            };
            built_in
                .or(strategy["displayName"].as_str())
                .filter(|title| !title.is_empty())
                .unwrap_or_else(|| strategy["name"].as_str().unwrap())
                .to_owned()
        })
        .collect();
    pages_hold(&mut browser, "/strategies", &strategies).await;

    let projects: Vec<String> = api(&server, "/api/admin/projects").await["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|project| project["name"].as_str().unwrap().to_owned())
        .collect();
    pages_hold(&mut browser, "/projects", &projects).await;
}
