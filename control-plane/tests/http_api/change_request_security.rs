//! What change requests protect, through the real binary on SQLite and Postgres (issue 29 §1): whoever adds,
//! edits or discards a change becomes one of the request's authors and may not approve it; only Admins
//! switch change requests on or off (API and UI); a segment used where change requests are on changes only
//! through a change request of the place it belongs to, and applying one changes what the SDKs are served.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Answer, Server, ADMIN_TOKEN, CLIENT_TOKEN};
use crate::ui_browser::{Browser, Html};
use serde_json::{json, Value};
use std::time::Duration;

crate::on_sqlite_and_postgres!(
    whoever_changes_a_request_becomes_an_author,
    only_admins_configure_change_requests,
    segment_edits_in_protected_environments_go_through_change_requests,
    a_segment_change_belongs_to_its_strictest_protected_place,
);

const PROJECT: &str = "/api/admin/projects/default";
const FLAG: &str = "/api/admin/projects/default/features/checkout";
const DEV: &str = "/api/admin/projects/default/features/checkout/environments/development";
const CONFIG_DEV: &str =
    "/api/admin/projects/default/environments/development/change-requests/config";
const CHANGES_DEV: &str = "/api/admin/projects/default/environments/development/change-requests";

fn request_path(id: i64) -> String {
    format!("{PROJECT}/change-requests/{id}")
}

async fn as_user(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
    pat: &str,
) -> Answer {
    server.send(method, path, body, Some(pat)).await
}

async fn set_state(server: &Server, id: i64, state: &str, pat: &str) -> Answer {
    let path = format!("{}/state", request_path(id));
    as_user(server, "PUT", &path, Some(json!({"state": state})), pat).await
}

async fn event_count(server: &Server) -> i64 {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap()
}

async fn latest_event(server: &Server, event_type: &str) -> Value {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1"))
        .await
        .expect(200)["events"][0]
        .clone()
}

async fn configure(server: &Server, project: &str, environment: &str, approvals: i64) {
    server
        .put(
            &format!(
                "/api/admin/projects/{project}/environments/{environment}/change-requests/config"
            ),
            json!({"changeRequestsEnabled": true, "requiredApprovals": approvals}),
        )
        .await
        .expect(200);
}

