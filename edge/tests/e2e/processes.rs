//! The real binaries on 127.0.0.1:0: a control plane (its gRPC and HTTP addresses read from what it prints)
//! and edges subscribed to it, plus HTTP helpers.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const ADMIN_TOKEN: &str = "*:*.e2e-admin-secret";
pub const CLIENT_TOKEN: &str = "default:development.e2e-client-secret";
pub const FRONTEND_TOKEN: &str = "default:development.e2e-frontend-secret";
/// The edge token every control plane is started with and every edge sends (all environments).
pub const EDGE_TOKEN: &str = "*:*.e2e-edge-secret";

/// A running binary, killed when dropped.
pub struct Process {
    child: Child,
    /// `http://ADDR` of its HTTP listener.
    pub base: String,
    /// `http://ADDR` of its gRPC listener (control plane only).
    pub grpc: Option<String>,
    /// Its standard error, shown only if the test fails: what a passing test provokes on purpose (a killed
    /// upstream, refused calls) must not look like errors in the output.
    log: tempfile::NamedTempFile,
}

/// The control-plane binary, built next to this crate's (`cargo test --workspace` builds both).
fn control_plane_binary() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_vexil-edge")).with_file_name("vexil-control-plane");
    assert!(
        path.exists(),
        "{} is missing: run the tests with scripts/test (cargo test --workspace builds it)",
        path.display()
    );
    path
}

impl Process {
    /// A control plane on `database_url` with the test tokens.
    pub fn control_plane(database_url: &str, extra: &[&str]) -> Process {
        Process::control_plane_at(database_url, "127.0.0.1:0", extra)
    }

    /// A control plane with environment variables `env` besides (Unleash's `OIDC_*`, say).
    pub fn control_plane_env(database_url: &str, extra: &[&str], env: &[(&str, &str)]) -> Process {
        Process::control_plane_command(database_url, "127.0.0.1:0", extra, env)
    }

    /// A control plane whose gRPC listener is at `grpc_listen` (to restart one where its edges look).
    pub fn control_plane_at(database_url: &str, grpc_listen: &str, extra: &[&str]) -> Process {
        Process::control_plane_command(database_url, grpc_listen, extra, &[])
    }

    /// A control plane whose HTTP listener is at `listen` (to know its address before it starts: its
    /// `--public-url`).
    pub fn control_plane_listening(database_url: &str, listen: &str, extra: &[&str]) -> Process {
        Process::control_plane_on(database_url, listen, "127.0.0.1:0", extra, &[])
    }

