//! The admin UI keeping people's place, as a browser without JavaScript sees it: a form redrawn by "Add …" or
//! "Remove" puts `autofocus` on the new row's first field (or the row in the removed one's place, or the Add
//! button); writes come back to the control used (`#fragment`s that name it); the hooks the script uses
//! (live search, the project picker, the rollout slider) are in the page. And the flag page's copies:
//! strategies copied to another environment (or proposed where change requests are on), a flag cloned
//! (also through the admin API, with its JSON refusals).

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    redrawn_forms_focus_the_row_added_or_the_one_in_a_removed_ones_place,
    writes_come_back_to_the_control_used_and_the_script_hooks_are_there,
    strategies_are_copied_to_another_environment,
    a_flag_is_cloned_from_its_page_and_through_the_api,
);

const FLAG: &str = "/projects/default/features/checkout";

async fn signed_in(server: &Server) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/projects/default")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn flag(server: &Server, name: &str) -> Value {
    server
        .get(&format!("/api/admin/projects/default/features/{name}"))
        .await
        .expect(200)
        .clone()
}

async fn create_flag(server: &Server, name: &str) {
    server
        .post(
            "/api/admin/projects/default/features",
            json!({ "name": name }),
        )
        .await
        .expect(201);
}

async fn add_strategy(server: &Server, environment: &str, rollout: &str, country: &str) {
    server
        .post(
            &format!("/api/admin{FLAG}/environments/{environment}/strategies"),
            json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": rollout, "stickiness": "default", "groupId": "checkout"},
                "constraints": [{"contextName": "country", "operator": "IN", "values": [country]}]
            }),
        )
        .await
        .expect(200);
}

/// The strategies of flag `name` in `environment`.
async fn strategies(server: &Server, name: &str, environment: &str) -> Vec<Value> {
    let stored = flag(server, name).await;
    let found = stored["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|candidate| candidate["name"] == environment)
        .unwrap_or_else(|| panic!("no {environment} in {stored}"));
    found["strategies"].as_array().unwrap().clone()
}

/// The opening tag of the element with `id`.
fn tag<'a>(page: &'a Html, id: &str) -> &'a str {
    let marker = format!("id=\"{id}\"");
    let at = page
        .text
        .find(&marker)
        .unwrap_or_else(|| panic!("no element #{id} in {}", page.text));
    let start = page.text[..at].rfind('<').unwrap();
    let end = at + page.text[at..].find('>').unwrap();
    &page.text[start..=end]
}

