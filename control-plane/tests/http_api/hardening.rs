//! Bounds on what a request can cost and the findings of the hardening review, through the real binary:
//! sign-in under a concurrency and failure limit, the header read timeout, Prometheus labels, logs, query
//! ranges, the OpenAPI ids, `appDetails` links.

use crate::database::TestDb;
use crate::server::{assert_error_body, Server, ADMIN_TOKEN, CLIENT_TOKEN};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `request` a byte a second until the server closes the connection; the time that took, or `None`
/// if it was still open after `give_up`.
async fn trickle(address: &str, request: &[u8], give_up: Duration) -> Option<Duration> {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let started = Instant::now();
    let mut buffer = [0u8; 1024];
    for byte in request {
        if stream.write_all(&[*byte]).await.is_err() {
            return Some(started.elapsed());
        }
        match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => {
                // An answer (hyper may say 408 first); the connection ends after it.
            }
            Err(_) => {}
        }
        if started.elapsed() > give_up {
            return None;
        }
    }
    None
}

#[tokio::test]
async fn a_client_sending_its_headers_a_byte_a_second_is_disconnected() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--header-read-timeout", "2s"]).await;
    let address = server.base.trim_start_matches("http://").to_owned();
    let request = b"GET /api/admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: *:*.test-admin-secret\r\n\r\n";
    let closed_after = trickle(&address, request, Duration::from_secs(10))
        .await
        .expect("the connection was still open after 10 s");
    assert!(
        closed_after < Duration::from_secs(5),
        "closed after {closed_after:?}"
    );
    // Others are still served.
    server.get("/api/admin/projects").await.expect(200);
}

/// The request metrics' series in the Prometheus text, sorted.
async fn request_series(server: &Server) -> Vec<String> {
    let text = server
        .client
        .get(format!("{}/internal-backstage/prometheus", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut series: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("http_request"))
        .map(|line| {
            line.rsplit_once(' ')
                .map_or(line, |(series, _)| series)
                .to_owned()
        })
        .collect();
    series.sort();
    series
}

#[tokio::test]
async fn made_up_methods_add_no_prometheus_series() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let paths = [
        "/api/admin/projects",
        "/api/frontend",
        "/api/client/features",
        "/no/such/route",
        "/health",
    ];
    let send_all = |methods: Vec<String>| async {
        for method in methods {
            for path in paths {
                let answer = server.send(&method, path, None, Some(ADMIN_TOKEN)).await;
                assert!(
                    matches!(answer.status, 404 | 405),
                    "{method} {path}: {}",
                    answer.status
                );
            }
        }
    };
    // The scrape is a request too: its own series exists from the second one on.
    request_series(&server).await;
    send_all((0..5).map(|n| format!("MADEUP{n}")).collect()).await;
    let before = request_series(&server).await;
    assert!(
        before
            .iter()
            .any(|series| series.contains(r#"method="other""#)),
        "{before:#?}"
    );
    send_all((0..20).map(|n| format!("XYZ{n}")).collect()).await;
    let after = request_series(&server).await;
    let made_up: Vec<&String> = after
        .iter()
        .filter(|series| series.contains("MADEUP") || series.contains("XYZ"))
        .collect();
    assert!(made_up.is_empty(), "{made_up:#?}");
    assert_eq!(before, after, "made-up methods added series");
}

/// What `/proc/<pid>/status` says of `field` (`VmRSS`, `VmHWM`), in KiB.
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

#[tokio::test]
async fn fifty_concurrent_wrong_passwords_get_429s_and_the_memory_stays_bounded() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    for username in ["victim", "bystander"] {
        server
            .post(
                "/api/admin/user-admin",
                json!({"username": username, "password": "right password", "rootRole": "Viewer"}),
            )
            .await
            .expect(201);
    }
    let pid = server.pid();
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        tokio::spawn(async move {
            let mut peak = 0;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(memory_kib(pid, "VmRSS"));
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            peak
        })
    };
    let attempts: Vec<_> = (0..50)
        .map(|_| {
            let request = server
                .client
                .post(format!("{}/auth/simple/login", server.base))
                .json(&json!({"username": "victim", "password": "wrong password"}));
            tokio::spawn(async move {
                let response = request.send().await.expect("an answer");
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .map(|value| value.to_str().unwrap().to_owned());
                let status = response.status().as_u16();
                let body: Value = response.json().await.expect("a JSON body");
                (status, retry_after, body)
            })
        })
        .collect();
    let mut refused = 0;
    for attempt in attempts {
        let (status, retry_after, body) = attempt.await.unwrap();
        match status {
            401 => assert!(retry_after.is_none()),
            429 => {
                refused += 1;
                assert_error_body(&body, "RateLimitError");
                let seconds: u64 = retry_after.expect("Retry-After").parse().unwrap();
                assert!((1..=300).contains(&seconds), "Retry-After {seconds}");
            }
            other => panic!("unexpected status {other}: {body}"),
        }
    }
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let peak_rss_kib = sampler.await.unwrap().max(memory_kib(pid, "VmHWM"));
    assert!(refused > 0, "no 429 among 50 wrong passwords");
    assert!(
        peak_rss_kib < 300 * 1024,
        "the control plane reached {} MiB",
        peak_rss_kib / 1024
    );
    // The login is refused even with its password until the window ends; another one from the same address
    // is not.
    let login = |username: &str| {
        server.send(
            "POST",
            "/auth/simple/login",
            Some(json!({"username": username, "password": "right password"})),
            None,
        )
    };
    login("victim").await.expect_error(429, "RateLimitError");
    login("bystander").await.expect(200);
}

