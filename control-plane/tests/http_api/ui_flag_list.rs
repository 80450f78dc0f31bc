//! The flag list and a flag's page at a glance (issue 30 §6), over HTTP through the real binary: what each
//! environment serves in a few words ("50% · 2 constraints"), a "change pending" badge linking to the change
//! request that waits there, who changed a flag last and when (and the sort by it, in the UI and the search
//! API), and a flag's tags added and removed on its page (a refused value keeps what was typed; a Viewer is
//! refused). (The browser walk is `edge/tests/e2e/ui_flag_list.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    the_list_sums_up_each_environment_and_who_changed_a_flag_last,
    tags_are_added_and_removed_on_the_flag_page,
);

async fn signed_in(server: &Server, fields: &[(&str, &str)]) -> Browser {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(fields).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    browser
}

async fn user(server: &Server, username: &str, role: &str) {
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": username, "password": "correct horse battery", "rootRole": role}),
        )
        .await
        .expect(201);
}

async fn flag(server: &Server, name: &str, environment: &str, strategies: &[Value], on: bool) {
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": name}),
        )
        .await
        .expect(201);
    let at = format!("/api/admin/projects/default/features/{name}/environments/{environment}");
    for strategy in strategies {
        server
            .post(&format!("{at}/strategies"), strategy.clone())
            .await
            .expect(200);
    }
    if on {
        server.post_empty(&format!("{at}/on")).await.expect(200);
    }
}

/// The row of `flag` in the list.
fn row<'a>(page: &'a str, flag: &str) -> &'a str {
    let start = page
        .find(&format!(">{flag}</a>"))
        .unwrap_or_else(|| panic!("{flag} in {page}"));
    let end = start + page[start..].find("</tr>").expect("the row's end");
    &page[start..end]
}

/// The cell labelled `label` (an environment, "Last changed") of a row.
fn cell<'a>(row: &'a str, label: &str) -> &'a str {
    let start = row
        .find(&format!("data-label=\"{label}\""))
        .unwrap_or_else(|| panic!("{label} in {row}"));
    let end = start + row[start..].find("</td>").expect("the cell's end");
    &row[start..end]
}

/// The flags' names in the list's order.
fn order(page: &str) -> Vec<String> {
    // Each name cell holds the flag's star (a form, for a signed-in user) and then its link.
    page.split("<td class=\"flag-name\">")
        .skip(1)
        .map(|cell| {
            let link = &cell[cell.find("<a href=\"").unwrap()..];
            let name = &link[link.find('>').unwrap() + 1..];
            name[..name.find('<').unwrap()].to_owned()
        })
        .collect()
}

