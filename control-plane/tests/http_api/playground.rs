//! The playground on SQLite and on Postgres: per flag, enabled and variant exactly as the edge's evaluation
//! answers (the real `vexil-edge eval` binary and `Snapshot::evaluate_all`, on the store's client document,
//! for the same contexts), and per strategy why (constraints, segments, custom and disabled strategies).

use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use vexil_control_plane::domain::client_document;
use vexil_control_plane::store::Store;
use vexil_shared::{Context, Projects, Snapshot};

crate::on_sqlite_and_postgres!(
    the_playground_agrees_with_vexil_edge_eval,
    every_change_shows_in_the_next_evaluation,
);

const DEFAULT: &str = "/api/admin/projects/default/features";

/// The `vexil-edge` binary of this build, beside this test's target directory. `cargo build` runs first
/// (a no-op when it is up to date), so a test run of the control plane alone never compares with a stale or
/// missing edge.
fn edge_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("the test's path");
            let profile_dir = exe
                .parent()
                .and_then(|deps| deps.parent())
                .expect("target/<profile>/deps");
            let target_dir = profile_dir.parent().expect("target dir");
            let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") | None => "dev".to_owned(),
                Some(other) => other.to_owned(),
            };
            let status = Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "vexil-edge",
                    "--bin",
                    "vexil-edge",
                ])
                .args(["--profile", &profile])
                .arg("--target-dir")
                .arg(target_dir)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("run cargo build -p vexil-edge");
            assert!(status.success(), "cargo build -p vexil-edge failed");
            profile_dir.join(format!("vexil-edge{}", std::env::consts::EXE_SUFFIX))
        })
        .clone()
}

