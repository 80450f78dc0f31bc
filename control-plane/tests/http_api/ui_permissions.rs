//! Each UI control shows by the permission its form's post needs (`ui::PERMISSIONS`), in the project and
//! environment it acts in — not by "anything in the project": through the real binary, signed in as people
//! holding a custom role, a predefined one or none, reading the pages they get.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use crate::ui_browser::{Browser, Html};
use serde_json::json;

crate::on_sqlite_and_postgres!(controls_follow_each_forms_permission);

async fn signed_in(server: &Server, username: &str) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser
        .sign_in(&[
            ("username", username),
            ("password", "correct horse battery"),
            ("next", "/"),
        ])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

/// Whether the page offers a form posting to `action` (under the flag's page).
fn posts_to(page: &Html, action: &str) -> bool {
    page.has(&format!("action=\"{action}\""))
}

async fn controls_follow_each_forms_permission(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post("/api/admin/projects", json!({"id": "a", "name": "a"}))
        .await
        .expect(201);
    server
        .post("/api/admin/projects/a/features", json!({"name": "flag"}))
        .await
        .expect(201);
    let role = |name: &str, permissions: serde_json::Value| json!({"name": name, "type": "custom", "permissions": permissions});
    let switcher = server
        .post(
            "/api/admin/roles",
            role(
                "switch in development",
                json!([{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"}]),
            ),
        )
        .await
        .expect(200)["roles"]["id"]
        .as_i64()
        .unwrap();
    let author = server
        .post(
            "/api/admin/roles",
            role(
                "flag author",
                json!([{"name": "CREATE_FEATURE"}, {"name": "UPDATE_FEATURE"}]),
            ),
        )
        .await
        .expect(200)["roles"]["id"]
        .as_i64()
        .unwrap();
    let (switcher_id, _) = user_with_pat(&server, "switcher", "Viewer").await;
    let (author_id, _) = user_with_pat(&server, "author", "Viewer").await;
    user_with_pat(&server, "editor", "Editor").await;
    server
        .put(
            "/api/admin/projects/a/access",
            json!({"roles": [{"id": switcher, "users": [switcher_id]}, {"id": author, "users": [author_id]}]}),
        )
        .await
        .expect(200);
    let flag = "/projects/a/features/flag";

    // The switcher: the development switch and nothing else — no New flag, Clone, settings or archive, no
    // strategy forms; the create-flag form itself is refused.
    let mut switching = signed_in(&server, "switcher").await;
    let page = switching.get(flag).await;
    page.expect(200);
    assert!(posts_to(
        &page,
        &format!("{flag}/environments/development/switch")
    ));
    assert!(!posts_to(
        &page,
        &format!("{flag}/environments/production/switch")
    ));
    assert!(!page.has(">Clone<"), "{}", page.text);
    assert!(!posts_to(&page, &format!("{flag}/settings")));
    assert!(!page.has(">Archive flag<"));
    assert!(!posts_to(&page, &format!("{flag}/tags")));
    assert!(!posts_to(&page, &format!("{flag}/dependencies")));
    assert!(!page.has("strategies/create?"));
    let list = switching.get("/projects/a").await;
    assert!(!list.has(">New flag<"), "{}", list.text);
    switching.get("/projects/a/create-flag").await.expect(403);
    switching.get(&format!("{flag}/clone")).await.expect(403);
    // Instance-wide pages: a Viewer by root role changes none of them.
    for (path, control) in [
        ("/segments", ">New segment<"),
        ("/context", ">New context field<"),
        ("/strategies", ">New strategy<"),
        ("/environments", ">New environment<"),
    ] {
        let page = switching.get(path).await;
        page.expect(200);
        assert!(!page.has(control), "{path}: {}", page.text);
    }
    switching.get("/segments/create").await.expect(403);

    // The author: New flag, Clone and the settings form, but no switch, no archive, no strategy forms.
    let mut authoring = signed_in(&server, "author").await;
    let page = authoring.get(flag).await;
    assert!(page.has(">Clone<"));
    assert!(posts_to(&page, &format!("{flag}/settings")));
    assert!(posts_to(&page, &format!("{flag}/tags")));
    assert!(!page.has(">Archive flag<"));
    assert!(!posts_to(
        &page,
        &format!("{flag}/environments/development/switch")
    ));
    assert!(!page.has("strategies/create?"));
    assert!(authoring.get("/projects/a").await.has(">New flag<"));
    authoring.get("/projects/a/create-flag").await.expect(200);
    authoring.get(&format!("{flag}/archive")).await.expect(403);

    // An Editor: the instance-wide pages offer their forms.
    let mut editing = signed_in(&server, "editor").await;
    assert!(editing.get("/segments").await.has(">New segment<"));
    assert!(editing.get("/context").await.has(">New context field<"));
    let page = editing.get(flag).await;
    assert!(page.has(">Archive flag<"));
    assert!(page.has("strategies/create?"));
}
