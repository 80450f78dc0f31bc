//! Change requests and UI configuration through the real binary, on SQLite and Postgres: the configuration
//! (clamping), every row of the state table (API.md §3.6), the approval rules, the reset on change, atomic
//! apply, the 403 on direct writes, and the ui-config round trip down to the CORS answer.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{assert_timestamp, Answer, Server, CLIENT_TOKEN};
use serde_json::{json, Value};
use std::time::Duration;

crate::on_sqlite_and_postgres!(
    change_request_configuration_is_clamped,
    direct_writes_are_refused_while_change_requests_are_on,
    the_state_table,
    a_failing_change_applies_nothing,
    ui_config_round_trip,
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

async fn set_state(server: &Server, id: i64, state: &str, pat: Option<&str>) -> Answer {
    let body = json!({"state": state});
    match pat {
        Some(pat) => {
            as_user(
                server,
                "PUT",
                &format!("{}/state", request_path(id)),
                Some(body),
                pat,
            )
            .await
        }
        None => {
            server
                .put(&format!("{}/state", request_path(id)), body)
                .await
        }
    }
}

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn event_count(server: &Server) -> i64 {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap()
}

async fn create_flag(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
}

async fn enable_change_requests(server: &Server, environment: &str, approvals: i64) {
    server
        .put(
            &format!("{PROJECT}/environments/{environment}/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": approvals}),
        )
        .await
        .expect(200);
}