/// The ids of the elements drawn with `autofocus`: exactly one is expected where one is asked for.
fn focused(page: &Html) -> Vec<String> {
    page.text
        .match_indices(" autofocus")
        .map(|(at, _)| {
            let start = page.text[..at].rfind('<').unwrap();
            let opening = &page.text[start..at + page.text[at..].find('>').unwrap()];
            opening
                .split("id=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

async fn redrawn_forms_focus_the_row_added_or_the_one_in_a_removed_ones_place(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let mut browser = signed_in(&server).await;
    let form = browser
        .get(&format!(
            "{FLAG}/strategies/create?environmentId=development"
        ))
        .await;
    let csrf = form.csrf();
    assert!(focused(&form).is_empty(), "a first visit focuses nothing");
    assert!(form.has("id=\"strategy-form\""), "{}", form.text);
    assert!(tag(&form, "strategy-form").contains("data-redraw"));
    // The rollout's slider: hidden until the script shows it, no name (the number field is sent), labelled.
    let slider = tag(&form, "param-rollout-slider");
    for part in [
        "type=\"range\"",
        "hidden",
        "data-mirrors=\"param-rollout\"",
        "aria-label=\"Rollout slider\"",
        "value=\"100\"",
    ] {
        assert!(slider.contains(part), "{part}: {slider}");
    }
    assert!(!slider.contains("name="), "{slider}");

    let path = format!("{FLAG}/strategies/create");
    let base: Vec<(&str, &str)> = vec![
        ("csrf", &csrf),
        ("environment", "development"),
        ("strategy", "flexibleRollout"),
        ("param.rollout", "30"),
        ("param.stickiness", "default"),
        ("param.groupId", "checkout"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut fields = base.clone();
        fields.extend_from_slice(extra);
        fields
    };
    // Add constraint: the new (first) constraint's context field has the focus; its box has an id.
    let added = browser
        .post(&path, &with(&[("intent", "add-constraint")]))
        .await;
    assert_eq!(added.status, 200, "{}", added.text);
    assert_eq!(focused(&added), ["c0-context"]);
    assert!(tag(&added, "c0").starts_with("<fieldset"));
    // Two constraints, the first removed: the one in its place has the focus.
    let two = [
        ("constraintCount", "2"),
        ("c0.contextName", "country"),
        ("c0.operator", "IN"),
        ("c0.values", "NO"),
        ("c1.contextName", "region"),
        ("c1.operator", "IN"),
        ("c1.values", "eu"),
    ];
    let mut fields = with(&two);
    fields.push(("intent", "add-constraint"));
    assert_eq!(focused(&browser.post(&path, &fields).await), ["c2-context"]);
    fields.pop();
    fields.push(("intent", "remove-constraint-0"));
    let removed = browser.post(&path, &fields).await;
    assert_eq!(focused(&removed), ["c0-context"]);
    assert!(tag(&removed, "c0-context").contains("value=\"region\""));
    fields.pop();
    fields.push(("intent", "remove-constraint-1"));
    assert_eq!(focused(&browser.post(&path, &fields).await), ["c0-context"]);
    // The last one removed: the Add button.
    let mut one = with(&two[..4]);
    one[6] = ("constraintCount", "1");
    one.push(("intent", "remove-constraint-0"));
    assert_eq!(
        focused(&browser.post(&path, &one).await),
        ["add-constraint"]
    );
    // A strategy variant; "Update form" (the strategy or an operator changed) comes back to that button.
    let variant = browser.post(&path, &with(&[("intent", "add-sv")])).await;
    assert_eq!(focused(&variant), ["sv0-name"]);
    let refreshed = browser.post(&path, &with(&[("intent", "refresh")])).await;
    assert_eq!(focused(&refreshed), ["refresh-form"]);

    // The segment form, a context field's legal values, a flag's variants.
    let segment = browser
        .post(
            "/segments/create",
            &[
                ("csrf", &csrf),
                ("name", "nordics"),
                ("intent", "add-constraint"),
            ],
        )
        .await;
    assert_eq!(focused(&segment), ["c0-context"]);
    assert!(tag(&segment, "segment-form").contains("data-redraw"));
    let legal = browser
        .post(
            "/context/create",
            &[("csrf", &csrf), ("name", "region"), ("intent", "add-value")],
        )
        .await;
    assert_eq!(focused(&legal), ["v0-value"]);
    let legal = browser
        .post(
            "/context/create",
            &[
                ("csrf", &csrf),
                ("name", "region"),
                ("valueCount", "1"),
                ("v0.value", "eu"),
                ("intent", "remove-value-0"),
            ],
        )
        .await;
    assert_eq!(focused(&legal), ["add-value"]);
    let variants = browser
        .post(
            &format!("{FLAG}/variants"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("intent", "add-v"),
            ],
        )
        .await;
    assert_eq!(focused(&variants), ["v0-name"]);
    assert!(tag(&variants, "variants-form").contains("data-redraw"));
    // The playground's "Add property" (a GET form) skips validation like the others.
    let playground = browser.get("/playground?action=add").await;
    assert_eq!(focused(&playground), ["property-name-0"]);
    assert!(tag(&playground, "playground-form").contains("data-redraw"));
    let add_property = &playground.text[playground.text.find("value=\"add\"").unwrap() - 80..];
    assert!(
        add_property[..120].contains("formnovalidate"),
        "{add_property}"
    );

    // Saved: the number is what the server reads, and the browser lands on the strategy's environment.
    let saved = browser.post(&path, &with(&[("intent", "save")])).await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert_eq!(
        saved.location.as_deref(),
        Some("/projects/default/features/checkout#env-development")
    );
    let stored = strategies(&server, "checkout", "development").await;
    assert_eq!(stored[0]["parameters"]["rollout"], "30");
    let page = browser.get(FLAG).await;
    assert!(page.has("id=\"env-development\""));
}

async fn writes_come_back_to_the_control_used_and_the_script_hooks_are_there(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "web", "name": "Web shop"}),
        )
        .await
        .expect(201);
    let mut browser = signed_in(&server).await;
    // The flag list: the filters' hooks and the switches' ids, each carried by its form's `back`.
    let list = browser.get("/projects/default?query=check").await;
    let csrf = list.csrf();
    let filters = tag(&list, "flag-count");
    assert!(filters.contains("role=\"status\""), "{filters}");
    assert!(
        list.has("data-live-search data-total=\"1\""),
        "{}",
        list.text
    );
    assert!(list.has("<button type=\"submit\" data-no-script>Apply</button>"));
    let picker = tag(&list, "project-picker");
    assert!(picker.contains("data-navigate"), "{picker}");
    assert!(list.has("<button type=\"submit\" data-no-script>Open</button>"));
    let row_switch = tag(&list, "switch--checkout--development");
    assert!(row_switch.contains("role=\"switch\""), "{row_switch}");
    assert!(list.has(
        "name=\"back\" value=\"/projects/default?query=check&amp;page=1#switch--checkout--development\""
    ));
    let switched = browser
        .post(
            &format!("{FLAG}/environments/development/switch"),
            &[
                ("csrf", &csrf),
                ("enabled", "true"),
                (
                    "back",
                    "/projects/default?query=check&page=1#switch--checkout--development",
                ),
            ],
        )
        .await;
    assert_eq!(
        switched.location.as_deref(),
        Some("/projects/default?query=check&page=1#switch--checkout--development")
    );
    // The flag page's switches land on themselves too.
    let page = browser.get(FLAG).await;
    let flag_switch = tag(&page, "switch--checkout--production");
    assert!(
        flag_switch.contains("aria-checked=\"false\""),
        "{flag_switch}"
    );
    assert!(page.has("value=\"/projects/default/features/checkout#switch--checkout--production\""));
    // Where change requests hold the switch back, the notice joins the query, before the fragment.
    server
        .put(
            "/api/admin/projects/default/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let proposed = browser
        .post(
            &format!("{FLAG}/environments/production/switch"),
            &[
                ("csrf", &csrf),
                ("enabled", "true"),
                (
                    "back",
                    "/projects/default/features/checkout#switch--checkout--production",
                ),
            ],
        )
        .await;
    let location = proposed.location.clone().unwrap();
    assert!(
        location.starts_with("/projects/default/features/checkout?notice=proposed-")
            && location.ends_with("#switch--checkout--production"),
        "{location}"
    );
}

async fn strategies_are_copied_to_another_environment(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    add_strategy(&server, "development", "25", "NO").await;
    add_strategy(&server, "development", "75", "SE").await;
    let mut browser = signed_in(&server).await;
    let page = browser.get(FLAG).await;
    let csrf = page.csrf();
    for offered in [
        "<summary>Copy to…<span class=\"sr-only\"> strategy 1 of development</span></summary>",
        "<summary>Copy all to…<span class=\"sr-only\"> the strategies of development</span></summary>",
        "<button type=\"submit\" name=\"to\" value=\"production\">Copy to production</button>",
    ] {
        assert!(page.has(offered), "{offered}: {}", page.text);
    }
    let development = strategies(&server, "checkout", "development").await;
    let second = development[1]["id"].as_str().unwrap().to_owned();

    // One strategy: added after production's own, everything but its id and place the same.
    let copied = browser
        .post(
            &format!("{FLAG}/strategies/copy"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("strategyId", &second),
                ("to", "production"),
            ],
        )
        .await;
    assert_eq!(copied.status, 303, "{}", copied.text);
    assert_eq!(
        copied.location.as_deref(),
        Some("/projects/default/features/checkout#env-production")
    );
    let notice = browser.get(FLAG).await;
    assert!(notice.has("The strategy was copied from development to production."));
    let production = strategies(&server, "checkout", "production").await;
    assert_eq!(production.len(), 1, "{production:?}");
    assert_ne!(production[0]["id"], development[1]["id"]);
    for key in ["name", "parameters", "constraints", "segments", "variants"] {
        assert_eq!(production[0][key], development[1][key], "{key}");
    }
    // All of development's: both follow.
    let all = browser
        .post(
            &format!("{FLAG}/strategies/copy"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("to", "production"),
            ],
        )
        .await;
    assert_eq!(all.status, 303, "{}", all.text);
    let notice = browser.get(FLAG).await;
    assert!(notice.has("2 strategies were copied from development to production."));
    let production = strategies(&server, "checkout", "production").await;
    let rollouts: Vec<&Value> = production
        .iter()
        .map(|strategy| &strategy["parameters"]["rollout"])
        .collect();
    assert_eq!(rollouts, [&json!("75"), &json!("25"), &json!("75")]);
    // A strategy that is not there: the error page, nothing copied.
    let missing = browser
        .post(
            &format!("{FLAG}/strategies/copy"),
            &[
                ("csrf", &csrf),
                ("environment", "production"),
                ("strategyId", "6f1e1f36-2a4e-4c55-9d1f-1d3a0b7f6a10"),
                ("to", "development"),
            ],
        )
        .await;
    assert_eq!(missing.status, 404, "{}", missing.text);
    assert_eq!(
        strategies(&server, "checkout", "development").await.len(),
        2
    );

    // Change requests on in production: the copies join the caller's draft instead.
    server
        .put(
            "/api/admin/projects/default/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let proposed = browser
        .post(
            &format!("{FLAG}/strategies/copy"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("to", "production"),
            ],
        )
        .await;
    let location = proposed.location.clone().unwrap();
    assert!(
        location.starts_with("/projects/default/features/checkout?notice=proposed-"),
        "{location}"
    );
    assert_eq!(strategies(&server, "checkout", "production").await.len(), 3);
    let requests = server
        .get("/api/admin/projects/default/change-requests")
        .await;
    let requests = requests.expect(200);
    let changes = &requests.as_array().unwrap()[0]["features"][0]["changes"];
    let actions: Vec<&Value> = changes
        .as_array()
        .unwrap()
        .iter()
        .map(|change| &change["action"])
        .collect();
    assert_eq!(actions, [&json!("addStrategy"), &json!("addStrategy")]);
}

async fn a_flag_is_cloned_from_its_page_and_through_the_api(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    add_strategy(&server, "development", "40", "NO").await;
    server
        .post_empty(&format!("/api/admin{FLAG}/environments/development/on"))
        .await
        .expect(200);
    let mut browser = signed_in(&server).await;
    let page = browser.get(FLAG).await;
    assert!(page.has(&format!(
        "<a class=\"button\" href=\"{FLAG}/clone\">Clone</a>"
    )));
    let form = browser.get(&format!("{FLAG}/clone")).await;
    assert_eq!(form.status, 200, "{}", form.text);
    let csrf = form.csrf();
    assert!(form.has("<h1>Clone checkout</h1>"));
    let name = tag(&form, "clone-name");
    assert!(
        name.contains("value=\"checkout-copy\"") && name.contains("autofocus"),
        "{name}"
    );
    assert!(tag(&form, "replace-group-hint").starts_with("<p"));
    assert!(form.has("name=\"replaceGroupId\" value=\"true\" checked"));

    let cloned = browser
        .post(
            &format!("{FLAG}/clone"),
            &[
                ("csrf", &csrf),
                ("name", "checkout-two"),
                ("replaceGroupId", "true"),
            ],
        )
        .await;
    assert_eq!(cloned.status, 303, "{}", cloned.text);
    assert_eq!(
        cloned.location.as_deref(),
        Some("/projects/default/features/checkout-two")
    );
    let landed = browser.get("/projects/default/features/checkout-two").await;
    assert!(landed.has("checkout-two was cloned from checkout."));
    let copy = strategies(&server, "checkout-two", "development").await;
    assert_eq!(copy[0]["parameters"]["groupId"], "checkout-two");
    assert_eq!(copy[0]["parameters"]["rollout"], "40");
    let stored = flag(&server, "checkout-two").await;
    assert_eq!(stored["environments"][0]["enabled"], true);
    // Unticked: the group id stays the source's.
    let kept = browser
        .post(
            &format!("{FLAG}/clone"),
            &[("csrf", &csrf), ("name", "checkout-same")],
        )
        .await;
    assert_eq!(kept.status, 303, "{}", kept.text);
    let copy = strategies(&server, "checkout-same", "development").await;
    assert_eq!(copy[0]["parameters"]["groupId"], "checkout");
    // Refusals beside the name, what was typed kept.
    let taken = browser
        .post(
            &format!("{FLAG}/clone"),
            &[("csrf", &csrf), ("name", "checkout-two")],
        )
        .await;
    assert_eq!(taken.status, 409, "{}", taken.text);
    let control = tag(&taken, "clone-name");
    assert!(
        control.contains("aria-invalid=\"true\"") && control.contains("value=\"checkout-two\"")
    );
    let bad = browser
        .post(
            &format!("{FLAG}/clone"),
            &[("csrf", &csrf), ("name", "bad name!")],
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(tag(&bad, "clone-name").contains("aria-invalid=\"true\""));
    let none = browser.get("/projects/default/features/nope/clone").await;
    assert_eq!(none.status, 404);

    // The admin API's route, Unleash's body: {name, replaceGroupId}.
    let clone = format!("/api/admin{FLAG}/clone");
    let answer = server
        .post(
            &clone,
            json!({"name": "checkout-api", "replaceGroupId": false}),
        )
        .await;
    let created = answer.expect(200);
    assert_eq!(created["name"], "checkout-api");
    assert_eq!(created["project"], "default");
    server
        .post(&clone, json!({"name": "checkout-api"}))
        .await
        .expect_error(409, "NameExistsError");
    server
        .post(&clone, json!({"replaceGroupId": true}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(&clone, json!({"name": "x", "replaceGroupId": "yes"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/projects/default/features/nope/clone",
            json!({"name": "y"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .post(
            "/api/admin/projects/nowhere/features/checkout/clone",
            json!({"name": "z"}),
        )
        .await
        .expect_error(404, "NotFoundError");
}