/// Starts the binary with `args`, standard error into a file; returns it with its address once it listens.
fn start_with_stderr_in_a_file(
    db: &TestDb,
    args: &[&str],
) -> (Child, String, tempfile::NamedTempFile) {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
        .args(["--listen", "127.0.0.1:0", "--database-url", &db.url])
        .args(["--init-admin-tokens", ADMIN_TOKEN])
        .args(args)
        .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        // Colours are wanted here unless the output is no terminal.
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log.reopen().unwrap()))
        .spawn()
        .unwrap();
    // Read on a thread to the end: a closed pipe would fail the binary's next line on standard output.
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Some(address) = line.strip_prefix("listening on ") {
                let _ = sender.send(address.to_owned());
            }
        }
    });
    let address = receiver
        .recv_timeout(Duration::from_secs(60))
        .expect("listening on");
    (child, address, log)
}

#[tokio::test]
async fn logs_carry_no_colour_codes_when_standard_error_is_not_a_terminal() {
    let db = TestDb::sqlite().await;
    let (mut child, address, log) = start_with_stderr_in_a_file(&db, &[]);
    reqwest::Client::new()
        .get(format!("http://{address}/api/admin/projects"))
        .header("Authorization", ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut logs = String::new();
    while !logs.contains("/api/admin/projects") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        logs = std::fs::read_to_string(log.path()).unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(logs.contains("listening"), "{logs}");
    assert!(logs.contains("/api/admin/projects"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "ANSI codes in {logs:?}");
}

#[tokio::test]
async fn with_json_logs_every_line_on_standard_error_is_json_even_when_the_start_fails() {
    let missing = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}",
        missing.path().join("no/such/dir/vexil.db").display()
    );
    let output = Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
        .args(["--listen", "127.0.0.1:0", "--database-url", &url])
        .args(["--log-format", "json"])
        .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.is_empty());
    for line in stderr.lines() {
        let parsed: Result<Value, _> = serde_json::from_str(line);
        assert!(parsed.is_ok(), "not JSON: {line}");
    }
    assert!(stderr.contains("cannot open the store"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn event_paging_beyond_its_documented_range_is_400() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    for query in ["offset=2147483648", "limit=1001", "offset=4294967296"] {
        server
            .get(&format!("/api/admin/events?{query}"))
            .await
            .expect_error(400, "ValidationError");
    }
    for query in ["offset=2147483647", "limit=1000", "offset=0&limit=0"] {
        server
            .get(&format!("/api/admin/events?{query}"))
            .await
            .expect(200);
    }
    // The document states the same range.
    let document = server.get("/docs/openapi.json").await.expect(200).clone();
    let parameters = document["paths"]["/api/admin/events"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let maximum = |name: &str| {
        parameters
            .iter()
            .find(|parameter| parameter["name"] == name)
            .map(|parameter| parameter["schema"]["maximum"].clone())
    };
    assert_eq!(maximum("offset"), Some(json!(2147483647)));
    assert_eq!(maximum("limit"), Some(json!(1000)));
}

#[tokio::test]
async fn every_operation_has_its_own_id() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let document = server.get("/docs/openapi.json").await.expect(200).clone();
    let mut seen: std::collections::BTreeMap<String, String> = Default::default();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let id = operation["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"))
                .to_owned();
            if let Some(other) = seen.insert(id.clone(), format!("{method} {path}")) {
                panic!("{id} names both {other} and {method} {path}");
            }
        }
    }
    assert_eq!(
        seen["get_groups_groupId"],
        "get /api/admin/groups/{groupId}"
    );
    assert_eq!(seen["login"], "post /auth/simple/login");
}

