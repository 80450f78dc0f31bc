//! Scheduled change requests through the real binary, on SQLite and Postgres: the rules of `Scheduled`
//! (only from Approved, a time in the future, reschedule, cancel, a change drops the schedule), the list
//! `…/change-requests/scheduled`, application at the time by the control plane itself (also when it was
//! restarted in between), the failure and suspension outcomes with their events, and (Postgres) two
//! replicas applying a schedule once.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{assert_timestamp, Answer, Server};
use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

crate::on_sqlite_and_postgres!(
    scheduling_rules_and_the_scheduled_list,
    a_scheduled_request_is_applied_at_its_time,
    a_restart_before_the_time_loses_nothing,
    failed_and_suspended_schedules_record_their_events,
    maintenance_mode_holds_a_due_schedule_until_it_ends,
);

const PROJECT: &str = "/api/admin/projects/default";
const CHANGES_DEV: &str = "/api/admin/projects/default/environments/development/change-requests";
const SCHEDULED: &str = "/api/admin/projects/default/change-requests/scheduled";

fn request_path(id: i64) -> String {
    format!("{PROJECT}/change-requests/{id}")
}

/// RFC 3339 `seconds` from now (negative: in the past).
fn in_seconds(seconds: i64) -> String {
    (Utc::now() + chrono::TimeDelta::seconds(seconds)).to_rfc3339_opts(SecondsFormat::Millis, true)
}

async fn put_state(server: &Server, id: i64, body: Value, pat: Option<&str>) -> Answer {
    let path = format!("{}/state", request_path(id));
    match pat {
        Some(pat) => server.send("PUT", &path, Some(body), Some(pat)).await,
        None => server.put(&path, body).await,
    }
}

