//! Bounds on what a request can cost the edge, through the real binary (`vexil-edge offline`, whose HTTP
//! server `serve` shares): the header read timeout, Prometheus labels that made-up methods cannot multiply,
//! and logs without colour codes when standard error is no terminal.

#[allow(dead_code)] // shared with the e2e tests
#[path = "e2e/processes.rs"]
mod processes;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use processes::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const FRONTEND: &str = "default:development.bounds-frontend";

fn features_file() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/features.json")
        .to_str()
        .unwrap()
        .to_owned()
}

fn offline(extra: &[&str]) -> Process {
    let features = features_file();
    let mut args = vec!["--features", &features, "--frontend-tokens", FRONTEND];
    args.extend_from_slice(extra);
    Process::offline(&args)
}

#[tokio::test]
async fn a_client_sending_its_headers_a_byte_a_second_is_disconnected() {
    let edge = offline(&["--header-read-timeout", "2s"]);
    let address = edge.base.trim_start_matches("http://").to_owned();
    let request =
        format!("GET /api/frontend HTTP/1.1\r\nHost: x\r\nAuthorization: {FRONTEND}\r\n\r\n");
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let started = Instant::now();
    let mut buffer = [0u8; 1024];
    let mut closed_after = None;
    for byte in request.bytes() {
        if stream.write_all(&[byte]).await.is_err() {
            closed_after = Some(started.elapsed());
            break;
        }
        // Anything else is an answer (hyper may say 408 first; the connection ends after it) or nothing yet.
        let read = tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buffer)).await;
        if let Ok(Ok(0) | Err(_)) = read {
            closed_after = Some(started.elapsed());
            break;
        }
        if started.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    let closed_after = closed_after.expect("the connection was still open after 10 s");
    assert!(
        closed_after < Duration::from_secs(5),
        "closed after {closed_after:?}"
    );
    // Others are still served.
    let answer = request_to(&edge, "GET", "/api/frontend").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

async fn request_to(edge: &Process, method: &str, path: &str) -> Answer {
    request(
        method,
        &format!("{}{path}", edge.base),
        Some(FRONTEND),
        &[],
        None,
    )
    .await
}

/// The request metrics' series in the Prometheus text, sorted.
async fn request_series(edge: &Process) -> Vec<String> {
    let text = reqwest::get(format!("{}/internal-backstage/prometheus", edge.base))
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
    let edge = offline(&[]);
    let paths = [
        "/api/frontend",
        "/api/frontend/features/x",
        "/api/client/features",
        "/health",
        "/no/such/route",
    ];
    let send_all = |prefix: &'static str, count: usize| {
        let edge = &edge;
        async move {
            for n in 0..count {
                for path in paths {
                    let answer = request_to(edge, &format!("{prefix}{n}"), path).await;
                    assert!(
                        matches!(answer.status, 404 | 405),
                        "{prefix}{n} {path}: {}",
                        answer.status
                    );
                }
            }
        }
    };
    // The scrape is a request too: its own series exists from the second one on.
    request_series(&edge).await;
    send_all("MADEUP", 5).await;
    let before = request_series(&edge).await;
    send_all("XYZ", 20).await;
    let after = request_series(&edge).await;
    let made_up: Vec<&String> = after
        .iter()
        .filter(|series| series.contains("MADEUP") || series.contains("XYZ"))
        .collect();
    assert!(made_up.is_empty(), "{made_up:#?}");
    assert_eq!(before, after, "made-up methods added series");
}

#[tokio::test]
async fn logs_carry_no_colour_codes_when_standard_error_is_not_a_terminal() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let features = features_file();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vexil-edge"))
        .args([
            "offline",
            "--listen",
            "127.0.0.1:0",
            "--features",
            &features,
        ])
        .args(["--frontend-tokens", FRONTEND])
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
            if line.starts_with("listening on ") {
                let _ = sender.send(());
            }
        }
    });
    receiver
        .recv_timeout(Duration::from_secs(60))
        .expect("listening on");
    // The log line follows the printed one.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut logs = String::new();
    while !logs.contains("listening") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        logs = std::fs::read_to_string(log.path()).unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(logs.contains("listening"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "ANSI codes in {logs:?}");
}
