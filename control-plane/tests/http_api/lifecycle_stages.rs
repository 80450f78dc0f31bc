//! A flag's lifecycle (issue 35) through the real binary, on SQLite and Postgres: the stages as SDK metrics
//! arrive (pre-live in development, live in production), completed and uncompleted with their events,
//! archived and revived, the count per stage; the flag types' lifetimes (validation, Admins only, the
//! event); the potentially-stale job marking each flag once, also (Postgres) with two replicas at once.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, CLIENT_TOKEN, EDGE_TOKEN};
use serde_json::{json, Value};
use sqlx::{AnyConnection, Connection};
use std::time::{Duration, Instant};
use vexil_proto::v1;
use vexil_proto::v1::usage_client::UsageClient;

crate::on_sqlite_and_postgres!(
    stages_follow_sdk_metrics_completion_and_archiving,
    an_edges_usage_batch_moves_the_stages,
    feature_type_lifetimes_are_validated_and_recorded,
    the_potentially_stale_job_marks_each_flag_once,
);

const PROJECT: &str = "/api/admin/projects/default";

fn lifecycle_path(flag: &str) -> String {
    format!("{PROJECT}/features/{flag}/lifecycle")
}

fn metrics_body(environment: &str, toggles: Value) -> Value {
    json!({
        "appName": "shop",
        "instanceId": "i1",
        "environment": environment,
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z", "toggles": toggles}
    })
}

async fn post_metrics(server: &Server, token: &str, environment: &str, flag: &str) {
    let answer = server
        .send(
            "POST",
            "/api/client/metrics",
            Some(metrics_body(
                environment,
                json!({flag: {"yes": 1, "no": 0}}),
            )),
            Some(token),
        )
        .await;
    assert_eq!(answer.status, 202, "{:?}", answer.body);
}