/// The refusals a route answers before (or whatever) its handler says are in the document: 400 for a URL
/// holding `%00` or an id beyond its type, 503 for an admin change in maintenance mode; and two types of one
/// name do not share a schema (the flag search's `lifecycle.stage` is the stage's name, a string).
#[tokio::test]
async fn refusals_every_operation_can_answer_are_documented() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let document = server.get("/docs/openapi.json").await.expect(200).clone();
    let statuses = |method: &str, path: &str| -> Vec<String> {
        document["paths"][path][method]["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("{method} {path} is not documented"))
            .keys()
            .cloned()
            .collect()
    };
    // The SDK routes are served as the edges serve them, without the URL check.
    let sdk = |path: &str| {
        ["/api/client/", "/api/frontend", "/ofrep/", "/edge/"]
            .iter()
            .any(|prefix| path.starts_with(prefix))
    };
    for (path, item) in document["paths"].as_object().unwrap() {
        if sdk(path) {
            continue;
        }
        for (method, operation) in item.as_object().unwrap() {
            assert!(
                statuses(method, path).contains(&"400".to_owned()),
                "{method} {path} does not document 400"
            );
            // In the media type the refusal is answered in: SCIM's below `/scim/v2`.
            let media = if path.starts_with("/scim/v2") {
                "application/scim+json"
            } else {
                "application/json"
            };
            assert!(
                operation["responses"]["400"]["content"]
                    .get(media)
                    .is_some(),
                "{method} {path}: its 400 is not {media}"
            );
        }
    }
    server
        .delete("/api/admin/signal-endpoints/9223372036854775808")
        .await
        .expect_error(400, "ValidationError");
    server
        .get("/api/admin/context?x=%00")
        .await
        .expect_error(400, "ValidationError");
    let scim_refusal = server
        .send_with_headers(
            "GET",
            "/scim/v2/Users?filter=%00",
            None,
            &[("Authorization", "Bearer not-a-scim-token")],
        )
        .await;
    let detail = crate::scim::scim_error(&scim_refusal, 400, Some("invalidValue"));
    assert!(detail.contains("NUL"), "{detail}");

    server
        .post("/api/admin/maintenance", json!({"enabled": true}))
        .await
        .expect(204);
    server
        .delete("/api/admin/segments/1")
        .await
        .expect_error(503, "ServiceUnavailableError");
    assert!(statuses("delete", "/api/admin/segments/{id}").contains(&"503".to_owned()));
    assert!(!statuses("post", "/api/admin/maintenance").contains(&"503".to_owned()));
    assert!(!statuses("get", "/api/admin/segments").contains(&"503".to_owned()));
    server
        .post("/api/admin/maintenance", json!({"enabled": false}))
        .await
        .expect(204);

    assert_eq!(
        document["components"]["schemas"]["LifecycleStage"]["type"],
        "string"
    );
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "staged"}),
        )
        .await
        .expect(201);
    let found = server
        .get("/api/admin/search/features")
        .await
        .expect(200)
        .clone();
    assert_eq!(found["features"][0]["lifecycle"]["stage"], "initial");
}

#[tokio::test]
async fn app_details_links_escape_only_what_a_path_segment_cannot_hold() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    for app in ["bar-app", "a b/c"] {
        let answer = server
            .send(
                "POST",
                "/api/client/register",
                Some(json!({
                    "appName": app, "instanceId": "i-1", "sdkVersion": "unleash-client-node:6.12.1",
                    "strategies": ["default"], "started": "2026-11-22T00:00:00.000Z", "interval": 10000
                })),
                Some(CLIENT_TOKEN),
            )
            .await;
        assert_eq!(answer.status, 202, "{}", answer.body);
    }
    let apps = server
        .get("/api/admin/metrics/applications")
        .await
        .expect(200)
        .clone();
    let links: Vec<(&str, &str)> = apps["applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|app| {
            (
                app["appName"].as_str().unwrap(),
                app["links"]["appDetails"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        links,
        [
            ("a b/c", "/api/admin/metrics/applications/a%20b%2Fc"),
            ("bar-app", "/api/admin/metrics/applications/bar-app"),
        ]
    );
    // Each link leads to its application.
    for (app, link) in links {
        let details = server.get(link).await.expect(200).clone();
        assert_eq!(details["appName"], app);
    }
}
