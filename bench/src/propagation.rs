//! Propagation benchmark (BENCHMARKS.md): the release control plane (SQLite) with N flags and E edges
//! subscribed to it. Each round switches one flag on or off over the admin API and measures, per edge,
//! the time from the admin API's 2xx to the moment the edge swapped in the new revision (the edge's
//! `snapshot_applied_unix_seconds` gauge, same machine clock), and the bytes of snapshot updates the control
//! plane encoded for the edges (its `snapshot_update_bytes_total` counter) divided by E. Also prints each
//! edge's resident memory.
//!
//! Usage: propagation [EDGES=20] [FLAGS=200] [ROUNDS=50]   (after `cargo build --release --workspace --bins`)

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ADMIN: &str = "*:*.bench-admin";
/// The edges' token for the control plane's gRPC channel.
const EDGE: &str = "*:*.bench-edge";

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
    /// Starts `program args…` and waits for its `listening on ADDR` (and `grpc listening on ADDR`) lines.
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
            http: format!("http://{}", http.unwrap_or_default()),
            grpc: grpc_address.map(|a| format!("http://{a}")),
        }
    }

    fn resident_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

/// The value of an unlabelled Prometheus sample.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

async fn prometheus(http: &reqwest::Client, server: &Server) -> String {
    let url = format!("{}/internal-backstage/prometheus", server.http);
    http.get(url)
        .send()
        .await
        .expect("prometheus")
        .text()
        .await
        .expect("prometheus text")
}

async fn admin(
    http: &reqwest::Client,
    cp: &Server,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) {
    let mut request = http
        .request(method, format!("{}{path}", cp.http))
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

async fn published_revision(http: &reqwest::Client, cp: &Server) -> f64 {
    sample(&prometheus(http, cp).await, "published_revision").unwrap_or(0.0)
}

fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let (edges, flags, rounds) = (arg(1, 20), arg(2, 200), arg(3, 50));
    let bin = PathBuf::from(std::env::var("VEXIL_BIN_DIR").unwrap_or("target/release".into()));
    let dir = std::env::temp_dir().join(format!("vexil-propagation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cp = Server::start(
        &bin.join("vexil-control-plane"),
        &[
            "--listen=127.0.0.1:0".into(),
            "--grpc-listen=127.0.0.1:0".into(),
            format!("--database-url=sqlite://{}", dir.join("cp.db").display()),
            format!("--init-admin-tokens={ADMIN}"),
            format!("--init-edge-tokens={EDGE}"),
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
                    .post(format!("{base}/api/admin/projects/default/features"))
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

    let grpc = cp.grpc.clone().unwrap_or_default();
    let edge_servers: Vec<Server> = (0..edges)
        .map(|i| {
            Server::start(
                &bin.join("vexil-edge"),
                &[
                    "serve".into(),
                    "--listen=127.0.0.1:0".into(),
                    format!("--upstream={grpc}"),
                    format!("--token={EDGE}"),
                    format!("--edge-id=bench-{i}"),
                ],
                false,
            )
        })
        .collect();
    // The published revision once the control plane has caught up with the flags just created.
    let mut revision = published_revision(&http, &cp).await;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = published_revision(&http, &cp).await;
        if now == revision {
            break;
        }
        revision = now;
    }
    for edge in &edge_servers {
        while sample(&prometheus(&http, edge).await, "snapshot_revision").unwrap_or(0.0) < revision
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    let mut latencies_ms = Vec::new();
    let mut bytes_per_edge = Vec::new();
    for round in 0..rounds {
        let bytes_before =
            sample(&prometheus(&http, &cp).await, "snapshot_update_bytes_total").unwrap_or(0.0);
        let state = if round % 2 == 0 { "on" } else { "off" };
        admin(
            &http,
            &cp,
            reqwest::Method::POST,
            &format!(
                "/api/admin/projects/default/features/{flag}/environments/development/{state}"
            ),
            None,
        )
        .await;
        let acknowledged = now_seconds();
        // The revision of this change: the next one the control plane publishes.
        let previous = revision;
        while revision == previous {
            tokio::time::sleep(Duration::from_millis(5)).await;
            revision = published_revision(&http, &cp).await;
        }
        for edge in &edge_servers {
            loop {
                let text = prometheus(&http, edge).await;
                if sample(&text, "snapshot_revision").unwrap_or(0.0) >= revision {
                    let applied = sample(&text, "snapshot_applied_unix_seconds").unwrap_or(0.0);
                    latencies_ms.push((applied - acknowledged) * 1000.0);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let bytes_after =
            sample(&prometheus(&http, &cp).await, "snapshot_update_bytes_total").unwrap_or(0.0);
        bytes_per_edge.push((bytes_after - bytes_before) / edges as f64);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    latencies_ms.sort_by(f64::total_cmp);
    bytes_per_edge.sort_by(f64::total_cmp);
    let rss: Vec<u64> = edge_servers.iter().map(Server::resident_kib).collect();
    println!(
        "edges {edges}, flags {flags}, rounds {rounds}: propagation p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms \
         ({} samples); bytes per edge per change: median {:.0}; edge RSS {:.1} MiB (mean), control plane RSS {:.1} MiB",
        percentile(&latencies_ms, 50.0),
        percentile(&latencies_ms, 99.0),
        latencies_ms.last().copied().unwrap_or(0.0),
        latencies_ms.len(),
        percentile(&bytes_per_edge, 50.0),
        rss.iter().sum::<u64>() as f64 / rss.len().max(1) as f64 / 1024.0,
        cp.resident_kib() as f64 / 1024.0,
    );
    drop(edge_servers);
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}
