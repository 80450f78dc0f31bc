//! A real Unleash server (npm `unleash-server`, pinned in scripts/test), started once per test binary on its
//! own Postgres database by `js/unleash-server.mjs`, and its admin API; `vexil-edge edge` configured only
//! by Unleash Edge's environment variables; Node SDKs; a TCP relay that can cut the edge off its upstream.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const ADMIN_TOKEN: &str = "*:*.vexil-unleash-edge-test-admin";
const UNLEASH_SERVER: (&str, &str) = ("unleash-server", "8.2.0");

pub fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.test-deps/node_modules")
}

fn js(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/js")
        .join(script)
}

/// Fails (never skips) when Node or the package is missing: `scripts/test` installs both.
pub fn require_package((name, version): (&str, &str)) {
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

/// The running Unleash: stopped (and its database dropped) when this test process ends and its standard
/// input closes.
pub struct Unleash {
    _child: Child,
    _stdin: ChildStdin,
    pub base: String,
}

static UNLEASH: OnceLock<Unleash> = OnceLock::new();
/// The tests of this binary share one Unleash and its one project: they run one at a time.
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The shared Unleash, started on first use (about half a minute).
pub fn unleash() -> &'static Unleash {
    UNLEASH.get_or_init(|| {
        require_package(UNLEASH_SERVER);
        let postgres = std::env::var("TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let database = format!("vexil_unleash_edge_{}", std::process::id());
        let entry = node_modules().join("unleash-server/dist/lib/server-impl.js");
        let mut child = Command::new("node")
            .arg(js("unleash-server.mjs"))
            .args([postgres.as_str(), database.as_str(), ADMIN_TOKEN])
            .env("UNLEASH_SERVER_MODULE", entry)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node");
        let stdin = child.stdin.take().expect("stdin");
        let port = read_line_with(
            child.stdout.take().expect("stdout"),
            "unleash listening on ",
            120,
        );
        Unleash {
            _child: child,
            _stdin: stdin,
            base: format!("http://127.0.0.1:{port}"),
        }
    })
}

/// Reads `stream` (in a thread, kept draining) until a line starts with `prefix`; returns the rest.
fn read_line_with(
    stream: impl Read + Send + 'static,
    prefix: &'static str,
    seconds: u64,
) -> String {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sender = Some(sender);
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix(prefix) {
                if let Some(sender) = sender.take() {
                    let _ = sender.send(rest.to_owned());
                }
            }
        }
    });
    receiver
        .recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|_| panic!("no `{prefix}` line within {seconds} s"))
}

pub fn http() -> reqwest::Client {
    reqwest::Client::new()
}