/// The revision the control plane serves once the publisher has caught up (two equal reads 400 ms apart:
/// the publisher polls every 250 ms).
async fn settled_revision(server: &Server) -> u64 {
    let read = || async {
        let response = server
            .client
            .get(format!("{}/api/client/features", server.base))
            .header("Authorization", CLIENT_TOKEN)
            .send()
            .await
            .unwrap();
        response.headers()["x-vexil-revision"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    let mut last = read().await;
    loop {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let now = read().await;
        if now == last {
            return now;
        }
        last = now;
    }
}

async fn change_request_configuration_is_clamped(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let list = server
        .get(&format!("{PROJECT}/change-requests/config"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        list,
        json!([
            {"environment": "development", "type": "development", "changeRequestEnabled": false, "requiredApprovals": 1},
            {"environment": "production", "type": "production", "changeRequestEnabled": false, "requiredApprovals": 1},
        ])
    );
    let required = |list: &Value| list[0]["requiredApprovals"].as_i64().unwrap();
    for (sent, stored) in [
        (json!(0), 1),
        (json!(11), 10),
        (json!(-3), 1),
        (json!(1u64 << 62), 10),
        (json!(4), 4),
    ] {
        let answer = server
            .put(
                CONFIG_DEV,
                json!({"changeRequestsEnabled": true, "requiredApprovals": sent}),
            )
            .await;
        assert_eq!(answer.expect(200), &Value::Null);
        let list = server
            .get(&format!("{PROJECT}/change-requests/config"))
            .await;
        assert_eq!(required(list.expect(200)), stored, "sent {sent}");
        assert_eq!(list.body[0]["changeRequestEnabled"], true);
    }
    // Omitted: kept. Off keeps the count too.
    server
        .put(CONFIG_DEV, json!({"changeRequestsEnabled": false}))
        .await
        .expect(200);
    let list = server
        .get(&format!("{PROJECT}/change-requests/config"))
        .await
        .expect(200)
        .clone();
    assert_eq!(list[0]["changeRequestEnabled"], false);
    assert_eq!(required(&list), 4);
    assert_eq!(
        list[1]["changeRequestEnabled"], false,
        "production untouched"
    );

    // Bad input changes nothing.
    let before = event_count(&server).await;
    for body in [
        json!({"changeRequestsEnabled": true, "requiredApprovals": 1.5}),
        json!({"changeRequestsEnabled": true, "requiredApprovals": "3"}),
        json!({"requiredApprovals": 3}),
        json!({"changeRequestsEnabled": "yes"}),
    ] {
        let message = server
            .put(CONFIG_DEV, body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(
            message.contains("requiredApprovals") || message.contains("changeRequestsEnabled"),
            "{body}: {message}"
        );
    }
    server
        .put(
            "/api/admin/projects/nope/environments/development/change-requests/config",
            json!({"changeRequestsEnabled": true}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .put(
            &format!("{PROJECT}/environments/nowhere/change-requests/config"),
            json!({"changeRequestsEnabled": true}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/projects/nope/change-requests/config")
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(event_count(&server).await, before);
    // The same setting again records nothing.
    server
        .put(
            CONFIG_DEV,
            json!({"changeRequestsEnabled": false, "requiredApprovals": 4}),
        )
        .await
        .expect(200);
    assert_eq!(event_count(&server).await, before);

    let events = events_of_type(&server, "change-request-configuration-updated").await;
    assert_eq!(events.len(), 5 + 1);
    assert_eq!(events[0]["environment"], "development");
    assert_eq!(events[0]["project"], "default");
    assert_eq!(
        events[0]["data"],
        json!({"changeRequestsEnabled": false, "requiredApprovals": 4})
    );
    assert_eq!(
        events[0]["preData"],
        json!({"changeRequestsEnabled": true, "requiredApprovals": 4})
    );

    // A deleted project takes its settings and requests along: re-created, it starts clean.
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other", "environments": ["development"]}),
        )
        .await
        .expect(201);
    let other = "/api/admin/projects/other";
    server
        .put(
            &format!("{other}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 3}),
        )
        .await
        .expect(200);
    server.delete(other).await.expect(200);
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other", "environments": ["development"]}),
        )
        .await
        .expect(201);
    assert_eq!(
        server
            .get(&format!("{other}/change-requests/config"))
            .await
            .expect(200),
        &json!([{"environment": "development", "type": "development", "changeRequestEnabled": false, "requiredApprovals": 1}])
    );
}

async fn direct_writes_are_refused_while_change_requests_are_on(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let strategy = server
        .post(&format!("{DEV}/strategies"), json!({"name": "default"}))
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    enable_change_requests(&server, "development", 1).await;
    let (_, editor) = user_with_pat(&server, "ed", "Editor").await;

    let before = event_count(&server).await;
    let strategy_path = format!("{DEV}/strategies/{strategy}");
    let writes: Vec<(&str, String, Option<Value>)> = vec![
        ("POST", format!("{DEV}/on"), None),
        ("POST", format!("{DEV}/off"), None),
        (
            "POST",
            format!("{DEV}/strategies"),
            Some(json!({"name": "default"})),
        ),
        (
            "PUT",
            strategy_path.clone(),
            Some(json!({"name": "default"})),
        ),
        (
            "PATCH",
            strategy_path.clone(),
            Some(json!([{"op": "replace", "path": "/disabled", "value": true}])),
        ),
        ("DELETE", strategy_path.clone(), None),
        (
            "POST",
            format!("{DEV}/strategies/set-sort-order"),
            Some(json!([{"id": strategy, "sortOrder": 3}])),
        ),
        (
            "PUT",
            format!("{DEV}/variants"),
            Some(json!([{"name": "a", "weightType": "variable"}])),
        ),
        ("PATCH", format!("{DEV}/variants"), Some(json!([]))),
        ("DELETE", FLAG.to_owned(), None),
        (
            "POST",
            format!("{PROJECT}/archive"),
            Some(json!({"features": ["checkout"]})),
        ),
    ];
    for (method, path, body) in &writes {
        for token in [None, Some(editor.as_str())] {
            let answer = match token {
                None => {
                    server
                        .send(method, path, body.clone(), Some(crate::server::ADMIN_TOKEN))
                        .await
                }
                Some(pat) => as_user(&server, method, path, body.clone(), pat).await,
            };
            let message = answer.expect_error(403, "NoAccessError");
            assert!(
                message.contains("change request"),
                "{method} {path}: {message}"
            );
        }
    }
    assert_eq!(event_count(&server).await, before, "nothing was written");
    // Reads still work; production (no change requests) takes direct writes; the flag's metadata too.
    server.get(&strategy_path).await.expect(200);
    let production = "/api/admin/projects/default/features/checkout/environments/production";
    server
        .post_empty(&format!("{production}/on"))
        .await
        .expect(200);
    server
        .put(
            FLAG,
            json!({"description": "metadata is not per environment"}),
        )
        .await
        .expect(200);
    // Off again: direct writes work again.
    server
        .put(CONFIG_DEV, json!({"changeRequestsEnabled": false}))
        .await
        .expect(200);
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
}

/// Every row of API.md §3.6, the approval rules and the reset on change.
async fn the_state_table(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    enable_change_requests(&server, "development", 2).await;
    let (alice_id, alice) = user_with_pat(&server, "alice", "Editor").await;
    let (bob_id, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (carol_id, carol) = user_with_pat(&server, "carol", "Admin").await;
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;

    // Change requests off for production: 400.
    let message = server
        .post(
            "/api/admin/projects/default/environments/production/change-requests",
            json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": true}}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("not enabled"), "{message}");

    // Alice drafts: a new Draft, then more changes join it.
    let created = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(
            json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": true}}),
        ),
        &alice,
    )
    .await;
    let draft = created.expect(200).clone();
    let id = draft["id"].as_i64().unwrap();
    assert_eq!(draft["state"], "Draft");
    assert_eq!(draft["project"], "default");
    assert_eq!(draft["environment"], "development");
    assert_eq!(draft["minApprovals"], 2);
    assert_eq!(
        draft["createdBy"],
        json!({"id": alice_id, "username": "alice"})
    );
    assert_timestamp(&draft["createdAt"]);
    assert_timestamp(&draft["stateTimestamps"]["Draft"]);
    assert_eq!(draft["features"][0]["name"], "checkout");
    assert_eq!(
        draft["features"][0]["changes"][0]["action"],
        "updateEnabled"
    );
    assert_eq!(
        draft["features"][0]["changes"][0]["payload"],
        json!({"enabled": true})
    );
    assert_eq!(draft["approvals"], json!([]));
    assert_eq!(draft["segments"], json!([]));
    let joined = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(json!([
            {"feature": "checkout", "action": "addStrategy", "payload": {"name": "flexibleRollout", "parameters": {"rollout": 50}}},
            {"feature": "checkout", "action": "patchVariant", "payload": {"variants": [{"name": "blue", "weightType": "variable"}]}},
        ])),
        &alice,
    )
    .await;
    let joined = joined.expect(200).clone();
    assert_eq!(joined["id"], id, "the caller's open Draft");
    let changes = joined["features"][0]["changes"].as_array().unwrap().clone();
    assert_eq!(changes.len(), 3);
    let change_id = |index: usize| changes[index]["id"].as_i64().unwrap();

    // Bad changes: 400, nothing added.
    for (body, field) in [
        (
            json!({"feature": "nope", "action": "updateEnabled", "payload": {"enabled": true}}),
            "feature",
        ),
        (
            json!({"feature": "checkout", "action": "explode", "payload": {}}),
            "action",
        ),
        (
            json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": "yes"}}),
            "enabled",
        ),
        (
            json!({"feature": "checkout", "action": "deleteStrategy", "payload": {"id": "not-a-uuid"}}),
            "id",
        ),
        (json!([]), "at least one"),
    ] {
        let message = as_user(&server, "POST", CHANGES_DEV, Some(body.clone()), &alice)
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{body}: {message}");
    }
    assert_eq!(
        server.get(&request_path(id)).await.expect(200)["features"][0]["changes"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // Draft: anything but In review or Cancelled → 400 naming the state.
    for state in ["Draft", "Approved", "Applied", "Rejected"] {
        let message = set_state(&server, id, state, Some(&bob))
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("is Draft"), "{state}: {message}");
    }
    // Scheduled needs an Approved request (tests/http_api/scheduled_change_requests.rs).
    let message = set_state(&server, id, "Scheduled", Some(&bob))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("is Draft"), "{message}");

    // Draft with no change → In review: 400. Bob's own Draft, emptied, then deleted.
    let bobs = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(json!({"feature": "checkout", "action": "archiveFeature"})),
        &bob,
    )
    .await
    .expect(200)
    .clone();
    let bob_draft = bobs["id"].as_i64().unwrap();
    assert_ne!(bob_draft, id, "a Draft per author");
    let bob_change = bobs["features"][0]["changes"][0]["id"].as_i64().unwrap();
    let emptied = as_user(
        &server,
        "DELETE",
        &format!("{}/changes/{bob_change}", request_path(bob_draft)),
        None,
        &bob,
    )
    .await;
    assert_eq!(emptied.expect(200)["features"], json!([]));
    let message = set_state(&server, bob_draft, "In review", Some(&bob))
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("is Draft") && message.contains("no change"),
        "{message}"
    );
    server.delete(&request_path(bob_draft)).await.expect(200);
    server
        .get(&request_path(bob_draft))
        .await
        .expect_error(404, "NotFoundError");

    // Draft → In review, the comment kept.
    let review = as_user(
        &server,
        "PUT",
        &format!("{}/state", request_path(id)),
        Some(json!({"state": "In review", "comment": "please look"})),
        &alice,
    )
    .await;
    let review = review.expect(200).clone();
    assert_eq!(review["state"], "In review");
    assert_timestamp(&review["stateTimestamps"]["In review"]);
    assert_eq!(review["comments"][0]["text"], "please look");
    assert_eq!(review["comments"][0]["createdBy"]["username"], "alice");
    // Only a Draft can be deleted.
    let message = server
        .delete(&request_path(id))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("In review"), "{message}");

    // Approvals: not the author, not a Viewer, one per principal; Approved at minApprovals.
    let message = set_state(&server, id, "Approved", Some(&alice))
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("author"), "{message}");
    set_state(&server, id, "Approved", Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    let one = set_state(&server, id, "Approved", Some(&bob))
        .await
        .expect(200)
        .clone();
    assert_eq!(one["state"], "In review", "1 of 2 approvals");
    assert_eq!(
        one["approvals"][0]["createdBy"],
        json!({"id": bob_id, "username": "bob"})
    );
    set_state(&server, id, "Approved", Some(&bob))
        .await
        .expect_error(400, "ValidationError");
    for state in ["Draft", "In review", "Applied"] {
        let message = set_state(&server, id, state, Some(&carol))
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("is In review"), "{state}: {message}");
    }
    let two = set_state(&server, id, "Approved", Some(&carol))
        .await
        .expect(200)
        .clone();
    assert_eq!(two["state"], "Approved");
    assert_eq!(two["approvals"].as_array().unwrap().len(), 2);
    assert_timestamp(&two["stateTimestamps"]["Approved"]);
    for state in ["Draft", "In review", "Approved"] {
        let message = set_state(&server, id, state, Some(&carol))
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("is Approved"), "{state}: {message}");
    }

    // Any change to an Approved request: back to In review, approvals reset (edit, then discard).
    let edited = as_user(
        &server,
        "PUT",
        &format!("{}/changes/{}", request_path(id), change_id(1)),
        Some(
            json!({"feature": "checkout", "action": "addStrategy", "payload": {"name": "default"}}),
        ),
        &alice,
    )
    .await;
    let edited = edited.expect(200).clone();
    assert_eq!(edited["state"], "In review");
    assert_eq!(edited["approvals"], json!([]));
    assert_eq!(
        edited["features"][0]["changes"][1]["payload"],
        json!({"name": "default"})
    );
    set_state(&server, id, "Approved", Some(&bob))
        .await
        .expect(200);
    assert_eq!(
        set_state(&server, id, "Approved", Some(&carol))
            .await
            .expect(200)["state"],
        "Approved"
    );
    let discarded = as_user(
        &server,
        "DELETE",
        &format!("{}/changes/{}", request_path(id), change_id(2)),
        None,
        &alice,
    )
    .await;
    let discarded = discarded.expect(200).clone();
    assert_eq!(discarded["state"], "In review");
    assert_eq!(discarded["approvals"], json!([]));
    assert_eq!(
        discarded["features"][0]["changes"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    server
        .delete(&format!("{}/changes/999999", request_path(id)))
        .await
        .expect_error(404, "NotFoundError");
    set_state(&server, id, "Approved", Some(&bob))
        .await
        .expect(200);
    set_state(&server, id, "Approved", Some(&carol))
        .await
        .expect(200);

    // Approved → Applied: every change, their normal events, one revision.
    let revision = settled_revision(&server).await;
    let events_before = event_count(&server).await;
    let applied = set_state(&server, id, "Applied", Some(&carol))
        .await
        .expect(200)
        .clone();
    assert_eq!(applied["state"], "Applied");
    assert_timestamp(&applied["stateTimestamps"]["Applied"]);
    let flag = server.get(FLAG).await.expect(200).clone();
    let development = &flag["environments"][0];
    assert_eq!(development["name"], "development");
    assert_eq!(development["enabled"], true);
    let names: Vec<&str> = development["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["flexibleRollout", "default"],
        "the default added by turning on, then the change's"
    );
    let types: Vec<String> = server.get("/api/admin/events?limit=1000").await.expect(200)["events"]
        .as_array()
        .unwrap()
        .iter()
        .take((event_count(&server).await - events_before) as usize)
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .rev()
        .collect();
    assert_eq!(
        types,
        [
            "feature-strategy-add",
            "feature-environment-enabled",
            "feature-strategy-add",
            "change-request-applied"
        ]
    );
    assert_eq!(
        settled_revision(&server).await,
        revision + 1,
        "one revision for the whole request"
    );
    let applied_event = &events_of_type(&server, "change-request-applied").await[0];
    assert_eq!(applied_event["createdBy"], "carol");
    assert_eq!(applied_event["project"], "default");
    assert_eq!(applied_event["environment"], "development");
    assert_eq!(applied_event["data"]["changeRequestId"], id);

    // Applied is final: no state, no change, no delete.
    for state in [
        "Draft",
        "In review",
        "Approved",
        "Applied",
        "Cancelled",
        "Rejected",
    ] {
        let message = set_state(&server, id, state, Some(&carol))
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("is Applied"), "{state}: {message}");
    }
    let message = as_user(
        &server,
        "PUT",
        &format!("{}/changes/{}", request_path(id), change_id(0)),
        Some(json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": false}})),
        &alice,
    )
    .await
    .expect_error(400, "ValidationError");
    assert!(message.contains("Applied"), "{message}");
    server
        .delete(&format!("{}/changes/{}", request_path(id), change_id(0)))
        .await
        .expect_error(400, "ValidationError");
    server
        .delete(&request_path(id))
        .await
        .expect_error(400, "ValidationError");

    // A new request of alice's: a new Draft (the applied one is not open).
    let second = |pat: String| {
        let server = &server;
        async move {
            as_user(
                server,
                "POST",
                CHANGES_DEV,
                Some(json!({"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": false}})),
                &pat,
            )
            .await
            .expect(200)["id"]
                .as_i64()
                .unwrap()
        }
    };
    // In review → Rejected (+comment), then final.
    let rejected = second(alice.clone()).await;
    assert!(rejected > id);
    set_state(&server, rejected, "In review", Some(&alice))
        .await
        .expect(200);
    let answer = as_user(
        &server,
        "PUT",
        &format!("{}/state", request_path(rejected)),
        Some(json!({"state": "Rejected", "comment": "not now"})),
        &bob,
    )
    .await;
    let body = answer.expect(200).clone();
    assert_eq!(body["state"], "Rejected");
    assert_eq!(body["rejections"][0]["createdBy"]["username"], "bob");
    assert_eq!(body["comments"][0]["text"], "not now");
    for state in ["In review", "Approved", "Applied", "Cancelled"] {
        let message = set_state(&server, rejected, state, Some(&carol))
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("is Rejected"), "{state}: {message}");
    }
    // Approved → Rejected.
    let approved_then_rejected = second(alice.clone()).await;
    set_state(&server, approved_then_rejected, "In review", Some(&alice))
        .await
        .expect(200);
    set_state(&server, approved_then_rejected, "Approved", Some(&bob))
        .await
        .expect(200);
    set_state(&server, approved_then_rejected, "Approved", Some(&carol))
        .await
        .expect(200);
    assert_eq!(
        set_state(&server, approved_then_rejected, "Rejected", Some(&bob))
            .await
            .expect(200)["state"],
        "Rejected"
    );
    // Cancelled from Draft, In review and Approved; then final.
    let mut cancelled = Vec::new();
    for reach in [0, 1, 2] {
        let request = second(bob.clone()).await;
        if reach >= 1 {
            set_state(&server, request, "In review", Some(&bob))
                .await
                .expect(200);
        }
        if reach >= 2 {
            set_state(&server, request, "Approved", Some(&alice))
                .await
                .expect(200);
            assert_eq!(
                set_state(&server, request, "Approved", Some(&carol))
                    .await
                    .expect(200)["state"],
                "Approved"
            );
        }
        assert_eq!(
            set_state(&server, request, "Cancelled", Some(&bob))
                .await
                .expect(200)["state"],
            "Cancelled"
        );
        cancelled.push(request);
    }
    for state in [
        "Draft",
        "In review",
        "Approved",
        "Applied",
        "Cancelled",
        "Rejected",
    ] {
        let message = set_state(&server, cancelled[0], state, None)
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains("is Cancelled"), "{state}: {message}");
    }
    // Nothing of those reached the flag.
    assert_eq!(
        server.get(FLAG).await.expect(200)["environments"][0]["enabled"],
        true
    );

    // Comments: 204, shown in the request; list newest first; unknown ids 404, bad ids 400.
    let comment = as_user(
        &server,
        "POST",
        &format!("{}/comments", request_path(id)),
        Some(json!({"text": "shipped"})),
        &carol,
    )
    .await;
    assert_eq!(comment.status, 204);
    let shown = server.get(&request_path(id)).await.expect(200).clone();
    let last = shown["comments"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["text"], "shipped");
    assert_eq!(
        last["createdBy"],
        json!({"id": carol_id, "username": "carol"})
    );
    server
        .post(
            &format!("{}/comments", request_path(id)),
            json!({"text": " "}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            &format!("{}/comments", request_path(424242)),
            json!({"text": "x"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .get(&format!("{PROJECT}/change-requests/abc"))
        .await
        .expect_error(400, "ValidationError");
    server
        .get("/api/admin/projects/nope/change-requests")
        .await
        .expect_error(404, "NotFoundError");
    let list = server
        .get(&format!("{PROJECT}/change-requests"))
        .await
        .expect(200)
        .clone();
    let ids: Vec<i64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "newest first");
    assert_eq!(ids.len(), 1 + 1 + 1 + 3, "the deleted Draft is gone");

    // Every event of the table.
    for (event_type, count) in [
        ("change-request-created", 7),
        ("change-added", 3 + 1 + 1 + 1 + 3),
        ("change-edited", 1),
        ("change-discarded", 2),
        ("change-request-discarded", 1),
        ("change-request-sent-to-review", 1 + 1 + 1 + 2),
        ("change-request-approval-added", 6 + 2 + 2),
        ("change-request-approved", 3 + 1 + 1),
        ("change-request-applied", 1),
        ("change-request-rejected", 2),
        ("change-request-cancelled", 3),
    ] {
        assert_eq!(
            events_of_type(&server, event_type).await.len(),
            count,
            "{event_type}"
        );
    }
}

/// A change that fails when applied (its strategy was deleted meanwhile by another request) applies nothing.
async fn a_failing_change_applies_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let strategy = server
        .post(&format!("{DEV}/strategies"), json!({"name": "default"}))
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    enable_change_requests(&server, "development", 1).await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (_, carol) = user_with_pat(&server, "carol", "Editor").await;

    // Bob's request: turn on, add a strategy, then update the existing one.
    let first = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(json!([
            {"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": true}},
            {"feature": "checkout", "action": "addStrategy", "payload": {"name": "userWithId", "parameters": {"userIds": "a"}}},
            {"feature": "checkout", "action": "updateStrategy", "payload": {"id": strategy, "name": "default", "title": "renamed"}},
        ])),
        &bob,
    )
    .await
    .expect(200)["id"]
        .as_i64()
        .unwrap();
    // Carol's request deletes that strategy, and is applied first.
    let second = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(
            json!({"feature": "checkout", "action": "deleteStrategy", "payload": {"id": strategy}}),
        ),
        &carol,
    )
    .await
    .expect(200)["id"]
        .as_i64()
        .unwrap();
    for (request, author, reviewer) in [(first, &bob, &carol), (second, &carol, &bob)] {
        set_state(&server, request, "In review", Some(author))
            .await
            .expect(200);
        assert_eq!(
            set_state(&server, request, "Approved", Some(reviewer))
                .await
                .expect(200)["state"],
            "Approved"
        );
    }
    set_state(&server, second, "Applied", None)
        .await
        .expect(200);
    assert_eq!(
        server.get(&format!("{DEV}/strategies")).await.expect(200),
        &json!([])
    );

    let flag_before = server.get(FLAG).await.expect(200).clone();
    let events_before = event_count(&server).await;
    let revision = settled_revision(&server).await;
    let message = set_state(&server, first, "Applied", None)
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("updateStrategy") && message.contains(&strategy),
        "{message}"
    );
    // Nothing applied: not the switch, not the added strategy, no event, no revision; still Approved.
    assert_eq!(server.get(FLAG).await.expect(200), &flag_before);
    assert_eq!(event_count(&server).await, events_before);
    assert_eq!(
        server.get(&request_path(first)).await.expect(200)["state"],
        "Approved"
    );
    assert_eq!(settled_revision(&server).await, revision);
}

