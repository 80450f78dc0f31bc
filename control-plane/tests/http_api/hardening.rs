//! Bounds on what a request can cost and the findings of the hardening review, through the real binary:
//! sign-in under a concurrency and failure limit, the header read timeout, Prometheus labels, logs, query
//! ranges, the OpenAPI ids, `appDetails` links.

use crate::database::TestDb;
use crate::server::{assert_error_body, Server, ADMIN_TOKEN};
use serde_json::{json, Value};
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
