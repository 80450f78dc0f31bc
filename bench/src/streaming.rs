//! Streaming benchmark (BENCHMARKS.md): the release control plane (SQLite) with FLAGS flags, one release edge
//! subscribed to it, and CLIENTS concurrent `GET /api/client/streaming` connections to that edge (plain
//! HTTP/1.1 over TCP, as an SDK's EventSource). Once all have their `unleash-connected` hydration, it measures
//! the edge at rest (RSS, CPU over 10 s), then ROUNDS times switches one flag on or off over the admin API and
//! records, per client, the time from the admin API's 2xx to the moment that client had read the whole
//! `unleash-updated` event, and the bytes each client received for it.
//!
//! Usage: streaming [CLIENTS=10000] [FLAGS=2000] [ROUNDS=10]   (after `cargo build --release --workspace --bins`;
//! the open-files limit must exceed CLIENTS for this process and the edge)

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

const ADMIN: &str = "*:*.bench-admin";
const EDGE: &str = "*:*.bench-edge";
const CLIENT: &str = "*:development.bench-client";

struct Server {
    child: Child,
    http: String,
    grpc: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(program: &PathBuf, args: &[String], grpc: bool) -> Server {
        let mut child = Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", program.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, received) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let (mut http, mut grpc_address) = (None, None);
        while http.is_none() || (grpc && grpc_address.is_none()) {
            let line = received
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{} did not start", program.display()));
            if let Some(address) = line.strip_prefix("grpc listening on ") {
                grpc_address = Some(address.to_owned());
            } else if let Some(address) = line.strip_prefix("listening on ") {
                http = Some(address.to_owned());
            }
        }
        Server {
            child,
            http: http.unwrap_or_default(),
            grpc: grpc_address.map(|a| format!("http://{a}")),
        }
    }

    fn status_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// User + system CPU time, in clock ticks (`/proc/PID/stat` fields 14 and 15).
    fn cpu_ticks(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // After the `)`: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        field(11) + field(12)
    }
}

