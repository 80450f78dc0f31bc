//! A flag's links in the web UI, on SQLite and Postgres: the flag page lists them; an Editor adds one on the
//! links page (a refused address is drawn again as typed, nothing stored), edits and removes it, each stored
//! as the admin API answers it; a Viewer sees the links but not the way to change them, and is refused the
//! page and its posts.

use crate::database::TestDb;
use crate::server::Server;
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(links_are_added_edited_and_removed_in_the_ui);

const FLAG_PAGE: &str = "/projects/default/features/checkout";

async fn stored_links(server: &Server) -> Vec<Value> {
    let flag = server
        .get("/api/admin/projects/default/features/checkout")
        .await;
    flag.expect(200)["links"].as_array().unwrap().clone()
}

async fn signed_in(server: &Server, username: &str, role: &str) -> Browser {
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": username, "password": "correct horse battery", "rootRole": role}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(server);
    let signed = browser
        .sign_in(&[
            ("username", username),
            ("password", "correct horse battery"),
        ])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn links_are_added_edited_and_removed_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "checkout"}),
        )
        .await
        .expect(201);
    let mut eddie = signed_in(&server, "eddie", "Editor").await;

    let page = eddie.page(FLAG_PAGE).await;
    assert!(page.contains("No links yet"), "{page}");
    assert!(page.contains("Add or change links"), "{page}");

    // A refused address: the form again with what was typed and the message beside the field.
    let links = eddie.get(&format!("{FLAG_PAGE}/links")).await;
    let csrf = links.csrf();
    let refused = eddie
        .post(
            &format!("{FLAG_PAGE}/links"),
            &[
                ("csrf", &csrf),
                ("url", "javascript:alert(1)"),
                ("title", "Ticket PAY-1"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(
        refused.has("value=\"javascript:alert(1)\""),
        "{}",
        refused.text
    );
    assert!(refused.has("value=\"Ticket PAY-1\""), "{}", refused.text);
    assert!(refused.has("http:// or https://"), "{}", refused.text);
    assert!(stored_links(&server).await.is_empty());

    // Added: stored, and listed on the flag page by its title with the address.
    let added = eddie
        .post(
            &format!("{FLAG_PAGE}/links"),
            &[
                ("csrf", &csrf),
                ("url", " https://tickets.example.com/PAY-1 "),
                ("title", "Ticket PAY-1"),
            ],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.text);
    assert_eq!(
        added.location.as_deref(),
        Some("/projects/default/features/checkout/links")
    );
    let stored = stored_links(&server).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["url"], "https://tickets.example.com/PAY-1");
    assert_eq!(stored[0]["title"], "Ticket PAY-1");
    let id = stored[0]["id"].as_str().unwrap().to_owned();
    let page = eddie.page(FLAG_PAGE).await;
    assert!(
        page.contains("href=\"https://tickets.example.com/PAY-1\" rel=\"noopener noreferrer\">Ticket PAY-1</a>"),
        "{page}"
    );
    // Its event log says what happened.
    assert!(
        page.contains("to <span class=\"subject\">Ticket PAY-1</span>"),
        "{page}"
    );

    // Edited: the form starts with the link; the title emptied, the address is what the flag page shows.
    let form = eddie.page(&format!("{FLAG_PAGE}/links/{id}")).await;
    assert!(form.contains("value=\"Ticket PAY-1\""), "{form}");
    let saved = eddie
        .post(
            &format!("{FLAG_PAGE}/links/{id}"),
            &[
                ("csrf", &csrf),
                ("url", "https://tickets.example.com/PAY-2"),
                ("title", ""),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let stored = stored_links(&server).await;
    assert_eq!(stored[0]["url"], "https://tickets.example.com/PAY-2");
    assert_eq!(stored[0]["title"], Value::Null);

    // A Viewer reads the links but gets no way to change them, and the links page and its posts refuse.
    let mut vera = signed_in(&server, "vera", "Viewer").await;
    let page = vera.page(FLAG_PAGE).await;
    assert!(
        page.contains(">https://tickets.example.com/PAY-2</a>"),
        "{page}"
    );
    assert!(!page.contains("Add or change links"), "{page}");
    assert_eq!(vera.get(&format!("{FLAG_PAGE}/links")).await.status, 403);
    let vera_csrf = vera.get(FLAG_PAGE).await.csrf();
    let refused = vera
        .post(
            &format!("{FLAG_PAGE}/links/{id}/remove"),
            &[("csrf", &vera_csrf)],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(stored_links(&server).await.len(), 1);

    // Removed by the Editor.
    let removed = eddie
        .post(
            &format!("{FLAG_PAGE}/links/{id}/remove"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(removed.status, 303, "{}", removed.text);
    assert!(stored_links(&server).await.is_empty());
    let page = eddie.page(FLAG_PAGE).await;
    assert!(
        page.contains(
            "removed the link <span class=\"subject\">https://tickets.example.com/PAY-2</span>"
        ),
        "{page}"
    );
    let events = server.get("/api/admin/events/checkout").await;
    let changes = (events.expect(200)["events"].as_array().unwrap().iter())
        .filter(|event| event["type"] == "feature-metadata-updated")
        .count();
    assert_eq!(changes, 3, "added, edited and removed");
}
