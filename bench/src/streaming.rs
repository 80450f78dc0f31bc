//! Streaming benchmark (BENCHMARKS.md): the release control plane (SQLite) with FLAGS flags, one release edge
//! subscribed to it, and CLIENTS concurrent change streams to that edge (plain HTTP/1.1 over TCP, as an
//! SDK's EventSource): `GET /api/client/streaming` with a client token (KIND `client`, the default) or
//! `GET /ofrep/v1/events` with a frontend token's channel (KIND `ofrep`). The clients connect from several
//! loopback source addresses (127.0.0.1, .2, …: one address has about 28,000 ephemeral ports), in waves of
//! 1,000 every 100 ms, and the time until every one has its first event (`unleash-connected`; for OFREP, the
//! answer's head) is reported with the connections refused on the way. Then it measures the edge at rest
//! (RSS, CPU over 10 s), then ROUNDS times switches one flag on or off over the admin API and records, per
//! client, the time from the admin API's 2xx to the moment that client had read the whole event, and the
//! bytes each client received for it.
//!
//! Usage: streaming [CLIENTS=10000] [FLAGS=2000] [ROUNDS=10] [KIND=client]   (after `cargo build --release
//! --workspace --bins`; it raises its open-files limit, and so the edge's, to CLIENTS + 500, which the hard
//! limit must allow: `ulimit -Hn`)

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const ADMIN: &str = "*:*.bench-admin";
const EDGE: &str = "*:*.bench-edge";
const CLIENT: &str = "*:development.bench-client";
const FRONTEND: &str = "*:development.bench-frontend";

/// Streams per loopback source address (of its 28,231 ephemeral ports).
const STREAMS_PER_ADDRESS: usize = 25_000;

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

/// One event a client read: which client, when it had the whole event, its bytes.
struct Seen {
    client: usize,
    at: Instant,
    bytes: usize,
}

/// What the clients share: the events they read, the connections refused.
#[derive(Default)]
struct Clients {
    seen: Mutex<Vec<Seen>>,
    refused: AtomicUsize,
}

