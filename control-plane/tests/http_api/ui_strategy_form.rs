//! The admin web UI's strategy form over HTTP, through the real binary under a base path: constraints drawn
//! again with what was typed, a refused constraint beside the form, the order (moves and drag and drop),
//! editing, variants with a JSON payload, and a flag's archive and revive. (The browser walk is
//! `edge/tests/e2e/ui.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui::flag_at;
use crate::ui_browser::Browser;
use serde_json::json;

crate::on_sqlite_and_postgres!(strategy_form_variants_archive_and_revive);

async fn strategy_form_variants_archive_and_revive(db: TestDb) {
    let server = Server::start(&db, &["--base-path", "/vexil"]).await;
    server
        .post(
            "/vexil/api/admin/projects/default/features",
            json!({"name": "rollout"}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    browser.base = format!("{}/vexil", server.base);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/vexil/")])
        .await;
    assert!(
        signed.set_cookies[0].contains("Path=/vexil"),
        "{:?}",
        signed.set_cookies
    );
    let slash = browser.get("/").await;
    assert_eq!(slash.location.as_deref(), Some("/vexil"));
    let home = browser.get("").await;
    assert_eq!(home.location.as_deref(), Some("/vexil/projects/default"));
    let flag_path = "/projects/default/features/rollout";
    let form = browser
        .get(&format!(
            "{flag_path}/strategies/create?environmentId=development"
        ))
        .await;
    let text = form.expect(200);
    for fragment in [
        "<label for=\"strategy\">Strategy</label>",
        "<label for=\"param-rollout\">Rollout</label>",
        "<label for=\"param-stickiness\">Stickiness</label>",
        "<label for=\"param-groupId\">Group</label>",
        ">Add constraint</button>",
        ">Add strategy variant</button>",
        ">Save strategy</button>",
        "action=\"/vexil/projects/default/features/rollout/strategies/create\"",
        "href=\"/vexil/ui-assets/vexil.css\"",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let csrf = form.csrf();
    let base_fields = [
        ("csrf", csrf.as_str()),
        ("environment", "development"),
        ("strategy", "flexibleRollout"),
        ("param.rollout", "50"),
        ("param.stickiness", "default"),
        ("param.groupId", "rollout"),
    ];
    // "Add constraint" draws the form again with what was typed and a new constraint.
    let mut fields = base_fields.to_vec();
    fields.extend([("constraintCount", "0"), ("intent", "add-constraint")]);
    let grown = browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    let text = grown.expect(200);
    for fragment in [
        "<label for=\"c0-context\">Context field</label>",
        "<label for=\"c0-operator\">Operator</label>",
        "<label for=\"c0-values\">Values</label>",
        "Case insensitive",
        "Inverted",
        "value=\"50\"",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    // A refused constraint: the message, the form kept.
    let mut fields = base_fields.to_vec();
    fields.extend([
        ("constraintCount", "1"),
        ("c0.contextName", "bad name"),
        ("c0.operator", "IN"),
        ("c0.values", "x"),
        ("intent", "save"),
    ]);
    let refused = browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    assert!(refused
        .expect(400)
        .contains("<p class=\"field-error\" id=\"c0-context-error\""));
    assert!(refused.has("value=\"bad name\""));
    assert!(
        refused.has("Context field must be URL-safe"),
        "{}",
        refused.text
    );
    let mut fields = base_fields.to_vec();
    fields.extend([
        ("constraintCount", "1"),
        ("c0.contextName", "country"),
        ("c0.operator", "IN"),
        ("c0.values", "NO\nSE"),
        ("c0.caseInsensitive", "true"),
        ("svCount", "1"),
        ("sv0.name", "fast"),
        ("sv0.weight", ""),
        ("sv0.stickiness", "default"),
        ("sv0.payloadType", "string"),
        ("sv0.payload", "yes"),
        ("intent", "save"),
    ]);
    let saved = browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    assert_eq!(
        saved.location.as_deref(),
        Some("/vexil/projects/default/features/rollout#env-development"),
        "{}",
        saved.text
    );
    let mut fields = base_fields.to_vec();
    fields.extend([
        ("constraintCount", "0"),
        ("intent", "save"),
        ("strategy", "default"),
    ]);
    browser
        .post(&format!("{flag_path}/strategies/create"), &fields)
        .await;
    let stored = flag_at(&server, "/vexil", "rollout").await;
    let strategies = stored["environments"][0]["strategies"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(strategies.len(), 2);
    assert_eq!(strategies[0]["parameters"]["rollout"], "50");
    assert_eq!(
        strategies[0]["constraints"][0],
        json!({"contextName": "country", "operator": "IN", "values": ["NO", "SE"],
               "caseInsensitive": true, "inverted": false})
    );
    assert_eq!(
        strategies[0]["variants"],
        json!([{"name": "fast", "weight": 1000, "weightType": "variable", "stickiness": "default",
                "payload": {"type": "string", "value": "yes"}}])
    );
    let first = strategies[0]["id"].as_str().unwrap().to_owned();
    // Move the first down: the order is the API's.
    let page = browser.get(flag_path).await;
    assert!(
        page.has(
            "<span class=\"chip\" title=\"country IN [NO, SE] (case insensitive)\">\
             country is one of NO, SE (ignoring case)</span>"
        ),
        "{}",
        page.text
    );
    let moved = browser
        .post(
            &format!("{flag_path}/strategies/move"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("strategyId", &first),
                ("direction", "down"),
            ],
        )
        .await;
    assert_eq!(moved.status, 303);
    let stored = flag_at(&server, "/vexil", "rollout").await;
    assert_eq!(
        stored["environments"][0]["strategies"][1]["id"],
        first.as_str()
    );
    // Drag and drop posts the place it was dropped on.
    for (position, expected) in [("0", 0), ("9", 1)] {
        let moved = browser
            .post(
                &format!("{flag_path}/strategies/move"),
                &[
                    ("csrf", &csrf),
                    ("environment", "development"),
                    ("strategyId", &first),
                    ("position", position),
                ],
            )
            .await;
        assert_eq!(moved.status, 303);
        let stored = flag_at(&server, "/vexil", "rollout").await;
        assert_eq!(
            stored["environments"][0]["strategies"][expected]["id"],
            first.as_str()
        );
    }
    // Edit: the form holds the stored strategy.
    let edit = browser
        .get(&format!(
            "{flag_path}/strategies/edit?environmentId=development&strategyId={first}"
        ))
        .await;
    assert!(
        edit.expect(200).contains(">NO\nSE</textarea>"),
        "{}",
        edit.text
    );

    // Variants with a JSON payload.
    let variants = browser
        .get(&format!("{flag_path}/variants?environment=development"))
        .await;
    assert!(variants.expect(200).contains("No variants"));
    let grown = browser
        .post(
            &format!("{flag_path}/variants"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("vCount", "0"),
                ("intent", "add-v"),
            ],
        )
        .await;
    for fragment in [
        "Variant name",
        "Weight",
        "Payload type",
        "Payload",
        "Save variants",
    ] {
        assert!(grown.has(fragment), "{fragment}");
    }
    let saved = browser
        .post(
            &format!("{flag_path}/variants"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("vCount", "1"),
                ("v0.name", "blue"),
                ("v0.weight", ""),
                ("v0.stickiness", "default"),
                ("v0.payloadType", "json"),
                ("v0.payload", "{\"color\": \"blue\"}"),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let stored = flag_at(&server, "/vexil", "rollout").await;
    assert_eq!(
        stored["environments"][0]["variants"][0]["payload"],
        json!({"type": "json", "value": "{\"color\": \"blue\"}"})
    );
    assert_eq!(stored["environments"][0]["variants"][0]["weight"], 1000);

    // Archive with a confirmation, then revive from the archive.
    let confirm = browser.get(&format!("{flag_path}/archive")).await;
    assert!(confirm.expect(200).contains(">Confirm</button>"));
    let archived = browser
        .post(&format!("{flag_path}/archive"), &[("csrf", &csrf)])
        .await;
    assert_eq!(archived.location.as_deref(), Some("/vexil/archive"));
    let archive = browser.get("/archive").await;
    assert!(archive
        .expect(200)
        .contains("aria-label=\"Revive rollout\""));
    let revived = browser
        .post("/archive/rollout/revive", &[("csrf", &csrf)])
        .await;
    assert_eq!(
        revived.location.as_deref(),
        Some("/vexil/projects/default/features/rollout")
    );
    assert_eq!(
        flag_at(&server, "/vexil", "rollout").await["archived"],
        false
    );
    let segments = browser.get("/segments").await;
    assert!(segments.expect(200).contains("No segments yet."));
}
