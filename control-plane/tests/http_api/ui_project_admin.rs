//! The project-admin pages over HTTP through the real binary on SQLite and Postgres: the project settings
//! show each environment's default strategy and set a gradual rollout (a refusal keeps what was typed); the
//! flag page's "Move to project…" form moves a flag (a refusal keeps the choice); a Viewer sees neither form
//! and is refused the posts.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::json;

crate::on_sqlite_and_postgres!(default_strategy_and_move_in_the_ui);

async fn signed_in(server: &Server, fields: &[(&str, &str)]) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(fields).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn default_strategy_and_move_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for project in ["mobile", "closed"] {
        server
            .post(
                "/api/admin/projects",
                json!({"id": project, "name": project}),
            )
            .await
            .expect(201);
    }
    server
        .post_empty("/api/admin/projects/archive/closed")
        .await
        .expect(200);
    for flag in ["checkout", "parent", "child"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": flag}),
            )
            .await
            .expect(201);
    }
    server
        .post(
            "/api/admin/projects/default/features/child/dependencies",
            json!({"feature": "parent"}),
        )
        .await
        .expect(200);
    let mut admin = signed_in(&server, &[("token", ADMIN_TOKEN)]).await;

    // The settings page: no default yet, a form per used environment.
    let settings = admin.get("/projects/default/settings").await;
    assert!(
        settings.text.contains(
            "None set: a flag switched on here without strategies gets a gradual rollout to 100 %."
        ),
        "{}",
        settings.text
    );
    assert!(
        settings
            .text
            .contains("action=\"/projects/default/environments/development/default-strategy\""),
        "{}",
        settings.text
    );
    let csrf = settings.csrf();
    let path = "/projects/default/environments/development/default-strategy";
    let refused = admin
        .post(
            path,
            &[
                ("csrf", &csrf),
                ("rollout", "150"),
                ("stickiness", "userId"),
                ("groupId", "grp"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.text.contains("rollout"), "{}", refused.text);
    assert!(refused.text.contains("value=\"150\""), "{}", refused.text);
    assert!(refused.text.contains("value=\"grp\""), "{}", refused.text);
    let listing = server
        .get("/api/admin/environments/project/default")
        .await
        .expect(200)
        .clone();
    assert!(
        listing.to_string().find("defaultStrategy").is_none(),
        "{listing}"
    );
    let saved = admin
        .post(
            path,
            &[
                ("csrf", &csrf),
                ("rollout", "30"),
                ("stickiness", "userId"),
                ("groupId", ""),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let settings = admin.page("/projects/default/settings").await;
    assert!(settings.contains("rollout <code>30</code>"), "{settings}");
    assert!(
        settings.contains("<option value=\"userId\" selected>"),
        "{settings}"
    );
    server
        .post_empty("/api/admin/projects/default/features/checkout/environments/development/on")
        .await
        .expect(200);
    let strategies = server
        .get("/api/admin/projects/default/features/checkout/environments/development/strategies")
        .await
        .expect(200)
        .clone();
    assert_eq!(
        strategies[0]["parameters"],
        json!({"rollout": "30", "stickiness": "userId", "groupId": "checkout"})
    );

    // Move to project: refused for a flag with dependencies (choice kept), then moved.
    let flag_page = admin.page("/projects/default/features/child").await;
    assert!(flag_page.contains("Move to project…"), "{flag_page}");
    let form = admin.get("/projects/default/features/child/move").await;
    assert!(
        form.text.contains("<option value=\"mobile\""),
        "{}",
        form.text
    );
    assert!(
        !form.text.contains("<option value=\"closed\""),
        "{}",
        form.text
    );
    assert!(
        !form.text.contains("<option value=\"default\""),
        "{}",
        form.text
    );
    let csrf = form.csrf();
    let refused = admin
        .post(
            "/projects/default/features/child/move",
            &[("csrf", &csrf), ("newProjectId", "mobile")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.text.contains("dependencies"), "{}", refused.text);
    assert!(
        refused.text.contains("<option value=\"mobile\" selected>"),
        "{}",
        refused.text
    );
    let moved = admin
        .post(
            "/projects/default/features/checkout/move",
            &[("csrf", &csrf), ("newProjectId", "mobile")],
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.text);
    server
        .get("/api/admin/projects/mobile/features/checkout")
        .await
        .expect(200);

    // The event log's sentences.
    let history = admin.page("/history").await;
    for fragment in [
        "set the default strategy of project",
        "archived the project",
        "from project <strong class=\"place\">default</strong> to <strong class=\"place\">mobile</strong>",
    ] {
        assert!(history.contains(fragment), "{fragment} in {history}");
    }

    // A Viewer: no forms, posts refused.
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "vic", "password": "correct horse battery", "rootRole": "Viewer"}),
        )
        .await
        .expect(201);
    let mut viewer = signed_in(
        &server,
        &[("username", "vic"), ("password", "correct horse battery")],
    )
    .await;
    let settings = viewer.get("/projects/default/settings").await;
    assert!(
        settings.text.contains("rollout <code>30</code>"),
        "{}",
        settings.text
    );
    assert!(
        !settings.text.contains("Save default strategy"),
        "{}",
        settings.text
    );
    let csrf = settings.csrf();
    let refused = viewer
        .post(path, &[("csrf", &csrf), ("rollout", "10")])
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    let flag_page = viewer.get("/projects/default/features/parent").await;
    assert!(
        !flag_page.text.contains("Move to project"),
        "{}",
        flag_page.text
    );
    let refused = viewer
        .post(
            "/projects/default/features/parent/move",
            &[("csrf", &csrf), ("newProjectId", "mobile")],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    server
        .get("/api/admin/projects/default/features/parent")
        .await
        .expect(200);
}
