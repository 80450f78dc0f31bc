//! The real Unleash SDKs, run by Node from `.test-deps/` (installed by `scripts/test`), against the real
//! binaries: `unleash-proxy-client` on an edge's `/api/frontend`, `unleash-client` on an edge's and on the
//! control plane's `/api/client/features`. What each SDK reports (isEnabled, getVariant) for several contexts
//! must agree with `vexil-edge eval` on the control plane's client document, and a switch made on the admin
//! API must reach the SDK on its next refresh.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::database::TestDb;
use crate::processes::*;

/// The flags `create_flags` makes, in project default, environment development.
pub(crate) const FLAGS: &[&str] = &[
    "checkout-redesign",
    "beta-banner",
    "new-search",
    "dark-mode",
    "office-network",
    "kill-switch",
    "not-released",
];

/// The flag the refresh checks turn off.
pub(crate) const SWITCHED: &str = "kill-switch";

/// The pinned npm packages, as `scripts/test` lists them.
const PROXY_CLIENT: (&str, &str) = ("unleash-proxy-client", "3.8.2");
pub(crate) const NODE_CLIENT: (&str, &str) = ("unleash-client", "6.12.1");

fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.test-deps/node_modules")
}

/// Fails (never skips) when Node or the package is missing: `scripts/test` installs both.
pub(crate) fn require_package((name, version): (&str, &str)) {
    let manifest = node_modules().join(name).join("package.json");
    let installed = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|package| package["version"].as_str().map(str::to_owned));
    assert_eq!(
        installed.as_deref(),
        Some(version),
        "npm package {name}@{version} is missing at {}: run the tests with scripts/test, which installs it",
        manifest.display()
    );
    let node = std::process::Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|out| out.status.success()),
        "node is missing: run the tests with scripts/test, which installs Node.js"
    );
}

/// One SDK in a Node process (`js/*.cjs`), asked over stdin/stdout, one JSON line each way.
pub(crate) struct NodeSdk {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl NodeSdk {
    pub(crate) async fn start(script: &str, args: &[&str]) -> NodeSdk {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/e2e/js")
            .join(script);
        let mut child = Command::new("node")
            .arg(&path)
            .args(args)
            .env("NODE_PATH", node_modules())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start node");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut sdk = NodeSdk {
            child,
            stdin,
            stdout,
        };
        let first = sdk.read().await;
        assert_eq!(first, json!({"ready": true}), "{script} did not start");
        sdk
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
            .await
            .expect("the SDK answered within 30 s")
            .expect("read the SDK's stdout")
            .expect("the SDK process is still running");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON from the SDK: {line}"))
    }

    /// What the SDK reports for `flags` (after switching to `context`, if given).
    pub(crate) async fn ask(&mut self, context: Option<&Value>, flags: &[&str]) -> Value {
        let mut request = json!({ "flags": flags });
        if let Some(context) = context {
            request["context"] = context.clone();
        }
        let line = format!("{request}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to the SDK");
        let answer = self.read().await;
        assert!(
            answer["error"].is_null(),
            "the SDK reported an error: {answer}"
        );
        answer
    }

    pub(crate) async fn is_enabled(&mut self, flag: &str) -> bool {
        let answer = self.ask(None, &[flag]).await;
        answer["results"][0]["enabled"] == true
    }
}

