//! The UI's configuration lists over HTTP, through the real binary: environments, context fields and strategy
//! definitions. Each: its page, user input shown as text, a refusal's message beside its field with what was
//! typed kept and nothing stored; the long lists in pages of 25. (The browser walk is
//! `edge/tests/e2e/ui_config.rs`.)

use crate::database::TestDb;
use crate::server::Server;
use crate::ui_browser::Browser;
use crate::ui_config::{api, ESCAPED, SCRIPT};
use serde_json::json;

crate::on_sqlite_and_postgres!(
    environments_context_fields_and_strategies,
    long_configuration_lists_are_paged,
);

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