fn usernames(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|principal| principal["username"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// A browser signed in as `username` (password "correct horse battery", as `user_with_pat` sets it).
async fn browser_of(server: &Server, username: &str) -> Browser {
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

/// Issue 29 §1.1: Editor B edits Editor A's change under review: B is an author from then on (on the change,
/// in `authors`, on the page, in the event) and may not approve; editing or discarding a change of an
/// Approved request sends it back to In review with no approvals.
async fn whoever_changes_a_request_becomes_an_author(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(&format!("{PROJECT}/features"), json!({"name": "checkout"}))
        .await
        .expect(201);
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
    configure(&server, "default", "development", 1).await;
    let (alice_id, alice) = user_with_pat(&server, "alice", "Editor").await;
    let (bob_id, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (_, carol) = user_with_pat(&server, "carol", "Admin").await;
    let (_, dave) = user_with_pat(&server, "dave", "Editor").await;

    let draft = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": false}})),
        &alice,
    )
    .await
    .expect(200)
    .clone();
    let id = draft["id"].as_i64().unwrap();
    let change = draft["features"][0]["changes"][0]["id"].as_i64().unwrap();
    assert_eq!(
        draft["authors"],
        json!([{"id": alice_id, "username": "alice"}])
    );
    set_state(&server, id, "In review", &alice)
        .await
        .expect(200);

    // Bob rewrites alice's change into an archive: it is his now, and he is an author.
    let change_path = format!("{}/changes/{change}", request_path(id));
    let edited = as_user(
        &server,
        "PUT",
        &change_path,
        Some(json!({"feature": "checkout", "action": "archiveFeature"})),
        &bob,
    )
    .await
    .expect(200)
    .clone();
    assert_eq!(
        edited["features"][0]["changes"][0]["createdBy"],
        json!({"id": bob_id, "username": "bob"})
    );
    assert_eq!(
        edited["createdBy"]["username"], "alice",
        "the request stays alice's"
    );
    assert_eq!(usernames(&edited["authors"]), ["alice", "bob"]);
    let event = latest_event(&server, "change-edited").await;
    assert_eq!(event["createdBy"], "bob");
    assert_eq!(event["data"]["changeRequestId"], id);

    // So bob cannot approve it (nor, therefore, apply it alone): the flag stays as it is.
    let message = set_state(&server, id, "Approved", &bob)
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("author"), "{message}");
    let request = server.get(&request_path(id)).await.expect(200).clone();
    assert_eq!(request["state"], "In review");
    assert_eq!(request["approvals"], json!([]));
    set_state(&server, id, "Applied", &bob)
        .await
        .expect_error(400, "ValidationError");
    let flag = server.get(FLAG).await.expect(200).clone();
    assert_eq!(flag["archived"], false, "{flag}");
    assert_eq!(flag["environments"][0]["enabled"], true);

    // Carol approves; dave edits the Approved request: back to In review, approvals reset, dave an author.
    assert_eq!(
        set_state(&server, id, "Approved", &carol).await.expect(200)["state"],
        "Approved"
    );
    let back = as_user(
        &server,
        "PUT",
        &change_path,
        Some(json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": false}})),
        &dave,
    )
    .await
    .expect(200)
    .clone();
    assert_eq!(back["state"], "In review");
    assert_eq!(back["approvals"], json!([]));
    assert_eq!(usernames(&back["authors"]), ["alice", "bob", "dave"]);
    set_state(&server, id, "Approved", &dave)
        .await
        .expect_error(403, "NoAccessError");

    // Discarding is changing too: carol approves, then erin discards the change: In review, erin an author.
    set_state(&server, id, "Approved", &carol).await.expect(200);
    let (_, erin) = user_with_pat(&server, "erin", "Editor").await;
    let discarded = as_user(&server, "DELETE", &change_path, None, &erin)
        .await
        .expect(200)
        .clone();
    assert_eq!(discarded["state"], "In review");
    assert_eq!(discarded["approvals"], json!([]));
    assert_eq!(
        usernames(&discarded["authors"]),
        ["alice", "bob", "dave", "erin"]
    );
    assert_eq!(
        latest_event(&server, "change-discarded").await["createdBy"],
        "erin"
    );
    set_state(&server, id, "Approved", &erin)
        .await
        .expect_error(403, "NoAccessError");

    // The page shows every author, and offers an author no approval.
    let mut browser = browser_of(&server, "bob").await;
    let page = browser
        .page(&format!("/projects/default/change-requests/{id}"))
        .await;
    let authors = page
        .split("Authors: ")
        .nth(1)
        .expect("an authors line")
        .split('<')
        .next()
        .unwrap()
        .to_owned();
    for name in ["alice", "bob", "dave", "erin"] {
        assert!(authors.contains(name), "{authors}");
    }
    assert!(!page.contains("value=\"Approved\""), "{page}");
}

/// Issue 29 §1.2: only Admins (users and admin tokens) switch change requests on or off, through the API and
/// the project's settings page; Editors read the configuration.
async fn only_admins_configure_change_requests(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (_, editor) = user_with_pat(&server, "ed", "Editor").await;
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;
    let (_, admin) = user_with_pat(&server, "ann", "Admin").await;
    let enabled = |list: &Value| list[0]["changeRequestEnabled"].as_bool().unwrap();
    let read = |pat: String| {
        let server = &server;
        async move {
            as_user(
                server,
                "GET",
                &format!("{PROJECT}/change-requests/config"),
                None,
                &pat,
            )
            .await
            .expect(200)
            .clone()
        }
    };
    let before = event_count(&server).await;
    for pat in [&editor, &viewer] {
        let message = as_user(
            &server,
            "PUT",
            CONFIG_DEV,
            Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 2})),
            pat,
        )
        .await
        .expect_error(403, "NoAccessError");
        assert!(message.contains("Admin"), "{message}");
    }
    assert!(!enabled(&read(editor.clone()).await));
    assert_eq!(
        event_count(&server).await,
        before,
        "a refused write records nothing"
    );
    as_user(
        &server,
        "PUT",
        CONFIG_DEV,
        Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 2})),
        &admin,
    )
    .await
    .expect(200);
    assert!(enabled(&read(editor.clone()).await));
    // The Editor cannot switch them off to write directly.
    as_user(
        &server,
        "PUT",
        CONFIG_DEV,
        Some(json!({"changeRequestsEnabled": false})),
        &editor,
    )
    .await
    .expect_error(403, "NoAccessError");
    assert!(enabled(&read(editor.clone()).await));

    // The UI: an Editor sees the setting but no form, and a forged post is refused; an Admin has the form.
    let action = "action=\"/projects/default/environments/development/change-requests\"";
    let mut ed = browser_of(&server, "ed").await;
    let page = ed.get("/projects/default/settings").await;
    page.expect(200);
    assert!(!page.has(action), "{}", page.text);
    assert!(
        page.has("Change requests on: 2 approval(s) needed."),
        "{}",
        page.text
    );
    let csrf = page.csrf();
    let forged = ed
        .post(
            "/projects/default/environments/development/change-requests",
            &[("csrf", &csrf), ("approvals", "1")],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.text);
    assert!(enabled(&read(editor.clone()).await), "still on");
    let mut ann = browser_of(&server, "ann").await;
    let page: Html = ann.get("/projects/default/settings").await;
    assert!(page.has(action), "{}", page.text);
    let csrf = page.csrf();
    let saved = ann
        .post(
            "/projects/default/environments/development/change-requests",
            &[("csrf", &csrf), ("approvals", "1")],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert!(!enabled(&read(editor).await), "the Admin switched them off");
    // Admin tokens too.
    server
        .send(
            "PUT",
            CONFIG_DEV,
            Some(json!({"changeRequestsEnabled": true})),
            Some(ADMIN_TOKEN),
        )
        .await
        .expect(200);
}