async fn schedule(server: &Server, id: i64, at: &str, pat: Option<&str>) -> Answer {
    put_state(
        server,
        id,
        json!({"state": "Scheduled", "scheduledAt": at}),
        pat,
    )
    .await
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

async fn create_flag(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
}

async fn enable_change_requests(server: &Server) {
    server
        .put(
            &format!("{PROJECT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
}

/// A request of the admin token holding `changes`, approved by `reviewer`.
async fn approved(server: &Server, changes: Value, reviewer: &str) -> i64 {
    let id = server.post(CHANGES_DEV, changes).await.expect(200)["id"]
        .as_i64()
        .unwrap();
    put_state(server, id, json!({"state": "In review"}), None)
        .await
        .expect(200);
    let answer = put_state(server, id, json!({"state": "Approved"}), Some(reviewer)).await;
    assert_eq!(answer.expect(200)["state"], "Approved");
    id
}

fn switch_on(flag: &str) -> Value {
    json!({"feature": flag, "action": "updateEnabled", "payload": {"enabled": true}})
}

async fn enabled_in_development(server: &Server, flag: &str) -> bool {
    let answer = server.get(&format!("{PROJECT}/features/{flag}")).await;
    let environments = answer.expect(200)["environments"].as_array().unwrap();
    environments
        .iter()
        .find(|environment| environment["name"] == "development")
        .unwrap()["enabled"]
        .as_bool()
        .unwrap()
}

/// The request once `ready` says so, within `limit`.
async fn wait_for(
    server: &Server,
    id: i64,
    limit: Duration,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    let started = Instant::now();
    loop {
        let request = server.get(&request_path(id)).await.expect(200).clone();
        if ready(&request) {
            return request;
        }
        assert!(
            started.elapsed() < limit,
            "change request {id} not as expected within {limit:?}: {request}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn scheduling_rules_and_the_scheduled_list(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    create_flag(&server, "banner").await;
    enable_change_requests(&server).await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;

    // Only an Approved request is scheduled.
    let draft = server
        .post(CHANGES_DEV, switch_on("banner"))
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let message = schedule(&server, draft, &in_seconds(3600), None)
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("is Draft"), "{message}");
    put_state(&server, draft, json!({"state": "In review"}), None)
        .await
        .expect(200);
    let message = schedule(&server, draft, &in_seconds(3600), None)
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("is In review"), "{message}");
    put_state(&server, draft, json!({"state": "Approved"}), Some(&bob))
        .await
        .expect(200);

    // scheduledAt: required, a date-time, in the future.
    for (body, expected) in [
        (json!({"state": "Scheduled"}), "required"),
        (
            json!({"state": "Scheduled", "scheduledAt": "tomorrow"}),
            "RFC 3339",
        ),
        (
            json!({"state": "Scheduled", "scheduledAt": in_seconds(-60)}),
            "not in the future",
        ),
    ] {
        let message = put_state(&server, draft, body, None)
            .await
            .expect_error(400, "ValidationError");
        assert!(
            message.starts_with("scheduledAt") && message.contains(expected),
            "{message}"
        );
    }
    assert_eq!(
        server.get(&request_path(draft)).await.expect(200)["state"],
        "Approved"
    );
    assert!(server.get(&request_path(draft)).await.expect(200)["schedule"].is_null());

    // Scheduled: the request shows its schedule; the list has it.
    let at = in_seconds(3600);
    let scheduled = schedule(&server, draft, &at, Some(&bob)).await;
    let request = scheduled.expect(200);
    assert_eq!(request["state"], "Scheduled");
    assert_timestamp(&request["stateTimestamps"]["Scheduled"]);
    assert_eq!(
        request["schedule"],
        json!({"scheduledAt": at, "status": "pending"})
    );
    let listed = json!([{"id": draft, "environment": "development", "title": format!("Change request #{draft}")}]);
    assert_eq!(server.get(SCHEDULED).await.expect(200), &listed);
    assert_eq!(
        server
            .get(&format!("{SCHEDULED}?feature=checkout&feature=banner"))
            .await
            .expect(200),
        &listed
    );
    assert_eq!(
        server
            .get(&format!("{SCHEDULED}?feature=checkout"))
            .await
            .expect(200),
        &json!([])
    );
    assert_eq!(
        server
            .get(&format!("{SCHEDULED}?variantForFlag=banner"))
            .await
            .expect(200),
        &json!([])
    );
    server
        .get("/api/admin/projects/nowhere/change-requests/scheduled")
        .await
        .expect_error(404, "NotFoundError");
    let events = events_of_type(&server, "change-request-scheduled").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["createdBy"], "bob");
    assert_eq!(events[0]["data"]["scheduledAt"], at);
    assert_eq!(events[0]["environment"], "development");

    // Rescheduled: a new time, the old one in the event's preData; not back to Approved (as Unleash).
    let later = in_seconds(7200);
    let moved = schedule(&server, draft, &later, None).await;
    assert_eq!(moved.expect(200)["schedule"]["scheduledAt"], later);
    let events = events_of_type(&server, "change-request-scheduled").await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["preData"]["scheduledAt"], at);
    let message = put_state(&server, draft, json!({"state": "Approved"}), Some(&bob))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("is Scheduled"), "{message}");

    // A change to a Scheduled request sends it back to review without its schedule.
    let change = moved.body["features"][0]["changes"][0]["id"]
        .as_i64()
        .unwrap();
    server
        .put(
            &format!("{}/changes/{change}", request_path(draft)),
            switch_on("banner"),
        )
        .await
        .expect(200);
    let reopened = server.get(&request_path(draft)).await.expect(200).clone();
    assert_eq!(reopened["state"], "In review");
    assert!(reopened["schedule"].is_null(), "{reopened}");
    assert_eq!(server.get(SCHEDULED).await.expect(200), &json!([]));

    // Cancelling a scheduled request cancels it.
    put_state(&server, draft, json!({"state": "Approved"}), Some(&bob))
        .await
        .expect(200);
    schedule(&server, draft, &in_seconds(3600), None)
        .await
        .expect(200);
    let cancelled = put_state(&server, draft, json!({"state": "Cancelled"}), None).await;
    let cancelled = cancelled.expect(200);
    assert_eq!(cancelled["state"], "Cancelled");
    assert!(cancelled["schedule"].is_null(), "{cancelled}");
    assert_eq!(server.get(SCHEDULED).await.expect(200), &json!([]));
    assert!(!enabled_in_development(&server, "banner").await);
}

