//! Every row of the change requests' state table (API.md §3.6), the approval rules and the reset on change,
//! through the real binary on SQLite and Postgres.

use crate::access::user_with_pat;
use crate::change_requests::{
    as_user, create_flag, enable_change_requests, event_count, events_of_type, request_path,
    set_state, settled_revision, CHANGES_DEV, FLAG, PROJECT,
};
use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::json;

crate::on_sqlite_and_postgres!(the_state_table);

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
