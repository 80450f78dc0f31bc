//! The admin web UI in a real browser against the real binaries: `js/ui-walk.cjs` (playwright-core driving
//! Debian's chromium, both installed by `scripts/test`) signs in, creates a flag, adds a flexibleRollout with
//! a constraint, switches it on, edits, reorders, uses a segment, adds variants, meets a change-request
//! environment, archives and revives, and checks a Viewer; between its steps this test asks the edge's
//! `/api/frontend` what SDKs now get. Screenshots go to `target/ui-screenshots/`.

use crate::processes::{admin, eventually, get, Process, FRONTEND_TOKEN};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Pinned, as `scripts/test` installs it.
const PLAYWRIGHT_CORE: (&str, &str) = ("playwright-core", "1.65.1");
/// The accessibility checker every Chromium walk runs (`js/audit.cjs`), pinned as `scripts/test` installs it.
const AXE_CORE: (&str, &str) = ("axe-core", "4.14.1");

pub(crate) fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.test-deps/node_modules")
}

/// Fails (never skips) when the npm package `name@version` is not in `.test-deps/`: `scripts/test`
/// installs it.
pub(crate) fn assert_installed((name, version): (&str, &str)) {
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
}

/// Debian's chromium, failing (never skipping) when it, playwright-core or axe-core is missing:
/// `scripts/test` installs them. Every Chromium walk takes it from here.
pub(crate) fn chromium() -> String {
    assert_installed(PLAYWRIGHT_CORE);
    assert_installed(AXE_CORE);
    let path = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    assert!(
        Path::new(&path).exists(),
        "chromium is missing at {path}: run the tests with scripts/test, which installs Debian's chromium"
    );
    path
}

/// Where every walk saves its screenshots (`target/ui-screenshots/`), created.
pub(crate) fn screenshots() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A browser walk (`tests/e2e/js/<script>`) driven checkpoint by checkpoint: the script prints one JSON
/// line per checkpoint (`{"checkpoint": …}` with what the test needs, or `{"error": …}`) and waits for a
/// line on its stdin before it goes on, so the test can check the binaries between the browser's steps.
pub(crate) struct Walk {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    /// How long one step may take.
    patience: Duration,
}

