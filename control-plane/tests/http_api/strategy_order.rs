//! The order of a flag's strategies after moving from Unleash (`tests/fixtures/strategy-order/`, its README
//! says what each flag holds). Unleash evaluates them by `sortOrder`, then by creation; its export carries
//! no `sortOrder` and lists them in another order. A file import orders them by `sortOrder` where given,
//! then by their ULID ids (creation); `import --from-unleash` reads the real `sortOrder` from Unleash's
//! admin API (here the stand-in Unleash of `import_command`, serving the fixture).

use crate::database::TestDb;
use crate::import_command::{revision, run_import, stand_in_unleash, Recorded, UNLEASH_TOKEN};
use crate::on_sqlite_and_postgres;
use crate::server::{Server, FRONTEND_TOKEN};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/strategy-order");

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURE}/{name}")).expect("fixture file");
    serde_json::from_str(&text).expect("fixture JSON")
}

/// The titles of `flag`'s strategies in development, in the order the admin API lists them.
async fn titles(server: &Server, flag: &str) -> Vec<String> {
    let answer = server
        .get(&format!("/api/admin/projects/default/features/{flag}"))
        .await;
    let environment = answer.expect(200)["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "development")
        .expect("development")
        .clone();
    environment["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|strategy| strategy["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The variant `/api/frontend` gives `checkout-banner` (every strategy matches: the first one decides),
/// once the server serves the flag.
async fn served_variant(server: &Server) -> String {
    for _ in 0..80 {
        let answer = server
            .send("GET", "/api/frontend?userId=u1", None, Some(FRONTEND_TOKEN))
            .await;
        let toggles = answer.expect(200)["toggles"].as_array().unwrap().clone();
        if let Some(toggle) = toggles.iter().find(|t| t["name"] == "checkout-banner") {
            return toggle["variant"]["name"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    panic!("checkout-banner is never served");
}

/// An export whose list order is neither creation nor evaluation order, imported as a file
/// (`/api/admin/features-batch/import`, the same domain function as `import --file`).
async fn file_import_orders_by_sort_order_then_creation(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let body = json!({"project": "default", "environment": "development",
                      "data": fixture("export-development.json")});
    let answer = server.post("/api/admin/features-batch/import", body).await;
    answer.expect(200);
    assert_eq!(
        titles(&server, "checkout-banner").await,
        ["created first", "created second", "created third"]
    );
    assert_eq!(served_variant(&server).await, "created-first");
    assert_eq!(
        titles(&server, "mixed-order").await,
        [
            "d: sortOrder 0, created last",
            "f: sortOrder 1, created fifth",
            "b: sortOrder 1, created sixth",
            "c: no sortOrder, created third",
            "a: no sortOrder, created fourth",
            "e: no sortOrder, not a ULID",
        ]
    );
}

/// The same flags read from a running Unleash: each flag's order is the one its admin API gives
/// (`checkout-banner`'s strategies were reordered there after they were created); a second run changes
/// nothing.
async fn from_unleash_takes_unleash_sort_order(db: TestDb) {
    let export = fixture("export-development.json");
    let features: BTreeMap<String, Value> =
        serde_json::from_value(fixture("unleash-features.json")).unwrap();
    let recorded = Recorded {
        environments: json!({"version": 1, "environments": [
            {"name": "development", "type": "development", "enabled": true, "sortOrder": 2, "protected": false}
        ]}),
        projects: json!({"version": 1, "projects": [
            {"id": "default", "name": "Default Project", "description": "Default project", "mode": "open"}
        ]}),
        overview: json!({"version": 1, "name": "Default Project",
                         "environments": [{"environment": "development"}]}),
        context: json!([]),
        strategies: json!({"version": 1, "strategies": []}),
        segments: json!({"segments": []}),
        tag_types: json!({"version": 1, "tagTypes": []}),
        exports: vec![("development".to_owned(), export)],
        features,
    };
    let unleash = stand_in_unleash(recorded).await;
    let server = Server::start(&db, &[]).await;
    let run = run_import(&db, &["--from-unleash", &unleash, "--token", UNLEASH_TOKEN]).await;
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        titles(&server, "checkout-banner").await,
        ["created second", "created third", "created first"]
    );
    assert_eq!(served_variant(&server).await, "created-second");
    assert_eq!(
        titles(&server, "mixed-order").await,
        [
            "d: sortOrder 0, created last",
            "f: sortOrder 1, created fifth",
            "b: sortOrder 1, created sixth",
            "c: no sortOrder, created third",
            "a: no sortOrder, created fourth",
            "e: no sortOrder, not a ULID",
        ]
    );
    let after = revision(&db).await;
    let run = run_import(&db, &["--from-unleash", &unleash, "--token", UNLEASH_TOKEN]).await;
    assert!(run.success, "{}", run.stderr);
    assert_eq!(
        run.stdout.trim_end().lines().last(),
        Some("nothing to change"),
        "{}",
        run.stdout
    );
    assert_eq!(revision(&db).await, after);
}

on_sqlite_and_postgres!(
    file_import_orders_by_sort_order_then_creation,
    from_unleash_takes_unleash_sort_order
);