async fn admin(
    http: &reqwest::Client,
    cp: &Server,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) {
    let mut request = http
        .request(method, format!("http://{}{path}", cp.http))
        .header("Authorization", ADMIN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("admin request");
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// What one client saw of one round: when it had the whole event, and its bytes.
#[derive(Clone, Copy)]
struct Seen {
    at: Instant,
    bytes: usize,
}

/// One SSE client: connects, reads the `unleash-connected` event (then reports ready), then for each
/// `unleash-updated` event reports when it was complete and its size.
async fn client(
    address: String,
    ready: mpsc::Sender<()>,
    seen: Arc<Mutex<Vec<Vec<Seen>>>>,
    index: usize,
) {
    let mut stream = loop {
        match TcpStream::connect(&address).await {
            Ok(stream) => break stream,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let request = format!(
        "GET /api/client/streaming HTTP/1.1\r\nHost: {address}\r\nAuthorization: {CLIENT}\r\nAccept: text/event-stream\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write the request");
    let mut buffer = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut connected = false;
    loop {
        let read = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let now = Instant::now();
        buffer.extend_from_slice(&chunk[..read]);
        // Events end with a blank line; chunked framing lines are counted in the bytes too.
        while let Some(end) = find(&buffer, b"\n\n") {
            let event: Vec<u8> = buffer.drain(..end + 2).collect();
            if contains(&event, b"event: unleash-connected")
                || contains(&event, b"event:unleash-connected")
            {
                connected = true;
                let _ = ready.send(());
            } else if connected && contains(&event, b"unleash-updated") {
                seen.lock().await[index].push(Seen {
                    at: now,
                    bytes: event.len(),
                });
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let (clients, flags, rounds) = (arg(1, 10_000), arg(2, 2_000), arg(3, 10));
    let bin = PathBuf::from(std::env::var("VEXIL_BIN_DIR").unwrap_or("target/release".into()));
    let dir = std::env::temp_dir().join(format!("vexil-streaming-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cp = Server::start(
        &bin.join("vexil-control-plane"),
        &[
            "--listen=127.0.0.1:0".into(),
            "--grpc-listen=127.0.0.1:0".into(),
            format!("--database-url=sqlite://{}", dir.join("cp.db").display()),
            format!("--init-admin-tokens={ADMIN}"),
            format!("--init-edge-tokens={EDGE}"),
            format!("--init-client-tokens={CLIENT}"),
            format!("--limit-feature-flags={}", flags + 1),
        ],
        true,
    );
    let http = reqwest::Client::new();
    let started = Instant::now();
    let mut created = tokio::task::JoinSet::new();
    for worker in 0..4 {
        let (http, base) = (http.clone(), cp.http.clone());
        created.spawn(async move {
            for i in (worker..flags).step_by(4) {
                let response = http
                    .post(format!("http://{base}/api/admin/projects/default/features"))
                    .header("Authorization", ADMIN)
                    .json(&serde_json::json!({"name": format!("flag-{i:05}")}))
                    .send()
                    .await
                    .expect("create a flag");
                assert!(response.status().is_success(), "{}", response.status());
            }
        });
    }
    while created.join_next().await.is_some() {}
    let flag = "flag-00000";
    admin(
        &http,
        &cp,
        reqwest::Method::POST,
        &format!("/api/admin/projects/default/features/{flag}/environments/development/strategies"),
        Some(serde_json::json!({"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": flag}})),
    )
    .await;
    eprintln!("{flags} flags created in {:.1?}", started.elapsed());

    let edge = Server::start(
        &bin.join("vexil-edge"),
        &[
            "serve".into(),
            "--listen=127.0.0.1:0".into(),
            format!("--upstream={}", cp.grpc.clone().unwrap_or_default()),
            format!("--token={EDGE}"),
            format!("--max-streams={}", clients + 100),
        ],
        false,
    );
    // Wait until the edge serves the flags.
    loop {
        let answer = http
            .get(format!("http://{}/api/client/features/{flag}", edge.http))
            .header("Authorization", CLIENT)
            .send()
            .await;
        if answer.is_ok_and(|a| a.status().is_success()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rss_before = edge.status_kib();

    let seen = Arc::new(Mutex::new(vec![Vec::new(); clients]));
    let (ready, readied) = mpsc::channel();
    let started = Instant::now();
    for index in 0..clients {
        tokio::spawn(client(
            edge.http.clone(),
            ready.clone(),
            seen.clone(),
            index,
        ));
        if index % 500 == 499 {
            // Connect in waves, as SDK fleets start: the listen backlog stays bounded.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    drop(ready);
    let waiting = tokio::task::spawn_blocking(move || {
        for _ in 0..clients {
            readied
                .recv_timeout(Duration::from_secs(300))
                .expect("every client connected");
        }
    });
    waiting.await.expect("the wait");
    eprintln!("{clients} streams hydrated in {:.1?}", started.elapsed());

    tokio::time::sleep(Duration::from_secs(3)).await;
    let ticks_before = edge.cpu_ticks();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let ticks = edge.cpu_ticks() - ticks_before;
    let rss_rest = edge.status_kib();

    let mut samples = Vec::new();
    let mut lasts = Vec::new();
    let mut bytes = Vec::new();
    for round in 0..rounds {
        let action = if round % 2 == 0 { "on" } else { "off" };
        let before: Vec<usize> = seen.lock().await.iter().map(Vec::len).collect();
        admin(
            &http,
            &cp,
            reqwest::Method::POST,
            &format!(
                "/api/admin/projects/default/features/{flag}/environments/development/{action}"
            ),
            None,
        )
        .await;
        let answered = Instant::now();
        let deadline = answered + Duration::from_secs(30);
        loop {
            let all = seen
                .lock()
                .await
                .iter()
                .zip(&before)
                .all(|(events, before)| events.len() > *before);
            if all || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let seen = seen.lock().await;
        let mut last = 0f64;
        let mut missing = 0;
        for (events, before) in seen.iter().zip(&before) {
            match events.get(*before) {
                Some(event) => {
                    let ms = event.at.saturating_duration_since(answered).as_secs_f64() * 1000.0;
                    samples.push(ms);
                    last = last.max(ms);
                    bytes.push(event.bytes);
                }
                None => missing += 1,
            }
        }
        lasts.push(last);
        eprintln!("round {round}: last of {clients} clients after {last:.1} ms, {missing} missing");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    samples.sort_by(f64::total_cmp);
    lasts.sort_by(f64::total_cmp);
    let ticks_per_second = 100.0;
    println!(
        "clients {clients}, flags {flags}, rounds {rounds}: per client p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
         last client per round: median {:.1} ms, max {:.1} ms; bytes per client per change {} (event with SSE framing); \
         edge RSS {:.1} MiB before the clients, {:.1} MiB with them at rest; edge CPU at rest {:.2}% of one core",
        percentile(&samples, 50.0),
        percentile(&samples, 99.0),
        samples.last().copied().unwrap_or(0.0),
        percentile(&lasts, 50.0),
        lasts.last().copied().unwrap_or(0.0),
        bytes.iter().sum::<usize>() / bytes.len().max(1),
        rss_before as f64 / 1024.0,
        rss_rest as f64 / 1024.0,
        ticks as f64 / ticks_per_second / 10.0 * 100.0,
    );
    let _ = std::fs::remove_dir_all(&dir);
}
