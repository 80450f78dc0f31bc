//! A project's overview page over HTTP, through the real binary: the landing page from the project list and
//! the search; its health from stored flags (a stale one and one past its type's lifetime listed with links),
//! flags by type, environments, members and the latest events as the event log's sentences; an empty
//! project's first steps; 404 for an unknown project. (The browser walk is `edge/tests/e2e/ui_overview.rs`.)

use crate::database::TestDb;
use crate::server::Server;
use crate::ui_browser::Browser;
use serde_json::json;

crate::on_sqlite_and_postgres!(the_overview_shows_health_types_and_activity);

fn assert_has(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
}

async fn age_flag(db: &TestDb, name: &str, days: i64) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let at = chrono::Utc::now() - chrono::Duration::days(days);
    let at = at.format("%Y-%m-%dT%H:%M:%S%.3fZ");
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    conn.execute(format!("UPDATE features SET created_at = '{at}' WHERE name = '{name}'").as_str())
        .await
        .unwrap();
}

async fn the_overview_shows_health_types_and_activity(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let anna_id = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "anna", "name": "Anna Berg", "password": "correct horse battery",
                "rootRole": "Editor"}),
        )
        .await
        .expect(201)["id"]
        .clone();
    // anna is the project's one member (her root role holds in every project, but makes no member).
    server
        .post(
            "/api/admin/projects/default/access",
            json!({"roles": [5], "users": [anna_id], "groups": []}),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/admin/projects",
            json!({"id": "lab", "name": "Lab", "environments": ["development"]}),
        )
        .await
        .expect(201);
    for (name, kind) in [
        ("old-banner", "release"),
        ("kill-payments", "kill-switch"),
        ("retired", "release"),
    ] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name, "type": kind}),
            )
            .await
            .expect(201);
    }
    age_flag(&db, "old-banner", 50).await;
    server
        .post(
            "/api/admin/projects/default/stale",
            json!({"features": ["retired"], "stale": true}),
        )
        .await
        .expect(202);
    let mut anna = Browser::new(&server);
    anna.sign_in(&[("username", "anna"), ("password", "correct horse battery")])
        .await
        .expect(303);

    // The project list and the search open the overview.
    let list = anna.get("/projects").await;
    assert_has(
        list.expect(200),
        &[
            "<a href=\"/projects/default/overview\">Default</a>",
            "<a href=\"/projects/lab/overview\">Lab</a>",
            "aria-label=\"Flags of Default: 3\">3</a>",
        ],
    );
    let found = anna.get("/search?q=lab").await;
    assert_has(
        found.expect(200),
        &["<a href=\"/projects/lab/overview\">Lab</a>"],
    );

    let page = anna.get("/projects/default/overview").await;
    let text = page.expect(200);
    assert_has(
        text,
        &[
            "<title>Overview of Default · Vexil</title>",
            "<a href=\"/projects\" aria-current=\"page\">Projects</a>",
            "<h1>Default</h1>",
            "Project overview · 3 flags",
            // One of three flags is neither stale nor potentially stale.
            "<span class=\"big-number\">33%</span> <span>healthy</span>",
            "<p>1 of 3 flags are neither stale nor potentially stale.</p>",
            "<a href=\"/projects/default/features/retired\">retired</a> <span class=\"badge stale\">stale</span>",
            "<a href=\"/projects/default/features/old-banner\">old-banner</a> <span class=\"muted\">Release · over 40 days old</span>",
            "<dt><a href=\"/projects/default?type=kill-switch\">Kill switch</a></dt><dd>1</dd>",
            "<dt><a href=\"/projects/default?type=release\">Release</a></dt><dd>2</dd>",
            "<dt><a href=\"/archive\">Archived flags</a></dt><dd>0</dd>",
            "<strong class=\"place\">development</strong>",
            "<strong class=\"place\">production</strong>",
            "<p>1 member</p>",
            "<p class=\"muted\">1 member joined in the last 30 days.</p>",
            "2 flags created<span class=\"muted\"> (1 in the 30 days before)</span>",
            // The latest events, as the event log says them.
            "marked <a href=\"/projects/default/features/retired\">retired</a> as stale",
            "created the kill switch flag <a href=\"/projects/default/features/kill-payments\">kill-payments</a>",
            "href=\"/history?project=default\">All events of this project</a>",
            "<a class=\"button\" href=\"/projects/default\">Flags</a>",
            "<a class=\"button\" href=\"/projects/default/settings\">Settings</a>",
            "href=\"/projects/default/create-flag\">New flag</a>",
        ],
    );
    assert!(!text.contains("No flags in this project yet."), "{text}");
    assert!(
        !text.contains("/features/kill-payments\">kill-payments</a> <span"),
        "{text}"
    );

    // The flag list links back to it.
    let flags = anna.get("/projects/default").await;
    assert_has(
        flags.expect(200),
        &["<a href=\"/projects/default/overview\">Project overview</a>"],
    );

    // An empty project: the first steps instead of its health.
    let empty = anna.get("/projects/lab/overview").await;
    let text = empty.expect(200);
    assert_has(
        text,
        &[
            "No flags in this project yet.",
            "href=\"/projects/lab/create-flag\">Create the first flag</a>",
            "<a class=\"button\" href=\"/projects/lab/connect\">Connect an SDK</a>",
            "<strong class=\"place\">development</strong>",
            "created the project",
        ],
    );
    assert!(!text.contains("big-number"), "{text}");

    anna.get("/projects/nowhere/overview").await.expect(404);
}