async fn create_segment(server: &Server, name: &str, value: &str) -> i64 {
    server
        .post(
            "/api/admin/segments",
            json!({"name": name, "constraints": [{"contextName": "userId", "operator": "IN", "values": [value]}]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap()
}

async fn segment_values(server: &Server, id: i64) -> Value {
    server
        .get(&format!("/api/admin/segments/{id}"))
        .await
        .expect(200)["constraints"][0]["values"]
        .clone()
}

/// The development strategies' constraints the control plane serves to SDKs (segments inlined), once what
/// it serves contains `expected` (or after 10 s).
async fn served_constraints(server: &Server, expected: &str) -> String {
    let mut served = String::new();
    for _ in 0..50 {
        let document: Value = server
            .client
            .get(format!("{}/api/client/features", server.base))
            .header("Authorization", CLIENT_TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        served = document["features"][0]["strategies"].to_string();
        if served.contains(expected) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    served
}

fn update_segment(id: i64, name: &str, value: &str) -> Value {
    json!({"action": "updateSegment", "payload": {
        "id": id, "name": name,
        "constraints": [{"contextName": "userId", "operator": "IN", "values": [value]}]
    }})
}

/// Issue 29 §1.3: a segment used by a strategy where change requests are on is not edited directly (API and
/// UI propose a change request instead); `updateSegment` and `deleteSegment` go through a request, and
/// applying one changes what the SDKs are served. A segment used only where they are off stays directly
/// editable.
async fn segment_edits_in_protected_environments_go_through_change_requests(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(&format!("{PROJECT}/features"), json!({"name": "checkout"}))
        .await
        .expect(201);
    let beta = create_segment(&server, "beta", "u1").await;
    let local = create_segment(&server, "local", "p1").await;
    let old = create_segment(&server, "old", "o1").await;
    server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "default", "segments": [beta]}),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/admin/projects/default/features/checkout/environments/production/strategies",
            json!({"name": "default", "segments": [local]}),
        )
        .await
        .expect(200);
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
    configure(&server, "default", "development", 2).await;
    let (_, alice) = user_with_pat(&server, "alice", "Editor").await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (_, carol) = user_with_pat(&server, "carol", "Admin").await;
    assert!(served_constraints(&server, "u1").await.contains("u1"));

    // Direct edits of beta are refused for every caller, saying where to propose them; nothing changes.
    let before = event_count(&server).await;
    let edit = json!({"name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["u2"]}]});
    for pat in [ADMIN_TOKEN, alice.as_str()] {
        let message = server
            .send(
                "PUT",
                &format!("/api/admin/segments/{beta}"),
                Some(edit.clone()),
                Some(pat),
            )
            .await
            .expect_error(403, "NoAccessError");
        assert!(
            message.contains("change request")
                && message.contains("development")
                && message.contains("default"),
            "{message}"
        );
    }
    server
        .delete(&format!("/api/admin/segments/{beta}"))
        .await
        .expect_error(409, "NameExistsError");
    assert_eq!(segment_values(&server, beta).await, json!(["u1"]));
    assert_eq!(event_count(&server).await, before, "nothing written");
    // Used only in production, where change requests are off: edited directly.
    let answer = server
        .put(
            &format!("/api/admin/segments/{local}"),
            json!({"name": "local", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["p2"]}]}),
        )
        .await;
    assert_eq!(answer.status, 204, "{:?}", answer.body);

    // Proposed: the request's segments[] (no feature), joined by a deleteSegment.
    let draft = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(update_segment(beta, "beta", "u2")),
        &alice,
    )
    .await
    .expect(200)
    .clone();
    let id = draft["id"].as_i64().unwrap();
    assert_eq!(draft["features"], json!([]));
    assert_eq!(draft["segments"][0]["action"], "updateSegment");
    assert_eq!(draft["segments"][0]["name"], "beta");
    assert_eq!(draft["segments"][0]["payload"]["id"], beta);
    assert_eq!(
        draft["segments"][0]["payload"]["constraints"][0]["values"],
        json!(["u2"])
    );
    assert_eq!(draft["segments"][0]["createdBy"]["username"], "alice");
    let joined = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(json!([{"action": "deleteSegment", "payload": {"id": old}}])),
        &alice,
    )
    .await
    .expect(200)
    .clone();
    assert_eq!(joined["id"], id);
    assert_eq!(joined["segments"].as_array().unwrap().len(), 2);
    // Bad segment changes: 400, nothing added.
    for (body, word) in [
        (update_segment(99999, "x", "x"), "99999"),
        (json!({"action": "deleteSegment", "payload": {}}), "id"),
        (
            json!({"action": "updateEnabled", "payload": {"enabled": true}}),
            "feature",
        ),
    ] {
        let message = as_user(&server, "POST", CHANGES_DEV, Some(body.clone()), &alice)
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(word), "{body}: {message}");
    }
    // Where change requests are on in production too, local belongs there: not to development's requests.
    configure(&server, "default", "production", 1).await;
    let message = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(update_segment(local, "local", "p3")),
        &alice,
    )
    .await
    .expect_error(400, "ValidationError");
    assert!(message.contains("production"), "{message}");

    // The UI's segment form proposes too: into alice's draft, the segment unchanged until applied.
    let mut browser = browser_of(&server, "alice").await;
    let form = browser.get(&format!("/segments/edit/{beta}")).await;
    let csrf = form.csrf();
    let proposed = browser
        .post(
            &format!("/segments/edit/{beta}"),
            &[
                ("csrf", csrf.as_str()),
                ("name", "beta"),
                ("description", "proposed from the form"),
                ("project", ""),
                ("constraintCount", "1"),
                ("c0.contextName", "userId"),
                ("c0.operator", "IN"),
                ("c0.values", "u2"),
                ("intent", "save"),
            ],
        )
        .await;
    assert_eq!(proposed.status, 303, "{}", proposed.text);
    assert_eq!(
        proposed.location.as_deref(),
        Some(format!("/projects/default/change-requests/{id}").as_str())
    );
    let request = server.get(&request_path(id)).await.expect(200).clone();
    assert_eq!(request["segments"].as_array().unwrap().len(), 3);
    assert_eq!(
        request["segments"][2]["payload"]["description"],
        "proposed from the form"
    );
    assert_eq!(segment_values(&server, beta).await, json!(["u1"]));
    let page = browser
        .page(&format!("/projects/default/change-requests/{id}"))
        .await;
    assert!(page.contains("Segment beta"), "{page}");
    // Delete the form's duplicate so that the request applies the API's update and the delete.
    let third = request["segments"][2]["id"].as_i64().unwrap();
    as_user(
        &server,
        "DELETE",
        &format!("{}/changes/{third}", request_path(id)),
        None,
        &alice,
    )
    .await
    .expect(200);

    // Reviewed and applied: the segment changes, old is gone, the SDKs get the new audience.
    set_state(&server, id, "In review", &alice)
        .await
        .expect(200);
    set_state(&server, id, "Approved", &alice)
        .await
        .expect_error(403, "NoAccessError");
    set_state(&server, id, "Approved", &bob).await.expect(200);
    set_state(&server, id, "Approved", &carol).await.expect(200);
    let applied = set_state(&server, id, "Applied", &carol).await;
    assert_eq!(applied.expect(200)["state"], "Applied");
    assert_eq!(segment_values(&server, beta).await, json!(["u2"]));
    server
        .get(&format!("/api/admin/segments/{old}"))
        .await
        .expect_error(404, "NotFoundError");
    let updated = latest_event(&server, "segment-updated").await;
    assert_eq!(updated["createdBy"], "carol");
    assert_eq!(updated["data"]["constraints"][0]["values"], json!(["u2"]));
    let served = served_constraints(&server, "u2").await;
    assert!(served.contains("u2") && !served.contains("u1"), "{served}");
}