impl Unleash {
    /// An admin API call; panics unless it succeeds.
    pub async fn admin(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = http()
            .request(method.clone(), format!("{}{path}", self.base))
            .header("authorization", ADMIN_TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("Unleash answers");
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "{method} {path}: {status} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// A new API token's secret.
    pub async fn token(&self, kind: &str, environment: &str, projects: &[&str]) -> String {
        self.token_expiring(kind, environment, projects, None).await
    }

    /// A new API token's secret, expiring at `expires_at` (RFC 3339) if given.
    pub async fn token_expiring(
        &self,
        kind: &str,
        environment: &str,
        projects: &[&str],
        expires_at: Option<&str>,
    ) -> String {
        let mut body = json!({"tokenName": format!("t-{}", fastrand::u32(..)), "type": kind,
            "environment": environment, "projects": projects});
        if let Some(at) = expires_at {
            body["expiresAt"] = json!(at);
        }
        let created = self
            .admin(reqwest::Method::POST, "/api/admin/api-tokens", Some(body))
            .await;
        created["secret"].as_str().expect("a secret").to_owned()
    }

    /// Waits until Unleash's own `/edge/validate` knows `secret` (it lags a new token by a few seconds).
    pub async fn wait_known(&self, secret: &str) {
        wait_for("Unleash to know a new token", 30, || async {
            let answer: Value = http()
                .post(format!("{}/edge/validate", self.base))
                .json(&json!({"tokens": [secret]}))
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            (answer["tokens"].as_array()?.len() == 1).then_some(())
        })
        .await;
    }

    /// Waits until Unleash's own `/edge/validate` no longer knows `secret` (it lags a deletion too).
    pub async fn wait_unknown(&self, secret: &str) {
        wait_for("Unleash to forget a deleted token", 120, || async {
            let answer: Value = http()
                .post(format!("{}/edge/validate", self.base))
                .json(&json!({"tokens": [secret]}))
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            answer["tokens"].as_array()?.is_empty().then_some(())
        })
        .await;
    }

    pub async fn get(&self, path: &str, token: &str) -> Value {
        get(&self.base, path, token).await.1
    }
}

/// `GET base+path` with `token`: status and body (JSON, or null).
pub async fn get(base: &str, path: &str, token: &str) -> (u16, Value) {
    let response = http()
        .get(format!("{base}{path}"))
        .header("authorization", token)
        .send()
        .await
        .expect("answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Polls `check` every 200 ms until it yields, for at most `seconds`.
pub async fn wait_for<T, F, Fut>(what: &str, seconds: u64, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "waited {seconds} s for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `vexil-edge edge`, configured only by Unleash Edge's environment variables; killed when dropped.
pub struct Edge {
    child: Child,
    pub base: String,
}

impl Edge {
    pub fn start(variables: &[(&str, &str)]) -> Edge {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vexil-edge"));
        command
            .arg("edge")
            .env_clear()
            .env("RUST_LOG", "warn")
            .env("PORT", "0")
            .env("INTERFACE", "127.0.0.1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in variables {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start vexil-edge edge");
        let address = read_line_with(child.stdout.take().expect("stdout"), "listening on ", 60);
        Edge {
            child,
            base: format!("http://{address}"),
        }
    }

    /// SIGTERM, and waits for the exit (the edge flushes its metrics and backup on the way out).
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One SDK in a Node process (`tests/e2e/js/*.cjs`), asked over stdin/stdout, one JSON line each way.
pub struct NodeSdk {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl NodeSdk {
    pub fn start(script: &str, args: &[&str]) -> NodeSdk {
        let mut child = Command::new("node")
            .arg(js(script))
            .args(args)
            .env("NODE_PATH", node_modules())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start node");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut sdk = NodeSdk {
            child,
            stdin,
            lines,
        };
        assert_eq!(sdk.read(), json!({"ready": true}), "{script} did not start");
        sdk
    }

    fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the SDK answered within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON from the SDK: {line}"))
    }

    /// What the SDK reports for `flags` (after switching to `context`, if given).
    pub fn ask(&mut self, context: Option<&Value>, flags: &[&str]) -> Value {
        let mut request = json!({ "flags": flags });
        if let Some(context) = context {
            request["context"] = context.clone();
        }
        writeln!(self.stdin, "{request}").expect("write to the SDK");
        let answer = self.read();
        assert!(
            answer["error"].is_null(),
            "the SDK reported an error: {answer}"
        );
        answer
    }
}

impl Drop for NodeSdk {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP relay to `target` on a free port of 127.0.0.1, until [`Relay::cut`]: then every connection, open
/// or new, is refused, as if the upstream had gone.
pub struct Relay {
    pub base: String,
    cut: Arc<AtomicBool>,
}

impl Relay {
    pub fn to(target: &str) -> Relay {
        let target = target.trim_start_matches("http://").to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let cut = Arc::new(AtomicBool::new(false));
        let stop = cut.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if stop.load(Ordering::Relaxed) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                for (mut from, mut to) in [
                    (
                        client.try_clone().expect("clone"),
                        server.try_clone().expect("clone"),
                    ),
                    (server, client),
                ] {
                    let stop = stop.clone();
                    std::thread::spawn(move || {
                        let mut buffer = [0u8; 16384];
                        while !stop.load(Ordering::Relaxed) {
                            match from.read(&mut buffer) {
                                Ok(0) | Err(_) => break,
                                Ok(_) if stop.load(Ordering::Relaxed) => break,
                                Ok(n) => {
                                    if to.write_all(&buffer[..n]).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Relay { base, cut }
    }

    pub fn cut(&self) {
        self.cut.store(true, Ordering::Relaxed);
    }
}
