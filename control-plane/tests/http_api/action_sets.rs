//! Action sets through the real binary, on SQLite and Postgres: their CRUD, checks and limits; a signal that
//! passes a set's filters switches a flag off (as the SDKs see it) as the set's service account, one that does
//! not changes nothing; a service account without the permission, and an environment with change requests
//! on, fail and are logged; a signal pauses a release plan's automatic progression; and (Postgres) two replicas run each set once per signal.

use crate::database::TestDb;
use crate::server::{assert_timestamp, Server, CLIENT_TOKEN};
use crate::signal_endpoints::{endpoint_with_token, signal};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

crate::on_sqlite_and_postgres!(
    action_sets_crud_checks_and_limits,
    a_matching_signal_switches_a_flag_off_and_another_changes_nothing,
    a_service_account_without_the_permission_fails_and_is_logged,
    an_environment_with_change_requests_is_refused_and_logged,
    a_signal_pauses_a_release_plans_progression,
    a_signal_stored_while_no_control_plane_runs_is_processed_at_the_start,
);

const PROJECT: &str = "/api/admin/projects/default";
const ACTIONS: &str = "/api/admin/projects/default/actions";

/// A service account of root role `role` (1 Admin, 2 Editor, 3 Viewer): its id.
async fn service_account(server: &Server, username: &str, role: i64) -> i64 {
    let created = server
        .post(
            "/api/admin/service-account",
            json!({"username": username, "name": username, "rootRole": role}),
        )
        .await;
    created.expect(201)["id"].as_i64().unwrap()
}

async fn flag_on_in_development(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
    server
        .post_empty(&format!(
            "{PROJECT}/features/{name}/environments/development/on"
        ))
        .await
        .expect(200);
}