/// The place rule (docs/internals.md): of the project environments with change requests on where a segment
/// is used, the one needing the most approvals (then the first by project, environment). Proposed anywhere
/// else → 400; when the place changes before the request is applied, applying it is refused and changes
/// nothing.
async fn a_segment_change_belongs_to_its_strictest_protected_place(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other", "environments": ["development", "production"]}),
        )
        .await
        .expect(201);
    let shared = create_segment(&server, "shared", "s1").await;
    server
        .post(&format!("{PROJECT}/features"), json!({"name": "checkout"}))
        .await
        .expect(201);
    server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "default", "segments": [shared]}),
        )
        .await
        .expect(200);
    server
        .post("/api/admin/projects/other/features", json!({"name": "pay"}))
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/other/features/pay/environments/production/strategies",
            json!({"name": "default", "segments": [shared]}),
        )
        .await
        .expect(200);
    configure(&server, "default", "development", 1).await;
    configure(&server, "other", "production", 1).await;
    let (_, alice) = user_with_pat(&server, "alice", "Editor").await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (_, carol) = user_with_pat(&server, "carol", "Admin").await;

    // Equal approvals: the first by project: default/development.
    let message = as_user(
        &server,
        "POST",
        "/api/admin/projects/other/environments/production/change-requests",
        Some(update_segment(shared, "shared", "s2")),
        &alice,
    )
    .await
    .expect_error(400, "ValidationError");
    assert!(
        message.contains("default") && message.contains("development"),
        "{message}"
    );
    let draft = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(update_segment(shared, "shared", "s2")),
        &alice,
    )
    .await
    .expect(200)
    .clone();
    let id = draft["id"].as_i64().unwrap();
    set_state(&server, id, "In review", &alice)
        .await
        .expect(200);
    set_state(&server, id, "Approved", &bob).await.expect(200);

    // other/production now needs more approvals: the segment belongs there, this request cannot apply.
    configure(&server, "other", "production", 3).await;
    let before = event_count(&server).await;
    let message = set_state(&server, id, "Applied", &carol)
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("other") && message.contains("production"),
        "{message}"
    );
    assert_eq!(segment_values(&server, shared).await, json!(["s1"]));
    assert_eq!(event_count(&server).await, before);
    assert_eq!(
        server.get(&request_path(id)).await.expect(200)["state"],
        "Approved"
    );
    let message = server
        .put(
            &format!("/api/admin/segments/{shared}"),
            json!({"name": "shared", "constraints": []}),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert!(
        message.contains("other") && message.contains("production"),
        "{message}"
    );
}
