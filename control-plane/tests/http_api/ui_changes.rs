//! The change-request pages and the playground over HTTP, through the real binary: a draft made by the
//! switch, submitted, approved by two other Editors (never by its author, never by a Viewer), applied; a
//! change discarded; comments with their validation message and escaping; the open and closed lists; the
//! playground's answer naming the constraint that decided it; an Approved request scheduled from its page
//! (the time in UTC, refusals beside the field), rescheduled, applied on its schedule, and a failed schedule
//! shown with its reason. (The browser walk is `edge/tests/e2e/ui_changes.rs`.)

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    a_change_request_goes_from_draft_to_applied,
    the_playground_names_what_decided,
    closed_requests_come_in_pages,
    a_request_is_scheduled_from_its_page,
);

impl Browser {
    async fn signed_in(server: &Server, username: &str) -> Browser {
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

async fn request_of(server: &Server, id: &str) -> Value {
    server
        .get(&format!("/api/admin/projects/default/change-requests/{id}"))
        .await
        .expect(200)
        .clone()
}

async fn a_change_request_goes_from_draft_to_applied(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["careful", "other"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    server
        .put(
            "/api/admin/projects/default/environments/development/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 2}),
        )
        .await
        .expect(200);
    for (name, role) in [
        ("ed", "Editor"),
        ("ann", "Editor"),
        ("bob", "Editor"),
        ("vera", "Viewer"),
    ] {
        user(&server, name, role).await;
    }
    let list_path = "/projects/default/change-requests";

    let mut ed = Browser::signed_in(&server, "ed").await;
    let empty = ed.get(list_path).await;
    assert!(empty
        .expect(200)
        .contains("No open change requests in this project."));
    assert!(empty.has("aria-current=\"page\">Change requests</a>"));
    let csrf = empty.csrf();
    let mut id = String::new();
    for flag in ["careful", "other"] {
        let switched = ed
            .post(
                &format!("/projects/default/features/{flag}/environments/development/switch"),
                &[
                    ("csrf", &csrf),
                    ("enabled", "true"),
                    ("back", "/projects/default"),
                ],
            )
            .await;
        assert_eq!(switched.status, 303, "{}", switched.text);
        let location = switched.location.clone().unwrap();
        id = location
            .strip_prefix("/projects/default?notice=proposed-")
            .expect("a proposal notice")
            .to_owned();
        let notice = ed.get(&location).await;
        assert!(
            notice.has(&format!(
                "<a href=\"/projects/default/change-requests/{id}\">Open change request #{id}</a>"
            )),
            "{}",
            notice.text
        );
    }
    let page_path = format!("{list_path}/{id}");

    let list = ed.get(list_path).await;
    let text = list.expect(200);
    let link = format!("href=\"/projects/default/change-requests/{id}\">Change request #{id}</a>");
    for fragment in [
        link.as_str(),
        ">Draft</span>",
        "<td>development</td>",
        "<td class=\"hide-narrow\">ed</td>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    assert!(ed
        .get(&format!("{list_path}?view=closed"))
        .await
        .has("No closed change requests"));

    // The draft: each change as the difference from the flag's current state; the author's actions.
    let page = ed.get(&page_path).await;
    let text = page.expect(200);
    assert!(
        text.contains("enabled: </span><del class=\"removed\"><span class=\"sr-only\">was </span>off</del> → <ins class=\"added\"><span class=\"sr-only\">now </span>on</ins>"),
        "{text}"
    );
    assert!(text.contains(">careful</a>: Turn on"), "{text}");
    assert!(text.contains(">Submit for review</button>"), "{text}");
    assert!(text.contains(">Cancel</button>"), "{text}");
    assert!(!text.contains(">Approve</button>"), "{text}");
    assert!(!text.contains(">Apply</button>"), "{text}");

    // Discarding the second change.
    let request = request_of(&server, &id).await;
    let other_change = request["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|feature| feature["name"] == "other")
        .expect("the change to other")["changes"][0]["id"]
        .to_string();
    let csrf = page.csrf();
    let discarded = ed
        .post(
            &format!("{page_path}/changes/{other_change}/discard"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(discarded.status, 303, "{}", discarded.text);
    let request = request_of(&server, &id).await;
    assert_eq!(request["features"].as_array().unwrap().len(), 1);
    assert_eq!(request["features"][0]["name"], "careful");

    // Comments: an empty one is refused beside the field and nothing is stored; text is shown as text.
    let refused = ed
        .post(
            &format!("{page_path}/comments"),
            &[("csrf", &csrf), ("text", "  ")],
        )
        .await;
    assert!(
        refused
            .expect(400)
            .contains("id=\"comment-error\" aria-live=\"polite\">text must not be empty</p>"),
        "{}",
        refused.text
    );
    assert_eq!(request_of(&server, &id).await["comments"], json!([]));
    let commented = ed
        .post(
            &format!("{page_path}/comments"),
            &[
                ("csrf", &csrf),
                ("text", "<script>alert(1)</script> please"),
            ],
        )
        .await;
    assert_eq!(commented.status, 303, "{}", commented.text);
    let page = ed.get(&page_path).await;
    assert!(
        page.has("&lt;script&gt;alert(1)&lt;/script&gt; please"),
        "{}",
        page.text
    );
    assert!(!page.has("<script>alert(1)"));

    let submitted = ed
        .post(
            &format!("{page_path}/state"),
            &[("csrf", &csrf), ("state", "In review")],
        )
        .await;
    assert_eq!(submitted.status, 303, "{}", submitted.text);
    assert_eq!(request_of(&server, &id).await["state"], "In review");
    let page = ed.get(&page_path).await;
    assert!(page.has(">In review</span>"));
    assert!(
        !page.has(">Approve</button>"),
        "the author sees Approve: {}",
        page.text
    );
    assert!(page.has(">Reject</button>") && page.has(">Cancel</button>"));
    // The author's forged approval: the API's 403, on the request's page, and nothing recorded.
    let forged = ed
        .post(
            &format!("{page_path}/state"),
            &[("csrf", &csrf), ("state", "Approved")],
        )
        .await;
    assert!(
        forged.expect(403).contains("its author cannot approve it"),
        "{}",
        forged.text
    );
    assert_eq!(request_of(&server, &id).await["approvals"], json!([]));

    let mut ann = Browser::signed_in(&server, "ann").await;
    let page = ann.get(&page_path).await;
    assert!(page.has(">Approve</button>"), "{}", page.text);
    assert!(!page.has(">Apply</button>"));
    let approved = ann
        .post(
            &format!("{page_path}/state"),
            &[("csrf", &page.csrf()), ("state", "Approved")],
        )
        .await;
    assert_eq!(approved.status, 303, "{}", approved.text);
    let page = ann.get(&page_path).await;
    assert!(page.has("<p>1 of 2 required</p>"), "{}", page.text);
    assert!(page.has("Approved by <strong>ann</strong>"));
    assert!(!page.has(">Approve</button>"), "approving twice is offered");

    // A Viewer sees the request and no control; a forged post is refused.
    let mut vera = Browser::signed_in(&server, "vera").await;
    let page = vera.get(&page_path).await;
    let text = page.expect(200);
    for absent in [
        "name=\"state\"",
        ">Add comment</button>",
        ">Discard</button>",
    ] {
        assert!(!text.contains(absent), "a Viewer sees {absent}");
    }
    let forged = vera
        .post(
            &format!("{page_path}/state"),
            &[("csrf", &page.csrf()), ("state", "Approved")],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.text);
    assert_eq!(
        request_of(&server, &id).await["approvals"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let mut bob = Browser::signed_in(&server, "bob").await;
    let page = bob.get(&page_path).await;
    let approved = bob
        .post(
            &format!("{page_path}/state"),
            &[("csrf", &page.csrf()), ("state", "Approved")],
        )
        .await;
    assert_eq!(approved.status, 303, "{}", approved.text);
    assert_eq!(request_of(&server, &id).await["state"], "Approved");

    let page = ed.get(&page_path).await;
    assert!(page.has(">Apply</button>"), "{}", page.text);
    let flag_before = server
        .get("/api/admin/projects/default/features/careful")
        .await;
    assert_eq!(flag_before.expect(200)["environments"][0]["enabled"], false);
    let applied = ed
        .post(
            &format!("{page_path}/state"),
            &[("csrf", &csrf), ("state", "Applied")],
        )
        .await;
    assert_eq!(applied.status, 303, "{}", applied.text);
    let flag_after = server
        .get("/api/admin/projects/default/features/careful")
        .await;
    let flag_after = flag_after.expect(200);
    assert_eq!(flag_after["environments"][0]["name"], "development");
    assert_eq!(flag_after["environments"][0]["enabled"], true);
    let page = ed.get(&page_path).await;
    assert!(page.has(">Applied</span>"));
    assert!(
        page.has("What it proposed:</p><ul class=\"diff\" aria-label=\"What changed\"><li><span class=\"diff-path\">enabled: </span><ins class=\"added\"><span class=\"sr-only\">now </span>on</ins>"),
        "{}",
        page.text
    );
    assert!(
        !page.has("name=\"state\""),
        "a final request offers actions"
    );

    assert!(ed.get(list_path).await.has("No open change requests"));
    let closed = ed.get(&format!("{list_path}?view=closed")).await;
    assert!(
        closed.expect(200).contains(">Applied</span>"),
        "{}",
        closed.text
    );
    assert!(closed.has(&format!(">Change request #{id}</a>")));

    assert_eq!(ed.get(&format!("{list_path}/999")).await.status, 404);
    assert_eq!(ed.get(&format!("{list_path}/abc")).await.status, 404);
    assert_eq!(
        ed.get("/projects/nowhere/change-requests").await.status,
        404
    );
}

async fn the_playground_names_what_decided(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let flag = "/api/admin/projects/default/features";
    server
        .post(flag, json!({"name": "nordic"}))
        .await
        .expect(201);
    server
        .post(
            &format!("{flag}/nordic/environments/development/strategies"),
            json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": "100", "stickiness": "default", "groupId": "nordic"},
                "constraints": [{"contextName": "country", "operator": "IN", "values": ["NO"]}]
            }),
        )
        .await
        .expect(200);
    server
        .post_empty(&format!("{flag}/nordic/environments/development/on"))
        .await
        .expect(200);
    let mut browser = Browser::new(&server);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/playground")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);

    let empty = browser.get("/playground").await;
    let text = empty.expect(200);
    for fragment in [
        "<label for=\"environment\">Environment</label>",
        "<label for=\"userId\">User ID</label>",
        "<label for=\"appName\">Application</label>",
        "<legend>Projects</legend>",
        ">Add property</button>",
        ">Evaluate</button>",
        "press Evaluate",
        "name=\"appName\" value=\"playground\"",
        "aria-current=\"page\">Playground</a>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    assert!(!text.contains("Property name"));

    let added = browser
        .get("/playground?environment=development&appName=playground&action=add")
        .await;
    let text = added.expect(200);
    assert!(
        text.contains("<label for=\"property-name-0\">Property name</label>"),
        "{text}"
    );
    assert!(text.contains("<label for=\"property-value-0\">Property value</label>"));
    let again = browser
        .get("/playground?environment=development&appName=playground&propertyName=a&propertyValue=b&action=add")
        .await;
    assert!(again.has("id=\"property-name-1\""));
    assert!(again.has("name=\"propertyName\" value=\"a\""));

    let query = |country: &str| {
        format!(
            "/playground?environment=development&userId=u1&appName=playground&propertyName=country&propertyValue={country}&action=evaluate"
        )
    };
    let on = browser.get(&query("NO")).await;
    let text = on.expect(200);
    assert!(text.contains("1 flag in development, 1 on"), "{text}");
    assert!(
        text.contains("<span class=\"badge answer-on\">On</span>"),
        "{text}"
    );
    assert!(
        text.contains("Matched: decided by “country is one of NO” (true)"),
        "{text}"
    );
    let off = browser.get(&query("SE")).await;
    let text = off.expect(200);
    assert!(
        text.contains("<span class=\"badge answer-off\">Off</span>"),
        "{text}"
    );
    assert!(
        text.contains("Not matched: decided by “country is one of NO” (false)"),
        "{text}"
    );

    // What was typed comes back as text.
    let typed = browser.get(&query("%3Cscript%3Ex%3C%2Fscript%3E")).await;
    assert!(
        typed
            .expect(200)
            .contains("value=\"&lt;script&gt;x&lt;/script&gt;\""),
        "{}",
        typed.text
    );
    assert!(!typed.has("<script>x"));

    // Refusals: beside the field, with what was typed kept.
    let no_app = browser
        .get("/playground?environment=development&appName=&userId=kept&action=evaluate")
        .await;
    let text = no_app.expect(400);
    assert!(
        text.contains("id=\"appName-error\" aria-live=\"polite\">Application is required</p>"),
        "{text}"
    );
    assert!(text.contains("name=\"userId\" value=\"kept\""));
    let nameless = browser
        .get("/playground?environment=development&appName=a&propertyName=&propertyValue=NO&action=evaluate")
        .await;
    assert!(
        nameless.expect(400).contains(
            "id=\"property-name-0-error\" aria-live=\"polite\">A property needs a name</p>"
        ),
        "{}",
        nameless.text
    );
}

async fn closed_requests_come_in_pages(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "busy"}),
        )
        .await
        .expect(201);
    server
        .put(
            "/api/admin/projects/default/environments/development/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    // 26 drafts, each cancelled (the next change then starts a new draft).
    for _ in 0..26 {
        let draft = server
            .post(
                "/api/admin/projects/default/environments/development/change-requests",
                json!({"feature": "busy", "action": "updateEnabled", "payload": {"enabled": true}}),
            )
            .await;
        let id = draft.expect(200)["id"].clone();
        server
            .put(
                &format!("/api/admin/projects/default/change-requests/{id}/state"),
                json!({"state": "Cancelled"}),
            )
            .await
            .expect(200);
    }
    let mut browser = Browser::new(&server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert!(browser
        .get("/projects/default/change-requests")
        .await
        .has("No open change requests"));
    let first = browser
        .get("/projects/default/change-requests?view=closed")
        .await;
    let text = first.expect(200);
    assert!(text.contains("Showing 1–25 of 26"), "{text}");
    assert_eq!(text.matches(">Cancelled</span>").count(), 25);
    assert!(
        text.contains(">Change request #26</a>"),
        "newest first: {text}"
    );
    assert!(text.contains(
        "href=\"/projects/default/change-requests?view=closed&amp;page=2\">Next page</a>"
    ));
    let second = browser
        .get("/projects/default/change-requests?view=closed&page=2")
        .await;
    let text = second.expect(200);
    assert!(text.contains("Showing 26–26 of 26"), "{text}");
    assert!(text.contains(">Change request #1</a>"), "{text}");
    assert!(text.contains(">Previous page</a>"));
    // The playground with a project that has no flags.
    let none = browser
        .get("/playground?environment=development&appName=a&projects=nowhere&action=evaluate")
        .await;
    assert!(
        none.expect(200)
            .contains("No flags in the chosen projects."),
        "{}",
        none.text
    );
}

/// `now + seconds` as a `datetime-local` control sends it, in UTC, and as the API then shows it.
fn local_in(seconds: i64) -> (String, String) {
    let at = chrono::Utc::now() + chrono::TimeDelta::seconds(seconds);
    (
        at.format("%Y-%m-%dT%H:%M:%S").to_string(),
        at.format("%Y-%m-%dT%H:%M:%S.000Z").to_string(),
    )
}

async fn a_request_is_scheduled_from_its_page(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["careful", "gone"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    let strategies =
        "/api/admin/projects/default/features/gone/environments/development/strategies";
    let strategy = server
        .post(strategies, json!({"name": "default"}))
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let config = "/api/admin/projects/default/environments/development/change-requests/config";
    server
        .put(
            config,
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    for (name, role) in [("ed", "Editor"), ("ann", "Editor"), ("vera", "Viewer")] {
        user(&server, name, role).await;
    }
    let changes = "/api/admin/projects/default/environments/development/change-requests";
    let mut ids = Vec::new();
    for change in [
        json!({"feature": "careful", "action": "updateEnabled", "payload": {"enabled": true}}),
        json!({"feature": "gone", "action": "deleteStrategy", "payload": {"id": strategy}}),
    ] {
        let id = server.post(changes, change).await.expect(200)["id"].to_string();
        server
            .put(
                &format!("/api/admin/projects/default/change-requests/{id}/state"),
                json!({"state": "In review"}),
            )
            .await
            .expect(200);
        ids.push(id);
    }
    let mut ann = Browser::signed_in(&server, "ann").await;
    for id in &ids {
        let path = format!("/projects/default/change-requests/{id}");
        let csrf = ann.get(&path).await.csrf();
        let approved = ann
            .post(
                &format!("{path}/state"),
                &[("csrf", &csrf), ("state", "Approved")],
            )
            .await;
        assert_eq!(approved.status, 303, "{}", approved.text);
    }
    let (id, doomed) = (&ids[0], &ids[1]);
    let page_path = format!("/projects/default/change-requests/{id}");

    // An Approved request offers the form, its time in UTC; a Viewer sees none.
    let mut ed = Browser::signed_in(&server, "ed").await;
    let page = ed.get(&page_path).await;
    let text = page.expect(200);
    for fragment in [
        "<h2 id=\"schedule-title\">Schedule</h2>",
        "<label for=\"scheduled-at\">Date and time (UTC)</label>",
        "In UTC (Coordinated Universal Time), not your own time zone",
        "type=\"datetime-local\" name=\"scheduledAt\"",
        ">Schedule</button>",
        ">Apply</button>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let mut vera = Browser::signed_in(&server, "vera").await;
    assert!(!vera.get(&page_path).await.has("name=\"scheduledAt\""));

    // Refusals beside the field, with what was typed.
    let csrf = page.csrf();
    let schedule_path = format!("{page_path}/schedule");
    for (typed, message) in [
        ("soon", "is not an RFC 3339 date-time"),
        ("2020-01-01T10:00", "is not in the future"),
    ] {
        let refused = ed
            .post(&schedule_path, &[("csrf", &csrf), ("scheduledAt", typed)])
            .await;
        let text = refused.expect(400);
        assert!(text.contains(message), "{message} in {text}");
        assert!(
            text.contains("id=\"scheduled-at-error\" aria-live=\"polite\">scheduledAt:"),
            "{text}"
        );
        assert!(text.contains(&format!("value=\"{typed}\"")), "{text}");
    }
    assert_eq!(request_of(&server, id).await["state"], "Approved");

    // Scheduled an hour ahead, then rescheduled a few seconds ahead: applied, and the page says so.
    let (typed, at) = local_in(3600);
    let scheduled = ed
        .post(&schedule_path, &[("csrf", &csrf), ("scheduledAt", &typed)])
        .await;
    assert_eq!(scheduled.status, 303, "{}", scheduled.text);
    let request = request_of(&server, id).await;
    assert_eq!(request["state"], "Scheduled");
    assert_eq!(request["schedule"]["scheduledAt"], at.as_str());
    let page = ed.get(&page_path).await;
    let text = page.expect(200);
    let shown = format!("{} UTC", at[..19].replace('T', " "));
    for fragment in [
        format!("To be applied at <strong>{shown}</strong>, as ed"),
        ">Reschedule</button>".to_owned(),
        ">Cancel schedule</button>".to_owned(),
        ">Apply</button>".to_owned(),
        ">Reject</button>".to_owned(),
        format!("value=\"{typed}\""),
    ] {
        assert!(text.contains(&fragment), "{fragment} in {text}");
    }
    assert!(!text.contains(">Cancel</button>"), "{text}");
    let (typed, at) = local_in(2);
    let moved = ed
        .post(&schedule_path, &[("csrf", &csrf), ("scheduledAt", &typed)])
        .await;
    assert_eq!(moved.status, 303, "{}", moved.text);
    assert_eq!(
        request_of(&server, id).await["schedule"]["scheduledAt"],
        at.as_str()
    );

    // The other one fails: its strategy is deleted before its time.
    let doomed_path = format!("/projects/default/change-requests/{doomed}");
    let csrf = ed.get(&doomed_path).await.csrf();
    let (typed, _) = local_in(2);
    let scheduled = ed
        .post(
            &format!("{doomed_path}/schedule"),
            &[("csrf", &csrf), ("scheduledAt", &typed)],
        )
        .await;
    assert_eq!(scheduled.status, 303, "{}", scheduled.text);
    server
        .put(config, json!({"changeRequestsEnabled": false}))
        .await
        .expect(200);
    server
        .delete(&format!("{strategies}/{strategy}"))
        .await
        .expect(200);

    let started = std::time::Instant::now();
    loop {
        let applied = request_of(&server, id).await["state"] == "Applied";
        let failed = request_of(&server, doomed).await["schedule"]["status"] == "failed";
        if applied && failed {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 20,
            "not applied and failed in time"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let page = ed.get(&page_path).await;
    assert!(page.has("Applied on schedule at <strong>"), "{}", page.text);
    let page = ed.get(&doomed_path).await;
    let text = page.expect(200);
    for fragment in [
        "<strong>The schedule failed</strong>",
        "deleteStrategy",
        ">Reschedule</button>",
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
}
