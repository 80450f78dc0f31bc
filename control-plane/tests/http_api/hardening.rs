//! Bounds on what a request can cost and the findings of the hardening review, through the real binary:
//! sign-in under a concurrency and failure limit, the header read timeout, Prometheus labels, logs, query
//! ranges, the OpenAPI ids, `appDetails` links.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
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
