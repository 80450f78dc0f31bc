//! `vexil-control-plane import`, the real binary: an export file into a project and environment, and a
//! whole Unleash (`--from-unleash`) served by a small local axum server that answers what the real Unleash
//! 8.2.0 answered (`admin-requests.jsonl` and the exports of the fixture), idempotent when run twice.
//! (`strategy_order` uses the same stand-in with data of its own.)

use crate::database::TestDb;
use crate::import_export::{
    admin_requests, create_strategies_and_segments, fixture_json, frontend_differences,
    ENVIRONMENTS,
};
use crate::on_sqlite_and_postgres;
use crate::server::Server;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const UNLEASH_TOKEN: &str = "*:*.unleash-insecure-admin-api-token";

pub struct Run {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

pub async fn run_import(db: &TestDb, args: &[&str]) -> Run {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
        .arg("import")
        .args(args)
        .args(["--database-url", &db.url])
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("run vexil-control-plane import");
    Run {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub async fn revision(db: &TestDb) -> i64 {
    let store = vexil_control_plane::store::Store::connect(&db.url)
        .await
        .unwrap();
    let revision = store.revision().await.unwrap();
    store.close().await;
    revision
}

async fn flag_count(server: &Server) -> usize {
    let list = server.get("/api/admin/projects/default/features").await;
    list.expect(200)["features"].as_array().unwrap().len()
}

/// A file: imported whole (here while the server runs on the same database), the second run changes
/// nothing; a bad file is refused naming the JSON path, and writes nothing.
async fn import_a_file(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_strategies_and_segments(&server).await;
    let file = format!("{}/export-development.json", crate::import_export::FIXTURE);
    let args = [
        "--file",
        &file,
        "--project",
        "default",
        "--environment",
        "development",
    ];
    let run = run_import(&db, &args).await;
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("created flag auditPatternMatch (default/development)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("committed as revision"),
        "{}",
        run.stdout
    );
    let after = revision(&db).await;
    let run = run_import(&db, &args).await;
    assert!(run.success, "{}", run.stderr);
    assert_eq!(
        run.stdout.trim_end().lines().last(),
        Some("nothing to change"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("created"), "{}", run.stdout);
    assert_eq!(revision(&db).await, after);
    // The running server serves what the command wrote (it follows the revision).
    let mut served = 0;
    for _ in 0..40 {
        served = flag_count(&server).await;
        if served == 48 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(served, 48);

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"features": [{"name": "x"}, {"name": 3}], "featureStrategies": [], "tagTypes": []}"#,
    )
    .unwrap();
    let bad = bad.display().to_string();
    let run = run_import(
        &db,
        &[
            "--file",
            &bad,
            "--project",
            "default",
            "--environment",
            "development",
        ],
    )
    .await;
    assert!(!run.success);
    assert!(run.stderr.contains("features[1].name"), "{}", run.stderr);
    assert_eq!(revision(&db).await, after);
    let run = run_import(
        &db,
        &[
            "--file",
            &file,
            "--project",
            "default",
            "--environment",
            "nowhere",
        ],
    )
    .await;
    assert!(!run.success);
    assert!(run.stderr.contains("NotFoundError"), "{}", run.stderr);
    assert_eq!(revision(&db).await, after);
}

/// What the stand-in Unleash answers: the recorded answers where the recording has them, else the
/// recorded data in the shape of Unleash's answer.
pub struct Recorded {
    pub environments: Value,
    pub projects: Value,
    pub overview: Value,
    pub context: Value,
    pub strategies: Value,
    pub segments: Value,
    pub tag_types: Value,
    pub exports: Vec<(String, Value)>,
    /// `GET /api/admin/projects/default/features/:f` by flag: its strategies with their `sortOrder`.
    pub features: BTreeMap<String, Value>,
}

impl Recorded {
    fn load() -> Recorded {
        let requests = admin_requests();
        let answer = |method: &str, path: &str| -> Vec<Value> {
            requests
                .iter()
                .filter(|r| {
                    r["method"] == method
                        && r["path"] == path
                        && r["status"].as_u64().unwrap() < 300
                })
                .map(|r| r["response"].clone())
                .collect()
        };
        // The environments and their types, as the recorded flag search shows them.
        let search = answer(
            "GET",
            "/api/admin/search/features?archived=IS:true&project=IS:default",
        );
        let environments: Vec<Value> = search[0]["features"][0]["environments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json!({"name": e["name"], "type": e["type"], "enabled": true, "sortOrder": e["sortOrder"], "protected": false}))
            .collect();
        let exports: Vec<(String, Value)> = ENVIRONMENTS
            .iter()
            .map(|env| (env.to_string(), fixture_json(&format!("export-{env}.json"))))
            .collect();
        let mut context: Vec<Value> = Vec::new();
        let mut tag_types: Vec<Value> = Vec::new();
        for (_, export) in &exports {
            for field in export["contextFields"].as_array().unwrap() {
                if !context.iter().any(|f| f["name"] == field["name"]) {
                    context.push(field.clone());
                }
            }
            for tag_type in export["tagTypes"].as_array().unwrap() {
                if !tag_types.iter().any(|t| t["name"] == tag_type["name"]) {
                    tag_types.push(tag_type.clone());
                }
            }
        }
        // Each flag's strategies, as Unleash answered their creation (with `sortOrder`), by environment.
        let mut features: BTreeMap<String, Value> = BTreeMap::new();
        for request in &requests {
            let path = request["path"].as_str().unwrap();
            let parts: Vec<&str> = path.split('/').collect();
            let is_strategy_post = request["method"] == "POST"
                && request["status"].as_u64().unwrap() < 300
                && parts.len() == 10
                && parts[3..5] == ["projects", "default"]
                && parts[5] == "features"
                && parts[7] == "environments"
                && parts[9] == "strategies";
            if !is_strategy_post {
                continue;
            }
            let (flag, environment) = (parts[6], parts[8]);
            let feature = features
                .entry(flag.to_owned())
                .or_insert_with(|| json!({"name": flag, "project": "default", "environments": []}));
            let environments = feature["environments"].as_array_mut().unwrap();
            if !environments.iter().any(|e| e["name"] == environment) {
                environments.push(json!({"name": environment, "strategies": []}));
            }
            let entry = environments
                .iter_mut()
                .find(|e| e["name"] == environment)
                .unwrap();
            entry["strategies"]
                .as_array_mut()
                .unwrap()
                .push(request["response"].clone());
        }
        Recorded {
            features,
            overview: json!({"version": 1, "name": "Default Project", "onboardingStatus": {"status": "onboarded"},
                             "environments": ENVIRONMENTS.map(|e| json!({"environment": e}))}),
            projects: json!({"version": 1, "projects": [{"id": "default", "name": "Default Project",
                             "description": "Default project", "mode": "open"}]}),
            environments: json!({"version": 1, "environments": environments}),
            context: Value::Array(context),
            strategies: json!({"version": 1, "strategies": answer("POST", "/api/admin/strategies")}),
            segments: answer("GET", "/api/admin/segments")[0].clone(),
            tag_types: json!({"version": 1, "tagTypes": tag_types}),
            exports,
        }
    }
}

type Shared = Arc<Recorded>;

fn authorized(headers: &HeaderMap) -> Result<(), (StatusCode, Json<Value>)> {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(UNLEASH_TOKEN) {
        return Ok(());
    }
    Err((
        StatusCode::UNAUTHORIZED,
        Json(json!({"name": "AuthenticationRequired"})),
    ))
}

type Answer = Result<Json<Value>, (StatusCode, Json<Value>)>;

fn serve(headers: &HeaderMap, value: &Value) -> Answer {
    authorized(headers)?;
    Ok(Json(value.clone()))
}

/// `recorded`, answered over HTTP on a port of its own; its base URL.
pub async fn stand_in_unleash(recorded: Recorded) -> String {
    let app = Router::new()
        .route(
            "/api/admin/environments",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.environments) }),
        )
        .route(
            "/api/admin/projects",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.projects) }),
        )
        .route(
            "/api/admin/projects/default/overview",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.overview) }),
        )
        .route(
            "/api/admin/context",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.context) }),
        )
        .route(
            "/api/admin/strategies",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.strategies) }),
        )
        .route(
            "/api/admin/segments",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.segments) }),
        )
        .route(
            "/api/admin/tag-types",
            get(|State(r): State<Shared>, h: HeaderMap| async move { serve(&h, &r.tag_types) }),
        )
        .route(
            "/api/admin/projects/default/features/{name}",
            get(
                |State(r): State<Shared>, h: HeaderMap, Path(name): Path<String>| async move {
                    authorized(&h)?;
                    r.features.get(&name).map(|f| Json(f.clone())).ok_or((
                        StatusCode::NOT_FOUND,
                        Json(json!({"name": "NotFoundError"})),
                    ))
                },
            ),
        )
        .route(
            "/api/admin/features-batch/export",
            post(
                |State(r): State<Shared>, h: HeaderMap, Json(query): Json<Value>| async move {
                    authorized(&h)?;
                    assert_eq!(query["project"], "default");
                    let export = r
                        .exports
                        .iter()
                        .find(|(env, _)| query["environment"] == env.as_str());
                    export.map(|(_, export)| Json(export.clone())).ok_or((
                        StatusCode::NOT_FOUND,
                        Json(json!({"name": "NotFoundError"})),
                    ))
                },
            ),
        )
        .with_state(Arc::new(recorded));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

