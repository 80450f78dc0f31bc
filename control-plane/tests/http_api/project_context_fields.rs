//! A project's own context fields (issue 35, Unleash's `/api/admin/projects/:p/context…`) through the real
//! binary on SQLite and Postgres: every operation's round trip; usable only by the project's flags and
//! segments; names unique with the instance's and other projects' fields; in use → 409; unknown project →
//! 404; bad bodies → 400 with nothing stored; events carrying the project; `UPDATE_PROJECT` in the project;
//! the project's "Context fields" pages and the constraint editor's choices through real HTML; export and
//! import keep a field a project's.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    a_projects_context_fields_over_the_api,
    a_projects_context_fields_in_the_ui,
    export_and_import_keep_a_field_a_projects
);

const ALPHA: &str = "/api/admin/projects/alpha/context";
const BETA: &str = "/api/admin/projects/beta/context";

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|field| field["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn projects_and_flags(server: &Server) {
    for project in ["alpha", "beta"] {
        server
            .post(
                "/api/admin/projects",
                json!({"id": project, "name": project}),
            )
            .await
            .expect(201);
        server
            .post(
                &format!("/api/admin/projects/{project}/features"),
                json!({"name": format!("{project}-flag")}),
            )
            .await
            .expect(201);
    }
}

fn tier_constraint() -> Value {
    json!([{"contextName": "tier", "operator": "IN", "values": ["gold"]}])
}