async fn a_scheduled_request_is_applied_at_its_time(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    enable_change_requests(&server).await;
    let (bob_id, bob) = user_with_pat(&server, "bob", "Editor").await;
    let id = approved(&server, switch_on("checkout"), &bob).await;
    let at = in_seconds(3);
    schedule(&server, id, &at, Some(&bob)).await.expect(200);
    assert!(!enabled_in_development(&server, "checkout").await);

    let request = wait_for(&server, id, Duration::from_secs(20), |request| {
        request["state"] == "Applied"
    })
    .await;
    assert!(enabled_in_development(&server, "checkout").await);
    let applied_at = request["stateTimestamps"]["Applied"].as_str().unwrap();
    assert!(
        applied_at >= at.as_str(),
        "applied at {applied_at}, due {at}"
    );
    assert!(request.get("schedule").is_none(), "{request}");
    assert_eq!(server.get(SCHEDULED).await.expect(200), &json!([]));

    // The apply's own events and the success, once, as the one who scheduled it, in one revision.
    let success = events_of_type(&server, "change-request-scheduled-application-success").await;
    assert_eq!(success.len(), 1, "{success:?}");
    assert_eq!(success[0]["createdBy"], "bob");
    assert_eq!(success[0]["createdByUserId"], bob_id);
    assert_eq!(success[0]["data"]["changeRequestId"], id);
    assert_eq!(success[0]["data"]["scheduledAt"], at);
    let applied = events_of_type(&server, "change-request-applied").await;
    assert_eq!(applied.len(), 1);
    let enabled = events_of_type(&server, "feature-environment-enabled").await;
    assert_eq!(enabled.len(), 1);
    assert_eq!(enabled[0]["createdBy"], "bob");
    assert_eq!(enabled[0]["createdAt"], success[0]["createdAt"]);
}

async fn a_restart_before_the_time_loses_nothing(db: TestDb) {
    let mut first = Server::start(&db, &[]).await;
    create_flag(&first, "checkout").await;
    enable_change_requests(&first).await;
    let (_, bob) = user_with_pat(&first, "bob", "Editor").await;
    let id = approved(&first, switch_on("checkout"), &bob).await;
    let at = in_seconds(4);
    schedule(&first, id, &at, None).await.expect(200);
    assert!(first.terminate().success());

    // Nothing runs at the time; the next start applies it.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let second = Server::start(&db, &[]).await;
    let request = wait_for(&second, id, Duration::from_secs(20), |request| {
        request["state"] == "Applied"
    })
    .await;
    assert!(enabled_in_development(&second, "checkout").await);
    assert!(request["stateTimestamps"]["Applied"].as_str().unwrap() > at.as_str());
    let success = events_of_type(&second, "change-request-scheduled-application-success").await;
    assert_eq!(success.len(), 1, "{success:?}");
    assert_eq!(success[0]["createdBy"], "init-admin-token-1");
}

async fn failed_and_suspended_schedules_record_their_events(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    create_flag(&server, "banner").await;
    let dev = format!("{PROJECT}/features/checkout/environments/development");
    let strategy = server
        .post(&format!("{dev}/strategies"), json!({"name": "default"}))
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    enable_change_requests(&server).await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (carol_id, carol) = user_with_pat(&server, "carol", "Editor").await;
    let (dave_id, dave) = user_with_pat(&server, "dave", "Editor").await;

    // Failed: its strategy is gone by the time.
    let failing = approved(
        &server,
        json!({"feature": "checkout", "action": "updateStrategy",
               "payload": {"id": strategy, "name": "default", "title": "renamed"}}),
        &bob,
    )
    .await;
    // Suspended: the one who scheduled it may no longer apply it, or is gone.
    let suspended = approved(&server, switch_on("banner"), &bob).await;
    let orphaned = approved(&server, switch_on("checkout"), &bob).await;
    let at = in_seconds(4);
    schedule(&server, failing, &at, None).await.expect(200);
    schedule(&server, suspended, &at, Some(&carol))
        .await
        .expect(200);
    schedule(&server, orphaned, &at, Some(&dave))
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/user-admin/{dave_id}"))
        .await
        .expect(200);
    server
        .put(
            &format!("{PROJECT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": false}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("{dev}/strategies/{strategy}"))
        .await
        .expect(200);
    enable_change_requests(&server).await;
    server
        .put(
            &format!("/api/admin/user-admin/{carol_id}"),
            json!({"rootRole": "Viewer"}),
        )
        .await
        .expect(200);

    let failed = wait_for(&server, failing, Duration::from_secs(20), |request| {
        request["schedule"]["status"] == "failed"
    })
    .await;
    assert_eq!(failed["state"], "Scheduled");
    assert_eq!(failed["schedule"]["scheduledAt"], at);
    let reason = failed["schedule"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("updateStrategy") && reason.contains(&strategy),
        "{reason}"
    );
    let events = events_of_type(&server, "change-request-scheduled-application-failure").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["changeRequestId"], failing);
    assert_eq!(events[0]["data"]["reason"], reason);

    let request = wait_for(&server, suspended, Duration::from_secs(20), |request| {
        request["schedule"]["status"] == "suspended"
    })
    .await;
    assert_eq!(request["state"], "Scheduled");
    let reason = request["schedule"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("carol") && reason.contains("APPLY_CHANGE_REQUEST"),
        "{reason}"
    );
    let request = wait_for(&server, orphaned, Duration::from_secs(20), |request| {
        request["schedule"]["status"] == "suspended"
    })
    .await;
    let reason = request["schedule"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("dave, user id {dave_id}")) && reason.contains("deleted"),
        "{reason}"
    );
    let events = events_of_type(&server, "change-request-schedule-suspended").await;
    assert_eq!(events.len(), 2, "{events:?}");
    let mut suspended_ids: Vec<i64> = events
        .iter()
        .map(|event| event["data"]["changeRequestId"].as_i64().unwrap())
        .collect();
    suspended_ids.sort_unstable();
    assert_eq!(suspended_ids, [suspended, orphaned]);
    assert!(!enabled_in_development(&server, "banner").await);
    assert!(
        events_of_type(&server, "change-request-scheduled-application-success")
            .await
            .is_empty()
    );
    // Neither is listed as scheduled any more; neither was applied.
    assert_eq!(server.get(SCHEDULED).await.expect(200), &json!([]));

    // Rescheduled by someone allowed, the suspended one applies.
    schedule(&server, suspended, &in_seconds(2), Some(&bob))
        .await
        .expect(200);
    wait_for(&server, suspended, Duration::from_secs(20), |request| {
        request["state"] == "Applied"
    })
    .await;
    assert!(enabled_in_development(&server, "banner").await);
}