async fn stages(server: &Server, flag: &str) -> Vec<String> {
    server
        .get(&lifecycle_path(flag))
        .await
        .expect(200)
        .as_array()
        .expect("an array of stages")
        .iter()
        .map(|stage| {
            assert!(stage["enteredStageAt"].is_string(), "{stage}");
            stage["stage"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Waits (a few seconds at most) until the flag's stages are `expected`.
async fn wait_for_stages(server: &Server, flag: &str, expected: &[&str]) {
    let started = Instant::now();
    loop {
        let now = stages(server, flag).await;
        if now == expected {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "stages of {flag}: {now:?}, expected {expected:?}"
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

async fn create_flag(server: &Server, name: &str, feature_type: &str) {
    server
        .post(
            &format!("{PROJECT}/features"),
            json!({"name": name, "type": feature_type}),
        )
        .await
        .expect(201);
}

async fn stages_follow_sdk_metrics_completion_and_archiving(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout", "release").await;
    create_flag(&server, "search", "release").await;
    assert_eq!(stages(&server, "checkout").await, ["initial"]);
    assert_eq!(
        server.get("/api/admin/lifecycle/count").await.expect(200),
        &json!({"initial": 2, "preLive": 0, "live": 0, "completed": 0, "archived": 0})
    );

    // Seen in development: pre-live, entered once however often it is reported.
    post_metrics(&server, CLIENT_TOKEN, "development", "checkout").await;
    wait_for_stages(&server, "checkout", &["initial", "pre-live"]).await;
    let first = server.get(&lifecycle_path("checkout")).await.expect(200)[1].clone();
    post_metrics(&server, CLIENT_TOKEN, "development", "checkout").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        server.get(&lifecycle_path("checkout")).await.expect(200)[1],
        first
    );

    // Seen in production: live.
    let production = server
        .post(
            "/api/admin/api-tokens",
            json!({"tokenName": "prod", "type": "backend", "environment": "production", "projects": ["default"]}),
        )
        .await
        .expect(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    post_metrics(&server, &production, "production", "checkout").await;
    wait_for_stages(&server, "checkout", &["initial", "pre-live", "live"]).await;
    assert_eq!(
        server.get("/api/admin/lifecycle/count").await.expect(200),
        &json!({"initial": 1, "preLive": 0, "live": 1, "completed": 0, "archived": 0})
    );

    // The search filters by the current stage and shows it.
    let found = server
        .get("/api/admin/search/features?project=IS:default&lifecycle=IS:live")
        .await
        .expect(200)
        .clone();
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["features"][0]["name"], "checkout");
    assert_eq!(found["features"][0]["lifecycle"]["stage"], "live");
    assert!(found["features"][0]["lifecycle"]["enteredStageAt"].is_string());
    server
        .get("/api/admin/search/features?lifecycle=IS:gone")
        .await
        .expect(400);

    // Completed: 400 for a bad body, 404 for an unknown flag, 403 without UPDATE_FEATURE.
    let complete = format!("{}/complete", lifecycle_path("checkout"));
    let refused = server.post(&complete, json!({"status": "maybe"})).await;
    refused.expect_error(400, "ValidationError");
    server
        .post(&complete, json!({"status": "kept", "extra": 1}))
        .await
        .expect(400);
    server
        .post(
            &format!("{}/complete", lifecycle_path("nope")),
            json!({"status": "kept"}),
        )
        .await
        .expect(404);
    let (_, viewer) = user_with_pat(&server, "vera", "Viewer").await;
    let forbidden = server
        .send(
            "POST",
            &complete,
            Some(json!({"status": "kept"})),
            Some(&viewer),
        )
        .await;
    assert_eq!(forbidden.status, 403, "{:?}", forbidden.body);
    assert!(events_of_type(&server, "feature-completed")
        .await
        .is_empty());

    server
        .post(
            &complete,
            json!({"status": "kept", "statusValue": "variant A"}),
        )
        .await
        .expect(200);
    let answer = server.get(&lifecycle_path("checkout")).await;
    let body = answer.expect(200);
    assert_eq!(body[3]["stage"], "completed");
    assert_eq!(body[3]["status"], "kept");
    // The same again changes nothing; another status is recorded.
    server
        .post(
            &complete,
            json!({"status": "kept", "statusValue": "variant A"}),
        )
        .await
        .expect(200);
    let completed = events_of_type(&server, "feature-completed").await;
    assert_eq!(completed.len(), 1, "{completed:?}");
    assert_eq!(completed[0]["featureName"], "checkout");
    assert_eq!(completed[0]["project"], "default");
    assert_eq!(completed[0]["data"]["kept"], true);
    assert_eq!(completed[0]["data"]["statusValue"], "variant A");
    server
        .post(&complete, json!({"status": "discarded"}))
        .await
        .expect(200);
    assert_eq!(events_of_type(&server, "feature-completed").await.len(), 2);
    assert_eq!(
        server.get("/api/admin/lifecycle/count").await.expect(200)["completed"],
        1
    );

    // Uncompleted: back to live, once.
    let uncomplete = format!("{}/uncomplete", lifecycle_path("checkout"));
    server.post_empty(&uncomplete).await.expect(200);
    server.post_empty(&uncomplete).await.expect(200);
    assert_eq!(
        events_of_type(&server, "feature-uncompleted").await.len(),
        1
    );
    assert_eq!(
        stages(&server, "checkout").await,
        ["initial", "pre-live", "live"]
    );

    // Archived, then revived.
    server
        .delete(&format!("{PROJECT}/features/checkout"))
        .await
        .expect(202);
    assert_eq!(
        stages(&server, "checkout").await,
        ["initial", "pre-live", "live", "archived"]
    );
    assert_eq!(
        server.get("/api/admin/lifecycle/count").await.expect(200),
        &json!({"initial": 1, "preLive": 0, "live": 0, "completed": 0, "archived": 1})
    );
    server
        .post_empty("/api/admin/archive/revive/checkout")
        .await
        .expect(200);
    assert_eq!(
        stages(&server, "checkout").await,
        ["initial", "pre-live", "live"]
    );
}

fn edge_count(flag: &str, environment: &str) -> v1::FlagCount {
    let now = chrono::Utc::now().timestamp_millis();
    v1::FlagCount {
        feature_name: flag.to_owned(),
        app_name: "shop".to_owned(),
        environment: environment.to_owned(),
        minute_ms: now - now % 60_000,
        yes: 1,
        no: 0,
        variants: Default::default(),
    }
}

/// The edges' gRPC usage batches record the stages as the SDK posts do.
async fn an_edges_usage_batch_moves_the_stages(db: TestDb) {
    let server = Server::start(&db, &["--init-edge-tokens", EDGE_TOKEN]).await;
    create_flag(&server, "banner", "release").await;
    let channel = tonic::transport::Endpoint::from_shared(server.grpc.clone())
        .expect("the gRPC URL")
        .connect()
        .await
        .expect("connect to the gRPC listener");
    let authorization: tonic::metadata::MetadataValue<_> =
        format!("Bearer {EDGE_TOKEN}").parse().expect("ASCII");
    let mut client =
        UsageClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
            Ok(request)
        });
    for (batch, environment) in [("b1", "development"), ("b2", "production")] {
        client
            .report(v1::UsageBatch {
                edge_id: "edge-t".to_owned(),
                batch_id: batch.to_owned(),
                applied_revision: 1,
                edge_version: "0.1.0".to_owned(),
                counts: vec![edge_count("banner", environment)],
                ..v1::UsageBatch::default()
            })
            .await
            .expect("the batch is taken");
    }
    assert_eq!(
        stages(&server, "banner").await,
        ["initial", "pre-live", "live"]
    );
}

async fn feature_type_lifetimes_are_validated_and_recorded(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let path = "/api/admin/feature-types/release/lifetime";
    assert_eq!(
        server
            .put(path, json!({"lifetimeDays": 10}))
            .await
            .expect(200),
        &json!({"id": "release", "name": "Release", "description": server.get("/api/admin/feature-types").await.expect(200)["types"][0]["description"], "lifetimeDays": 10})
    );
    assert_eq!(
        server.get("/api/admin/feature-types").await.expect(200)["types"][0]["lifetimeDays"],
        10
    );
    for bad in [
        json!({}),
        json!({"lifetimeDays": -1}),
        json!({"lifetimeDays": 2_147_483_648_i64}),
        json!({"lifetimeDays": "ten"}),
    ] {
        let answer = server.put(path, bad.clone()).await;
        assert_eq!(answer.status, 400, "{bad}: {:?}", answer.body);
        answer.expect_error(400, "ValidationError");
    }
    server
        .put(
            "/api/admin/feature-types/nope/lifetime",
            json!({"lifetimeDays": 1}),
        )
        .await
        .expect(404);
    let (_, editor) = user_with_pat(&server, "eddie", "Editor").await;
    let forbidden = server
        .send("PUT", path, Some(json!({"lifetimeDays": 3})), Some(&editor))
        .await;
    assert_eq!(forbidden.status, 403, "{:?}", forbidden.body);
    // 0 and null: never potentially stale.
    assert_eq!(
        server
            .put(path, json!({"lifetimeDays": 0}))
            .await
            .expect(200)["lifetimeDays"],
        Value::Null
    );
    server
        .put(path, json!({"lifetimeDays": null}))
        .await
        .expect(200);
    let updated = events_of_type(&server, "feature-type-updated").await;
    assert_eq!(updated.len(), 2, "{updated:?}");
    assert_eq!(updated[0]["data"]["lifetimeDays"], Value::Null);
    assert_eq!(updated[1]["data"]["lifetimeDays"], 10);
    assert_eq!(updated[1]["preData"]["lifetimeDays"], 40);
}

/// Makes the flags look `days` old.
async fn backdate(db: &TestDb, flags: &[&str], days: i64) {
    sqlx::any::install_default_drivers();
    let mut conn = AnyConnection::connect(&db.url).await.expect("connect");
    let at = (chrono::Utc::now() - chrono::TimeDelta::days(days))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    for flag in flags {
        sqlx::query("UPDATE features SET created_at = $1 WHERE name = $2")
            .bind(&at)
            .bind(*flag)
            .execute(&mut conn)
            .await
            .expect("backdate");
    }
    conn.close().await.ok();
}

async fn wait_for_events(server: &Server, event_type: &str, count: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let events = events_of_type(server, event_type).await;
        if events.len() >= count {
            return events;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} {event_type} events of {count}",
            events.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn the_potentially_stale_job_marks_each_flag_once(db: TestDb) {
    let server = Server::start(&db, &["--potentially-stale-interval", "200ms"]).await;
    create_flag(&server, "old-release", "release").await;
    create_flag(&server, "young-release", "release").await;
    create_flag(&server, "old-ops", "operational").await;
    create_flag(&server, "old-kill", "kill-switch").await;
    backdate(&db, &["old-release", "old-kill"], 41).await;
    backdate(&db, &["old-ops"], 8).await;
    let events = wait_for_events(&server, "feature-potentially-stale-on", 2).await;
    // Several more runs: nothing more.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let events_after = events_of_type(&server, "feature-potentially-stale-on").await;
    assert_eq!(events_after.len(), 2, "{events_after:?}");
    let mut marked: Vec<&str> = events
        .iter()
        .map(|event| event["featureName"].as_str().unwrap())
        .collect();
    marked.sort_unstable();
    assert_eq!(marked, ["old-ops", "old-release"]);
    // The flags say so (`potentiallyStale`, as Unleash's project schemas count them).
    for (flag, want) in [
        ("old-release", true),
        ("young-release", false),
        ("old-kill", false),
    ] {
        let answer = server
            .get(&format!("/api/admin/projects/default/features/{flag}"))
            .await;
        assert_eq!(answer.expect(200)["potentiallyStale"], want, "{flag}");
    }
    assert_eq!(events[0]["project"], "default");
    assert_eq!(events[0]["createdBy"], "system");
}

/// Two replicas on one Postgres database run the job at the same time: one event per flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_mark_each_flag_once() {
    let db = TestDb::postgres().await;
    let first = Server::start(&db, &["--potentially-stale-interval", "100ms"]).await;
    let second = Server::start(&db, &["--potentially-stale-interval", "100ms"]).await;
    let flags = ["a", "b", "c", "d", "e", "f"];
    for flag in flags {
        create_flag(&first, flag, "release").await;
    }
    backdate(&db, &flags, 100).await;
    wait_for_events(&second, "feature-potentially-stale-on", flags.len()).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let events = events_of_type(&first, "feature-potentially-stale-on").await;
    let mut marked: Vec<&str> = events
        .iter()
        .map(|event| event["featureName"].as_str().unwrap())
        .collect();
    marked.sort_unstable();
    assert_eq!(marked, flags);
}