async fn the_list_sums_up_each_environment_and_who_changed_a_flag_last(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let rollout = json!({"name": "flexibleRollout",
        "parameters": {"rollout": "50", "stickiness": "default", "groupId": "half"},
        "constraints": [
            {"contextName": "country", "operator": "IN", "values": ["NO", "SE"]},
            {"contextName": "userId", "operator": "IN", "values": ["anna"]}]});
    flag(&server, "half", "development", &[rollout], true).await;
    let standard = json!({"name": "default"});
    let three = [standard.clone(), standard.clone(), standard];
    flag(&server, "three", "development", &three, true).await;
    flag(&server, "plain", "development", &[], false).await;
    user(&server, "anna", "Editor").await;
    server
        .put(
            "/api/admin/projects/default/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);

    let mut anna = signed_in(
        &server,
        &[("username", "anna"), ("password", "correct horse battery")],
    )
    .await;
    // anna switches plain on in development (made), and half on in production (a change request draft).
    let list = anna.get("/projects/default").await;
    let csrf = list.csrf();
    let switched = anna
        .post(
            "/projects/default/features/plain/environments/development/switch",
            &[
                ("csrf", &csrf),
                ("enabled", "true"),
                ("back", "/projects/default"),
            ],
        )
        .await;
    assert_eq!(switched.status, 303, "{}", switched.text);
    let proposed = anna
        .post(
            "/projects/default/features/half/environments/production/switch",
            &[
                ("csrf", &csrf),
                ("enabled", "true"),
                ("back", "/projects/default"),
            ],
        )
        .await;
    let location = proposed.location.expect("a redirect");
    let id = location
        .split("notice=proposed-")
        .nth(1)
        .unwrap_or_else(|| panic!("a draft: {location}"))
        .to_owned();

    let page = anna.page("/projects/default?sort=name").await;
    assert_eq!(order(&page), ["half", "plain", "three"]);
    assert!(page.contains(">Last changed</th>"), "{page}");
    let half = row(&page, "half");
    assert!(
        cell(half, "development").contains("<span class=\"served\">50% · 2 constraints</span>"),
        "{half}"
    );
    let production = cell(half, "production");
    assert!(
        production.contains("<span class=\"served\">off</span>"),
        "{production}"
    );
    assert!(
        production.contains(&format!(
            "href=\"/projects/default/change-requests/{id}\">change pending<span class=\"sr-only\"> (change request #{id} for half in production)</span>"
        )),
        "{production}"
    );
    assert!(
        !cell(half, "development").contains("change pending"),
        "{half}"
    );
    let three = row(&page, "three");
    assert!(
        cell(three, "development").contains(">3 strategies<"),
        "{three}"
    );
    let plain = row(&page, "plain");
    assert!(
        cell(plain, "development").contains(">on for everyone<"),
        "{plain}"
    );
    let changed = cell(plain, "Last changed");
    assert!(
        changed.contains("<span class=\"changed-by\">anna</span> · <time datetime=\""),
        "{changed}"
    );
    assert!(
        changed.contains("title=\"") && changed.contains(" UTC\">just now</time>"),
        "{changed}"
    );
    assert!(!cell(three, "Last changed").contains("anna"), "{three}");

    // Last changed first: plain (switched last by anna); the search API sorts the same way.
    let page = anna.page("/projects/default?sort=changed").await;
    assert_eq!(order(&page)[0], "plain");
    assert!(
        page.contains("<option value=\"changed\" selected>Last changed</option>"),
        "{page}"
    );
    let searched = |order: &'static str| {
        let server = &server;
        async move {
            let found = server
                .get(&format!(
                    "/api/admin/search/features?project=IS:default&sortBy=updatedAt&sortOrder={order}"
                ))
                .await;
            let body = found.expect(200).clone();
            body["features"]
                .as_array()
                .unwrap()
                .iter()
                .map(|flag| flag["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(searched("desc").await, ["plain", "three", "half"]);
    assert_eq!(searched("asc").await, ["half", "three", "plain"]);
    // The pending request in the search API, as Unleash names it.
    let found = server
        .get("/api/admin/search/features?query=half")
        .await
        .expect(200)
        .clone();
    let environments = found["features"][0]["environments"]
        .as_array()
        .unwrap()
        .clone();
    let production = environments
        .iter()
        .find(|environment| environment["name"] == "production")
        .unwrap();
    assert_eq!(
        production["changeRequestIds"],
        json!([id.parse::<i64>().unwrap()])
    );

    // The flag's page: the same summary at the top of each environment, with the badge.
    let flag_page = anna.page("/projects/default/features/half").await;
    assert!(
        flag_page.contains(
            "<p class=\"env-summary\"><span class=\"served\">50% · 2 constraints</span></p>"
        ),
        "{flag_page}"
    );
    assert!(
        flag_page.contains(
            "<p class=\"env-summary\"><span class=\"served\">off</span><a class=\"badge pending\""
        ),
        "{flag_page}"
    );
    // Once the request is cancelled, nothing waits any more.
    server
        .put(
            &format!("/api/admin/projects/default/change-requests/{id}/state"),
            json!({"state": "Cancelled"}),
        )
        .await
        .expect(200);
    let page = anna.page("/projects/default").await;
    assert!(!page.contains("change pending"), "{page}");
}

async fn tags_are_added_and_removed_on_the_flag_page(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    flag(&server, "tagged", "development", &[], false).await;
    user(&server, "vera", "Viewer").await;
    let mut admin = signed_in(&server, &[("token", ADMIN_TOKEN)]).await;
    let path = "/projects/default/features/tagged";
    let page = admin.get(path).await;
    let text = page.expect(200);
    assert!(text.contains("<h2 id=\"tags-title\">Tags</h2>"), "{text}");
    assert!(text.contains("No tags yet."), "{text}");
    assert!(
        text.contains("<option value=\"simple\" selected>simple</option>"),
        "{text}"
    );
    let csrf = page.csrf();

    let added = admin
        .post(
            &format!("{path}/tags"),
            &[("csrf", &csrf), ("type", "simple"), ("value", " beta ")],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.text);
    assert_eq!(added.location.as_deref(), Some(&*format!("{path}#tags")));
    let page = admin.page(path).await;
    assert!(page.contains("Tag simple:beta added to tagged."), "{page}");
    assert!(
        page.contains("aria-label=\"Remove tag simple:beta\""),
        "{page}"
    );
    let tags = server.get("/api/admin/features/tagged/tags").await;
    let tags = &tags.expect(200)["tags"];
    assert_eq!(
        (&tags[0]["type"], &tags[0]["value"]),
        (&json!("simple"), &json!("beta"))
    );
    assert_eq!(tags.as_array().unwrap().len(), 1);
    assert!(list_shows_tag(&mut admin, "simple:beta").await);

    // A refused value: the page again, with what was typed and the message beside the field.
    let refused = admin
        .post(
            &format!("{path}/tags"),
            &[("csrf", &csrf), ("type", "simple"), ("value", "x")],
        )
        .await;
    let text = refused.expect(400);
    assert!(text.contains("name=\"value\" value=\"x\""), "{text}");
    assert!(text.contains("aria-invalid=\"true\""), "{text}");
    assert!(
        text.contains("<p class=\"field-error\" id=\"tag-value-error\" aria-live=\"polite\">value must be 2 to 50 characters long</p>"),
        "{text}"
    );

    // A Viewer sees the tags without any control, and a forged post is refused.
    let mut vera = signed_in(
        &server,
        &[("username", "vera"), ("password", "correct horse battery")],
    )
    .await;
    let seen = vera.get(path).await;
    assert!(seen.has("simple:beta"));
    for absent in ["Add tag", "Remove tag"] {
        assert!(!seen.has(absent), "a Viewer sees {absent}");
    }
    let forged = vera
        .post(
            &format!("{path}/tags/remove"),
            &[
                ("csrf", &seen.csrf()),
                ("type", "simple"),
                ("value", "beta"),
            ],
        )
        .await;
    assert!(forged
        .expect(403)
        .contains("You need the UPDATE_FEATURE permission in project default"));

    let removed = admin
        .post(
            &format!("{path}/tags/remove"),
            &[("csrf", &csrf), ("type", "simple"), ("value", "beta")],
        )
        .await;
    assert_eq!(removed.status, 303, "{}", removed.text);
    let page = admin.page(path).await;
    assert!(
        page.contains("Tag simple:beta removed from tagged."),
        "{page}"
    );
    assert!(page.contains("No tags yet."), "{page}");
    let tags = server.get("/api/admin/features/tagged/tags").await;
    assert_eq!(tags.expect(200)["tags"], json!([]));
}

/// Whether the flag list shows the tag.
async fn list_shows_tag(browser: &mut Browser, tag: &str) -> bool {
    let list = browser.page("/projects/default").await;
    list.contains(&format!("<span class=\"tag\">{tag}</span>"))
}