/// A connection to `edge` from the loopback address 127.0.0.`source`, retried (and counted) when refused.
async fn connect(edge: SocketAddr, source: u8, clients: &Clients) -> TcpStream {
    loop {
        let socket = TcpSocket::new_v4().expect("a socket");
        socket
            .bind(SocketAddr::from((Ipv4Addr::new(127, 0, 0, source), 0)))
            .expect("a local port");
        match socket.connect(edge).await {
            Ok(stream) => return stream,
            Err(_) => {
                clients.refused.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// One stream's client: connects, reads its first event (`unleash-connected`, or for OFREP the answer's
/// head) and reports ready, then for each change event reports when it was complete and its size.
async fn client(
    edge: SocketAddr,
    request: Arc<str>,
    ofrep: bool,
    ready: mpsc::Sender<()>,
    clients: Arc<Clients>,
    index: usize,
) {
    let source = u8::try_from(1 + index / STREAMS_PER_ADDRESS).expect("under 255 addresses");
    let mut stream = connect(edge, source, &clients).await;
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write the request");
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 2048];
    let mut connected = false;
    let mut searched = 0;
    loop {
        let read = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let now = Instant::now();
        buffer.extend_from_slice(&chunk[..read]);
        if ofrep && !connected {
            // OFREP's stream sends nothing at first: the answer's head is the first thing to wait for.
            let Some(end) = find(&buffer, b"\r\n\r\n") else {
                continue;
            };
            let head: Vec<u8> = buffer.drain(..end + 4).collect();
            if !head.starts_with(b"HTTP/1.1 200") {
                return;
            }
            connected = true;
            let _ = ready.send(());
        }
        // Events (and the answer's head) end with a blank line; chunked framing lines are counted in the
        // bytes too.
        while let Some(end) = find(&buffer[searched..], b"\n\n").map(|at| at + searched) {
            let event: Vec<u8> = buffer.drain(..end + 2).collect();
            searched = 0;
            if !connected {
                if contains(&event, b"event: unleash-connected") {
                    connected = true;
                    let _ = ready.send(());
                }
            } else if contains(&event, b"unleash-updated") || contains(&event, b"refetchEvaluation")
            {
                clients.seen.lock().expect("not poisoned").push(Seen {
                    client: index,
                    at: now,
                    bytes: event.len(),
                });
            }
        }
        searched = buffer.len().saturating_sub(1);
        if buffer.is_empty() {
            // The hydration's buffer is not kept for the whole run.
            buffer = Vec::new();
        }
    }
}

/// Raises this process's open-files limit to `files`, which the edge it starts inherits; the hard limit
/// stays (raising it takes CAP_SYS_RESOURCE).
fn raise_open_files(files: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read or write only the struct passed by reference.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    assert_eq!(read, 0, "{}", std::io::Error::last_os_error());
    assert!(
        files <= limit.rlim_max,
        "{files} open files are needed, over this machine's hard limit of {}: run fewer clients, or raise \
         the hard limit (ulimit -Hn, as root with CAP_SYS_RESOURCE)",
        limit.rlim_max
    );
    limit.rlim_cur = files;
    // SAFETY: as above.
    let raised = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    assert_eq!(raised, 0, "{}", std::io::Error::last_os_error());
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
    let ofrep = match std::env::args().nth(4).as_deref() {
        None | Some("client") => false,
        Some("ofrep") => true,
        Some(other) => panic!("KIND is client or ofrep, not {other}"),
    };
    raise_open_files(u64::try_from(clients).expect("a count") + 500);
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
            format!("--init-frontend-tokens={FRONTEND}"),
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
    let path = if ofrep {
        let answer: serde_json::Value = http
            .post(format!("http://{}/ofrep/v1/evaluate/flags", edge.http))
            .header("Authorization", FRONTEND)
            .json(&serde_json::json!({"context": {"targetingKey": "bench"}}))
            .send()
            .await
            .expect("an OFREP bulk evaluation")
            .json()
            .await
            .expect("its JSON");
        answer["eventStreams"][0]["endpoint"]["requestUri"]
            .as_str()
            .expect("the event stream's address")
            .to_owned()
    } else {
        "/api/client/streaming".to_owned()
    };
    let token = if ofrep { FRONTEND } else { CLIENT };
    let request: Arc<str> = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: {token}\r\nAccept: text/event-stream\r\n\r\n",
        edge.http
    )
    .into();
    let edge_address: SocketAddr = edge.http.parse().expect("the edge's address");
    let rss_before = edge.status_kib();

    let shared = Arc::new(Clients::default());
    let (ready, readied) = mpsc::channel();
    let started = Instant::now();
    for index in 0..clients {
        tokio::spawn(client(
            edge_address,
            request.clone(),
            ofrep,
            ready.clone(),
            shared.clone(),
            index,
        ));
        if index % 1_000 == 999 {
            // Connect in waves, as SDK fleets start: the listen backlog stays bounded.
            tokio::time::sleep(Duration::from_millis(100)).await;
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
    let connect_time = started.elapsed();
    let refused = shared.refused.load(Ordering::Relaxed);
    eprintln!("{clients} streams open in {connect_time:.1?}, {refused} connections refused");

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
        let before = shared.seen.lock().expect("not poisoned").len();
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
        while shared.seen.lock().expect("not poisoned").len() - before < clients
            && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let round_events: Vec<(usize, Instant, usize)> = shared.seen.lock().expect("not poisoned")
            [before..]
            .iter()
            .map(|event| (event.client, event.at, event.bytes))
            .collect();
        let mut last = 0f64;
        let mut reached = vec![false; clients];
        for (client, at, size) in round_events {
            if std::mem::replace(&mut reached[client], true) {
                continue;
            }
            let ms = at.saturating_duration_since(answered).as_secs_f64() * 1000.0;
            samples.push(ms);
            last = last.max(ms);
            bytes.push(size);
        }
        let missing = reached.iter().filter(|reached| !**reached).count();
        lasts.push(last);
        eprintln!("round {round}: last of {clients} clients after {last:.1} ms, {missing} missing");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    samples.sort_by(f64::total_cmp);
    lasts.sort_by(f64::total_cmp);
    let ticks_per_second = 100.0;
    println!(
        "{} clients {clients}, flags {flags}, rounds {rounds}: opened in {:.1} s ({refused} refused); per client p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
         last client per round: median {:.1} ms, max {:.1} ms; bytes per client per change {} (event with SSE framing); \
         edge RSS {:.1} MiB before the clients, {:.1} MiB with them at rest ({:.1} KiB per stream); edge CPU at rest {:.2}% of one core",
        if ofrep { "ofrep" } else { "client" },
        connect_time.as_secs_f64(),
        percentile(&samples, 50.0),
        percentile(&samples, 99.0),
        samples.last().copied().unwrap_or(0.0),
        percentile(&lasts, 50.0),
        lasts.last().copied().unwrap_or(0.0),
        bytes.iter().sum::<usize>() / bytes.len().max(1),
        rss_before as f64 / 1024.0,
        rss_rest as f64 / 1024.0,
        rss_rest.saturating_sub(rss_before) as f64 / clients as f64,
        ticks as f64 / ticks_per_second / 10.0 * 100.0,
    );
    let _ = std::fs::remove_dir_all(&dir);
}