impl Walk {
    /// Starts `script` against the control plane at `base`, with the npm packages, the screenshots folder
    /// and `env` (the browser, and whatever else the script reads).
    pub(crate) fn start(script: &str, base: &str, env: &[(&str, &str)]) -> Walk {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/e2e/js")
            .join(script);
        let mut child = Command::new("node")
            .arg(&path)
            .env("NODE_PATH", node_modules())
            .env("VEXIL_URL", base)
            .env("SCREENSHOTS", screenshots())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start node");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Walk {
            child,
            stdin,
            lines,
            patience: Duration::from_secs(120),
        }
    }

    /// The same walk allowing `patience` per step.
    pub(crate) fn patience(self, patience: Duration) -> Walk {
        Walk { patience, ..self }
    }

    /// The next checkpoint's name and message; panics with the walk's error.
    pub(crate) async fn next(&mut self) -> (String, Value) {
        let line = tokio::time::timeout(self.patience, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("the walk answered within {:?}", self.patience))
            .expect("read the walk's output")
            .expect("the walk is still running");
        let message: Value = serde_json::from_str(&line).unwrap_or(json!({"error": line}));
        if let Some(error) = message.get("error") {
            panic!(
                "the browser walk failed: {}",
                error.as_str().unwrap_or_default()
            );
        }
        let checkpoint = message["checkpoint"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (checkpoint, message)
    }

    /// Lets the walk go on past its checkpoint.
    pub(crate) async fn resume(&mut self) {
        self.stdin.write_all(b"continue\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Lets the walk go on past its last checkpoint, closes its stdin and asserts that it ends well within
    /// 30 s.
    pub(crate) async fn finish(self) {
        let Walk {
            mut child,
            mut stdin,
            ..
        } = self;
        stdin.write_all(b"continue\n").await.unwrap();
        stdin.flush().await.unwrap();
        drop(stdin);
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("the walk ended")
            .unwrap();
        assert!(status.success());
    }
}

/// Whether the edge answers `flag` to a frontend client in `country`, for any of these users.
pub(crate) async fn answered(
    edge: &Process,
    flag: &str,
    country: &str,
    users: &[&str],
) -> Vec<Value> {
    let mut found = Vec::new();
    for user in users {
        let answer = get(
            &format!("{}/api/frontend?userId={user}&country={country}", edge.base),
            Some(FRONTEND_TOKEN),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        if let Some(toggle) = answer.body["toggles"]
            .as_array()
            .and_then(|toggles| toggles.iter().find(|toggle| toggle["name"] == flag))
        {
            found.push(toggle.clone());
        }
    }
    found
}

pub(crate) const USERS: [&str; 8] = ["u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_walk_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    for (username, role) in [("alice", "Admin"), ("vera", "Viewer")] {
        admin(
            &control_plane,
            "POST",
            "/api/admin/user-admin",
            Some(json!({"username": username, "password": "correct horse battery", "rootRole": role})),
        )
        .await;
    }
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "ui-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    let flag = "checkout-v2";
    loop {
        let (checkpoint, _) = walk.next().await;
        let limit = Duration::from_secs(10);
        match checkpoint.as_str() {
            "rollout-50" => {
                eventually(limit, "NO answered for some users at 50 %", || async {
                    let norway = answered(&edge, flag, "NO", &USERS).await.len();
                    (1..USERS.len()).contains(&norway)
                })
                .await;
                assert!(answered(&edge, flag, "DE", &USERS).await.is_empty());
            }
            "rollout-100" | "reordered" | "segment" => {
                eventually(limit, "NO and SE answered for every user", || async {
                    answered(&edge, flag, "NO", &USERS).await.len() == USERS.len()
                        && answered(&edge, flag, "SE", &USERS).await.len() == USERS.len()
                })
                .await;
                assert!(answered(&edge, flag, "DE", &USERS).await.is_empty());
                if checkpoint == "reordered" {
                    // The user-id strategy is first now, and answers outside the countries.
                    assert_eq!(answered(&edge, flag, "DE", &["vip-1"]).await.len(), 1);
                    let stored = admin(
                        &control_plane,
                        "GET",
                        &format!("/api/admin/projects/default/features/{flag}"),
                        None,
                    )
                    .await;
                    assert_eq!(
                        stored.body["environments"][0]["strategies"][0]["name"],
                        "userWithId"
                    );
                }
            }
            "variants" => {
                eventually(limit, "the variant with its JSON payload", || async {
                    answered(&edge, flag, "NO", &["u1"])
                        .await
                        .first()
                        .is_some_and(|toggle| {
                            toggle["variant"]["name"] == "blue"
                                && toggle["variant"]["payload"]
                                    == json!({"type": "json", "value": "{\"color\": \"blue\"}"})
                        })
                })
                .await;
            }
            "dependency" => {
                let stored = admin(
                    &control_plane,
                    "GET",
                    &format!("/api/admin/projects/default/features/{flag}"),
                    None,
                )
                .await;
                assert_eq!(
                    stored.body["dependencies"],
                    json!([{"feature": "launch-gate", "enabled": true, "variants": []}])
                );
                eventually(limit, "no answer while launch-gate is off", || async {
                    answered(&edge, flag, "NO", &USERS).await.is_empty()
                })
                .await;
            }
            "link" => {
                let stored = admin(
                    &control_plane,
                    "GET",
                    &format!("/api/admin/projects/default/features/{flag}"),
                    None,
                )
                .await;
                assert_eq!(
                    stored.body["links"][0]["url"],
                    "https://tickets.example.com/PAY-1"
                );
                assert_eq!(stored.body["links"][0]["title"], "Ticket PAY-1");
            }
            "change-request" => {
                let stored = admin(
                    &control_plane,
                    "GET",
                    &format!("/api/admin/projects/default/features/{flag}"),
                    None,
                )
                .await;
                assert_eq!(stored.body["environments"][1]["name"], "production");
                assert_eq!(stored.body["environments"][1]["enabled"], false);
                let requests = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/projects/default/change-requests",
                    None,
                )
                .await;
                assert_eq!(requests.body[0]["state"], "Draft");
                assert_eq!(
                    requests.body[0]["features"][0]["changes"][0]["action"],
                    "updateEnabled"
                );
            }
            "archived" => {
                eventually(limit, "the archived flag leaves the edge", || async {
                    answered(&edge, flag, "NO", &USERS).await.is_empty()
                })
                .await;
            }
            "revived" => {
                let stored = admin(
                    &control_plane,
                    "GET",
                    &format!("/api/admin/projects/default/features/{flag}"),
                    None,
                )
                .await;
                assert_eq!(stored.body["archived"], false);
                // Archiving is refused while change requests are on, so they come on only now.
                admin(
                    &control_plane,
                    "PUT",
                    "/api/admin/projects/default/environments/production/change-requests/config",
                    Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 1})),
                )
                .await;
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in ["01-sign-in", "05-flag-on", "12-flag-page", "13-viewer"] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