impl Drop for NodeSdk {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// Contexts that spread over every flag's rules; each has a userId and a sessionId, so nothing is random.
pub(crate) fn contexts() -> Vec<Value> {
    let mut contexts = vec![
        json!({"userId": "alice", "sessionId": "s-alice", "properties": {
            "country": "NO", "email": "alice@Example.com", "appVersion": "2.1.0"}}),
        json!({"userId": "bob", "sessionId": "s-bob", "remoteAddress": "10.1.2.3", "properties": {
            "country": "SE", "email": "bob@other.org", "appVersion": "1.0.0"}}),
        json!({"userId": "carol", "sessionId": "s-carol", "properties": {"country": "NO"}}),
        json!({"userId": "dave", "sessionId": "s-dave", "remoteAddress": "192.168.1.1",
            "properties": {"country": "DK", "email": "dave@example.com"}}),
    ];
    for n in 1..=8 {
        contexts.push(
            json!({"userId": format!("user-{n}"), "sessionId": format!("s-{n}"),
            "properties": {"country": "SE", "appVersion": format!("{n}.0.0")}}),
        );
    }
    contexts
}

/// Rollouts, constraints, a segment and variants (strategy-level and flag-level), over the admin API.
pub(crate) async fn create_flags(control_plane: &Process) {
    let segment = admin(
        control_plane,
        "POST",
        "/api/admin/segments",
        Some(
            json!({"name": "beta-testers", "constraints": [{"contextName": "email",
            "operator": "STR_ENDS_WITH", "values": ["@example.com"], "caseInsensitive": true}]}),
        ),
    )
    .await;
    let segment_id = segment.body["id"].clone();
    let strategies: [(&str, Value); 6] = [
        (
            "checkout-redesign",
            json!({"name": "flexibleRollout",
                "parameters": {"rollout": "50", "stickiness": "userId", "groupId": "checkout-redesign"},
                "constraints": [{"contextName": "country", "operator": "IN", "values": ["NO", "SE"]}],
                "variants": [
                    {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "userId",
                     "payload": {"type": "json", "value": "{\"color\":\"blue\"}"}},
                    {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "userId",
                     "payload": {"type": "string", "value": "green"}}]}),
        ),
        (
            "beta-banner",
            json!({"name": "default", "segments": [segment_id]}),
        ),
        (
            "new-search",
            json!({"name": "userWithId", "parameters": {"userIds": "alice,bob,carol,dave,user-1,user-2,user-3,user-4,user-5"}}),
        ),
        (
            "dark-mode",
            json!({"name": "flexibleRollout",
                "parameters": {"rollout": "100", "stickiness": "default", "groupId": "dark-mode"},
                "constraints": [{"contextName": "appVersion", "operator": "SEMVER_GT",
                    "value": "1.9.0"}]}),
        ),
        (
            "office-network",
            json!({"name": "remoteAddress", "parameters": {"IPs": "10.0.0.0/8, 127.0.0.1"}}),
        ),
        (SWITCHED, json!({"name": "default"})),
    ];
    for (flag, strategy) in strategies {
        admin(
            control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": flag})),
        )
        .await;
        admin(
            control_plane,
            "POST",
            &format!(
                "/api/admin/projects/default/features/{flag}/environments/development/strategies"
            ),
            Some(strategy),
        )
        .await;
        admin(
            control_plane,
            "POST",
            &format!("/api/admin/projects/default/features/{flag}/environments/development/on"),
            None,
        )
        .await;
    }
    admin(
        control_plane,
        "PUT",
        "/api/admin/projects/default/features/new-search/environments/development/variants",
        Some(json!([
            {"name": "fast", "weight": 700, "weightType": "variable", "stickiness": "default",
             "payload": {"type": "string", "value": "fast"}},
            {"name": "accurate", "weight": 300, "weightType": "variable", "stickiness": "default",
             "overrides": [{"contextName": "userId", "values": ["bob"]}]}])),
    )
    .await;
    // Created with a strategy but left off in development.
    admin(
        control_plane,
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": "not-released"})),
    )
    .await;
    admin(
        control_plane,
        "POST",
        "/api/admin/projects/default/features/not-released/environments/development/strategies",
        Some(json!({"name": "default"})),
    )
    .await;
}

/// A control plane (SQLite) with the flags, and an edge that serves them.
pub(crate) async fn stack() -> (TestDb, Process, Process) {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    create_flags(&control_plane).await;
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    wait_until_served(&control_plane, &edge).await;
    (db, control_plane, edge)
}

/// The control plane's own client API follows its publisher too: waits for the last write of `create_flags`
/// (not-released's strategy) there, then for the edge to serve the same document.
pub(crate) async fn wait_until_served(control_plane: &Process, edge: &Process) {
    eventually(
        Duration::from_secs(30),
        "the edge serves the control plane's last write",
        || async {
            let own = client_features(control_plane).await;
            let last_write_seen = own.as_array().is_some_and(|features| {
                features.iter().any(|feature| {
                    feature["name"] == "not-released"
                        && feature["strategies"][0]["name"] == "default"
                })
            });
            last_write_seen && client_features(edge).await == own
        },
    )
    .await;
}

async fn client_features(process: &Process) -> Value {
    let answer = get(
        &format!("{}/api/client/features", process.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    answer.body["features"].clone()
}

/// `vexil-edge eval` on the control plane's client document: one line (the enabled toggles) per context.
pub(crate) async fn eval_expected(control_plane: &Process, contexts: &[Value]) -> Vec<Value> {
    let document = request(
        "GET",
        &format!("{}/api/client/features", control_plane.base),
        Some(CLIENT_TOKEN),
        &[("Unleash-Client-Spec", "5.2.0")],
        None,
    )
    .await;
    assert_eq!(document.status, 200, "{}", document.body);
    let dir = tempfile::tempdir().expect("temp dir");
    let features = dir.path().join("features.json");
    std::fs::write(&features, document.body.to_string()).expect("write the document");
    let contexts_file = dir.path().join("contexts.jsonl");
    let jsonl: Vec<String> = contexts.iter().map(Value::to_string).collect();
    std::fs::write(&contexts_file, jsonl.join("\n")).expect("write the contexts");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vexil-edge"))
        .arg("eval")
        .arg("--features")
        .arg(&features)
        .arg("--contexts")
        .arg(&contexts_file)
        .output()
        .expect("run vexil-edge eval");
    assert!(
        out.status.success(),
        "vexil-edge eval: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("eval prints JSON lines"))
        .collect();
    assert_eq!(lines.len(), contexts.len());
    lines
}

/// The parts of a variant both SDKs and the frontend API agree on.
pub(crate) fn variant_core(variant: &Value) -> Value {
    json!({
        "name": variant["name"],
        "enabled": variant["enabled"],
        "payload": variant.get("payload").cloned().unwrap_or(Value::Null),
    })
}

/// What an SDK reported: per context (as the SDK reports it used it), one result per flag of `FLAGS`.
pub(crate) struct Reported {
    pub(crate) contexts: Vec<Value>,
    pub(crate) results: Vec<Value>,
}

/// Asks the SDK about every flag for every context and compares with `vexil-edge eval` on the context the SDK
/// reports it used (`remote_address`: what the server adds when the context has none, as the frontend API
/// does with the caller's address). Checks that the contexts reach every kind of answer: flags on and off,
/// strategy variants, flag-level variants and overrides, and the placeholder.
pub(crate) async fn assert_agrees_with_eval(
    sdk: &mut NodeSdk,
    control_plane: &Process,
    remote_address: Option<&str>,
) -> Reported {
    let mut used = Vec::new();
    let mut reported = Vec::new();
    for context in contexts() {
        let answer = sdk.ask(Some(&context), FLAGS).await;
        let mut effective = answer["context"].clone();
        if let (Some(address), None) = (remote_address, effective.get("remoteAddress")) {
            effective["remoteAddress"] = json!(address);
        }
        used.push(effective);
        reported.push(answer["results"].clone());
    }
    let expected = eval_expected(control_plane, &used).await;
    let mut enabled_count = 0;
    let mut variants: Vec<String> = Vec::new();
    for ((context, results), toggles) in used.iter().zip(&reported).zip(&expected) {
        for (flag, result) in FLAGS.iter().zip(results.as_array().expect("results")) {
            let toggle = toggles
                .as_array()
                .expect("eval line")
                .iter()
                .find(|toggle| toggle["name"] == *flag);
            let expected_variant = toggle.map_or_else(
                || json!({"name": "disabled", "enabled": false, "payload": null}),
                |toggle| variant_core(&toggle["variant"]),
            );
            assert_eq!(
                (result["enabled"].clone(), variant_core(&result["variant"])),
                (json!(toggle.is_some()), expected_variant),
                "flag {flag}, context {context}: the SDK (left) and vexil-edge eval (right) disagree"
            );
            if toggle.is_some() {
                enabled_count += 1;
                variants.push(result["variant"]["name"].as_str().unwrap_or("").to_owned());
            }
        }
    }
    let pairs = contexts().len() * FLAGS.len();
    assert!(
        enabled_count > pairs / 4 && enabled_count < pairs * 3 / 4,
        "{enabled_count} of {pairs} enabled"
    );
    for name in ["accurate", "blue", "disabled", "fast", "green"] {
        assert!(
            variants.iter().any(|v| v == name),
            "no context got variant {name}: {variants:?}"
        );
    }
    Reported {
        contexts: used,
        results: reported,
    }
}

/// Turns `SWITCHED` off on the admin API and waits for the SDK's own refresh to report it off.
async fn assert_switch_reaches_sdk(sdk: &mut NodeSdk, control_plane: &Process) {
    assert!(sdk.is_enabled(SWITCHED).await, "{SWITCHED} starts on");
    admin(
        control_plane,
        "POST",
        &format!("/api/admin/projects/default/features/{SWITCHED}/environments/development/off"),
        None,
    )
    .await;
    let mut turned_off = false;
    for _ in 0..100 {
        if !sdk.is_enabled(SWITCHED).await {
            turned_off = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        turned_off,
        "the SDK still reports {SWITCHED} on 10 s after it was turned off"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unleash_proxy_client_on_the_edge_frontend_api_agrees_with_eval() {
    require_package(PROXY_CLIENT);
    require_package(NODE_CLIENT);
    let (_db, control_plane, edge) = stack().await;
    let url = format!("{}/api/frontend", edge.base);
    let mut sdk = NodeSdk::start("frontend-sdk.cjs", &[&url, FRONTEND_TOKEN, "1"]).await;
    let reported = assert_agrees_with_eval(&mut sdk, &control_plane, Some("127.0.0.1")).await;

    // The edge's answers also agree with an engine that is not Vexil's: unleash-client's own, evaluating the
    // same contexts from the control plane's client document.
    let api = format!("{}/api", control_plane.base);
    let mut server_sdk = NodeSdk::start("server-sdk.cjs", &[&api, CLIENT_TOKEN, "500"]).await;
    for (context, results) in reported.contexts.iter().zip(&reported.results) {
        let answer = server_sdk.ask(Some(context), FLAGS).await;
        for (flag, (own, other)) in FLAGS.iter().zip(
            results
                .as_array()
                .expect("results")
                .iter()
                .zip(answer["results"].as_array().expect("results")),
        ) {
            assert_eq!(
                (&own["enabled"], variant_core(&own["variant"])),
                (&other["enabled"], variant_core(&other["variant"])),
                "flag {flag}, context {context}: the edge (left) and unleash-client (right) disagree"
            );
        }
    }

    assert_switch_reaches_sdk(&mut sdk, &control_plane).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unleash_client_on_the_edge_client_api_agrees_with_eval() {
    require_package(NODE_CLIENT);
    let (_db, control_plane, edge) = stack().await;
    let url = format!("{}/api", edge.base);
    let mut sdk = NodeSdk::start("server-sdk.cjs", &[&url, CLIENT_TOKEN, "500"]).await;
    assert_agrees_with_eval(&mut sdk, &control_plane, None).await;
    assert_switch_reaches_sdk(&mut sdk, &control_plane).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unleash_client_on_the_control_plane_client_api_agrees_with_eval() {
    require_package(NODE_CLIENT);
    let (_db, control_plane, _edge) = stack().await;
    let url = format!("{}/api", control_plane.base);
    let mut sdk = NodeSdk::start("server-sdk.cjs", &[&url, CLIENT_TOKEN, "500"]).await;
    assert_agrees_with_eval(&mut sdk, &control_plane, None).await;
    assert_switch_reaches_sdk(&mut sdk, &control_plane).await;
}

/// The SDKs' own reports, through an edge, reach the control plane's metrics views: the server SDK's
/// registration (its instance, SDK version and strategies), the flags both SDKs saw, and their usage counts,
/// each exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_registration_and_metrics_reach_the_metrics_views() {
    require_package(PROXY_CLIENT);
    require_package(NODE_CLIENT);
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    create_flags(&control_plane).await;
    let edge = Process::edge(&[control_plane.grpc()], &["--metrics-interval", "200ms"]);
    wait_until_served(&control_plane, &edge).await;
    let frontend = format!("{}/api/frontend", edge.base);
    let api = format!("{}/api", edge.base);
    // Metrics every second (browser SDK) and every 300 ms (server SDK).
    let mut browser =
        NodeSdk::start("frontend-sdk.cjs", &[&frontend, FRONTEND_TOKEN, "1", "1"]).await;
    let mut server = NodeSdk::start("server-sdk.cjs", &[&api, CLIENT_TOKEN, "500", "300"]).await;
    // Both SDKs count isEnabled and getVariant each as one evaluation.
    let mut expected = json!({});
    for context in contexts().iter().take(3) {
        for sdk in [&mut browser, &mut server] {
            let answer = sdk.ask(Some(context), FLAGS).await;
            for (flag, result) in FLAGS
                .iter()
                .zip(answer["results"].as_array().expect("results"))
            {
                let side = if result["enabled"] == true {
                    "yes"
                } else {
                    "no"
                };
                let count = &mut expected[*flag];
                for key in ["yes", "no"] {
                    count[key] =
                        json!(count[key].as_i64().unwrap_or(0) + if key == side { 2 } else { 0 });
                }
            }
        }
    }

    let apps = ["vexil-sdk-test-frontend", "vexil-sdk-test-server"];
    let mut seen = Value::Null;
    for _ in 0..150 {
        seen = metrics_views(&control_plane, &apps).await;
        let registered = seen["vexil-sdk-test-server"]["instances"][0]["sdkVersion"]
            .as_str()
            .is_some_and(|version| version.contains("6.12.1"))
            && seen["vexil-sdk-test-server"]["strategies"][0]["strategies"]
                .as_array()
                .is_some_and(|names| names.iter().any(|name| name == "flexibleRollout"));
        let all_seen = apps.iter().all(|app| {
            FLAGS.iter().all(|flag| {
                seen[*app]["seenToggles"]
                    .as_array()
                    .is_some_and(|s| s.contains(&json!(flag)))
            })
        });
        if registered && all_seen && seen["lastHour"] == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the SDKs' registration and metrics did not reach the metrics views within 15 s: {seen:#}"
    );
}

/// `{lastHour, <app>: application details or null}` from the admin metrics views.
async fn metrics_views(control_plane: &Process, apps: &[&str]) -> Value {
    let toggles = admin(
        control_plane,
        "GET",
        "/api/admin/metrics/feature-toggles",
        None,
    )
    .await;
    let mut views = json!({ "lastHour": toggles.body["lastHour"] });
    for app in apps {
        let details = request(
            "GET",
            &format!(
                "{}/api/admin/metrics/applications/{app}",
                control_plane.base
            ),
            Some(ADMIN_TOKEN),
            &[],
            None,
        )
        .await;
        views[*app] = if details.status == 200 {
            details.body
        } else {
            Value::Null
        };
    }
    views
}
