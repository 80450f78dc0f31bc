//! The admin UI's words for the API's names (issue 30 §3), over HTTP through the real binary: strategies by
//! the names people read with a one-line summary, constraints as chips ("country is one of NO, SE") whose
//! title keeps the API's form, operators, parameters and stickiness in the strategy form, the segments list,
//! a change request's strategy in words, and refusals beside their field without the API's paths.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::json;

crate::on_sqlite_and_postgres!(
    the_flag_page_names_strategies_and_constraints_as_people_read_them,
    the_strategy_form_offers_human_names_and_words_its_refusals,
    segments_and_change_requests_show_constraints_as_chips,
);

async fn signed_in(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/projects/default")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn flag_with_strategies(server: &Server, name: &str, strategies: &[serde_json::Value]) {
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": name}),
        )
        .await
        .expect(201);
    for strategy in strategies {
        server
            .post(
                &format!(
                    "/api/admin/projects/default/features/{name}/environments/development/strategies"
                ),
                strategy.clone(),
            )
            .await
            .expect(200);
    }
}

/// The page's text between tags (attributes left out), whitespace as is.
fn visible(page: &Html) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for character in page.text.chars() {
        match character {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => text.push(character),
            _ => {}
        }
    }
    text
}

async fn the_flag_page_names_strategies_and_constraints_as_people_read_them(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/strategies",
            json!({"name": "by-tenant", "title": "Tenants", "parameters": [
                {"name": "tenants", "type": "list", "description": "", "required": false}]}),
        )
        .await
        .expect(201);
    let many: Vec<String> = (1..=17).map(|n| format!("shop-{n:02}")).collect();
    flag_with_strategies(
        &server,
        "new-checkout",
        &[
            json!({"name": "flexibleRollout",
                "parameters": {"rollout": "50", "stickiness": "userId", "groupId": "new-checkout"},
                "constraints": [
                    {"contextName": "country", "operator": "IN", "values": ["NO", "SE"]},
                    {"contextName": "email", "operator": "STR_ENDS_WITH", "values": ["@example.com"],
                     "inverted": true, "caseInsensitive": true},
                    {"contextName": "currentTime", "operator": "DATE_AFTER",
                     "value": "2026-01-02T03:04:00.000Z"},
                    {"contextName": "appVersion", "operator": "SEMVER_GT", "value": "2.0.0"},
                    {"contextName": "shop", "operator": "IN", "values": many}]}),
            json!({"name": "default", "title": "Everyone else"}),
            json!({"name": "userWithId", "parameters": {"userIds": "anna,ben"}}),
            json!({"name": "by-tenant", "parameters": {"tenants": "acme"}}),
        ],
    )
    .await;
    let mut browser = signed_in(&server).await;
    let page = browser.get("/projects/default/features/new-checkout").await;
    page.expect(200);
    let text = visible(&page);
    for words in [
        "1. Gradual rollout",
        "50% of users by User ID, group new-checkout",
        "country is one of NO, SE",
        "email does not end with @example.com (ignoring case)",
        "Current time is after 2 Jan 2026, 03:04 UTC",
        "appVersion is a version after 2.0.0",
        "shop is one of shop-01, shop-02, shop-03, shop-04, shop-05 +12 more",
        "2. Everyone else · Standard (on for everyone)",
        "On for everyone",
        "3. User IDs",
        "User IDs: anna, ben",
        "4. Tenants",
        "tenants: acme",
    ] {
        assert!(text.contains(words), "{words:?} in {text}");
    }
    // The API's names are in the tooltips only, every value of a long list with them. (The environments'
    // section: the event log below is another's work.)
    let environments = &text[..text.find("Dependencies").expect("the dependencies section")];
    for raw in [
        "flexibleRollout",
        "STR_ENDS_WITH",
        "SEMVER_GT",
        "DATE_AFTER",
        " IN ",
        "stickiness",
        "groupId",
    ] {
        assert!(
            !environments.contains(raw),
            "{raw:?} shown in {environments}"
        );
    }
    for title in [
        "title=\"API name: flexibleRollout\"",
        "<span class=\"chip\" title=\"country IN [NO, SE]\">country is one of NO, SE</span>",
        "title=\"email NOT STR_ENDS_WITH [@example.com] (case insensitive)\"",
        "title=\"appVersion SEMVER_GT 2.0.0\"",
        "shop-16, shop-17]\"",
        "<ul class=\"chips\" aria-label=\"Conditions, all must match\">",
    ] {
        assert!(page.has(title), "{title} in {}", page.text);
    }
}

