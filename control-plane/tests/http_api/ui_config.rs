//! The UI's configuration pages over HTTP, through the real binary: projects (list, create, settings, the
//! environments a project uses, change-request settings, delete) and the settings page. Each: its page, user
//! input shown as text, a refusal's message beside its field with what was typed kept and nothing stored,
//! and the roles the admin API refuses refused here. Environments, context fields and strategy definitions
//! are in `ui_config_lists.rs`. (The browser walk is `edge/tests/e2e/ui_config.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    projects_settings_change_requests_and_delete,
    settings_origins_and_facts,
    viewers_and_editors_get_only_what_the_api_allows,
);

pub(crate) const SCRIPT: &str = "<script>alert(1)</script> & more";
pub(crate) const ESCAPED: &str = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more";

impl Html {
    pub(crate) fn redirects_to(&self, location: &str) {
        assert_eq!(self.status, 303, "{}", self.text);
        assert_eq!(self.location.as_deref(), Some(location));
    }

    pub(crate) fn assert_has(&self, fragments: &[&str]) {
        for fragment in fragments {
            assert!(self.has(fragment), "{fragment} in {}", self.text);
        }
    }
}

impl Browser {
    /// Signed in with the admin token (no user exists yet).
    pub(crate) async fn with_token(server: &Server) -> (Browser, String) {
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

pub(crate) async fn api(server: &Server, path: &str) -> Value {
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
