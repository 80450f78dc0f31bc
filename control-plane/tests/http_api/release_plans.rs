//! Release templates and plans through the real binary, on SQLite and Postgres: templates' CRUD and
//! validation, applying one to a flag, starting milestones (the flag's strategies and the client API follow),
//! change requests not bypassed, permissions, and automatic progression: once, after a restart, paused when
//! refused and resumed, and (Postgres) once with two replicas.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{assert_timestamp, Server, ADMIN_TOKEN, CLIENT_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

crate::on_sqlite_and_postgres!(
    release_templates_crud_and_validation,
    applying_a_template_and_starting_milestones,
    change_requests_and_permissions_are_not_bypassed,
    automatic_progression_starts_the_next_milestone_once,
    a_refused_progression_pauses_the_plan_until_resumed,
    a_restart_before_the_progression_is_due_loses_nothing,
);

const TEMPLATES: &str = "/api/admin/release-plan-templates";
const PROJECT: &str = "/api/admin/projects/default";

fn environment_path(flag: &str, environment: &str) -> String {
    format!("{PROJECT}/features/{flag}/environments/{environment}")
}

fn rollout(percent: u32) -> Value {
    json!({"strategyName": "flexibleRollout", "sortOrder": 0,
           "parameters": {"rollout": percent, "groupId": "{{featureName}}", "stickiness": "default"}})
}

/// A template "name" of two milestones: 25 % (progressing after `interval` minutes, if given), then 100 %.
fn two_milestones(name: &str, interval: Option<i64>) -> Value {
    let condition = interval.map(|minutes| json!({"intervalMinutes": minutes}));
    json!({"name": name, "milestones": [
        {"name": "Quarter", "sortOrder": 0, "strategies": [rollout(25)], "transitionCondition": condition},
        {"name": "Everyone", "sortOrder": 1, "strategies": [rollout(100)]}
    ]})
}

async fn create_template(server: &Server, body: Value) -> Value {
    server.post(TEMPLATES, body).await.expect(200).clone()
}

async fn create_flag(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
    server
        .post_empty(&format!("{}/on", environment_path(name, "development")))
        .await
        .expect(200);
}

/// Applies template `template` to `flag` in development: the plan.
async fn apply(server: &Server, flag: &str, template: &Value) -> Value {
    server
        .post(
            &format!("{}/release-plans", environment_path(flag, "development")),
            json!({"templateId": template["id"]}),
        )
        .await
        .expect(200)
        .clone()
}

fn start_path(plan: &Value, index: usize) -> String {
    format!(
        "{}/release-plans/{}/milestones/{}/start",
        environment_path(plan["featureName"].as_str().unwrap(), "development"),
        plan["id"].as_str().unwrap(),
        plan["milestones"][index]["id"].as_str().unwrap()
    )
}

async fn plan_now(server: &Server, plan: &Value) -> Value {
    let path = format!(
        "{}/release-plans/{}",
        environment_path(plan["featureName"].as_str().unwrap(), "development"),
        plan["id"].as_str().unwrap()
    );
    server.get(&path).await.expect(200).clone()
}

/// The rollouts of `flag`'s strategies in development, as the admin API and the client API give them.
async fn rollouts(server: &Server, flag: &str) -> (Vec<String>, Vec<String>) {
    let admin = server
        .get(&format!(
            "{}/strategies",
            environment_path(flag, "development")
        ))
        .await
        .expect(200)
        .clone();
    let client = server
        .send("GET", "/api/client/features", None, Some(CLIENT_TOKEN))
        .await
        .expect(200)
        .clone();
    let of = |strategies: &Value| -> Vec<String> {
        strategies
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{}:{}",
                    s["parameters"]["rollout"].as_str().unwrap_or("-"),
                    s["parameters"]["groupId"].as_str().unwrap_or("-")
                )
            })
            .collect()
    };
    let feature = client["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|feature| feature["name"] == flag)
        .unwrap()
        .clone();
    (of(&admin), of(&feature["strategies"]))
}

