//! A flag's lifecycle in the UI (issue 35), over HTTP through the real binary: the flag list shows each
//! flag's stage and filters by it; the flag page shows the stages and offers "Mark completed" and
//! "Uncomplete" to whoever may update the flag (a Viewer sees neither and is refused the post).

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN};
use crate::ui_browser::Browser;
use serde_json::json;
use std::time::{Duration, Instant};

crate::on_sqlite_and_postgres!(the_list_and_the_flag_page_show_and_change_the_stage);

async fn signed_in(server: &Server, fields: &[(&str, &str)]) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(fields).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

/// The list row of `flag`.
fn row<'a>(page: &'a str, flag: &str) -> &'a str {
    let start = page
        .find(&format!(">{flag}</a>"))
        .unwrap_or_else(|| panic!("{flag} in {page}"));
    let end = start + page[start..].find("</tr>").expect("the row's end");
    &page[start..end]
}

async fn current_stage(server: &Server, flag: &str) -> String {
    let stages = server
        .get(&format!(
            "/api/admin/projects/default/features/{flag}/lifecycle"
        ))
        .await
        .expect(200)
        .clone();
    stages.as_array().unwrap().last().unwrap()["stage"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn the_list_and_the_flag_page_show_and_change_the_stage(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["alpha", "beta"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    let metrics = json!({
        "appName": "shop", "instanceId": "i1", "environment": "development",
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z",
                   "toggles": {"beta": {"yes": 1, "no": 0}}}
    });
    let posted = server
        .send(
            "POST",
            "/api/client/metrics",
            Some(metrics),
            Some(CLIENT_TOKEN),
        )
        .await;
    assert_eq!(posted.status, 202, "{:?}", posted.body);
    let started = Instant::now();
    while current_stage(&server, "beta").await != "pre-live" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "beta never pre-live"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut admin = signed_in(&server, &[("token", ADMIN_TOKEN)]).await;
    let page = admin.page("/projects/default").await;
    assert!(page.contains(">Type and stage</th>"), "{page}");
    assert!(row(&page, "alpha").contains(">Initial</span>"), "{page}");
    assert!(row(&page, "beta").contains(">Pre-live</span>"), "{page}");
    let filtered = admin.page("/projects/default?stage=pre-live").await;
    assert!(filtered.contains(">beta</a>"), "{filtered}");
    assert!(!filtered.contains(">alpha</a>"), "{filtered}");
    assert!(
        filtered.contains("<option value=\"pre-live\" selected>Pre-live</option>"),
        "{filtered}"
    );

    // Mark completed on the flag page, then uncomplete.
    let flag_page = admin.get("/projects/default/features/alpha").await;
    assert!(
        flag_page.text.contains("Mark completed"),
        "{}",
        flag_page.text
    );
    let csrf = flag_page.csrf();
    let completed = admin
        .post(
            "/projects/default/features/alpha/lifecycle/complete",
            &[
                ("csrf", &csrf),
                ("status", "discarded"),
                ("statusValue", ""),
            ],
        )
        .await;
    assert_eq!(completed.status, 303, "{}", completed.text);
    assert_eq!(current_stage(&server, "alpha").await, "completed");
    let flag_page = admin.page("/projects/default/features/alpha").await;
    assert!(flag_page.contains(">Completed</span>"), "{flag_page}");
    assert!(flag_page.contains("Completed (discarded)"), "{flag_page}");
    assert!(flag_page.contains(">Uncomplete</button>"), "{flag_page}");
    let page = admin.page("/projects/default?stage=completed").await;
    assert!(
        page.contains(">alpha</a>") && !page.contains(">beta</a>"),
        "{page}"
    );
    let uncompleted = admin
        .post(
            "/projects/default/features/alpha/lifecycle/uncomplete",
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(uncompleted.status, 303, "{}", uncompleted.text);
    assert_eq!(current_stage(&server, "alpha").await, "initial");

    // A Viewer sees the stage, no form, and is refused the post.
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
    let flag_page = viewer.get("/projects/default/features/beta").await;
    assert!(flag_page.text.contains("Lifecycle"), "{}", flag_page.text);
    assert!(
        !flag_page.text.contains("Mark completed"),
        "{}",
        flag_page.text
    );
    let csrf = flag_page.csrf();
    let refused = viewer
        .post(
            "/projects/default/features/beta/lifecycle/complete",
            &[("csrf", &csrf), ("status", "kept")],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(current_stage(&server, "beta").await, "pre-live");
}
