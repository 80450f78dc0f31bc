//! A flag's links through the real binary on SQLite and Postgres: added, listed with the flag, changed,
//! removed, each with its event; bad input (not an http(s) URL, too long a title) refused and nothing stored;
//! 404 for an unknown flag or link; a Viewer refused.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;

crate::on_sqlite_and_postgres!(a_flags_links);

const FLAG: &str = "/api/admin/projects/default/features/checkout";

async fn a_flags_links(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "checkout"}),
        )
        .await
        .expect(201);
    let link = format!("{FLAG}/link");
    server
        .post(
            &link,
            json!({"url": "https://tickets.example.com/PAY-1", "title": "Ticket"}),
        )
        .await
        .expect(204);
    server
        .post(
            &link,
            json!({"url": "http://grafana.example.com/d/checkout"}),
        )
        .await
        .expect(204);
    for (body, field) in [
        (json!({"url": "javascript:alert(1)"}), "url"),
        (json!({"url": "not a url"}), "url"),
        (json!({"title": "no url"}), "url"),
        (
            json!({"url": "https://x.example.com", "title": "t".repeat(101)}),
            "title",
        ),
    ] {
        let message = server
            .post(&link, body)
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{message}");
    }
    server
        .post(
            "/api/admin/projects/default/features/nope/link",
            json!({"url": "https://x.example.com"}),
        )
        .await
        .expect_error(404, "NotFoundError");

    let flag = server.get(FLAG).await.expect(200).clone();
    let links = flag["links"].as_array().unwrap().clone();
    assert_eq!(links.len(), 2, "{flag}");
    assert_eq!(links[0]["url"], "https://tickets.example.com/PAY-1");
    assert_eq!(links[0]["title"], "Ticket");
    assert_eq!(links[0]["feature"], "checkout");
    assert!(links[1]["title"].is_null());
    let id = links[0]["id"].as_str().unwrap().to_owned();

    server
        .put(
            &format!("{link}/{id}"),
            json!({"url": "https://tickets.example.com/PAY-2", "title": "Ticket 2"}),
        )
        .await
        .expect(204);
    let flag = server.get(FLAG).await.expect(200).clone();
    assert_eq!(flag["links"][0]["url"], "https://tickets.example.com/PAY-2");
    server
        .put(
            &format!("{link}/unknown"),
            json!({"url": "https://x.example.com"}),
        )
        .await
        .expect_error(404, "NotFoundError");

    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let refused = server
        .send("DELETE", &format!("{link}/{id}"), None, Some(&viewer))
        .await;
    refused.expect_error(403, "NoAccessError");
    server.delete(&format!("{link}/{id}")).await.expect(204);
    server
        .delete(&format!("{link}/{id}"))
        .await
        .expect_error(404, "NotFoundError");
    let flag = server.get(FLAG).await.expect(200).clone();
    assert_eq!(flag["links"].as_array().unwrap().len(), 1);

    // Each change one event on the flag: two added, one changed, one removed.
    let events = server
        .get("/api/admin/events?type=feature-metadata-updated&limit=100")
        .await
        .expect(200)
        .clone();
    let with_links: Vec<_> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["data"].get("link").is_some())
        .collect();
    assert_eq!(with_links.len(), 4, "{events}");
    assert!(with_links[0]["data"]["link"].is_null());
    assert_eq!(with_links[0]["featureName"], "checkout");
}