    fn control_plane_command(
        database_url: &str,
        grpc_listen: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Process {
        Process::control_plane_on(database_url, "127.0.0.1:0", grpc_listen, extra, env)
    }

    fn control_plane_on(
        database_url: &str,
        listen: &str,
        grpc_listen: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Process {
        let mut args = vec![
            "--listen",
            listen,
            "--grpc-listen",
            grpc_listen,
            "--database-url",
            database_url,
            "--init-admin-tokens",
            ADMIN_TOKEN,
            "--init-client-tokens",
            CLIENT_TOKEN,
            "--init-frontend-tokens",
            FRONTEND_TOKEN,
            "--init-edge-tokens",
            EDGE_TOKEN,
        ];
        args.extend_from_slice(extra);
        Process::start(
            Command::new(control_plane_binary())
                .args(args)
                .envs(env.iter().copied()),
        )
    }

    /// `vexil-edge serve` subscribed to `upstreams` with the test edge token.
    pub fn edge(upstreams: &[&str], extra: &[&str]) -> Process {
        Process::edge_with_token(upstreams, Some(EDGE_TOKEN), extra)
    }

    /// `vexil-edge serve` subscribed to `upstreams` with `token` as its edge token (none: no `--token`).
    pub fn edge_with_token(upstreams: &[&str], token: Option<&str>, extra: &[&str]) -> Process {
        Process::edge_at(upstreams, token, "127.0.0.1:0", extra)
    }

    /// `vexil-edge serve` listening at `listen` (to restart one where its SDKs look).
    pub fn edge_at(
        upstreams: &[&str],
        token: Option<&str>,
        listen: &str,
        extra: &[&str],
    ) -> Process {
        let upstream = upstreams.join(",");
        let mut args = vec!["serve", "--listen", listen, "--upstream", &upstream];
        if let Some(token) = token {
            args.extend_from_slice(&["--token", token]);
        }
        args.extend_from_slice(extra);
        Process::start(Command::new(env!("CARGO_BIN_EXE_vexil-edge")).args(args))
    }

    /// `vexil-edge offline …`.
    pub fn offline(args: &[&str]) -> Process {
        let mut all = vec!["offline", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Process::start(Command::new(env!("CARGO_BIN_EXE_vexil-edge")).args(all))
    }

    fn start(command: &mut Command) -> Process {
        let control_plane = command.get_program() != env!("CARGO_BIN_EXE_vexil-edge");
        let log = tempfile::NamedTempFile::new().expect("log file");
        let mut child = command
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.reopen().expect("reopen the log file")))
            .spawn()
            .expect("start the binary");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut grpc = None;
        let mut base = None;
        while base.is_none() || (control_plane && grpc.is_none()) {
            let line = receiver
                .recv_timeout(Duration::from_secs(60))
                .expect("the binary printed `listening on`");
            if let Some(address) = line.strip_prefix("grpc listening on ") {
                grpc = Some(format!("http://{address}"));
            } else if let Some(address) = line.strip_prefix("listening on ") {
                base = Some(format!("http://{address}"));
            }
        }
        let base = base.unwrap_or_default();
        std::thread::spawn(move || while receiver.recv().is_ok() {});
        Process {
            child,
            base,
            grpc,
            log,
        }
    }

    pub fn grpc(&self) -> &str {
        self.grpc.as_deref().expect("a control plane")
    }

    /// SIGKILL, then reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.log.path()).unwrap_or_default();
            eprintln!("--- the log of {}:\n{log}--- end", self.base);
        }
    }
}

/// An answer: status, headers and JSON body (`Null` when empty).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The names of the enabled toggles of a frontend answer.
    pub fn toggle_names(&self) -> Vec<String> {
        self.body["toggles"]
            .as_array()
            .map(|toggles| {
                toggles
                    .iter()
                    .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

pub async fn request(
    method: &str,
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> Answer {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = client.request(method, url);
    if let Some(token) = token {
        request = request.header("Authorization", token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Answer {
        status,
        headers,
        body,
    }
}

pub async fn get(url: &str, token: Option<&str>) -> Answer {
    request("GET", url, token, &[], None).await
}

/// Admin-API call on a control plane.
pub async fn admin(process: &Process, method: &str, path: &str, body: Option<Value>) -> Answer {
    let answer = request(
        method,
        &format!("{}{path}", process.base),
        Some(ADMIN_TOKEN),
        &[],
        body,
    )
    .await;
    assert!(
        (200..300).contains(&answer.status),
        "{method} {path}: {} {}",
        answer.status,
        answer.body
    );
    answer
}

/// Polls `check` every 20 ms until it holds; panics with `what` after `limit`. Returns the time it took.
pub async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(started.elapsed() < limit, "not within {limit:?}: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The enabled flags an edge (or control plane) answers to the frontend token.
pub async fn frontend_flags(process: &Process) -> Answer {
    get(
        &format!("{}/api/frontend?userId=u1", process.base),
        Some(FRONTEND_TOKEN),
    )
    .await
}

/// Creates flag `name` in project default and turns it on in development.
pub async fn create_enabled_flag(control_plane: &Process, name: &str) {
    admin(
        control_plane,
        "POST",
        "/api/admin/projects/default/features",
        Some(serde_json::json!({"name": name})),
    )
    .await;
    admin(
        control_plane,
        "POST",
        &format!("/api/admin/projects/default/features/{name}/environments/development/on"),
        None,
    )
    .await;
}