/// Waits (5 s at most) until the client API serves `flag` with the one strategy `expected` (a scheduler's
/// write reaches the SDK routes when the publisher has read it; an API write is waited for by its answer).
async fn served_soon(server: &Server, flag: &str, expected: &str) {
    let started = Instant::now();
    loop {
        let (admin, client) = rollouts(server, flag).await;
        if admin == [expected] && client == [expected] {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{flag}: {admin:?} / {client:?}, not {expected}"
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

/// Moves plan `id`'s due progression to `seconds` from now, as if its interval were that short.
async fn due_in(db: &TestDb, id: &str, seconds: i64) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let at = chrono::Utc::now() + chrono::Duration::seconds(seconds);
    let at = at.format("%Y-%m-%dT%H:%M:%S%.3fZ");
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let done = conn
        .execute(
            format!(
                "UPDATE release_plan_definitions SET progression_due_at = '{at}' WHERE id = '{id}' \
                 AND progression_due_at IS NOT NULL"
            )
            .as_str(),
        )
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1, "plan {id} has a due progression");
}

/// The plan once `ready` says so, within 20 s.
async fn wait_for(server: &Server, plan: &Value, ready: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let now = plan_now(server, plan).await;
        if ready(&now) {
            return now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "plan not as expected: {now}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn active_is(plan: &Value, index: usize) -> impl Fn(&Value) -> bool + '_ {
    move |now: &Value| now["activeMilestoneId"] == plan["milestones"][index]["id"]
}

async fn release_templates_crud_and_validation(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let template = create_template(&server, two_milestones("Gradual", Some(60))).await;
    assert_eq!(template["discriminator"], "template");
    assert_eq!(template["name"], "Gradual");
    assert_eq!(template["createdByUserId"], -1337);
    assert_timestamp(&template["createdAt"]);
    assert!(template["archivedAt"].is_null());
    let milestones = template["milestones"].as_array().unwrap();
    assert_eq!(milestones.len(), 2);
    assert_eq!(milestones[0]["name"], "Quarter");
    assert_eq!(milestones[0]["releasePlanDefinitionId"], template["id"]);
    assert_eq!(
        milestones[0]["transitionCondition"],
        json!({"intervalMinutes": 60})
    );
    assert!(milestones[1]["transitionCondition"].is_null());
    let strategy = &milestones[0]["strategies"][0];
    assert_eq!(strategy["milestoneId"], milestones[0]["id"]);
    assert_eq!(strategy["strategyName"], "flexibleRollout");
    assert_eq!(
        strategy["parameters"],
        json!({"rollout": "25", "groupId": "{{featureName}}", "stickiness": "default"})
    );
    let id = template["id"].as_str().unwrap();
    let one = format!("{TEMPLATES}/{id}");
    assert_eq!(server.get(&one).await.expect(200), &template);
    assert_eq!(server.get(TEMPLATES).await.expect(200), &json!([template]));

    // Refusals name the field.
    let message = server
        .post(TEMPLATES, two_milestones("Gradual", None))
        .await
        .expect_error(409, "NameExistsError");
    assert!(message.contains("Gradual"), "{message}");
    for (body, expected) in [
        (json!({"name": " "}), "name: must not be empty"),
        (
            json!({"name": "x", "milestones": [{"name": "", "sortOrder": 0}]}),
            "milestones[0].name: must not be empty",
        ),
        (
            json!({"name": "x", "milestones": [{"name": "m", "sortOrder": 0, "transitionCondition": {"intervalMinutes": 0}}]}),
            "milestones[0].transitionCondition.intervalMinutes: must be at least 1",
        ),
        (
            json!({"name": "x", "milestones": [{"name": "m", "sortOrder": 0, "strategies": [{"strategyName": "nope", "sortOrder": 0}]}]}),
            "milestones[0].strategies[0].strategyName: unknown strategy",
        ),
        (
            json!({"name": "x", "milestones": [{"name": "m", "sortOrder": 0, "strategies": [{"strategyName": "default", "sortOrder": 0, "segments": [99]}]}]}),
            "milestones[0].strategies[0].segments[0]: segment 99 does not exist",
        ),
        (
            json!({"name": "x", "milestones": [{"name": "m", "sortOrder": 0, "strategies": [{"strategyName": "flexibleRollout", "sortOrder": 0, "parameters": {"rollout": 101}}]}]}),
            "milestones[0].strategies[0].parameters.rollout",
        ),
        (
            json!({"name": "x", "milestones": [{"name": "m", "sortOrder": 0, "strategies": [{"strategyName": "default", "sortOrder": 0, "constraints": [{"contextName": "userId", "operator": "LIKE", "values": ["a"]}]}]}]}),
            "milestones[0].strategies[0].constraints[0]",
        ),
    ] {
        let message = server
            .post(TEMPLATES, body)
            .await
            .expect_error(400, "ValidationError");
        assert!(
            message.starts_with(expected),
            "{message} (expected {expected})"
        );
    }
    server
        .get(&format!("{TEMPLATES}/nope"))
        .await
        .expect_error(404, "NotFoundError");

    // A milestone and its strategies, one at a time.
    let added = server
        .post(
            &format!("{one}/milestones"),
            json!({"name": "Half", "sortOrder": 2}),
        )
        .await
        .expect(200)
        .clone();
    let milestone = format!("{one}/milestones/{}", added["id"].as_str().unwrap());
    let with_strategy = server
        .post(&format!("{milestone}/strategies"), rollout(50))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        with_strategy["strategies"][0]["parameters"]["rollout"],
        "50"
    );
    let strategy = format!(
        "{milestone}/strategies/{}",
        with_strategy["strategies"][0]["id"].as_str().unwrap()
    );
    let changed = server.put(&strategy, rollout(60)).await.expect(200).clone();
    assert_eq!(changed["parameters"]["rollout"], "60");
    assert_eq!(changed["id"], with_strategy["strategies"][0]["id"]);
    let renamed = server
        .put(
            &milestone,
            json!({"name": "Sixty", "sortOrder": 1, "releasePlanDefinitionId": id}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(renamed["name"], "Sixty");
    assert_eq!(
        renamed["strategies"].as_array().unwrap().len(),
        1,
        "{renamed}"
    );
    server.delete(&strategy).await.expect(200);
    server
        .delete(&strategy)
        .await
        .expect_error(404, "NotFoundError");
    server.delete(&milestone).await.expect(200);
    let now = server.get(&one).await.expect(200).clone();
    assert_eq!(now["milestones"].as_array().unwrap().len(), 2);

    // The whole template again: a new name and milestones.
    let replaced = server
        .put(&one, json!({"id": id, "name": "Straight", "milestones": [{"name": "All", "sortOrder": 0, "strategies": [rollout(100)]}]}))
        .await
        .expect(200)
        .clone();
    assert_eq!(replaced["name"], "Straight");
    assert_eq!(replaced["milestones"].as_array().unwrap().len(), 1);
    server
        .put(&one, json!({"id": "other", "name": "Straight"}))
        .await
        .expect_error(400, "ValidationError");

    // Archived: not listed, still readable; deleted: gone.
    server
        .post_empty(&format!("{TEMPLATES}/archive/{id}"))
        .await
        .expect(200);
    assert_eq!(server.get(TEMPLATES).await.expect(200), &json!([]));
    assert_timestamp(&server.get(&one).await.expect(200)["archivedAt"]);
    server.delete(&one).await.expect(200);
    server.get(&one).await.expect_error(404, "NotFoundError");

    for (event_type, count) in [
        ("release-plan-template-created", 1),
        ("release-plan-template-updated", 7),
        ("release-plan-template-archived", 1),
        ("release-plan-template-deleted", 1),
    ] {
        assert_eq!(
            events_of_type(&server, event_type).await.len(),
            count,
            "{event_type}"
        );
    }
}

async fn applying_a_template_and_starting_milestones(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let template = create_template(&server, two_milestones("Gradual", None)).await;
    let plan = apply(&server, "checkout", &template).await;
    assert_eq!(plan["discriminator"], "plan");
    assert_eq!(plan["name"], "Gradual");
    assert_eq!(plan["featureName"], "checkout");
    assert_eq!(plan["environment"], "development");
    assert_eq!(plan["releasePlanTemplateId"], template["id"]);
    assert!(plan["activeMilestoneId"].is_null());
    assert_eq!(plan["safeguards"], json!([]));
    assert_ne!(plan["milestones"][0]["id"], template["milestones"][0]["id"]);
    assert_eq!(plan["milestones"][0]["releasePlanDefinitionId"], plan["id"]);
    assert_eq!(
        plan["milestones"][0]["strategies"][0]["parameters"]["groupId"],
        "checkout"
    );
    let plans = format!(
        "{}/release-plans",
        environment_path("checkout", "development")
    );
    assert_eq!(server.get(&plans).await.expect(200), &json!([plan]));
    let message = server
        .post(&plans, json!({"templateId": template["id"]}))
        .await
        .expect_error(409, "NameExistsError");
    assert!(message.contains("already has a release plan"), "{message}");
    let message = server
        .post(
            &format!(
                "{}/release-plans",
                environment_path("checkout", "production")
            ),
            json!({"templateId": "nope"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    assert!(message.contains("nope"), "{message}");

    // The flag starts with the default strategy; each milestone replaces it.
    assert_eq!(rollouts(&server, "checkout").await.0, ["100:checkout"]);
    let started = server
        .post_empty(&start_path(&plan, 0))
        .await
        .expect(200)
        .clone();
    assert_eq!(started["id"], plan["milestones"][0]["id"]);
    assert_timestamp(&started["startedAt"]);
    let expected = vec!["25:checkout".to_owned()];
    assert_eq!(
        rollouts(&server, "checkout").await,
        (expected.clone(), expected)
    );
    assert_eq!(
        plan_now(&server, &plan).await["activeMilestoneId"],
        plan["milestones"][0]["id"]
    );
    server.post_empty(&start_path(&plan, 1)).await.expect(200);
    let expected = vec!["100:checkout".to_owned()];
    assert_eq!(
        rollouts(&server, "checkout").await,
        (expected.clone(), expected)
    );
    let unknown =
        start_path(&plan, 0).replace(plan["milestones"][0]["id"].as_str().unwrap(), "nope");
    server
        .post_empty(&unknown)
        .await
        .expect_error(404, "NotFoundError");

    let started = events_of_type(&server, "release-plan-milestone-started").await;
    assert_eq!(started.len(), 2);
    assert_eq!(started[0]["featureName"], "checkout");
    assert_eq!(started[0]["environment"], "development");
    assert_eq!(started[0]["data"]["milestoneName"], "Everyone");
    assert_eq!(events_of_type(&server, "release-plan-added").await.len(), 1);
    // Default strategy removed, then each milestone's strategy replacing the one before.
    assert_eq!(
        events_of_type(&server, "feature-strategy-remove")
            .await
            .len(),
        2
    );

    // Removed: the flag keeps what the plan gave it; an archived template cannot be applied.
    let one = format!("{plans}/{}", plan["id"].as_str().unwrap());
    server.delete(&one).await.expect(200);
    server.get(&one).await.expect_error(404, "NotFoundError");
    assert_eq!(
        events_of_type(&server, "release-plan-removed").await.len(),
        1
    );
    assert_eq!(rollouts(&server, "checkout").await.0, ["100:checkout"]);
    let id = template["id"].as_str().unwrap();
    server
        .post_empty(&format!("{TEMPLATES}/archive/{id}"))
        .await
        .expect(200);
    let message = server
        .post(&plans, json!({"templateId": id}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("archived"), "{message}");
}

async fn change_requests_and_permissions_are_not_bypassed(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let template = create_template(&server, two_milestones("Gradual", None)).await;
    let plan = apply(&server, "checkout", &template).await;

    // Only Admins write templates; the plan's writes need the environment's strategy permissions.
    let (_, viewer) = user_with_pat(&server, "vera", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "eddie", "Editor").await;
    server
        .send(
            "POST",
            TEMPLATES,
            Some(two_milestones("Mine", None)),
            Some(&editor),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("GET", TEMPLATES, None, Some(&viewer))
        .await
        .expect(200);
    server
        .send("POST", &start_path(&plan, 0), None, Some(&viewer))
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("POST", &start_path(&plan, 0), None, Some(&editor))
        .await
        .expect(200);

    // Change requests on: no plan starts, applies or progresses there.
    server
        .put(
            &format!("{PROJECT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let message = server
        .post_empty(&start_path(&plan, 1))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("Change requests are enabled"), "{message}");
    let progression = format!(
        "{}/progressions/{}",
        environment_path("checkout", "development"),
        plan["milestones"][0]["id"].as_str().unwrap()
    );
    let body = json!({"targetMilestone": plan["milestones"][1]["id"], "transitionCondition": {"intervalMinutes": 5}});
    server
        .put(&progression, body)
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(rollouts(&server, "checkout").await.0, ["25:checkout"]);
    let plans = format!(
        "{}/release-plans",
        environment_path("checkout", "development")
    );
    server
        .delete(&format!("{plans}/{}", plan["id"].as_str().unwrap()))
        .await
        .expect(200);
    let message = server
        .post(&plans, json!({"templateId": template["id"]}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("change request"), "{message}");
}

async fn automatic_progression_starts_the_next_milestone_once(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let template = create_template(&server, two_milestones("Gradual", None)).await;
    let plan = apply(&server, "checkout", &template).await;
    server.post_empty(&start_path(&plan, 0)).await.expect(200);

    // Unleash's progression routes: the target must be the next milestone.
    let progression = format!(
        "{}/progressions/{}",
        environment_path("checkout", "development"),
        plan["milestones"][0]["id"].as_str().unwrap()
    );
    let message = server
        .put(
            &progression,
            json!({"targetMilestone": "nope", "transitionCondition": {"intervalMinutes": 5}}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.starts_with("targetMilestone"), "{message}");
    let body = json!({"targetMilestone": plan["milestones"][1]["id"], "transitionCondition": {"intervalMinutes": 5}});
    let set = server
        .put(&progression, body.clone())
        .await
        .expect(200)
        .clone();
    assert_eq!(set["sourceMilestone"], plan["milestones"][0]["id"]);
    server.delete(&progression).await.expect(204);
    server.put(&progression, body).await.expect(200);
    assert_eq!(
        events_of_type(&server, "milestone-progression-created")
            .await
            .len(),
        2
    );
    assert_eq!(
        events_of_type(&server, "milestone-progression-deleted")
            .await
            .len(),
        1
    );
    let now = plan_now(&server, &plan).await;
    assert_eq!(
        now["milestones"][0]["transitionCondition"],
        json!({"intervalMinutes": 5})
    );

    due_in(&db, plan["id"].as_str().unwrap(), 2).await;
    let progressed = wait_for(&server, &plan, active_is(&plan, 1)).await;
    assert_timestamp(&progressed["milestones"][0]["progressionExecutedAt"]);
    assert_timestamp(&progressed["milestones"][1]["startedAt"]);
    served_soon(&server, "checkout", "100:checkout").await;
    // Once: the scheduler had the time to look again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let started = events_of_type(&server, "release-plan-milestone-started").await;
    assert_eq!(started.len(), 2, "{started:?}");
    assert_eq!(started[0]["createdBy"], "system");
}

async fn a_refused_progression_pauses_the_plan_until_resumed(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let template = create_template(&server, two_milestones("Gradual", Some(5))).await;
    let plan = apply(&server, "checkout", &template).await;
    server.post_empty(&start_path(&plan, 0)).await.expect(200);
    let config = format!("{PROJECT}/environments/development/change-requests/config");
    server
        .put(
            &config,
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    due_in(&db, plan["id"].as_str().unwrap(), 1).await;
    let paused = wait_for(&server, &plan, |now| {
        !now["milestones"][0]["pausedAt"].is_null()
    })
    .await;
    assert_eq!(paused["activeMilestoneId"], plan["milestones"][0]["id"]);
    let events = events_of_type(&server, "release-plan-progressions-paused").await;
    assert_eq!(events.len(), 1);
    let reason = events[0]["data"]["reason"].as_str().unwrap();
    assert!(reason.contains("Change requests are enabled"), "{reason}");

    // Resumed once change requests are off again: due at its time (passed), so it progresses.
    server
        .put(
            &config,
            json!({"changeRequestsEnabled": false, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    // The flag's page shows it paused and offers "Resume" (its post resumes); the API's resume of a plan no
    // longer paused changes nothing.
    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await;
    let page = browser.get("/projects/default/features/checkout").await;
    assert!(page.expect(200).contains(">paused</span>"), "{}", page.text);
    let resumed = browser
        .post(
            "/projects/default/features/checkout/environments/development/release-plan/resume",
            &[
                ("csrf", &page.csrf()),
                ("planId", plan["id"].as_str().unwrap()),
            ],
        )
        .await;
    assert_eq!(resumed.status, 303, "{}", resumed.text);
    let resume = format!(
        "{}/progressions/{}/resume",
        environment_path("checkout", "development"),
        plan["id"].as_str().unwrap()
    );
    server.post_empty(&resume).await.expect(200);
    assert_eq!(
        events_of_type(&server, "release-plan-progressions-resumed")
            .await
            .len(),
        1
    );
    due_in(&db, plan["id"].as_str().unwrap(), 1).await;
    wait_for(&server, &plan, active_is(&plan, 1)).await;
    assert_eq!(rollouts(&server, "checkout").await.0, ["100:checkout"]);
}

async fn a_restart_before_the_progression_is_due_loses_nothing(db: TestDb) {
    let mut first = Server::start(&db, &[]).await;
    create_flag(&first, "checkout").await;
    let template = create_template(&first, two_milestones("Gradual", Some(5))).await;
    let plan = apply(&first, "checkout", &template).await;
    first.post_empty(&start_path(&plan, 0)).await.expect(200);
    assert!(first.terminate().success());

    // Due while no control plane runs: the next start progresses it.
    due_in(&db, plan["id"].as_str().unwrap(), 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = Server::start(&db, &[]).await;
    wait_for(&second, &plan, active_is(&plan, 1)).await;
    served_soon(&second, "checkout", "100:checkout").await;
    assert_eq!(
        events_of_type(&second, "release-plan-milestone-started")
            .await
            .len(),
        2
    );
}

/// Two replicas on one Postgres database: each plan progresses once (one start event each), whichever
/// replica gets there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_progress_each_plan_once() {
    let db = TestDb::postgres().await;
    let first = Server::start(&db, &[]).await;
    let second = Server::start(&db, &[]).await;
    let template = create_template(&first, two_milestones("Gradual", Some(5))).await;
    let flags = ["one", "two", "three", "four"];
    let mut plans = Vec::new();
    for (index, flag) in flags.iter().enumerate() {
        let replica = if index % 2 == 0 { &first } else { &second };
        create_flag(replica, flag).await;
        let plan = apply(replica, flag, &template).await;
        replica.post_empty(&start_path(&plan, 0)).await.expect(200);
        plans.push(plan);
    }
    for plan in &plans {
        due_in(&db, plan["id"].as_str().unwrap(), 2).await;
    }
    for plan in &plans {
        wait_for(&second, plan, active_is(plan, 1)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let started = events_of_type(&first, "release-plan-milestone-started").await;
    assert_eq!(started.len(), 2 * flags.len(), "{started:?}");
    let by_system = started
        .iter()
        .filter(|event| event["createdBy"] == "system")
        .count();
    assert_eq!(by_system, flags.len());
    for flag in flags {
        served_soon(&first, flag, &format!("100:{flag}")).await;
    }
}