/// Events of `event_type`, newest first.
async fn events(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=100"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn a_projects_context_fields_over_the_api(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    projects_and_flags(&server).await;

    // Create: the project of the path, Unleash's contextFieldSchema with `project`.
    let created = server
        .post(
            ALPHA,
            json!({"name": "tier", "description": "Plan tier", "stickiness": true,
                   "legalValues": [{"value": "gold"}, {"value": "silver", "description": "Second"}]}),
        )
        .await
        .expect(201)
        .clone();
    assert_eq!(created["name"], "tier");
    assert_eq!(created["project"], "alpha");
    assert_eq!(created["stickiness"], true);
    assert_eq!(created["legalValues"][1]["description"], "Second");
    server
        .post(ALPHA, json!({"name": "region"}))
        .await
        .expect(201);

    // Lists: the project's own; with include=root the instance's too; the instance's list leaves them out
    // unless include=project.
    assert_eq!(
        names(server.get(ALPHA).await.expect(200)),
        ["tier", "region"],
        "by sortOrder"
    );
    assert!(names(server.get(BETA).await.expect(200)).is_empty());
    let usable = names(
        server
            .get(&format!("{ALPHA}?include=root"))
            .await
            .expect(200),
    );
    assert!(
        usable.contains(&"tier".to_owned()) && usable.contains(&"userId".to_owned()),
        "{usable:?}"
    );
    let beta_usable = names(
        server
            .get(&format!("{BETA}?include=root"))
            .await
            .expect(200),
    );
    assert!(!beta_usable.contains(&"tier".to_owned()), "{beta_usable:?}");
    let instance = names(server.get("/api/admin/context").await.expect(200));
    assert!(!instance.contains(&"tier".to_owned()), "{instance:?}");
    let everything = server
        .get("/api/admin/context?include=project")
        .await
        .expect(200)
        .clone();
    let tier = everything
        .as_array()
        .unwrap()
        .iter()
        .find(|field| field["name"] == "tier")
        .expect("tier with include=project")
        .clone();
    assert_eq!(tier["project"], "alpha");
    let user_id = everything
        .as_array()
        .unwrap()
        .iter()
        .find(|field| field["name"] == "userId")
        .unwrap();
    assert!(user_id.get("project").is_none(), "{user_id}");

    // One field: in its project only.
    let got = server
        .get(&format!("{ALPHA}/tier"))
        .await
        .expect(200)
        .clone();
    assert_eq!(got["description"], "Plan tier");
    assert_eq!(got["project"], "alpha");
    server
        .get(&format!("{BETA}/tier"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .get(&format!("{ALPHA}/userId"))
        .await
        .expect_error(404, "NotFoundError");

    // Update; a field does not move; another project's path is 404.
    let updated = server
        .put(
            &format!("{ALPHA}/tier"),
            json!({"description": "Tier", "project": "alpha"}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["description"], "Tier");
    assert_eq!(updated["legalValues"].as_array().unwrap().len(), 2);
    let message = server
        .put(&format!("{ALPHA}/tier"), json!({"project": "beta"}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.starts_with("project"), "{message}");
    server
        .put(&format!("{BETA}/tier"), json!({"description": "x"}))
        .await
        .expect_error(404, "NotFoundError");

    // Legal values: added, its description replaced, removed.
    server
        .post(
            &format!("{ALPHA}/tier/legal-values"),
            json!({"value": "bronze"}),
        )
        .await
        .expect(200);
    server
        .post(
            &format!("{ALPHA}/tier/legal-values"),
            json!({"value": "gold", "description": "Top"}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("{ALPHA}/tier/legal-values/silver"))
        .await
        .expect(200);
    let tier = server
        .get(&format!("{ALPHA}/tier"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        tier["legalValues"],
        json!([{"value": "gold", "description": "Top"}, {"value": "bronze"}])
    );
    server
        .post(&format!("{BETA}/tier/legal-values"), json!({"value": "x"}))
        .await
        .expect_error(404, "NotFoundError");

    // Names: unique with the instance's fields and every project's.
    server
        .post(&format!("{ALPHA}/validate"), json!({"name": "plan"}))
        .await
        .expect(200);
    for taken in ["tier", "userId"] {
        server
            .post(&format!("{BETA}/validate"), json!({"name": taken}))
            .await
            .expect_error(409, "NameExistsError");
        server
            .post(BETA, json!({"name": taken}))
            .await
            .expect_error(409, "NameExistsError");
    }
    let message = server
        .post("/api/admin/context", json!({"name": "tier"}))
        .await
        .expect_error(409, "NameExistsError");
    assert!(message.contains("alpha"), "{message}");
    server
        .post(&format!("{ALPHA}/validate"), json!({"name": "a b"}))
        .await
        .expect_error(400, "ValidationError");

    // Bad bodies: 400, nothing stored.
    for body in [
        json!({}),
        json!({"name": "a b"}),
        json!({"name": "plan", "legalValues": "gold"}),
        json!({"name": "plan", "legalValues": [{"value": ""}]}),
        json!({"name": "plan", "stickiness": "yes"}),
        json!({"name": "plan", "project": "beta"}),
    ] {
        server
            .post(ALPHA, body.clone())
            .await
            .expect_error(400, "ValidationError");
    }
    server
        .post(&format!("{ALPHA}/tier/legal-values"), json!({}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(&format!("{ALPHA}/validate"), json!({}))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(
        names(server.get(ALPHA).await.expect(200)),
        ["tier", "region"],
        "by sortOrder"
    );

    // Unknown project: 404 everywhere.
    let nope = "/api/admin/projects/nope/context";
    server.get(nope).await.expect_error(404, "NotFoundError");
    server
        .post(nope, json!({"name": "plan"}))
        .await
        .expect_error(404, "NotFoundError");
    server
        .post(&format!("{nope}/validate"), json!({"name": "plan"}))
        .await
        .expect_error(404, "NotFoundError");
    server
        .get(&format!("{nope}/tier"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .get(&format!("{nope}/tier/strategies"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete(&format!("{nope}/tier"))
        .await
        .expect_error(404, "NotFoundError");

    // Usable by the project's flags and segments only.
    let strategies =
        "/api/admin/projects/alpha/features/alpha-flag/environments/development/strategies";
    let strategy = server
        .post(
            strategies,
            json!({"name": "default", "constraints": tier_constraint()}),
        )
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let message = server
        .post(
            "/api/admin/projects/beta/features/beta-flag/environments/development/strategies",
            json!({"name": "default", "constraints": tier_constraint()}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("tier") && message.contains("alpha") && message.contains("beta"),
        "{message}"
    );
    let message = server
        .post(
            "/api/admin/segments",
            json!({"name": "everyone-gold", "constraints": tier_constraint()}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("tier") && message.contains("alpha"),
        "{message}"
    );
    server
        .post(
            "/api/admin/segments",
            json!({"name": "beta-gold", "project": "beta", "constraints": tier_constraint()}),
        )
        .await
        .expect_error(400, "ValidationError");
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "alpha-gold", "project": "alpha", "constraints": tier_constraint()}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    // Moving the segment out of the project is refused too.
    server
        .put(
            &format!("/api/admin/segments/{segment}"),
            json!({"name": "alpha-gold", "constraints": tier_constraint()}),
        )
        .await
        .expect_error(400, "ValidationError");
    let segments = server.get("/api/admin/segments").await.expect(200).clone();
    assert_eq!(segments["segments"].as_array().unwrap().len(), 1);

    // The strategies using it.
    let using = server
        .get(&format!("{ALPHA}/tier/strategies"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        using,
        json!({"strategies": [{"id": strategy, "featureName": "alpha-flag", "projectId": "alpha",
                               "environment": "development", "strategyName": "default"}]})
    );
    server
        .get(&format!("{BETA}/tier/strategies"))
        .await
        .expect_error(404, "NotFoundError");

    // Delete: in use → 409 naming the users, nothing deleted; unused → gone.
    let message = server
        .delete(&format!("{ALPHA}/tier"))
        .await
        .expect_error(409, "NameExistsError");
    assert!(
        message.contains("alpha-flag") && message.contains("alpha-gold"),
        "{message}"
    );
    server.get(&format!("{ALPHA}/tier")).await.expect(200);
    server
        .delete(&format!("{BETA}/region"))
        .await
        .expect_error(404, "NotFoundError");
    server.delete(&format!("{ALPHA}/region")).await.expect(200);
    server
        .get(&format!("{ALPHA}/region"))
        .await
        .expect_error(404, "NotFoundError");

    // A project owning fields cannot be deleted.
    server
        .post(
            "/api/admin/projects",
            json!({"id": "gamma", "name": "gamma"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/gamma/context",
            json!({"name": "shard"}),
        )
        .await
        .expect(201);
    let message = server
        .delete("/api/admin/projects/gamma")
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("context fields"), "{message}");
    server
        .delete("/api/admin/projects/gamma/context/shard")
        .await
        .expect(200);
    server.delete("/api/admin/projects/gamma").await.expect(200);

    // Events, each carrying the project.
    let created = events(&server, "context-field-created").await;
    let tier_created = created
        .iter()
        .find(|event| event["data"]["name"] == "tier")
        .expect("tier created");
    assert_eq!(tier_created["project"], "alpha");
    assert_eq!(tier_created["data"]["project"], "alpha");
    let updated = events(&server, "context-field-updated").await;
    assert_eq!(updated.len(), 4, "description, bronze, gold, silver");
    assert!(updated.iter().all(|event| event["project"] == "alpha"));
    assert_eq!(
        updated[0]["preData"]["legalValues"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let deleted = events(&server, "context-field-deleted").await;
    assert_eq!(deleted.len(), 2);
    assert_eq!(deleted[1]["preData"]["name"], "region");
    assert_eq!(deleted[1]["project"], "alpha");
    assert_eq!(deleted[0]["project"], "gamma");

    // Writes need UPDATE_PROJECT in the project: an Owner of alpha only.
    let (bob, bob_pat) = user_with_pat(&server, "bob", "Viewer").await;
    server
        .post(
            "/api/admin/projects/alpha/access",
            json!({"roles": [4], "groups": [], "users": [bob]}),
        )
        .await
        .expect(200);
    server
        .send("POST", ALPHA, Some(json!({"name": "plan"})), Some(&bob_pat))
        .await
        .expect(201);
    server
        .send("POST", BETA, Some(json!({"name": "plan2"})), Some(&bob_pat))
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("DELETE", &format!("{ALPHA}/plan"), None, Some(&bob_pat))
        .await
        .expect(200);
    server
        .send("GET", BETA, None, Some(&bob_pat))
        .await
        .expect(200);
}

async fn signed_in(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn a_projects_context_fields_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    projects_and_flags(&server).await;
    server
        .post(BETA, json!({"name": "betaOnly"}))
        .await
        .expect(201);
    let mut admin = signed_in(&server).await;

    // The overview links to the page; the page is empty, with its "New context field".
    let overview = admin.page("/projects/alpha/overview").await;
    assert!(
        overview.contains("href=\"/projects/alpha/context\""),
        "{overview}"
    );
    let page = admin.page("/projects/alpha/context").await;
    assert!(page.contains("Context fields of project alpha"), "{page}");
    assert!(page.contains("No context fields yet."), "{page}");
    assert!(
        page.contains("href=\"/projects/alpha/context/create\""),
        "{page}"
    );
    admin.get("/projects/nope/context").await.expect(404);

    // Create with a legal value row added by the form's own post.
    let form = admin.get("/projects/alpha/context/create").await;
    let csrf = form.csrf();
    let redrawn = admin
        .post(
            "/projects/alpha/context/create",
            &[
                ("csrf", &csrf),
                ("name", "tier"),
                ("description", "Plan tier"),
                ("valueCount", "0"),
                ("intent", "add-value"),
            ],
        )
        .await;
    assert!(
        redrawn.text.contains("name=\"v0.value\""),
        "{}",
        redrawn.text
    );
    let created = admin
        .post(
            "/projects/alpha/context/create",
            &[
                ("csrf", &csrf),
                ("name", "tier"),
                ("description", "Plan tier"),
                ("valueCount", "1"),
                ("v0.value", "gold"),
                ("v0.description", ""),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    assert_eq!(created.location.as_deref(), Some("/projects/alpha/context"));
    let field = server
        .get(&format!("{ALPHA}/tier"))
        .await
        .expect(200)
        .clone();
    assert_eq!(field["project"], "alpha");
    assert_eq!(field["legalValues"], json!([{"value": "gold"}]));
    let page = admin.page("/projects/alpha/context").await;
    assert!(page.contains("<strong>tier</strong>"), "{page}");
    assert!(page.contains(">gold</span>"), "{page}");
    assert!(!page.contains("betaOnly"), "{page}");
    // A duplicate name: the form again with the message.
    let duplicate = admin
        .post(
            "/projects/alpha/context/create",
            &[
                ("csrf", &csrf),
                ("name", "betaOnly"),
                ("valueCount", "0"),
                ("intent", "save"),
            ],
        )
        .await;
    assert!(
        duplicate
            .text
            .contains("Context field betaOnly already exists"),
        "{}",
        duplicate.text
    );

    // Edit the legal values.
    let edit = admin.get("/projects/alpha/context/edit/tier").await;
    assert!(edit.text.contains("value=\"gold\""), "{}", edit.text);
    admin
        .get("/projects/alpha/context/edit/betaOnly")
        .await
        .expect(404);
    let saved = admin
        .post(
            "/projects/alpha/context/edit/tier",
            &[
                ("csrf", &csrf),
                ("description", "Plan tier"),
                ("valueCount", "2"),
                ("v0.value", "gold"),
                ("v0.description", ""),
                ("v1.value", "silver"),
                ("v1.description", "Second"),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let field = server
        .get(&format!("{ALPHA}/tier"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        field["legalValues"],
        json!([{"value": "gold"}, {"value": "silver", "description": "Second"}])
    );

    // The constraint editor of alpha's flag offers tier, not beta's field; beta's flag offers neither.
    let alpha_form = admin
        .page("/projects/alpha/features/alpha-flag/strategies/create?environmentId=development&strategyName=default")
        .await;
    assert!(
        alpha_form.contains("<option value=\"tier\""),
        "{alpha_form}"
    );
    assert!(
        alpha_form.contains("<option value=\"userId\""),
        "{alpha_form}"
    );
    assert!(!alpha_form.contains("betaOnly"), "{alpha_form}");
    let beta_form = admin
        .page("/projects/beta/features/beta-flag/strategies/create?environmentId=development&strategyName=default")
        .await;
    assert!(
        beta_form.contains("<option value=\"betaOnly\""),
        "{beta_form}"
    );
    assert!(!beta_form.contains("<option value=\"tier\""), "{beta_form}");

    // Delete.
    let deleted = admin
        .post("/projects/alpha/context/tier/delete", &[("csrf", &csrf)])
        .await;
    assert_eq!(deleted.status, 303, "{}", deleted.text);
    server
        .get(&format!("{ALPHA}/tier"))
        .await
        .expect_error(404, "NotFoundError");

    // A Viewer sees the list but no forms, and is refused the post.
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "vic", "password": "correct horse battery", "rootRole": "Viewer"}),
        )
        .await
        .expect(201);
    let mut viewer = Browser::new(&server);
    let signed = viewer
        .sign_in(&[("username", "vic"), ("password", "correct horse battery")])
        .await;
    assert_eq!(signed.status, 303);
    let page = viewer.get("/projects/beta/context").await;
    assert!(page.text.contains("betaOnly"), "{}", page.text);
    assert!(!page.text.contains("New context field"), "{}", page.text);
    assert!(!page.text.contains(">Delete<"), "{}", page.text);
    let csrf = page.csrf();
    let refused = viewer
        .post("/projects/beta/context/betaOnly/delete", &[("csrf", &csrf)])
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    server.get(&format!("{BETA}/betaOnly")).await.expect(200);
}

/// An export names a project's field with its project; an import creates such a field in the project it
/// imports into (not the instance's), and refuses a field another project owns, changing nothing.
async fn export_and_import_keep_a_field_a_projects(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    projects_and_flags(&server).await;
    server
        .post(
            ALPHA,
            json!({"name": "tier", "legalValues": [{"value": "gold"}]}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/alpha/features/alpha-flag/environments/development/strategies",
            json!({"name": "default", "constraints": tier_constraint()}),
        )
        .await
        .expect(200);
    let export = server
        .post(
            "/api/admin/features-batch/export",
            json!({"environment": "development", "project": "alpha"}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(export["contextFields"][0]["name"], "tier");
    assert_eq!(export["contextFields"][0]["project"], "alpha");

    // Into beta: tier is alpha's, so beta's flags cannot test it.
    let mut data = export.clone();
    data["features"][0]["name"] = json!("beta-copy");
    data["featureStrategies"][0]["featureName"] = json!("beta-copy");
    data["featureEnvironments"][0]["featureName"] = json!("beta-copy");
    data["featureEnvironments"][0]["name"] = json!("beta-copy");
    let body = json!({"project": "beta", "environment": "development", "data": data});
    let validation = server
        .post("/api/admin/features-batch/validate", body.clone())
        .await
        .expect(200)
        .clone();
    let refusal = validation["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|error| {
            error["message"]
                .as_str()
                .unwrap()
                .contains("belong to another project")
        })
        .unwrap_or_else(|| panic!("{validation}"));
    assert_eq!(refusal["affectedItems"], json!(["tier (in project alpha)"]));
    server
        .post("/api/admin/features-batch/import", body)
        .await
        .expect_error(400, "ValidationError");
    server
        .get("/api/admin/projects/beta/features/beta-copy")
        .await
        .expect_error(404, "NotFoundError");

    // A field the instance lacks is created as the importing project's.
    let text = data.to_string().replace("\"tier\"", "\"beta-tier\"");
    let data: Value = serde_json::from_str(&text).unwrap();
    let body = json!({"project": "beta", "environment": "development", "data": data});
    server
        .post("/api/admin/features-batch/import", body)
        .await
        .expect(200);
    let field = server
        .get(&format!("{BETA}/beta-tier"))
        .await
        .expect(200)
        .clone();
    assert_eq!(field["project"], "beta");
    assert!(!names(server.get("/api/admin/context").await.expect(200))
        .contains(&"beta-tier".to_owned()));
    let strategies = server
        .get("/api/admin/projects/beta/features/beta-copy/environments/development/strategies")
        .await
        .expect(200)
        .clone();
    assert_eq!(strategies[0]["constraints"][0]["contextName"], "beta-tier");
}
