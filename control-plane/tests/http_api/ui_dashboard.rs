//! The dashboard (`/personal`), on SQLite and Postgres: where a person lands after signing in; they see the
//! flags they created or starred (with their project's name) and the projects, starred ones first; a token has
//! no flags of its own and lands on the flag list.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::json;

crate::on_sqlite_and_postgres!(the_dashboard_shows_my_flags_and_the_projects);

async fn the_dashboard_shows_my_flags_and_the_projects(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for (id, name) in [("mobile", "Mobile apps"), ("web", "Web shop")] {
        server
            .post("/api/admin/projects", json!({"id": id, "name": name}))
            .await
            .expect(201);
    }
    server
        .post(
            "/api/admin/projects/web/features",
            json!({"name": "someone-elses"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "anna", "password": "correct horse battery", "rootRole": "Editor"}),
        )
        .await
        .expect(201);
    let mut anna = Browser::new(&server);
    let signed = anna
        .sign_in(&[("username", "anna"), ("password", "correct horse battery")])
        .await;
    assert_eq!(signed.status, 303);
    // Signing in lands on the dashboard.
    assert_eq!(signed.location.as_deref(), Some("/"));
    let landing = anna.get("/").await;
    assert_eq!(landing.status, 303);
    assert_eq!(landing.location.as_deref(), Some("/personal"));

    // Nothing of hers yet; the projects by name, none starred.
    let page = anna.page("/personal").await;
    assert!(page.contains("<h1>Dashboard</h1>"), "{page}");
    assert!(
        page.contains("Flags you create or mark with a star appear here."),
        "{page}"
    );
    assert!(!page.contains("someone-elses"), "{page}");
    assert!(
        page.contains("aria-current=\"page\">Dashboard</a>"),
        "{page}"
    );

    // She creates a flag in mobile and stars the web project: her flag, with its project's name; web first.
    let form = anna.get("/projects/mobile/create-flag").await;
    let csrf = form.csrf();
    let created = anna
        .post(
            "/projects/mobile/create-flag",
            &[
                ("csrf", &csrf),
                ("name", "offline-mode"),
                ("type", "release"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let starred = anna
        .post(
            "/projects/web/favorite",
            &[("csrf", &csrf), ("favorite", "true")],
        )
        .await;
    assert_eq!(starred.status, 303, "{}", starred.text);
    let page = anna.page("/personal").await;
    assert!(
        page.contains("/projects/mobile/features/offline-mode\">offline-mode</a>"),
        "{page}"
    );
    assert!(
        page.contains("/projects/mobile\">Mobile apps</a>"),
        "{page}"
    );
    let web = page.find("Overview of Web shop").unwrap();
    let mobile = page.find("Overview of Mobile apps").unwrap();
    assert!(web < mobile, "the starred project first: {page}");

    // Signed in with a token: no flags of its own.
    let mut admin = Browser::new(&server);
    admin
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await;
    // A token lands on the flag list instead.
    let landing = admin.get("/").await;
    assert_eq!(landing.location.as_deref(), Some("/projects/default"));
    let page = admin.page("/personal").await;
    assert!(page.contains("signed in with a token"), "{page}");
}