async fn enabled_in_development(server: &Server, flag: &str) -> bool {
    let answer = server.get(&format!("{PROJECT}/features/{flag}")).await;
    answer.expect(200)["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "development")
        .unwrap()["enabled"]
        .as_bool()
        .unwrap()
}

/// What the SDKs are served for `flag` (the development client token).
async fn served_enabled(server: &Server, flag: &str) -> bool {
    let answer = server
        .send("GET", "/api/client/features", None, Some(CLIENT_TOKEN))
        .await;
    answer.expect(200)["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|feature| feature["name"] == flag)
        .unwrap()["enabled"]
        .as_bool()
        .unwrap()
}

fn toggle(action: &str, flag: &str, sort_order: i64) -> Value {
    json!({
        "action": action,
        "sortOrder": sort_order,
        "executionParams": {"project": "default", "featureName": flag, "environment": "development"},
    })
}

/// An action set on endpoint `source` running `actions` as `actor` when the alert fires at critical severity.
fn firing_critical(source: i64, actor: i64, actions: Value) -> Value {
    json!({
        "name": "switch off on critical alerts",
        "description": "Alertmanager pages",
        "actorId": actor,
        "match": {
            "source": "signal-endpoint",
            "sourceId": source,
            "payload": {
                "status": {"operator": "IN", "values": ["firing"], "inverted": false, "caseInsensitive": false},
                "alerts.0.labels.severity": {"operator": "STR_STARTS_WITH", "values": ["CRIT"], "inverted": false, "caseInsensitive": true},
            },
        },
        "actions": actions,
    })
}

fn alert(status: &str, severity: &str) -> Value {
    json!({"status": status, "alerts": [{"status": status, "labels": {"alertname": "Errors", "severity": severity}}]})
}

/// The executions of set `id` once there are `count`, within 15 s.
async fn executions(server: &Server, id: i64, count: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let answer = server.get(&format!("{ACTIONS}/{id}/events")).await;
        let events = answer.expect(200)["actionSetEvents"]
            .as_array()
            .unwrap()
            .clone();
        if events.len() >= count {
            assert_eq!(events.len(), count, "{events:?}");
            return events;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{count} executions of set {id} expected, found {events:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
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

async fn action_sets_crud_checks_and_limits(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (source, _) = endpoint_with_token(&server, "alerts").await;
    let actor = service_account(&server, "automation", 2).await;
    let body = firing_critical(
        source,
        actor,
        json!([toggle("TOGGLE_FEATURE_OFF", "checkout", 1)]),
    );
    let created = server.post(ACTIONS, body.clone()).await.expect(201).clone();
    let id = created["id"].as_i64().unwrap();
    assert_eq!(created["project"], "default");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["actorId"], actor);
    assert_eq!(created["match"], body["match"].clone());
    assert_eq!(created["actions"][0]["action"], "TOGGLE_FEATURE_OFF");
    assert_eq!(created["actions"][0]["sortOrder"], 1);
    assert_timestamp(&created["actions"][0]["createdAt"]);
    assert_timestamp(&created["createdAt"]);
    let listed = server.get(ACTIONS).await.expect(200).clone();
    assert_eq!(listed["actions"], json!([created.clone()]));

    // The checks: each a 400 naming the field.
    let mut refusals = Vec::new();
    let mut bad = body.clone();
    bad["match"]["payload"]["status"]["operator"] = json!("LIKE");
    refusals.push(bad);
    let mut bad = body.clone();
    bad["actions"][0]["action"] = json!("DELETE_EVERYTHING");
    refusals.push(bad);
    let mut bad = body.clone();
    bad["actions"][0]["executionParams"]
        .as_object_mut()
        .unwrap()
        .remove("environment");
    refusals.push(bad);
    let mut bad = body.clone();
    bad["actions"][0]["executionParams"]["project"] = json!("another");
    refusals.push(bad);
    let mut bad = body.clone();
    bad["actorId"] = json!(99_999);
    refusals.push(bad);
    let mut bad = body.clone();
    bad["match"]["sourceId"] = json!(99_999);
    refusals.push(bad);
    let mut bad = body.clone();
    bad["match"]["source"] = json!("webhook");
    refusals.push(bad);
    for refused in refusals {
        server
            .post(ACTIONS, refused.clone())
            .await
            .expect_error(400, "ValidationError");
    }

    // The limits: 400 past each, and reported.
    let limits = server.get("/api/admin/ui-config").await.expect(200)["resourceLimits"].clone();
    assert_eq!(limits["actionSetsPerProject"], 5);
    assert_eq!(limits["actionSetActions"], 10);
    assert_eq!(limits["actionSetFilters"], 5);
    assert_eq!(limits["actionSetFilterValues"], 25);
    let eleven: Vec<Value> = (1..=11)
        .map(|order| toggle("TOGGLE_FEATURE_OFF", "checkout", order))
        .collect();
    let mut past = Vec::new();
    past.push((
        firing_critical(source, actor, json!(eleven)),
        "actionSetActions",
    ));
    let mut six_filters = body.clone();
    for index in 0..4 {
        six_filters["match"]["payload"][format!("labels.l{index}")] =
            json!({"operator": "IN", "values": ["x"]});
    }
    past.push((six_filters, "actionSetFilters"));
    let mut many_values = body.clone();
    let values: Vec<String> = (0..25).map(|index| format!("v{index}")).collect();
    many_values["match"]["payload"]["status"]["values"] = json!(values);
    past.push((many_values, "actionSetFilterValues"));
    for (refused, limit) in past {
        let message = server
            .post(ACTIONS, refused)
            .await
            .expect_error(400, "ExceedsLimitError");
        assert!(message.contains(limit), "{message}");
    }
    for _ in 1..5 {
        server.post(ACTIONS, body.clone()).await.expect(201);
    }
    let message = server
        .post(ACTIONS, body.clone())
        .await
        .expect_error(400, "ExceedsLimitError");
    assert!(message.contains("actionSetsPerProject"), "{message}");

    // Replaced, deleted; Admins only.
    let mut changed = body.clone();
    changed["enabled"] = json!(false);
    changed["name"] = json!("paused");
    let updated = server
        .put(&format!("{ACTIONS}/{id}"), changed)
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["enabled"], false);
    assert_eq!(updated["name"], "paused");
    assert_eq!(updated["createdAt"], created["createdAt"]);
    server
        .put(&format!("{ACTIONS}/99999"), body.clone())
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/projects/nowhere/actions")
        .await
        .expect_error(404, "NotFoundError");
    let (_, editor) = crate::access::user_with_pat(&server, "eddie", "Editor").await;
    server
        .send("POST", ACTIONS, Some(body.clone()), Some(&editor))
        .await
        .expect_error(403, "NoAccessError");
    server.delete(&format!("{ACTIONS}/{id}")).await.expect(200);
    server
        .get(&format!("{ACTIONS}/{id}/events"))
        .await
        .expect_error(404, "NotFoundError");
    for (event_type, count) in [
        ("actions-created", 5),
        ("actions-updated", 1),
        ("actions-deleted", 1),
    ] {
        let events = events_of_type(&server, event_type).await;
        assert_eq!(events.len(), count, "{event_type}: {events:?}");
        assert_eq!(events[0]["project"], "default");
    }
}

async fn a_matching_signal_switches_a_flag_off_and_another_changes_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    flag_on_in_development(&server, "checkout").await;
    let (source, token) = endpoint_with_token(&server, "alerts").await;
    let actor = service_account(&server, "automation", 2).await;
    let body = firing_critical(
        source,
        actor,
        json!([toggle("TOGGLE_FEATURE_OFF", "checkout", 1)]),
    );
    let id = server.post(ACTIONS, body).await.expect(201)["id"]
        .as_i64()
        .unwrap();
    assert!(served_enabled(&server, "checkout").await);
    // A second set disables a strategy of another flag.
    flag_on_in_development(&server, "banner").await;
    let strategies = format!("{PROJECT}/features/banner/environments/development/strategies");
    let strategy = server.get(&strategies).await.expect(200)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut disable = toggle("DISABLE_FEATURE_STRATEGY", "banner", 1);
    disable["executionParams"]["strategyId"] = json!(strategy);
    let second = server
        .post(ACTIONS, firing_critical(source, actor, json!([disable])))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();

    // Passing no filter (resolved; firing but a warning): nothing happens.
    for payload in [
        alert("resolved", "critical"),
        alert("firing", "warning"),
        json!("text"),
    ] {
        signal(&server, "alerts", Some(&token), payload)
            .await
            .expect(200);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(enabled_in_development(&server, "checkout").await);
    executions(&server, id, 0).await;

    // Firing at critical severity: off within seconds, as the service account.
    signal(&server, "alerts", Some(&token), alert("firing", "critical"))
        .await
        .expect(200);
    let log = executions(&server, id, 1).await;
    assert_eq!(log[0]["state"], "success", "{log:?}");
    assert_eq!(log[0]["actionSetId"], id);
    assert_eq!(log[0]["signal"]["payload"], alert("firing", "critical"));
    assert_eq!(log[0]["actionSet"]["actions"][0]["state"], "success");
    assert_timestamp(&log[0]["createdAt"]);
    assert!(!enabled_in_development(&server, "checkout").await);
    assert!(!served_enabled(&server, "checkout").await);
    assert_eq!(executions(&server, second, 1).await[0]["state"], "success");
    let disabled = server.get(&format!("{strategies}/{strategy}")).await;
    assert_eq!(disabled.expect(200)["disabled"], true);
    // As the service account; banner's last enabled strategy gone, banner is off too.
    let disabled = events_of_type(&server, "feature-environment-disabled").await;
    let mut flags: Vec<&str> = disabled
        .iter()
        .map(|event| event["featureName"].as_str().unwrap())
        .collect();
    flags.sort_unstable();
    assert_eq!(flags, ["banner", "checkout"], "{disabled:?}");
    assert!(disabled
        .iter()
        .all(|event| event["createdBy"] == "automation"));
}

async fn a_service_account_without_the_permission_fails_and_is_logged(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    flag_on_in_development(&server, "checkout").await;
    let (source, token) = endpoint_with_token(&server, "alerts").await;
    let viewer = service_account(&server, "watcher", 3).await;
    let actions = json!([
        toggle("TOGGLE_FEATURE_OFF", "checkout", 1),
        toggle("TOGGLE_FEATURE_ON", "checkout", 2),
    ]);
    let id = server
        .post(ACTIONS, firing_critical(source, viewer, actions))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    signal(&server, "alerts", Some(&token), alert("firing", "critical"))
        .await
        .expect(200);
    let log = executions(&server, id, 1).await;
    assert_eq!(log[0]["state"], "failed", "{log:?}");
    let actions = log[0]["actionSet"]["actions"].as_array().unwrap();
    assert_eq!(actions[0]["state"], "failed");
    let details = actions[0]["details"].as_str().unwrap();
    assert!(details.contains("UPDATE_FEATURE_ENVIRONMENT"), "{details}");
    assert_eq!(actions[1]["state"], "not started");
    assert!(enabled_in_development(&server, "checkout").await);
    assert!(events_of_type(&server, "feature-environment-disabled")
        .await
        .is_empty());
}

async fn an_environment_with_change_requests_is_refused_and_logged(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    flag_on_in_development(&server, "checkout").await;
    server
        .put(
            &format!("{PROJECT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let (source, token) = endpoint_with_token(&server, "alerts").await;
    let admin = service_account(&server, "automation", 1).await;
    let actions = json!([toggle("TOGGLE_FEATURE_OFF", "checkout", 1)]);
    let id = server
        .post(ACTIONS, firing_critical(source, admin, actions))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    signal(&server, "alerts", Some(&token), alert("firing", "critical"))
        .await
        .expect(200);
    let log = executions(&server, id, 1).await;
    assert_eq!(log[0]["state"], "failed", "{log:?}");
    let details = log[0]["actionSet"]["actions"][0]["details"]
        .as_str()
        .unwrap();
    assert!(details.contains("Change requests are enabled"), "{details}");
    assert!(enabled_in_development(&server, "checkout").await);
}

/// Two replicas on one Postgres database: each set runs once per signal (a set that switches the flag off
/// and on again would record its events twice otherwise), whichever replica received it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_run_each_set_once_per_signal() {
    let db = TestDb::postgres().await;
    let first = Server::start(&db, &[]).await;
    let second = Server::start(&db, &[]).await;
    flag_on_in_development(&first, "checkout").await;
    let (source, token) = endpoint_with_token(&first, "alerts").await;
    let actor = service_account(&first, "automation", 2).await;
    let actions = json!([
        toggle("TOGGLE_FEATURE_OFF", "checkout", 1),
        toggle("TOGGLE_FEATURE_ON", "checkout", 2),
    ]);
    let id = first
        .post(ACTIONS, firing_critical(source, actor, actions))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let signals = 6;
    for index in 0..signals {
        let replica = if index % 2 == 0 { &first } else { &second };
        signal(replica, "alerts", Some(&token), alert("firing", "critical"))
            .await
            .expect(200);
    }
    let log = executions(&second, id, signals).await;
    // Both replicas had the time to look again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    executions(&first, id, signals).await;
    assert!(
        log.iter().all(|execution| execution["state"] == "success"),
        "{log:?}"
    );
    let mut signal_ids: Vec<i64> = log
        .iter()
        .map(|execution| execution["signalId"].as_i64().unwrap())
        .collect();
    signal_ids.sort_unstable();
    signal_ids.dedup();
    assert_eq!(signal_ids.len(), signals);
    assert_eq!(
        events_of_type(&first, "feature-environment-disabled")
            .await
            .len(),
        signals
    );
    assert_eq!(
        events_of_type(&first, "feature-environment-enabled")
            .await
            .len(),
        signals + 1
    );
}

/// A signal as the receiver stores it, written while no control plane runs (as if one stopped right after
/// receiving it): the next start processes it.
async fn a_signal_stored_while_no_control_plane_runs_is_processed_at_the_start(db: TestDb) {
    let mut server = Server::start(&db, &[]).await;
    flag_on_in_development(&server, "checkout").await;
    let (source, _) = endpoint_with_token(&server, "alerts").await;
    let actor = service_account(&server, "automation", 2).await;
    let actions = json!([toggle("TOGGLE_FEATURE_OFF", "checkout", 1)]);
    let id = server
        .post(ACTIONS, firing_critical(source, actor, actions))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    assert!(server.terminate().success());
    {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
        let signal: i64 = sqlx::query_scalar(
            "UPDATE vexil_counters SET value = value + 1 WHERE name = 'signal' RETURNING value",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO signals (id, source, source_id, token_id, token_name, payload, created_at, processed) \
             VALUES ($1, 'signal-endpoint', $2, NULL, NULL, $3, '2026-01-01T00:00:00.000Z', 0)",
        )
        .bind(signal)
        .bind(source)
        .bind(alert("firing", "critical").to_string())
        .execute(&mut conn)
        .await
        .unwrap();
    }
    let server = Server::start(&db, &[]).await;
    let log = executions(&server, id, 1).await;
    assert_eq!(log[0]["state"], "success", "{log:?}");
    assert!(!enabled_in_development(&server, "checkout").await);
}

async fn a_signal_pauses_a_release_plans_progression(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    flag_on_in_development(&server, "checkout").await;
    flag_on_in_development(&server, "planless").await;
    let rollout = |percent: u32| {
        json!({"strategyName": "flexibleRollout", "sortOrder": 0,
               "parameters": {"rollout": percent, "groupId": "{{featureName}}", "stickiness": "default"}})
    };
    let template = json!({"name": "Gradual", "milestones": [
        {"name": "Quarter", "sortOrder": 0, "strategies": [rollout(25)], "transitionCondition": {"intervalMinutes": 60}},
        {"name": "Everyone", "sortOrder": 1, "strategies": [rollout(100)]}
    ]});
    let template = server
        .post("/api/admin/release-plan-templates", template)
        .await;
    let plans = format!("{PROJECT}/features/checkout/environments/development/release-plans");
    let plan = server
        .post(&plans, json!({"templateId": template.expect(200)["id"]}))
        .await
        .expect(200)
        .clone();
    let (plan_id, first) = (
        plan["id"].as_str().unwrap(),
        plan["milestones"][0]["id"].as_str().unwrap(),
    );
    server
        .post_empty(&format!("{plans}/{plan_id}/milestones/{first}/start"))
        .await
        .expect(200);
    let (source, token) = endpoint_with_token(&server, "alerts").await;
    let actor = service_account(&server, "automation", 2).await;
    let pause = firing_critical(
        source,
        actor,
        json!([toggle("PAUSE_RELEASE_PLAN", "checkout", 1)]),
    );
    let id = server.post(ACTIONS, pause).await.expect(201)["id"]
        .as_i64()
        .unwrap();
    let mut no_plan = firing_critical(
        source,
        actor,
        json!([toggle("PAUSE_RELEASE_PLAN", "planless", 1)]),
    );
    no_plan["name"] = json!("pause a flag without a plan");
    let failing = server.post(ACTIONS, no_plan).await.expect(201)["id"]
        .as_i64()
        .unwrap();

    signal(&server, "alerts", Some(&token), alert("firing", "critical"))
        .await
        .expect(200);
    assert_eq!(executions(&server, id, 1).await[0]["state"], "success");
    let log = executions(&server, failing, 1).await;
    assert_eq!(log[0]["state"], "failed", "{log:?}");
    let details = log[0]["actionSet"]["actions"][0]["details"]
        .as_str()
        .unwrap();
    assert!(details.contains("no release plan"), "{details}");
    let now = server.get(&format!("{plans}/{plan_id}")).await;
    let now = now.expect(200);
    assert_eq!(
        now["activeMilestoneId"], first,
        "still on the first milestone"
    );
    assert!(!now["milestones"][0]["pausedAt"].is_null(), "{now}");
    let paused = events_of_type(&server, "release-plan-progressions-paused").await;
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(paused[0]["createdBy"], "automation");
    assert_eq!(paused[0]["data"]["reason"], "paused by an action");

    // Paused already: the next alert's run succeeds and records nothing more.
    signal(&server, "alerts", Some(&token), alert("firing", "critical"))
        .await
        .expect(200);
    executions(&server, failing, 2).await;
    let runs = executions(&server, id, 2).await;
    assert!(runs.iter().all(|run| run["state"] == "success"), "{runs:?}");
    let paused = events_of_type(&server, "release-plan-progressions-paused").await;
    assert_eq!(paused.len(), 1, "{paused:?}");
}
