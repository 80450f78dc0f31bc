//! The admin web UI's Signals page and a project's Actions page over HTTP, through the real binary: an
//! endpoint created (a refused name drawn again with what was typed), a token whose secret is shown once and
//! works at the receiver, the latest signals, switching off and deleting; an action set with its filters and
//! actions in words, its execution log after a signal, switched off and deleted; Admins only.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::signal_endpoints::signal;
use crate::ui_browser::{Browser, Html};
use serde_json::json;
use std::time::{Duration, Instant};

crate::on_sqlite_and_postgres!(
    signals_and_actions_in_the_ui,
    only_admins_see_signals_and_actions
);

/// The value of the read-only field "Secret".
fn secret_of(page: &Html) -> String {
    let at = page
        .text
        .find("id=\"token-secret\"")
        .expect("a Secret field");
    let rest = &page.text[at..];
    let value = rest.find("value=\"").unwrap() + "value=\"".len();
    rest[value..value + rest[value..].find('"').unwrap()].to_owned()
}

async fn signals_and_actions_in_the_ui(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = Browser::new(&server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let list = browser.get("/admin/signals").await;
    let text = list.expect(200);
    assert!(text.contains("No signal endpoints yet."), "{text}");
    assert!(text.contains("aria-current=\"page\">Signals</a>"), "{text}");
    let csrf = list.csrf();

    let refused = browser
        .post(
            "/admin/signals",
            &[("csrf", &csrf), ("name", "my <alerts>")],
        )
        .await;
    let text = refused.expect(400);
    assert!(text.contains("id=\"endpoint-name-error\""), "{text}");
    assert!(text.contains("value=\"my &lt;alerts&gt;\""), "{text}");
    let created = browser
        .post("/admin/signals", &[("csrf", &csrf), ("name", "alerts")])
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let location = created.location.clone().unwrap();
    let page = browser.get(&location).await;
    let text = page.expect(200);
    assert!(text.contains("Signal endpoint alerts created"), "{text}");
    assert!(
        text.contains("/api/signal-endpoint/alerts</code>"),
        "{text}"
    );

    // A token, shown once; it works at the receiver, and the signal is listed.
    let made = browser
        .post(
            &format!("{location}/tokens"),
            &[("csrf", &csrf), ("name", "am")],
        )
        .await;
    made.expect(201);
    let secret = secret_of(&made);
    signal(
        &server,
        "alerts",
        Some(&secret),
        json!({"status": "firing"}),
    )
    .await
    .expect(200);
    let page = browser.get(&location).await;
    let text = page.expect(200);
    assert!(!text.contains(&secret), "the secret is shown once");
    assert!(
        text.contains("&quot;firing&quot;") || text.contains("\"firing\""),
        "{text}"
    );

    // An action set on the project's Actions page, its log after a matching signal.
    let endpoint = location.rsplit('/').next().unwrap().parse::<i64>().unwrap();
    let actor = server
        .post(
            "/api/admin/service-account",
            json!({"username": "automation", "name": "Automation", "rootRole": 2}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "checkout"}),
        )
        .await
        .expect(201);
    let form = browser.get("/projects/default/actions/create").await;
    assert!(form.expect(200).contains("Create action set"));
    let (actor, endpoint) = (actor.to_string(), endpoint.to_string());
    let mut fields = vec![
        ("csrf", csrf.as_str()),
        ("name", "Pager"),
        ("actorId", &actor),
        ("sourceId", &endpoint),
        ("enabled", "on"),
        ("filter-path-0", "status"),
        ("filter-operator-0", "IN"),
        ("filter-values-0", "firing, pending"),
        ("action-0", "TOGGLE_FEATURE_ON"),
        ("action-flag-0", "checkout"),
    ];
    // Refused (no environment): drawn again with what was typed and the reason.
    let refused = browser.post("/projects/default/actions", &fields).await;
    let text = refused.expect(400);
    assert!(text.contains("executionParams.environment"), "{text}");
    assert!(text.contains("value=\"firing, pending\""), "{text}");
    assert!(text.contains("value=\"checkout\""), "{text}");
    fields.push(("action-environment-0", "development"));
    let created = browser.post("/projects/default/actions", &fields).await;
    assert_eq!(created.status, 303, "{}", created.text);
    let sets = server.get("/api/admin/projects/default/actions").await;
    let made = sets.expect(200)["actions"][0].clone();
    assert_eq!(
        made["match"]["payload"]["status"]["values"],
        json!(["firing", "pending"])
    );
    assert_eq!(
        made["actions"][0]["executionParams"]["environment"],
        "development"
    );
    let set = made["id"].as_i64().unwrap();
    signal(
        &server,
        "alerts",
        Some(&secret),
        json!({"status": "firing"}),
    )
    .await
    .expect(200);
    let started = Instant::now();
    let text = loop {
        let page = browser.get("/projects/default/actions").await;
        let text = page.expect(200).to_owned();
        if text.contains("<strong>success</strong>") {
            break text;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(text.contains("aria-current=\"page\">Actions</a>"), "{text}");
    assert!(text.contains("status is one of firing"), "{text}");
    assert!(text.contains("Turn on checkout in development"), "{text}");
    assert!(text.contains("automation"), "{text}");

    // Edited: the form starts from the set; a refusal keeps what was typed; saved, the set is replaced.
    assert!(
        text.contains(&format!("/projects/default/actions/{set}/edit")),
        "{text}"
    );
    let edit = browser
        .get(&format!("/projects/default/actions/{set}/edit"))
        .await;
    let text = edit.expect(200);
    assert!(text.contains("Edit Pager"), "{text}");
    assert!(text.contains("value=\"firing, pending\""), "{text}");
    assert!(text.contains("value=\"development\""), "{text}");
    assert!(
        text.contains("<option value=\"TOGGLE_FEATURE_ON\" selected>"),
        "{text}"
    );
    let target = format!("/projects/default/actions/{set}");
    let mut edited = vec![
        ("csrf", csrf.as_str()),
        ("rows", "3"),
        ("name", "Pager duty"),
        ("actorId", &actor),
        ("sourceId", &endpoint),
        ("enabled", "on"),
        ("filter-path-0", "status"),
        ("filter-operator-0", "IN"),
        ("filter-values-0", "resolved"),
        ("action-0", "PAUSE_RELEASE_PLAN"),
        ("action-flag-0", "checkout"),
    ];
    let refused = browser.post(&target, &edited).await;
    let text = refused.expect(400);
    assert!(text.contains("executionParams.environment"), "{text}");
    assert!(text.contains("value=\"Pager duty\""), "{text}");
    edited.push(("action-environment-0", "development"));
    let saved = browser.post(&target, &edited).await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let sets = server.get("/api/admin/projects/default/actions").await;
    let now = sets.expect(200)["actions"][0].clone();
    assert_eq!(now["id"], set);
    assert_eq!(now["name"], "Pager duty");
    assert_eq!(
        now["match"]["payload"]["status"]["values"],
        json!(["resolved"])
    );
    assert_eq!(now["actions"][0]["action"], "PAUSE_RELEASE_PLAN");
    let page = browser.get("/projects/default/actions").await;
    let text = page.expect(200);
    assert!(
        text.contains("Pause the release plan of checkout in development"),
        "{text}"
    );

    let off = browser
        .post(
            &format!("/projects/default/actions/{set}/enabled"),
            &[("csrf", &csrf), ("enabled", "false")],
        )
        .await;
    assert_eq!(off.status, 303, "{}", off.text);
    let sets = server.get("/api/admin/projects/default/actions").await;
    assert_eq!(sets.expect(200)["actions"][0]["enabled"], false);
    let deleted = browser
        .post(
            &format!("/projects/default/actions/{set}/delete"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(deleted.status, 303, "{}", deleted.text);
    let sets = server.get("/api/admin/projects/default/actions").await;
    assert_eq!(sets.expect(200)["actions"], json!([]));

    // The endpoint switched off (posts refused), then deleted.
    let off = browser
        .post(
            &format!("{location}/enabled"),
            &[("csrf", &csrf), ("enabled", "false")],
        )
        .await;
    assert_eq!(off.status, 303, "{}", off.text);
    signal(&server, "alerts", Some(&secret), json!({}))
        .await
        .expect_error(403, "NoAccessError");
    let confirm = browser.get(&format!("{location}/delete")).await;
    assert!(confirm.expect(200).contains("Confirm delete"));
    let deleted = browser
        .post(&format!("{location}/delete"), &[("csrf", &csrf)])
        .await;
    assert_eq!(deleted.status, 303, "{}", deleted.text);
    let endpoints = server.get("/api/admin/signal-endpoints").await;
    assert_eq!(endpoints.expect(200)["signalEndpoints"], json!([]));
}

async fn only_admins_see_signals_and_actions(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "eddie", "password": "correct horse battery", "rootRole": 2}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    let signed = browser
        .sign_in(&[
            ("username", "eddie"),
            ("password", "correct horse battery"),
            ("next", "/profile"),
        ])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let profile = browser.get("/profile").await;
    let text = profile.expect(200);
    assert!(
        !text.contains(">Signals</a>") && !text.contains(">Actions</a>"),
        "{text}"
    );
    let csrf = profile.csrf();
    for path in [
        "/admin/signals",
        "/admin/signals/create",
        "/projects/default/actions",
    ] {
        let page = browser.get(path).await;
        assert!(
            page.expect(403).contains("The Editor role may not"),
            "{path}"
        );
    }
    let forged = browser
        .post("/admin/signals", &[("csrf", &csrf), ("name", "sneaky")])
        .await;
    assert_eq!(forged.status, 403, "{}", forged.text);
    let endpoints = server.get("/api/admin/signal-endpoints").await;
    assert_eq!(endpoints.expect(200)["signalEndpoints"], json!([]));
}
