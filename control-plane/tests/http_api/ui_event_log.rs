//! The event log's sentences over HTTP, through the real binary: each main event type as the line a person
//! reads (who, what, linked, where), grouped by day, its change behind "Show the change" with values as
//! people read them; the same lines on the flag's page without linking the flag to itself. (The browser
//! walk is `edge/tests/e2e/ui_event_log.rs`.)

use crate::database::TestDb;
use crate::server::Server;
use crate::ui_browser::Browser;
use serde_json::json;

crate::on_sqlite_and_postgres!(each_event_reads_as_a_sentence);

fn assert_has(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
}

const FLAG: &str = "/projects/default/features/dark-mode";

async fn each_event_reads_as_a_sentence(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "anna", "name": "Anna Berg", "password": "correct horse battery",
                "rootRole": "Admin"}),
        )
        .await
        .expect(201);
    let mut anna = Browser::new(&server);
    anna.sign_in(&[("username", "anna"), ("password", "correct horse battery")])
        .await
        .expect(303);

    // With the admin token: a flag, a rollout changed and removed, variants, a tag, a segment, a project,
    // a context field, an API token.
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "dark-mode", "type": "experiment", "description": "Dark theme"}),
        )
        .await
        .expect(201);
    let strategies = format!("/api/admin{FLAG}/environments/production/strategies");
    let rollout = server
        .post(
            &strategies,
            json!({"name": "flexibleRollout", "constraints": [
                {"contextName": "country", "operator": "IN", "values": ["NO"]}],
                "parameters": {"rollout": "50", "stickiness": "default", "groupId": "dark-mode"}}),
        )
        .await;
    let id = rollout.expect(200)["id"].as_str().unwrap().to_owned();
    server
        .put(
            &format!("{strategies}/{id}"),
            json!({"name": "flexibleRollout",
                "parameters": {"rollout": "75", "stickiness": "default", "groupId": "dark-mode"}}),
        )
        .await
        .expect(200);
    let user_ids = server
        .post(
            &strategies,
            json!({"name": "userWithId", "parameters": {"userIds": "qa-anna"}}),
        )
        .await;
    let user_ids = user_ids.expect(200)["id"].as_str().unwrap().to_owned();
    server
        .delete(&format!("{strategies}/{user_ids}"))
        .await
        .expect(200);
    server
        .put(
            &format!("/api/admin{FLAG}/environments/production/variants"),
            json!([{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
                "payload": {"type": "json", "value": "{\"color\":\"blue\"}"}}]),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/admin/features/dark-mode/tags",
            json!({"type": "simple", "value": "web"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/segments",
            json!({"name": "beta-testers", "constraints": []}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects",
            json!({"id": "shop", "name": "Web shop"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/shop/features",
            json!({"name": "new-checkout"}),
        )
        .await
        .expect(201);
    server
        .post("/api/admin/context", json!({"name": "region"}))
        .await
        .expect(201);
    server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "web-shop", "type": "client", "environment": "development",
                "projects": ["*"]}),
        )
        .await
        .expect(201);

    // As anna, in the UI: dark-mode on in production, then off.
    let csrf = anna.get(FLAG).await.csrf();
    for enabled in ["true", "false"] {
        let switched = anna
            .post(
                &format!("{FLAG}/environments/production/switch"),
                &[("csrf", &csrf), ("enabled", enabled), ("back", FLAG)],
            )
            .await;
        assert_eq!(switched.status, 303, "{}", switched.text);
    }

    let log = anna.page("/history").await;
    let token =
        "<span class=\"actor\">init-admin-token-1</span> <span class=\"muted\">(API token)</span> ";
    let flag = "<a href=\"/projects/default/features/dark-mode\">dark-mode</a>";
    let production = "<strong class=\"place\">production</strong>";
    assert_has(
        &log,
        &[
            "<h2 class=\"day\" id=\"events-day-",
            ">Today</h2><ol class=\"events\" aria-labelledby=\"events-day-",
            &format!("<span class=\"actor\">anna</span> switched {flag} off in {production}"),
            &format!("<span class=\"actor\">anna</span> switched {flag} on in {production}"),
            &format!("{token}created the experiment flag {flag}"),
            &format!("{token}added a gradual rollout of 50% with 1 constraint to {flag} in {production}"),
            &format!(
                "{token}changed the gradual rollout of {flag} in {production} from 50% to 75% (and its constraints)"
            ),
            &format!("{token}removed a strategy for user IDs from {flag} in {production}"),
            &format!("{token}set the variants of {flag} in {production} to blue"),
            &format!("{token}tagged {flag} with <span class=\"tag-name\">simple: web</span>"),
            &format!("{token}created the segment <a href=\"/segments/edit/1\">beta-testers</a>"),
            &format!("{token}created the project <a href=\"/projects/shop\">Web shop</a>"),
            &format!(
                "{token}created the flag <a href=\"/projects/shop/features/new-checkout\">new-checkout</a> (project <a href=\"/projects/shop\">shop</a>)"
            ),
            &format!("{token}created the context field <a href=\"/context/edit/region\">region</a>"),
            "created the server SDK token <a href=\"/admin/api\">web-shop</a> for <strong class=\"place\">development</strong>",
            &format!("{token}added the user <a href=\"/admin/users/1\">Anna Berg</a>"),
            "<span class=\"actor\">System</span> created the environment <strong class=\"place\">production</strong></span>",
            // The time: how long ago, the exact time as its title.
            "<time class=\"event-time\" datetime=\"",
            "UTC\">just now</time>",
            // The variants' change, as people read it.
            "<summary aria-describedby=\"event-",
            "\">Show the change</summary>",
            "variants 1 › payload › value: </span><ins class=\"added\"><span class=\"sr-only\">now </span><pre>{\n  &quot;color&quot;: &quot;blue&quot;\n}</pre></ins>",
            "rollout: </span><del class=\"removed\"><span class=\"sr-only\">was </span>50</del> → <ins class=\"added\"><span class=\"sr-only\">now </span>75</ins>",
        ],
    );
    // No JSON paths or quoted strings left.
    assert!(!log.contains("variants[0]"), "{log}");
    assert!(!log.contains("&quot;blue&quot;</ins>"), "{log}");
    // A switch has nothing to show behind a disclosure.
    let switched_on = log.find("switched <a").unwrap();
    let next_item = log[switched_on..].find("</li>").unwrap();
    assert!(!log[switched_on..switched_on + next_item].contains("<details"));

    // The flag's page: the same lines, the flag not linked to itself, days under its h2.
    let page = anna.page(FLAG).await;
    assert_has(
        &page,
        &[
            "<h2 id=\"events-title\">Event log</h2>",
            "<h3 class=\"day\" id=\"events-day-",
            "<span class=\"actor\">anna</span> switched <span class=\"subject\">dark-mode</span> on in <strong class=\"place\">production</strong>",
            "added a gradual rollout of 50% with 1 constraint to <span class=\"subject\">dark-mode</span>",
        ],
    );
    assert!(!page.contains("new-checkout"), "only this flag's events");
}
