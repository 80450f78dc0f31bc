//! The admin web UI's search over HTTP, through the real binary: the archive and segments searched and paged,
//! and one search over flags, segments and projects. (The browser walk is `edge/tests/e2e/ui.rs`.)

use crate::database::TestDb;
use crate::server::Server;
use crate::ui::signed_in_with_token;
use serde_json::json;

crate::on_sqlite_and_postgres!(
    archive_and_segments_are_searched_and_paged,
    one_search_finds_flags_segments_and_projects,
);

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
