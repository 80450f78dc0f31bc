//! The admin UI's forms refusing input: each domain message beside the control it names (the control's
//! `aria-describedby` points at it, `aria-invalid="true"`), what was typed kept, nothing stored (status 400) —
//! the strategy form (parameters, constraints, segments, strategy variants), the flag variants page and the
//! segment form; and a flag's dependencies edited on its page.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    the_strategy_form_shows_each_refusal_beside_its_control,
    the_variants_and_segment_forms_show_refusals_beside_their_controls,
    dependencies_are_added_and_removed_on_the_flag_page,
    a_large_project_suggests_the_first_parents_only,
    dependency_changes_are_proposed_where_change_requests_are_on,
    enter_saves_and_rebuild_buttons_skip_validation_on_every_rebuilt_form,
    a_nul_in_a_form_is_refused_and_nothing_is_stored,
);

/// The opening tags of the `<button>`s of the first `<form class="form-narrow…">` of `page`, in order.
fn form_buttons(page: &Html) -> Vec<String> {
    let start = page
        .text
        .find("<form class=\"form-narrow")
        .unwrap_or_else(|| panic!("no form in {}", page.text));
    let form = &page.text[start..start + page.text[start..].find("</form>").unwrap()];
    form.match_indices("<button")
        .map(|(at, _)| form[at..at + form[at..].find('>').unwrap() + 1].to_owned())
        .collect()
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

/// The text of the elements control `id`'s `aria-describedby` names, joined; asserts `aria-invalid="true"`.
fn description(page: &Html, id: &str) -> String {
    let control = tag(page, id);
    assert!(
        control.contains("aria-invalid=\"true\""),
        "#{id} is not marked invalid: {control}"
    );
    let described = control
        .split("aria-describedby=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("#{id} has no aria-describedby: {control}"));
    described
        .split_whitespace()
        .map(|target| {
            let opening = tag(page, target);
            let at = page.text.find(opening).unwrap() + opening.len();
            let rest = &page.text[at..];
            rest[..rest.find('<').unwrap()].to_owned()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A refused post: 400, the message beside control `id`, no error box above the form.
fn refused_beside(page: &Html, id: &str, message: &str) {
    assert_eq!(page.status, 400, "{}", page.text);
    let described = description(page, id);
    assert!(
        described.contains(message),
        "#{id} is described by {described:?}, not {message:?}"
    );
    // Beside its control a refusal reads as people write it: no body field path of the API.
    for path in ["constraints[", "parameters.", "variants[", "context."] {
        assert!(!described.contains(path), "#{id}: {described:?}");
    }
    assert!(!page.has("error-box"), "{}", page.text);
}

/// Posts a form whose values were built at run time.
async fn post_owned(browser: &mut Browser, path: &str, fields: Vec<(&str, String)>) -> Html {
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    browser.post(path, &pairs).await
}

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

async fn the_strategy_form_shows_each_refusal_beside_its_control(db: TestDb) {
    let server = Server::start(&db, &["--limit-constraint-values", "2"]).await;
    create_flag(&server, "checked").await;
    server
        .post(
            "/api/admin/context",
            json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/strategies",
            json!({"name": "quota", "parameters": [{"name": "limit", "type": "number"}]}),
        )
        .await
        .expect(201);
    let mut browser = signed_in(&server).await;
    let create = "/projects/default/features/checked/strategies/create";
    let form = browser
        .get(&format!("{create}?environmentId=development"))
        .await;
    form.expect(200);
    let csrf = form.csrf();
    let rollout = |rollout: &'static str| {
        vec![
            ("csrf", csrf.clone()),
            ("environment", "development".to_owned()),
            ("strategy", "flexibleRollout".to_owned()),
            ("param.rollout", rollout.to_owned()),
            ("param.stickiness", "default".to_owned()),
            ("param.groupId", "checked".to_owned()),
            ("intent", "save".to_owned()),
        ]
    };
    // Rollout out of range.
    let page = post_owned(&mut browser, create, rollout("150")).await;
    refused_beside(
        &page,
        "param-rollout",
        "is not a whole number from 0 to 100",
    );
    assert!(tag(&page, "param-rollout").contains("value=\"150\""));
    // Each constraint's value as the engine reads it, beside that constraint's control; the others kept.
    let cases: [(&str, &str, &str, &str, &str); 6] = [
        ("age", "NUM_EQ", "abc", "c1-value", "“abc” is not a number"),
        (
            "currentTime",
            "DATE_AFTER",
            "2026-13-45T10:00",
            "c1-value",
            "is not a date and time",
        ),
        (
            "version",
            "SEMVER_EQ",
            "1.x",
            "c1-value",
            "“1.x” is not a version such as 1.2.3",
        ),
        (
            "region",
            "IN",
            "eu\nmars",
            "c1-values",
            "is not a legal value of context field region",
        ),
        (
            "userId",
            "IN",
            "a\nb\nc",
            "c1-values",
            "Too many values: 3 given, at most 2 per constraint on this instance.",
        ),
        (
            "bad name",
            "IN",
            "x",
            "c1-context",
            "Context field must be URL-safe",
        ),
    ];
    for (context, operator, value, control, message) in cases {
        let value_key = if operator == "IN" {
            "c1.values"
        } else {
            "c1.value"
        };
        let mut fields = rollout("50");
        fields.extend([
            ("constraintCount", "2".to_owned()),
            ("c0.contextName", "country".to_owned()),
            ("c0.operator", "IN".to_owned()),
            ("c0.values", "NO".to_owned()),
            ("c1.contextName", context.to_owned()),
            ("c1.operator", operator.to_owned()),
            (value_key, value.to_owned()),
        ]);
        let page = post_owned(&mut browser, create, fields).await;
        refused_beside(&page, control, message);
        assert!(tag(&page, "c0-context").contains("aria-invalid=\"false\""));
        assert!(page.has("value=\"country\""), "{}", page.text);
        let kept = if operator == "IN" {
            format!(">{value}</textarea>")
        } else {
            format!("value=\"{value}\"")
        };
        assert!(page.has(&kept), "{kept} kept in {}", page.text);
        assert!(page.has(&format!("value=\"{context}\"")));
    }
    // A segment that does not exist.
    let mut fields = rollout("50");
    fields.push(("segment", "999".to_owned()));
    let page = post_owned(&mut browser, create, fields).await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert!(page.has("segments-error"));
    assert!(
        page.text.contains("Segment 1: segment 999 does not exist"),
        "{}",
        page.text
    );
    // A custom strategy's number parameter.
    let page = post_owned(
        &mut browser,
        create,
        vec![
            ("csrf", csrf.clone()),
            ("environment", "development".to_owned()),
            ("strategy", "quota".to_owned()),
            ("param.limit", "many".to_owned()),
            ("intent", "save".to_owned()),
        ],
    )
    .await;
    refused_beside(&page, "param-limit", "&quot;many&quot; is not a number");
    assert!(tag(&page, "param-limit").contains("value=\"many\""));
    // Strategy variants: a bad JSON payload, a name used twice, fixed weights over 100 %.
    let variant_cases: [(&str, &str, &str, &str, &str, &str); 3] = [
        ("a", "{nope", "b", "", "sv0-payload", "not valid JSON"),
        ("a", "{}", "a", "", "sv1-name", "a is used twice"),
        (
            "a",
            "{}",
            "b",
            "60",
            "sv0-weight",
            "the fixed weights add up to more than 1000",
        ),
    ];
    for (first, payload, second, weight, control, message) in variant_cases {
        let mut fields = rollout("50");
        fields.extend([
            ("svCount", "2".to_owned()),
            ("sv0.name", first.to_owned()),
            ("sv0.weight", weight.to_owned()),
            ("sv0.stickiness", "default".to_owned()),
            ("sv0.payloadType", "json".to_owned()),
            ("sv0.payload", payload.to_owned()),
            ("sv1.name", second.to_owned()),
            ("sv1.weight", weight.to_owned()),
            ("sv1.stickiness", "default".to_owned()),
        ]);
        let page = post_owned(&mut browser, create, fields).await;
        refused_beside(&page, control, message);
        assert!(page.has(&format!(">{payload}</textarea>")), "{}", page.text);
    }
    let stored = flag(&server, "checked").await;
    for environment in stored["environments"].as_array().unwrap() {
        assert_eq!(environment["strategies"], json!([]), "nothing stored");
    }
    // A message that names no control still shows, above the form.
    let mut fields = rollout("50");
    fields.push(("title", "t".repeat(101)));
    let page = post_owned(&mut browser, create, fields).await;
    assert_eq!(page.status, 400);
    assert!(page.has("title must be at most 100 characters long"));
}

async fn the_variants_and_segment_forms_show_refusals_beside_their_controls(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "painted").await;
    server
        .post(
            "/api/admin/segments",
            json!({"name": "taken", "constraints": []}),
        )
        .await
        .expect(201);
    let mut browser = signed_in(&server).await;
    let variants = "/projects/default/features/painted/variants";
    let csrf = browser
        .get(&format!("{variants}?environment=development"))
        .await
        .csrf();
    let page = browser
        .post(
            variants,
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("vCount", "2"),
                ("v0.name", "blue"),
                ("v0.stickiness", "default"),
                ("v1.name", "red"),
                ("v1.stickiness", "default"),
                ("v1.payloadType", "json"),
                ("v1.payload", "[1,"),
                ("intent", "save"),
            ],
        )
        .await;
    // The second variant as typed (flag variants are stored sorted, but checked in the order sent).
    refused_beside(&page, "v1-payload", "not valid JSON");
    assert!(page.has(">[1,</textarea>") && page.has("value=\"blue\""));
    assert_eq!(
        flag(&server, "painted").await["environments"][0]["variants"],
        json!([])
    );
    // The segment form: name, a constraint's value, a name clash (409), a project that does not exist.
    let create = "/segments/create";
    let csrf = browser.get(create).await.csrf();
    let segment = |name: &'static str, value: &'static str, project: &'static str| {
        vec![
            ("csrf", csrf.clone()),
            ("name", name.to_owned()),
            ("description", "typed".to_owned()),
            ("project", project.to_owned()),
            ("constraintCount", "1".to_owned()),
            ("c0.contextName", "age".to_owned()),
            ("c0.operator", "NUM_GT".to_owned()),
            ("c0.value", value.to_owned()),
            ("intent", "save".to_owned()),
        ]
    };
    for (fields, control, message, status) in [
        (
            segment("", "18", ""),
            "segment-name",
            "name must be 1 to 100 characters long",
            400,
        ),
        (
            segment("adults", "old", ""),
            "c0-value",
            "“old” is not a number",
            400,
        ),
        (
            segment("adults", "18", "nowhere"),
            "segment-project",
            "project nowhere does not exist",
            400,
        ),
        (
            segment("taken", "18", ""),
            "segment-name",
            "A segment named taken already exists",
            409,
        ),
    ] {
        let mut page = post_owned(&mut browser, create, fields).await;
        assert_eq!(page.status, status, "{}", page.text);
        page.status = 400;
        refused_beside(&page, control, message);
        assert!(page.has(">typed</textarea>"), "{}", page.text);
    }
    let stored = server.get("/api/admin/segments").await;
    assert_eq!(stored.expect(200)["segments"].as_array().unwrap().len(), 1);
}

async fn dependencies_are_added_and_removed_on_the_flag_page(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["parent", "child", "grandchild"] {
        create_flag(&server, name).await;
    }
    let mut browser = signed_in(&server).await;
    let child = "/projects/default/features/child";
    let page = browser.get(child).await;
    let text = page.expect(200);
    for fragment in [
        "<h2 id=\"dependencies-title\">Dependencies</h2>",
        "<label for=\"dependency-parent\">Parent flag</label>",
        "<label for=\"dependency-state\">Parent state</label>",
        "<label for=\"dependency-variants\">Parent variants</label>",
        ">Add dependency</button>",
        "<option value=\"parent\">",
        "This flag depends on no other flag.",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    assert!(!text.contains("<option value=\"child\">"), "not itself");
    let csrf = page.csrf();
    let add = format!("{child}/dependencies");
    // Refusals beside "Parent flag", the form kept, nothing stored.
    for (parent, message) in [
        ("nope", "no flag named nope exists in project default"),
        ("child", "a flag cannot depend on itself"),
    ] {
        let page = browser
            .post(
                &add,
                &[
                    ("csrf", &csrf),
                    ("parent", parent),
                    ("state", "disabled"),
                    ("variants", ""),
                ],
            )
            .await;
        refused_beside(&page, "dependency-parent", message);
        assert!(tag(&page, "dependency-parent").contains(&format!("value=\"{parent}\"")));
        assert!(
            page.has("<option value=\"disabled\" selected>"),
            "{}",
            page.text
        );
        assert_eq!(flag(&server, "child").await["dependencies"], json!([]));
    }
    let page = browser
        .post(
            &add,
            &[
                ("csrf", &csrf),
                ("parent", "parent"),
                ("state", "enabled"),
                ("variants", "<b>blue</b>, red"),
            ],
        )
        .await;
    assert_eq!(page.status, 303, "{}", page.text);
    assert_eq!(
        page.location.as_deref(),
        Some("/projects/default/features/child#dependencies")
    );
    assert_eq!(
        flag(&server, "child").await["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": ["<b>blue</b>", "red"]}])
    );
    let text = browser.page(child).await;
    assert!(
        text.contains("href=\"/projects/default/features/parent\">parent</a>"),
        "{text}"
    );
    assert!(text.contains("<strong>enabled</strong>"));
    assert!(text.contains("&lt;b&gt;blue&lt;/b&gt;, red"), "{text}");
    assert!(!text.contains("<b>blue</b>"), "variant names escaped");
    assert!(
        text.contains("aria-label=\"Remove dependency on parent\""),
        "{text}"
    );
    let parent_page = browser.page("/projects/default/features/parent").await;
    assert!(parent_page.contains("Flags that depend on this one: "));
    assert!(parent_page.contains("href=\"/projects/default/features/child\">child</a>"));
    // The domain's one-level rule: the parent of a flag cannot depend on another, shown on the page.
    let page = browser
        .post(
            "/projects/default/features/parent/dependencies",
            &[
                ("csrf", &csrf),
                ("parent", "grandchild"),
                ("state", "enabled"),
            ],
        )
        .await;
    assert_eq!(page.status, 400);
    assert!(
        page.has("parent is the parent of other flags"),
        "{}",
        page.text
    );
    // A Viewer sees no controls, and a forged post changes nothing.
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "vera", "password": "correct horse battery", "rootRole": "Viewer"}),
        )
        .await
        .expect(201);
    let mut viewer = Browser::new(&server);
    viewer
        .sign_in(&[("username", "vera"), ("password", "correct horse battery")])
        .await;
    let page = viewer.get(child).await;
    let text = page.expect(200);
    assert!(text.contains("Dependencies") && text.contains(">parent</a>"));
    for absent in ["Add dependency", "Remove dependency on", "Parent flag"] {
        assert!(!text.contains(absent), "a Viewer sees {absent}");
    }
    let viewer_csrf = page.csrf();
    let forged = viewer
        .post(
            &format!("{child}/dependencies/remove"),
            &[("csrf", &viewer_csrf), ("parent", "parent")],
        )
        .await;
    forged.expect(403);
    let forged = viewer
        .post(&add, &[("csrf", &viewer_csrf), ("parent", "grandchild")])
        .await;
    forged.expect(403);
    // Without the CSRF token, not even an Admin's post counts.
    let no_token = browser
        .post(
            &format!("{child}/dependencies/remove"),
            &[("parent", "parent")],
        )
        .await;
    no_token.expect(403);
    assert_eq!(
        flag(&server, "child").await["dependencies"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let removed = browser
        .post(
            &format!("{child}/dependencies/remove"),
            &[("csrf", &csrf), ("parent", "parent")],
        )
        .await;
    assert_eq!(removed.status, 303, "{}", removed.text);
    assert_eq!(flag(&server, "child").await["dependencies"], json!([]));
    assert!(browser
        .page(child)
        .await
        .contains("This flag depends on no other flag."));
}

/// A project with more possible parents than the page suggests: the first 100 by name are offered, the hint
/// asks for the name to be typed, and a parent past them is still taken.
async fn a_large_project_suggests_the_first_parents_only(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for index in 0..=101 {
        create_flag(&server, &format!("flag-{index:03}")).await;
    }
    let mut browser = signed_in(&server).await;
    let page = browser.page("/projects/default/features/flag-000").await;
    let datalist = &page[page.find("<datalist").unwrap()..page.find("</datalist>").unwrap()];
    assert_eq!(datalist.matches("<option").count(), 100);
    assert!(datalist.contains("value=\"flag-001\""));
    assert!(!datalist.contains("value=\"flag-000\""), "not itself");
    assert!(!datalist.contains("value=\"flag-101\""));
    assert!(page.contains("type its name (the first 100 by name are suggested)"));
    let csrf = browser
        .get("/projects/default/features/flag-000")
        .await
        .csrf();
    let added = browser
        .post(
            "/projects/default/features/flag-000/dependencies",
            &[
                ("csrf", &csrf),
                ("parent", "flag-101"),
                ("state", "enabled"),
                ("variants", ""),
            ],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.text);
    assert_eq!(
        flag(&server, "flag-000").await["dependencies"][0]["feature"],
        "flag-101"
    );
}

/// Dependencies hold in every environment: with change requests on in one environment of the project, the
/// flag page's add and remove join the signed-in user's draft there, and the request shows the change.
async fn dependency_changes_are_proposed_where_change_requests_are_on(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["parent", "child"] {
        create_flag(&server, name).await;
    }
    server
        .post(
            "/api/admin/projects/default/features/child/dependencies",
            json!({"feature": "parent"}),
        )
        .await
        .expect(200);
    server
        .put(
            "/api/admin/projects/default/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    create_flag(&server, "lone").await;
    let mut browser = signed_in(&server).await;
    let lone = "/projects/default/features/lone";
    let csrf = browser.get(lone).await.csrf();
    let added = browser
        .post(
            &format!("{lone}/dependencies"),
            &[
                ("csrf", &csrf),
                ("parent", "parent"),
                ("state", "enabled"),
                ("variants", "blue"),
            ],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.text);
    let location = added.location.clone().unwrap();
    let id = location
        .strip_prefix(&format!("{lone}?notice=proposed-"))
        .expect("a proposal notice")
        .to_owned();
    assert_eq!(flag(&server, "lone").await["dependencies"], json!([]));
    let removed = browser
        .post(
            "/projects/default/features/child/dependencies/remove",
            &[("csrf", &csrf), ("parent", "parent")],
        )
        .await;
    assert_eq!(
        removed.location.as_deref(),
        Some(format!("/projects/default/features/child?notice=proposed-{id}").as_str()),
        "the same draft"
    );
    assert_eq!(
        flag(&server, "child").await["dependencies"][0]["feature"],
        "parent"
    );
    let request = server
        .get(&format!("/api/admin/projects/default/change-requests/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(request["environment"], "production");
    assert_eq!(
        request["features"][0]["changes"][0]["payload"],
        json!({"feature": "parent", "enabled": true, "variants": ["blue"]})
    );
    assert_eq!(
        request["features"][1]["changes"][0]["payload"],
        json!({"feature": "parent"})
    );
    let page = browser
        .page(&format!("/projects/default/change-requests/{id}"))
        .await;
    assert!(page.contains(">lone</a>: Add a dependency"), "{page}");
    assert!(page.contains(">child</a>: Remove a dependency"), "{page}");
    for line in [
        "dependencies › parent › variants 1: </span><ins class=\"added\"><span class=\"sr-only\">now </span>blue</ins>",
        "dependencies › parent › enabled: </span><del class=\"removed\"><span class=\"sr-only\">was </span>on</del>",
    ] {
        assert!(page.contains(line), "{line} in {page}");
    }
}

/// Every form that redraws itself (rows added or removed, "Update form") has a first submit button that
/// saves, so Enter in a text field saves and never presses "Remove" (a browser presses a form's first submit
/// button); it is out of sight and of the tab order. The buttons that only redraw the form skip the browser's
/// checks of required fields (`formnovalidate`). The browser walk (`edge/tests/e2e/ui.rs`) presses Enter.
async fn enter_saves_and_rebuild_buttons_skip_validation_on_every_rebuilt_form(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "enter").await;
    let mut browser = signed_in(&server).await;
    let flag = "/projects/default/features/enter";
    // Each form drawn with one row of each kind, so that its Remove buttons are there too.
    let csrf = browser.get("/projects/default").await.csrf();
    let strategy_form = browser
        .post(
            &format!("{flag}/strategies/create"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("strategy", "flexibleRollout"),
                ("intent", "add-constraint"),
            ],
        )
        .await;
    let segment_form = browser
        .post(
            "/segments/create",
            &[("csrf", &csrf), ("intent", "add-constraint")],
        )
        .await;
    let variants_form = browser
        .post(
            &format!("{flag}/variants"),
            &[
                ("csrf", &csrf),
                ("environment", "development"),
                ("intent", "add-v"),
            ],
        )
        .await;
    let context_form = browser
        .post(
            "/context/create",
            &[("csrf", &csrf), ("intent", "add-value")],
        )
        .await;
    let definition_form = browser
        .post(
            "/strategies/create",
            &[("csrf", &csrf), ("intent", "add-parameter")],
        )
        .await;
    for (name, page, label) in [
        ("strategy", &strategy_form, "Save strategy"),
        ("segment", &segment_form, "Save segment"),
        ("variants", &variants_form, "Save variants"),
        ("context field", &context_form, "Save context field"),
        ("strategy definition", &definition_form, "Save strategy"),
    ] {
        assert_eq!(page.status, 200, "{name}: {}", page.text);
        let buttons = form_buttons(page);
        let first = &buttons[0];
        for part in [
            "type=\"submit\"",
            "value=\"save\"",
            "tabindex=\"-1\"",
            "aria-hidden=\"true\"",
        ] {
            assert!(first.contains(part), "{name}: the first button {first}");
        }
        assert!(page.has(&format!(">{label}</button>")), "{name}");
        let rebuilding: Vec<&String> = buttons
            .iter()
            .filter(|button| {
                ["value=\"add-", "value=\"remove-", "value=\"refresh\""]
                    .iter()
                    .any(|intent| button.contains(intent))
            })
            .collect();
        assert!(rebuilding.len() >= 2, "{name}: {buttons:?}");
        for button in rebuilding {
            assert!(button.contains("formnovalidate"), "{name}: {button}");
        }
    }
}

/// A NUL character in any posted form (a signed-in form, or the sign-in form itself) is refused with 400 and
/// the domain's message, and nothing is stored: PostgreSQL refuses NUL in text, which answered 500 before.
async fn a_nul_in_a_form_is_refused_and_nothing_is_stored(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = signed_in(&server).await;
    let csrf = browser.get("/segments/create").await.csrf();
    let refused = browser
        .post(
            "/segments/create",
            &[
                ("csrf", &csrf),
                ("name", "beta\0testers"),
                ("description", ""),
            ],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.has("NUL"), "{}", refused.text);
    let segments = server.get("/api/admin/segments").await.expect(200).clone();
    assert_eq!(segments["segments"], json!([]));

    let mut stranger = Browser::new(&server);
    let csrf = stranger.get("/login").await.csrf();
    let refused = stranger
        .post(
            "/login",
            &[("csrf", &csrf), ("username", "an\0na"), ("password", "x")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused
        .set_cookies
        .iter()
        .all(|c| !c.starts_with("vexil-session=")));
}