/// `(name, variant name, variant enabled)` of each enabled flag, by name.
fn enabled_of_toggles(toggles: &Value) -> Vec<(String, String, bool)> {
    toggles
        .as_array()
        .expect("an array of toggles")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["variant"]["name"].as_str().unwrap().to_owned(),
                t["variant"]["enabled"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn enabled_of_playground(answer: &Value) -> Vec<(String, String, bool)> {
    answer["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["isEnabled"] == true)
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["variant"]["name"].as_str().unwrap().to_owned(),
                f["variant"]["enabled"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn feature<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {answer}"))
}

async fn setup(server: &Server) {
    server
        .post(
            "/api/admin/strategies",
            json!({"name": "region", "parameters": [{"name": "regions", "type": "list"}]}),
        )
        .await
        .expect(201);
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "paying", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        )
        .await
        .expect(201)["id"]
        .clone();
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other"}),
        )
        .await
        .expect(201);
    let web = json!({"contextName": "appName", "operator": "IN", "values": ["web"]});
    let flags: Vec<(&str, &str, Vec<Value>)> = vec![
        ("default", "plain", vec![json!({"name": "default"})]),
        (
            "default",
            "rollout",
            vec![json!({"name": "flexibleRollout", "constraints": [web],
                        "parameters": {"rollout": "50", "stickiness": "userId"}})],
        ),
        (
            "default",
            "segmented",
            vec![
                json!({"name": "userWithId", "parameters": {"userIds": "ann,bob,dave,carol"},
                        "segments": [segment]}),
            ],
        ),
        (
            "default",
            "custom",
            vec![json!({"name": "region", "parameters": {"regions": "eu"}, "constraints": [web]})],
        ),
        ("default", "off-flag", vec![json!({"name": "default"})]),
        (
            "default",
            "two-strategies",
            vec![
                json!({"name": "default", "disabled": true}),
                json!({"name": "userWithId", "parameters": {"userIds": "carol,user-3"},
                       "variants": [{"name": "s1", "weight": 0}, {"name": "s2", "weight": 0}]}),
            ],
        ),
        ("other", "other-flag", vec![json!({"name": "default"})]),
    ];
    for (project, name, strategies) in flags {
        let features = format!("/api/admin/projects/{project}/features");
        server
            .post(&features, json!({"name": name}))
            .await
            .expect(201);
        let environment = format!("{features}/{name}/environments/development");
        for strategy in strategies {
            server
                .post(&format!("{environment}/strategies"), strategy)
                .await
                .expect(200);
        }
        if name != "off-flag" {
            server
                .post_empty(&format!("{environment}/on"))
                .await
                .expect(200);
        }
    }
    server
        .put(
            &format!("{DEFAULT}/segmented/environments/development/variants"),
            json!([{"name": "red", "weight": 0}, {"name": "green", "weight": 0,
                    "overrides": [{"contextName": "userId", "values": ["bob"]}]}]),
        )
        .await
        .expect(200);
}

async fn the_playground_agrees_with_vexil_edge_eval(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    setup(&server).await;

    let mut contexts = vec![
        json!({"appName": "web", "userId": "ann", "properties": {"plan": "pro"}}),
        json!({"appName": "web", "userId": "bob", "properties": {"plan": "pro"}}),
        json!({"appName": "web", "userId": "carol", "properties": {"plan": "free"}}),
        json!({"appName": "mobile", "userId": "dave", "properties": {"plan": "pro"}}),
        json!({"appName": "web"}),
    ];
    for n in 0..12 {
        contexts.push(
            json!({"appName": "web", "userId": format!("user-{n}"), "properties": {"plan": "pro"}}),
        );
    }
    for context in &mut contexts {
        context["environment"] = json!("development");
    }

    let mut answers = Vec::new();
    for context in &contexts {
        let request = json!({"environment": "development", "projects": "*", "context": context});
        let answer = server
            .post("/api/admin/playground", request.clone())
            .await
            .expect(200)
            .clone();
        assert_eq!(answer["input"], request);
        answers.push(answer);
    }

    // The same document through the real edge binary and through the engine.
    let store = Store::connect(&db.url).await.unwrap();
    let mut conn = store.read().await.unwrap();
    let document = client_document::features_document(&mut conn, "development")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let features_file = dir.path().join("features.json");
    std::fs::write(&features_file, serde_json::to_string(&document).unwrap()).unwrap();
    let contexts_file = dir.path().join("contexts.jsonl");
    let lines: Vec<String> = contexts.iter().map(Value::to_string).collect();
    std::fs::write(&contexts_file, lines.join("\n")).unwrap();
    let output = Command::new(edge_binary())
        .arg("eval")
        .arg("--features")
        .arg(&features_file)
        .arg("--contexts")
        .arg(&contexts_file)
        .output()
        .expect("run vexil-edge eval");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let edge_lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(edge_lines.len(), contexts.len());
    let snapshot = Snapshot::compile(&document);
    let mut rollout_on = 0;
    for ((context, answer), edge) in contexts.iter().zip(&answers).zip(&edge_lines) {
        let from_playground = enabled_of_playground(answer);
        assert_eq!(
            from_playground,
            enabled_of_toggles(edge),
            "vexil-edge eval, context {context}"
        );
        let ctx: Context = serde_json::from_value(context.clone()).unwrap();
        let engine = serde_json::to_value(snapshot.evaluate_all(&ctx, &Projects::All)).unwrap();
        assert_eq!(
            from_playground,
            enabled_of_toggles(&engine),
            "evaluate_all, context {context}"
        );
        rollout_on += usize::from(feature(answer, "rollout")["isEnabled"] == true);
    }
    assert!(
        rollout_on > 0 && rollout_on < contexts.len(),
        "the 50 % rollout splits: {rollout_on}"
    );

    // Why: ann (pro, web).
    let ann = &answers[0];
    let segmented = feature(ann, "segmented");
    assert_eq!(segmented["isEnabled"], true);
    assert_eq!(segmented["projectId"], "default");
    assert_eq!(segmented["variant"]["enabled"], true);
    assert!(["red", "green"].contains(&segmented["variant"]["name"].as_str().unwrap()));
    assert_eq!(segmented["variants"].as_array().unwrap().len(), 2);
    assert_eq!(segmented["strategies"]["result"], true);
    let strategy = &segmented["strategies"]["data"][0];
    assert_eq!(
        strategy["result"],
        json!({"evaluationStatus": "complete", "enabled": true})
    );
    assert_eq!(strategy["segments"][0]["name"], "paying");
    assert_eq!(strategy["segments"][0]["result"], true);
    assert!(strategy["id"].is_string());
    let custom = feature(ann, "custom");
    assert_eq!(custom["isEnabled"], false);
    assert_eq!(custom["strategies"]["result"], "unknown");
    assert_eq!(
        custom["strategies"]["data"][0]["result"],
        json!({"evaluationStatus": "incomplete", "enabled": "unknown"})
    );
    let off = feature(ann, "off-flag");
    assert_eq!(off["isEnabled"], false);
    assert_eq!(off["isEnabledInCurrentEnvironment"], false);
    assert_eq!(off["strategies"]["result"], true);
    assert_eq!(off["variant"]["name"], "disabled");
    // bob is forced to green by the override.
    assert_eq!(
        feature(&answers[1], "segmented")["variant"]["name"],
        "green"
    );
    // carol (free): the segment fails; her second strategy (the first is disabled) matches.
    let carol = &answers[2];
    let segment = &feature(carol, "segmented")["strategies"]["data"][0]["segments"][0];
    assert_eq!(segment["result"], false);
    assert_eq!(segment["constraints"][0]["result"], false);
    assert_eq!(segment["constraints"][0]["contextName"], "plan");
    let two = feature(carol, "two-strategies");
    assert_eq!(two["isEnabled"], true);
    assert_eq!(two["strategies"]["data"][0]["disabled"], true);
    assert_eq!(
        two["strategies"]["data"][0]["result"],
        json!({"evaluationStatus": "unevaluated", "enabled": false})
    );
    assert_eq!(two["strategies"]["data"][1]["result"]["enabled"], true);
    // dave (mobile): the rollout's own constraint fails.
    let rollout = feature(&answers[3], "rollout");
    assert_eq!(rollout["isEnabled"], false);
    assert_eq!(
        rollout["strategies"]["data"][0]["constraints"][0]["result"],
        false
    );

    // Projects limit the flags; bad input is 400.
    let only_other = server
        .post(
            "/api/admin/playground",
            json!({"environment": "development", "projects": ["other"], "context": {"appName": "web"}}),
        )
        .await
        .expect(200)
        .clone();
    let names: Vec<&str> = only_other["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["other-flag"]);
    for bad in [
        json!({"environment": "development", "context": {"userId": "ann"}}),
        json!({"environment": "nowhere", "context": {"appName": "web"}}),
        json!({"environment": "development", "projects": 5, "context": {"appName": "web"}}),
        json!({"environment": "development", "context": []}),
    ] {
        server
            .post("/api/admin/playground", bad)
            .await
            .expect_error(400, "ValidationError");
    }
}

/// The playground keeps the compiled document while the revision stands: each change shows in the next
/// evaluation (switch on, a strategy with a constraint), none is answered from an older one.
async fn every_change_shows_in_the_next_evaluation(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    server
        .post(DEFAULT, json!({"name": "launch"}))
        .await
        .expect(201);
    // The playground's flags in development for one context.
    let features = || async {
        let request = json!({
            "environment": "development",
            "projects": ["default"],
            "context": {"appName": "web", "userId": "bob"}
        });
        let answer = server.post("/api/admin/playground", request).await;
        answer.expect(200)["features"].as_array().unwrap().clone()
    };
    let evaluate = || async {
        let launch = features()
            .await
            .into_iter()
            .find(|feature| feature["name"] == "launch")
            .expect("launch in the answer");
        (
            launch["isEnabled"].clone(),
            launch["strategies"]["data"].clone(),
        )
    };
    assert_eq!(evaluate().await.0, false);
    // Asked again at the same revision: the same answer.
    assert_eq!(evaluate().await.0, false);
    server
        .post_empty(&format!("{DEFAULT}/launch/environments/development/on"))
        .await
        .expect(200);
    assert_eq!(evaluate().await.0, true);
    let strategies = format!("{DEFAULT}/launch/environments/development/strategies");
    let default_id = server.get(&strategies).await.expect(200)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .put(
            &format!("{strategies}/{default_id}"),
            json!({"name": "default", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["ann"]}
            ]}),
        )
        .await
        .expect(200);
    let (enabled, data) = evaluate().await;
    assert_eq!(enabled, false);
    assert_eq!(data[0]["constraints"][0]["values"], json!(["ann"]));
    assert_eq!(data[0]["constraints"][0]["result"], false);
    // Only what changed is compiled again: a flag created since is evaluated, an archived one is gone, and
    // a write in another environment leaves the answer as it was.
    let names_on = || async {
        features()
            .await
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_owned(),
                    f["isEnabled"] == true,
                )
            })
            .collect::<Vec<_>>()
    };
    server
        .post(DEFAULT, json!({"name": "later"}))
        .await
        .expect(201);
    server
        .post_empty(&format!("{DEFAULT}/later/environments/development/on"))
        .await
        .expect(200);
    assert_eq!(
        names_on().await,
        [("later".to_owned(), true), ("launch".to_owned(), false)]
    );
    server
        .delete(&format!("{DEFAULT}/launch"))
        .await
        .expect(202);
    server
        .post_empty(&format!("{DEFAULT}/later/environments/production/on"))
        .await
        .expect(200);
    assert_eq!(names_on().await, [("later".to_owned(), true)]);
}