async fn ui_config_round_trip(db: TestDb) {
    let mut server = Server::start(&db, &["--limit-segment-values", "77"]).await;
    let config = server.get("/api/admin/ui-config").await.expect(200).clone();
    for field in [
        "slogan",
        "name",
        "version",
        "environment",
        "serviceUrl",
        "unleashUrl",
        "baseUriPath",
        "feedbackUriPath",
        "disablePasswordAuth",
        "emailEnabled",
        "maintenanceMode",
        "segmentValuesLimit",
        "strategySegmentsLimit",
        "resourceLimits",
        "networkViewEnabled",
        "frontendApiOrigins",
        "flags",
        "links",
        "authenticationType",
        "versionInfo",
        "oidcConfiguredThroughEnv",
        "samlConfiguredThroughEnv",
    ] {
        assert!(
            config.get(field).is_some(),
            "ui-config lacks {field}: {config}"
        );
    }
    assert_eq!(config["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(config["environment"], "Open Source");
    assert_eq!(config["baseUriPath"], "");
    assert_eq!(config["authenticationType"], "open-source");
    assert_eq!(config["disablePasswordAuth"], false);
    assert_eq!(config["flags"], json!({}));
    assert_eq!(config["frontendApiOrigins"], json!(["*"]));
    assert_eq!(config["resourceLimits"]["segmentValues"], 77);
    assert_eq!(config["resourceLimits"]["featureFlags"], 5000);
    assert_eq!(config["segmentValuesLimit"], 77);
    assert_eq!(config["serviceUrl"], server.base);
    assert_eq!(config["serviceUrl"], config["unleashUrl"]);
    let info = &config["versionInfo"];
    assert_eq!(info["latest"], json!({}));
    assert_eq!(info["isLatest"], true);
    assert_eq!(info["current"]["enterprise"], "");
    let oss = info["current"]["oss"].as_str().unwrap();
    assert!(
        oss == "unknown" || (oss.len() == 40 && oss.bytes().all(|b| b.is_ascii_hexdigit())),
        "{oss}"
    );
    assert_eq!(
        uuid::Uuid::parse_str(info["instanceId"].as_str().unwrap())
            .unwrap()
            .get_version_num(),
        4
    );

    // Set: normalised, shown, one event; the control plane's own frontend API answers by the new list.
    let set = server
        .post(
            "/api/admin/ui-config",
            json!({"frontendSettings": {"frontendApiOrigins": ["https://App.example.com/", "http://localhost:3000"]}}),
        )
        .await;
    assert_eq!(set.status, 200);
    let expected = json!(["https://app.example.com", "http://localhost:3000"]);
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["frontendApiOrigins"],
        expected
    );
    let events = events_of_type(&server, "setting-updated").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"], json!({"frontendApiOrigins": expected}));
    assert_eq!(events[0]["preData"], json!({"frontendApiOrigins": ["*"]}));
    let allowed = |origin: &'static str| {
        let server = &server;
        async move {
            let response = server
                .client
                .request(
                    reqwest::Method::OPTIONS,
                    format!("{}/api/frontend", server.base),
                )
                .header("Origin", origin)
                .header("Access-Control-Request-Method", "GET")
                .send()
                .await
                .unwrap();
            response
                .headers()
                .get("access-control-allow-origin")
                .map(|value| value.to_str().unwrap().to_owned())
        }
    };
    let mut waited = 0;
    while allowed("https://app.example.com").await.as_deref() != Some("https://app.example.com") {
        waited += 1;
        assert!(
            waited < 50,
            "the control plane's frontend API never used the new origins"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(allowed("https://evil.example.com").await, None);

    // Bad input: 400, nothing changes.
    let before = event_count(&server).await;
    for body in [
        json!({"frontendSettings": {"frontendApiOrigins": ["not a url"]}}),
        json!({"frontendSettings": {"frontendApiOrigins": ["https://example.com/path"]}}),
        json!({"frontendSettings": {"frontendApiOrigins": []}}),
        json!({"frontendSettings": {}}),
        json!({}),
    ] {
        server
            .post("/api/admin/ui-config", body)
            .await
            .expect_error(400, "ValidationError");
    }
    for body in [json!({}), json!({"frontendApiOrigins": ["ftp//x"]})] {
        server
            .post("/api/admin/ui-config/cors", body)
            .await
            .expect_error(400, "ValidationError");
    }
    assert_eq!(event_count(&server).await, before);

    // Editors and Viewers read it but may not write it.
    let (_, editor) = user_with_pat(&server, "ed", "Editor").await;
    as_user(&server, "GET", "/api/admin/ui-config", None, &editor)
        .await
        .expect(200);
    as_user(
        &server,
        "POST",
        "/api/admin/ui-config",
        Some(json!({"frontendSettings": {"frontendApiOrigins": ["*"]}})),
        &editor,
    )
    .await
    .expect_error(403, "NoAccessError");

    // The 8.x alias: 204; back to every origin.
    let cors = server
        .post(
            "/api/admin/ui-config/cors",
            json!({"frontendApiOrigins": ["*"]}),
        )
        .await;
    assert_eq!(cors.status, 204);
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["frontendApiOrigins"],
        json!(["*"])
    );
    let mut waited = 0;
    while allowed("https://evil.example.com").await.as_deref() != Some("*") {
        waited += 1;
        assert!(
            waited < 50,
            "the control plane's frontend API never allowed every origin again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(events_of_type(&server, "setting-updated").await.len(), 2);

    // Password sign-in off: reported.
    server.kill();
    let server = Server::start(&db, &["--disable-password-auth"]).await;
    let config = server.get("/api/admin/ui-config").await.expect(200).clone();
    assert_eq!(config["disablePasswordAuth"], true);
    assert_eq!(config["resourceLimits"]["segmentValues"], 1000);
    assert_eq!(config["frontendApiOrigins"], json!(["*"]));
}