/// Two replicas on one Postgres database: each scheduled request is applied once (one success event, one
/// application's events), whichever replica gets there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_apply_each_schedule_once() {
    let db = TestDb::postgres().await;
    let first = Server::start(&db, &[]).await;
    let second = Server::start(&db, &[]).await;
    enable_change_requests(&first).await;
    let (_, bob) = user_with_pat(&first, "bob", "Editor").await;
    let flags = ["one", "two", "three", "four"];
    let mut ids = Vec::new();
    for flag in flags {
        create_flag(&first, flag).await;
        ids.push(approved(&first, switch_on(flag), &bob).await);
    }
    let at = in_seconds(4);
    for (index, id) in ids.iter().enumerate() {
        let replica = if index % 2 == 0 { &first } else { &second };
        schedule(replica, *id, &at, None).await.expect(200);
    }
    for id in &ids {
        wait_for(&second, *id, Duration::from_secs(20), |request| {
            request["state"] == "Applied"
        })
        .await;
    }
    // Both replicas had the time to try again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for flag in flags {
        assert!(enabled_in_development(&first, flag).await, "{flag}");
    }
    let success = events_of_type(&first, "change-request-scheduled-application-success").await;
    assert_eq!(success.len(), flags.len(), "{success:?}");
    let applied = events_of_type(&first, "change-request-applied").await;
    assert_eq!(applied.len(), flags.len(), "{applied:?}");
    let enabled = events_of_type(&first, "feature-environment-enabled").await;
    assert_eq!(enabled.len(), flags.len(), "{enabled:?}");
    let mut applied_ids: Vec<i64> = success
        .iter()
        .map(|event| event["data"]["changeRequestId"].as_i64().unwrap())
        .collect();
    applied_ids.sort_unstable();
    assert_eq!(applied_ids, ids);
}

/// A schedule falling due while maintenance mode is on is not applied (nothing changes) until an Admin turns
/// maintenance mode off; then it is applied once.
async fn maintenance_mode_holds_a_due_schedule_until_it_ends(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    enable_change_requests(&server).await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let id = approved(&server, switch_on("checkout"), &bob).await;
    schedule(&server, id, &in_seconds(1), None)
        .await
        .expect(200);
    server
        .post("/api/admin/maintenance", json!({"enabled": true}))
        .await
        .expect(204);
    // Past its time and two of the scheduler's looks later: still waiting, the flag still off.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let request = server.get(&request_path(id)).await.expect(200).clone();
    assert_eq!(request["state"], "Scheduled", "{request}");
    assert!(!enabled_in_development(&server, "checkout").await);

    server
        .post("/api/admin/maintenance", json!({"enabled": false}))
        .await
        .expect(204);
    wait_for(&server, id, Duration::from_secs(10), |request| {
        request["state"] == "Applied"
    })
    .await;
    assert!(enabled_in_development(&server, "checkout").await);
}