async fn the_strategy_form_offers_human_names_and_words_its_refusals(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    flag_with_strategies(&server, "worded", &[]).await;
    let mut browser = signed_in(&server).await;
    let create = "/projects/default/features/worded/strategies/create";
    let form = browser
        .get(&format!("{create}?environmentId=development"))
        .await;
    form.expect(200);
    for fragment in [
        "<option value=\"flexibleRollout\" selected>Gradual rollout</option>",
        "<option value=\"default\">Standard (on for everyone)</option>",
        "<option value=\"userWithId\">User IDs</option>",
        "title=\"API name: flexibleRollout\"",
        "<label for=\"param-groupId\">Group</label>",
        "<label for=\"param-stickiness\">Stickiness</label>",
        "<option value=\"default\" selected>Default (userId, then sessionId, then random)</option>",
        "<option value=\"random\">Random</option>",
        "<option value=\"userId\">User ID</option>",
    ] {
        assert!(form.has(fragment), "{fragment} in {}", form.text);
    }
    // A constraint row: the operators as phrases, the API's one in the select's title.
    let csrf = form.csrf();
    let mut fields = vec![
        ("csrf", csrf.as_str()),
        ("environment", "development"),
        ("strategy", "flexibleRollout"),
        ("param.rollout", "50"),
        ("param.stickiness", "default"),
        ("param.groupId", "worded"),
        ("constraintCount", "1"),
        ("c0.contextName", "version"),
        ("c0.operator", "SEMVER_GT"),
        ("c0.value", "2.x"),
    ];
    let added = browser
        .post(
            create,
            &[fields.clone(), vec![("intent", "add-constraint")]].concat(),
        )
        .await;
    added.expect(200);
    for fragment in [
        "<option value=\"IN\">is one of</option>",
        "<option value=\"NOT_IN\">is not one of</option>",
        "<option value=\"STR_ENDS_WITH\">ends with</option>",
        "<option value=\"NUM_GTE\">≥</option>",
        "<option value=\"SEMVER_GT\" selected>is a version after</option>",
        "<option value=\"DATE_BEFORE\">is before</option>",
        "title=\"API operator: SEMVER_GT\"",
        "<option value=\"userId\" label=\"User ID\">",
    ] {
        assert!(added.has(fragment), "{fragment} in {}", added.text);
    }
    assert!(!added.has(">SEMVER_GT<") && !added.has(">IN<"));
    // Refused: the value beside its control, in words, no API path or operator.
    fields.push(("intent", "save"));
    let refused = browser.post(create, &fields).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(
        refused.has(
            "id=\"c0-value-error\" aria-live=\"polite\">“2.x” is not a version such as 1.2.3.</p>"
        ),
        "{}",
        refused.text
    );
    assert!(!refused.has("constraints[0]") && !refused.has("valid value for SEMVER_GT"));
    // The API keeps its own message.
    let api = server
        .post(
            "/api/admin/projects/default/features/worded/environments/development/strategies",
            json!({"name": "flexibleRollout", "constraints": [
                {"contextName": "version", "operator": "SEMVER_GT", "value": "2.x"}]}),
        )
        .await;
    let message = api.expect_error(400, "ValidationError");
    assert!(message.starts_with("constraints[0].value: "), "{message}");
}

async fn segments_and_change_requests_show_constraints_as_chips(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/segments",
            json!({"name": "nordics", "constraints": [
                {"contextName": "country", "operator": "NOT_IN", "values": ["DK"]}]}),
        )
        .await
        .expect(201);
    flag_with_strategies(&server, "guarded", &[]).await;
    server
        .put(
            "/api/admin/projects/default/environments/development/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let mut browser = signed_in(&server).await;
    let segments = browser.get("/segments").await;
    segments.expect(200);
    assert!(
        segments.has(
            "<span class=\"chip\" title=\"country NOT_IN [DK]\">country is not one of DK</span>"
        ),
        "{}",
        segments.text
    );
    // A strategy proposed through the form: the request shows it in words.
    let create = "/projects/default/features/guarded/strategies/create";
    let form = browser
        .get(&format!("{create}?environmentId=development"))
        .await;
    let csrf = form.csrf();
    let proposed = browser
        .post(
            create,
            &[
                ("csrf", csrf.as_str()),
                ("environment", "development"),
                ("strategy", "flexibleRollout"),
                ("param.rollout", "25"),
                ("param.stickiness", "default"),
                ("param.groupId", "guarded"),
                ("constraintCount", "1"),
                ("c0.contextName", "userId"),
                ("c0.operator", "STR_STARTS_WITH"),
                ("c0.values", "test-"),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(proposed.status, 303, "{}", proposed.text);
    let requests = server
        .get("/api/admin/projects/default/change-requests")
        .await
        .expect(200)
        .clone();
    let id = requests
        .as_array()
        .and_then(|list| list.first())
        .map(|request| request["id"].clone())
        .unwrap_or_else(|| panic!("a change request in {requests}"));
    let page = browser
        .get(&format!("/projects/default/change-requests/{id}"))
        .await;
    page.expect(200);
    let text = visible(&page);
    for words in [
        "Proposed",
        "Gradual rollout",
        "25% of users, group guarded",
        "User ID starts with test-",
        "Field by field",
    ] {
        assert!(text.contains(words), "{words:?} in {text}");
    }
    assert!(page.has("<details class=\"cr-fields\">"), "{}", page.text);
}
