//! The real `vexil-control-plane` binary on 127.0.0.1:0, and HTTP helpers.

use crate::database::TestDb;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The admin token every test server is started with.
pub const ADMIN_TOKEN: &str = "*:*.test-admin-secret";
pub const CLIENT_TOKEN: &str = "default:development.test-client-secret";
pub const FRONTEND_TOKEN: &str = "default:development.test-frontend-secret";
/// Not created by [`Server::start`]; a test that wants it passes `--init-edge-tokens` with it.
pub const EDGE_TOKEN: &str = "*:*.test-edge-secret";

/// A running `vexil-control-plane`.
pub struct Server {
    child: Child,
    pub base: String,
    /// `http://ADDR` of its gRPC listener (snapshots and usage batches).
    pub grpc: String,
    /// What the binary printed on standard output before `listening on`.
    pub printed: Vec<String>,
    pub client: reqwest::Client,
    /// Where standard error goes: read by [`Server::logs`], shown when the test fails.
    log: tempfile::NamedTempFile,
    /// Whether the test asked for the whole log ([`Server::start_logged`]).
    logged: bool,
}

/// An answer: status and JSON body (`Null` when empty).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Server {
    /// Starts the binary on `db` with the test tokens and any extra arguments.
    pub async fn start(db: &TestDb, extra: &[&str]) -> Server {
        let mut args = vec![
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--init-admin-tokens",
            ADMIN_TOKEN,
            "--init-client-tokens",
            CLIENT_TOKEN,
            "--init-frontend-tokens",
            FRONTEND_TOKEN,
        ];
        args.extend_from_slice(extra);
        Server::start_with_args(&args).await
    }

    /// Starts the binary with exactly these arguments.
    pub async fn start_with_args(args: &[&str]) -> Server {
        Server::spawn(args, None).await
    }

    /// Like [`Server::start`], logging everything (`RUST_LOG=trace`) to a file [`Server::logs`] reads.
    pub async fn start_logged(db: &TestDb, extra: &[&str]) -> Server {
        let log = tempfile::NamedTempFile::new().expect("log file");
        let mut args = vec![
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--init-admin-tokens",
            ADMIN_TOKEN,
        ];
        args.extend_from_slice(extra);
        Server::spawn(&args, Some(log)).await
    }

    /// Everything the server logged so far (only for [`Server::start_logged`]).
    pub fn logs(&self) -> String {
        assert!(self.logged, "a server started with start_logged");
        std::fs::read_to_string(self.log.path()).expect("read the log file")
    }

    async fn spawn(args: &[&str], log: Option<tempfile::NamedTempFile>) -> Server {
        // Its log goes to a file, shown only if the test fails: what a passing test provokes on purpose
        // (refused calls, a killed store) must not look like errors in the output.
        let level = if log.is_some() { "trace" } else { "warn" };
        let log = log.unwrap_or_else(|| tempfile::NamedTempFile::new().expect("log file"));
        let stderr = Stdio::from(log.reopen().expect("reopen the log file"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
            .args(args)
            // Tests run in parallel: never the default gRPC port.
            .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
            .env("RUST_LOG", level)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start vexil-control-plane");
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
        let mut printed = Vec::new();
        let base = loop {
            let line = receiver
                .recv_timeout(Duration::from_secs(60))
                .expect("the server printed `listening on`");
            if let Some(address) = line.strip_prefix("listening on ") {
                break format!("http://{address}");
            }
            printed.push(line);
        };
        // `grpc listening on` follows right after.
        let grpc = loop {
            let line = receiver
                .recv_timeout(Duration::from_secs(60))
                .expect("the server printed `grpc listening on`");
            if let Some(address) = line.strip_prefix("grpc listening on ") {
                break format!("http://{address}");
            }
        };
        // Keep draining standard output so the child never blocks on a full pipe.
        std::thread::spawn(move || while receiver.recv().is_ok() {});
        Server {
            child,
            base,
            grpc,
            printed,
            client: reqwest::Client::new(),
            logged: level == "trace",
            log,
        }
    }

    /// The process id of the binary.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM; returns the exit status once the process has stopped.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        for _ in 0..200 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the server did not stop within 10 s of SIGTERM");
    }

    /// Sends a request with the admin token (or `token`), a JSON body when given.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        token: Option<&str>,
    ) -> Answer {
        let headers: Vec<(&str, &str)> = token
            .map(|token| ("Authorization", token))
            .into_iter()
            .collect();
        self.send_with_headers(method, path, body, &headers).await
    }

    /// Sends a request with these headers (e.g. `Cookie`) and a JSON body when given.
    pub async fn send_with_headers(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        Answer::read(response).await
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.send("GET", path, None, Some(ADMIN_TOKEN)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.send("POST", path, Some(body), Some(ADMIN_TOKEN)).await
    }

    /// POST without a body.
    pub async fn post_empty(&self, path: &str) -> Answer {
        self.send("POST", path, None, Some(ADMIN_TOKEN)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Answer {
        self.send("PUT", path, Some(body), Some(ADMIN_TOKEN)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Answer {
        self.send("PATCH", path, Some(body), Some(ADMIN_TOKEN))
            .await
    }

    pub async fn delete(&self, path: &str) -> Answer {
        self.send("DELETE", path, None, Some(ADMIN_TOKEN)).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.log.path()).unwrap_or_default();
            eprintln!("--- the control plane's log ({}):\n{log}--- end", self.base);
        }
    }
}

impl Answer {
    pub async fn read(response: reqwest::Response) -> Answer {
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Answer { status, body }
    }

    /// Asserts the status, and for errors the exact `{id, name, message}` shape.
    pub fn expect(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        &self.body
    }

    /// Asserts an error answer: status, exactly `{id, name, message}`, id a UUID v4, the name.
    pub fn expect_error(&self, status: u16, name: &str) -> String {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_error_body(&self.body, name)
    }
}

/// Asserts `body` is exactly `{id, name, message}` with a UUID v4 id and the given name; returns the message.
pub fn assert_error_body(body: &Value, name: &str) -> String {
    let object = body
        .as_object()
        .unwrap_or_else(|| panic!("error body is not an object: {body}"));
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["id", "message", "name"], "error body keys: {body}");
    let id =
        uuid::Uuid::parse_str(body["id"].as_str().expect("id is a string")).expect("id is a UUID");
    assert_eq!(id.get_version_num(), 4, "id is a UUID v4");
    assert_eq!(body["name"], name, "error name: {body}");
    body["message"]
        .as_str()
        .expect("message is a string")
        .to_owned()
}

/// Asserts an RFC 3339 UTC timestamp with milliseconds, e.g. `2026-11-21T22:24:01.545Z`.
pub fn assert_timestamp(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a timestamp: {value}"));
    let bytes = text.as_bytes();
    assert_eq!(bytes.len(), 24, "timestamp {text}");
    assert!(
        text.ends_with('Z') && bytes[10] == b'T' && bytes[19] == b'.',
        "timestamp {text}"
    );
    assert!(
        chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        "timestamp {text}"
    );
}
