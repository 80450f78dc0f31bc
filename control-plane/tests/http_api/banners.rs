//! Banners through the real binary on SQLite and Postgres: `/api/admin/banners` (Admins write, everyone
//! signed in reads; refusals change nothing; `banner-created/updated/deleted`), an enabled banner on every UI
//! page (escaped text, a safe link only) and gone when off, and the UI's banner page (create, a refusal with
//! what was typed kept, edit, switch off, delete).

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    banners_are_written_by_admins_and_read_by_everyone,
    an_enabled_banner_shows_on_every_ui_page,
    banners_are_managed_in_the_settings_ui,
);

async fn banner_events(server: &Server) -> Vec<Value> {
    let events = server.get("/api/admin/events").await.expect(200).clone();
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| {
            event["type"]
                .as_str()
                .is_some_and(|kind| kind.starts_with("banner-"))
        })
        .cloned()
        .collect()
}

async fn banners_are_written_by_admins_and_read_by_everyone(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;

    let created = server
        .post(
            "/api/admin/banners",
            json!({"message": "Upgrade on Friday", "variant": "warning", "link": "https://status.example.com",
                   "linkText": "Status"}),
        )
        .await
        .expect(201)
        .clone();
    let id = created["id"].as_i64().unwrap();
    assert!(id >= 1);
    assert_eq!(created["message"], "Upgrade on Friday");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["sticky"], false);
    assert_eq!(created["variant"], "warning");
    assert_eq!(created["linkText"], "Status");
    assert_eq!(created["icon"], Value::Null);
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));

    // Bad bodies: 400, nothing stored, no event.
    for (body, field) in [
        (json!({"message": "  "}), "message"),
        (json!({"message": "x", "variant": "purple"}), "variant"),
        (
            json!({"message": "x", "link": "javascript:alert(1)"}),
            "link",
        ),
        (json!({"message": "x", "link": "//evil.example"}), "link"),
        (
            json!({"message": "x", "linkText": "t".repeat(101)}),
            "linkText",
        ),
        (json!({"message": "m".repeat(1001)}), "message"),
        (json!({"variant": "info"}), "message"),
    ] {
        let message = server
            .post("/api/admin/banners", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{body}: {message}");
    }
    // Editors and Viewers may read, not write.
    for token in [&editor, &viewer] {
        let listed = server
            .send("GET", "/api/admin/banners", None, Some(token))
            .await;
        assert_eq!(listed.expect(200)["banners"].as_array().unwrap().len(), 1);
        server
            .send(
                "POST",
                "/api/admin/banners",
                Some(json!({"message": "mine"})),
                Some(token),
            )
            .await
            .expect_error(403, "NoAccessError");
        server
            .send(
                "POST",
                &format!("/api/admin/banners/{id}/off"),
                None,
                Some(token),
            )
            .await
            .expect_error(403, "NoAccessError");
        server
            .send(
                "DELETE",
                &format!("/api/admin/banners/{id}"),
                None,
                Some(token),
            )
            .await
            .expect_error(403, "NoAccessError");
    }
    assert_eq!(banner_events(&server).await.len(), 1);

    // Update replaces the fields; off and on; the list holds the stored state.
    let updated = server
        .put(
            &format!("/api/admin/banners/{id}"),
            json!({"message": "Upgrade on Monday", "sticky": true, "link": "/admin/settings"}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["message"], "Upgrade on Monday");
    assert_eq!(updated["variant"], "info");
    assert_eq!(updated["sticky"], true);
    assert_eq!(updated["linkText"], Value::Null);
    assert_eq!(updated["createdAt"], created["createdAt"]);
    let off = server
        .post_empty(&format!("/api/admin/banners/{id}/off"))
        .await
        .expect(200)
        .clone();
    assert_eq!(off["enabled"], false);
    let listed = server.get("/api/admin/banners").await.expect(200).clone();
    assert_eq!(listed, json!({"banners": [off]}));
    server
        .post_empty(&format!("/api/admin/banners/{id}/on"))
        .await
        .expect(200);
    // Switching on what is on changes nothing and records nothing.
    server
        .post_empty(&format!("/api/admin/banners/{id}/on"))
        .await
        .expect(200);
    for (method, path) in [
        ("PUT", "/api/admin/banners/999"),
        ("DELETE", "/api/admin/banners/999"),
        ("POST", "/api/admin/banners/999/on"),
        ("POST", "/api/admin/banners/abc/off"),
    ] {
        let body = (method == "PUT").then(|| json!({"message": "x"}));
        server
            .send(method, path, body, Some(ADMIN_TOKEN))
            .await
            .expect_error(404, "NotFoundError");
    }

    server
        .delete(&format!("/api/admin/banners/{id}"))
        .await
        .expect(200);
    assert_eq!(
        server.get("/api/admin/banners").await.expect(200),
        &json!({"banners": []})
    );
    // Newest first: deleted, updated (on), updated (off), updated (fields), created.
    let events = banner_events(&server).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "banner-deleted",
            "banner-updated",
            "banner-updated",
            "banner-updated",
            "banner-created"
        ]
    );
    assert_eq!(events[0]["preData"]["id"], id);
    assert_eq!(events[1]["data"]["enabled"], true);
    assert_eq!(events[2]["preData"]["enabled"], true);
    assert_eq!(events[2]["data"]["enabled"], false);
    assert_eq!(events[3]["preData"]["message"], "Upgrade on Friday");
    assert_eq!(events[4]["data"]["message"], "Upgrade on Friday");
    // A new banner takes a new id.
    let next = server
        .post("/api/admin/banners", json!({"message": "again"}))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    assert!(next > id);
}