/// A whole Unleash into a fresh Vexil: then `/api/frontend` answers what Unleash answered; a second run
/// creates nothing and moves no revision; a wrong token stops it before anything is written.
async fn import_from_unleash(db: TestDb) {
    let unleash = stand_in_unleash(Recorded::load()).await;
    let clients = ENVIRONMENTS
        .map(|e| format!("default:{e}.fixture-client"))
        .join(",");
    let frontends = ENVIRONMENTS
        .map(|e| format!("default:{e}.fixture-frontend"))
        .join(",");
    let server = Server::start(
        &db,
        &[
            "--init-client-tokens",
            &clients,
            "--init-frontend-tokens",
            &frontends,
        ],
    )
    .await;
    let before = revision(&db).await;
    let run = run_import(&db, &["--from-unleash", &unleash, "--token", "*:*.wrong"]).await;
    assert!(!run.success);
    assert!(run.stderr.contains("401"), "{}", run.stderr);
    assert_eq!(revision(&db).await, before);

    let run = run_import(&db, &["--from-unleash", &unleash, "--token", UNLEASH_TOKEN]).await;
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    for line in [
        "created context field tenantId",
        "created strategy tenantAllowList",
        "created segment beta-testers",
        "created segment modern-mobile",
        "created flag catalog-toggle (default/development)",
        "changed configuration of catalog-toggle in default/production",
    ] {
        assert!(
            run.stdout.lines().any(|l| l == line),
            "{line} in:\n{}",
            run.stdout
        );
    }
    assert!(
        !run.stdout.contains("created strategy userWithId"),
        "built into Vexil"
    );
    let after = revision(&db).await;
    assert_eq!(after, before + 1, "one revision for the whole migration");
    // The running server follows the revision (its publisher polls for other processes' commits); then
    // it answers as Unleash did.
    let token = format!("default:{}.fixture-client", ENVIRONMENTS[0]);
    let mut served = 0;
    for _ in 0..80 {
        let response = server
            .client
            .get(format!("{}/api/client/features", server.base))
            .header("Authorization", &token)
            .send()
            .await
            .unwrap();
        served = response.headers()["x-vexil-revision"]
            .to_str()
            .unwrap()
            .parse::<i64>()
            .unwrap();
        if served >= after {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(served, after);
    assert_eq!(flag_count(&server).await, 48);
    for environment in ENVIRONMENTS {
        let differences = frontend_differences(&server, environment).await;
        assert!(
            differences.is_empty(),
            "{}",
            differences[..differences.len().min(20)].join("\n")
        );
    }

    let run = run_import(&db, &["--from-unleash", &unleash, "--token", UNLEASH_TOKEN]).await;
    assert!(run.success, "{}", run.stderr);
    assert!(
        !run.stdout.contains("created") && !run.stdout.contains("changed"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.trim_end().lines().last(),
        Some("nothing to change")
    );
    assert_eq!(revision(&db).await, after);
}

on_sqlite_and_postgres!(import_a_file, import_from_unleash);