async fn an_enabled_banner_shows_on_every_ui_page(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let id = server
        .post(
            "/api/admin/banners",
            json!({"message": "<b>Read</b> this & that", "variant": "error",
                   "link": "/admin/settings", "linkText": "Details"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let unsafe_id = server
        .post(
            "/api/admin/banners",
            json!({"message": "Dialog here", "link": "dialog", "dialogTitle": "Why",
                   "dialog": "Because <script>x</script>"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await;
    for path in ["/projects/default", "/admin/settings", "/history"] {
        let page = browser.get(path).await;
        page.expect(200);
        assert!(
            page.has("<section class=\"banners\" aria-label=\"Announcements\">"),
            "{path}: {}",
            page.text
        );
        assert!(page.has(&format!(
            "<div class=\"notice banner-error\" role=\"status\" data-banner=\"{id}\">"
        )));
        // Escaped text, never markup.
        assert!(page.has("&lt;b&gt;Read&lt;/b&gt; this &amp; that"));
        assert!(!page.has("<b>Read</b>"));
        assert!(page.has("<a class=\"banner-link\" href=\"/admin/settings\">Details</a>"));
        assert!(page.has("<summary>Why</summary>"));
        assert!(page.has("Because &lt;script&gt;x&lt;/script&gt;"));
    }
    // The event log says what happened in words.
    let history = browser.get("/history").await;
    assert!(
        history.has("created the banner “Dialog here”"),
        "{}",
        history.text
    );
    // Off: gone from the pages.
    server
        .post_empty(&format!("/api/admin/banners/{id}/off"))
        .await
        .expect(200);
    let page = browser.get("/projects/default").await;
    page.expect(200);
    assert!(!page.has(&format!("data-banner=\"{id}\"")));
    assert!(!page.has("Read"));
    assert!(page.has(&format!("data-banner=\"{unsafe_id}\"")));
    server
        .delete(&format!("/api/admin/banners/{unsafe_id}"))
        .await
        .expect(200);
    let page = browser.get("/projects/default").await;
    assert!(!page.has("class=\"banners\""));
}

async fn banners_are_managed_in_the_settings_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut admin = Browser::new(&server);
    admin
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await;
    let settings = admin.get("/admin/settings").await;
    assert!(settings.has("href=\"/admin/settings/banners\""));
    let page = admin.get("/admin/settings/banners").await;
    page.expect(200);
    assert!(page.has("No banners yet."));
    let csrf = page.csrf();

    // A refusal keeps what was typed and says why beside the field; nothing is stored.
    let refused = admin
        .post(
            "/admin/settings/banners",
            &[
                ("csrf", &csrf),
                ("message", "Typed message"),
                ("variant", "success"),
                ("link", "javascript:alert(1)"),
                ("enabled", "on"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.has(">Typed message</textarea>"));
    assert!(refused.has("value=\"javascript:alert(1)\""));
    assert!(refused.has("<option value=\"success\" selected>"));
    assert!(refused.has("id=\"banner-link-error\" aria-live=\"polite\">"));
    assert!(refused.has("link must be an http:// or https:// address"));
    assert_eq!(
        server.get("/api/admin/banners").await.expect(200),
        &json!({"banners": []})
    );

    let created = admin
        .post(
            "/admin/settings/banners",
            &[
                ("csrf", &csrf),
                ("message", "Made in the UI"),
                ("variant", "success"),
                ("enabled", "on"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let stored = server.get("/api/admin/banners").await.expect(200).clone();
    let banner = &stored["banners"][0];
    assert_eq!(banner["message"], "Made in the UI");
    assert_eq!(banner["variant"], "success");
    assert_eq!(banner["enabled"], true);
    let id = banner["id"].as_i64().unwrap();

    // The edit form starts with the stored fields; saving replaces them.
    let edit = admin.get(&format!("/admin/settings/banners/{id}")).await;
    edit.expect(200);
    assert!(edit.has(">Made in the UI</textarea>"));
    let saved = admin
        .post(
            &format!("/admin/settings/banners/{id}"),
            &[
                ("csrf", &csrf),
                ("message", "Edited"),
                ("variant", "info"),
                ("enabled", "on"),
                ("sticky", "on"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let stored = server.get("/api/admin/banners").await.expect(200).clone();
    assert_eq!(stored["banners"][0]["message"], "Edited");
    assert_eq!(stored["banners"][0]["sticky"], true);

    // Off with its switch, then deleted.
    let list = admin.get("/admin/settings/banners").await;
    assert!(list.has("role=\"switch\" aria-checked=\"true\""));
    let off = admin
        .post(
            &format!("/admin/settings/banners/{id}/enabled"),
            &[("csrf", &csrf), ("enabled", "false")],
        )
        .await;
    assert_eq!(off.status, 303, "{}", off.text);
    assert_eq!(
        server.get("/api/admin/banners").await.expect(200)["banners"][0]["enabled"],
        false
    );
    let deleted = admin
        .post(
            &format!("/admin/settings/banners/{id}/delete"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(deleted.status, 303, "{}", deleted.text);
    assert_eq!(
        server.get("/api/admin/banners").await.expect(200),
        &json!({"banners": []})
    );

    // A Viewer sees the list without forms and may not post.
    server
        .post("/api/admin/banners", json!({"message": "for viewers"}))
        .await
        .expect(201);
    user_with_pat(&server, "viewer", "Viewer").await;
    let mut viewer = Browser::new(&server);
    viewer
        .sign_in(&[
            ("username", "viewer"),
            ("password", "correct horse battery"),
            ("next", "/"),
        ])
        .await;
    let page = viewer.get("/admin/settings/banners").await;
    page.expect(200);
    assert!(page.has("for viewers"));
    assert!(!page.has("New banner"));
    let csrf = page.csrf();
    let refused = viewer
        .post(
            "/admin/settings/banners",
            &[("csrf", &csrf), ("message", "sneaky")],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(
        server.get("/api/admin/banners").await.expect(200)["banners"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
