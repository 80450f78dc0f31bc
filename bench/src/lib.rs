//! What the benchmark binaries share: the release control plane started as a child process on a database
//! ([`ControlPlane`]), percentiles of measured times, and the seeding pieces (flag names from a word list,
//! a seeding transaction, the store's event count).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use vexil_control_plane::domain::events::{self, EventQuery};
use vexil_control_plane::store::{Actor, Store, WriteTx};

/// The admin token the benchmarks start the control plane with.
pub const ADMIN: &str = "*:*.bench-admin";

/// A running `vexil-control-plane` (release, `VEXIL_BIN_DIR`, default `target/release`); killed and waited
/// for when dropped, a panic included.
pub struct ControlPlane {
    child: Child,
    /// `http://ADDRESS` of its HTTP listener.
    pub base: String,
}

impl ControlPlane {
    /// Starts it on `url` with the [`ADMIN`] token and room for `flags` flags, and waits for its
    /// `listening on` line.
    pub fn start(url: &str, flags: usize) -> ControlPlane {
        let bin = PathBuf::from(std::env::var("VEXIL_BIN_DIR").unwrap_or("target/release".into()));
        let program = bin.join("vexil-control-plane");
        let mut child = Command::new(&program)
            .args([
                "--listen=127.0.0.1:0".to_owned(),
                "--grpc-listen=127.0.0.1:0".to_owned(),
                format!("--database-url={url}"),
                format!("--init-admin-tokens={ADMIN}"),
                format!("--limit-feature-flags={flags}"),
            ])
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
        // Owned by `ControlPlane` from here, so a panic below still kills and waits for it.
        let mut server = ControlPlane {
            child,
            base: String::new(),
        };
        loop {
            let line = received
                .recv_timeout(Duration::from_secs(60))
                .expect("the control plane did not start");
            if let Some(address) = line.strip_prefix("listening on ") {
                server.base = format!("http://{address}");
                return server;
            }
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `p`th percentile (0–100) of `sorted` (ascending, not empty), by the nearest-rank method.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Calls per seeding transaction.
pub const BATCH: usize = 100;

/// The words flag names and descriptions are made of.
pub const WORDS: [&str; 16] = [
    "checkout",
    "search",
    "billing",
    "banner",
    "onboarding",
    "payments",
    "profile",
    "reports",
    "export",
    "mobile",
    "pricing",
    "invoice",
    "gallery",
    "coupons",
    "sharing",
    "tracking",
];

/// The name of seeded flag `i` (`billing-coupons-01234`).
pub fn flag_name(i: usize) -> String {
    format!(
        "{}-{}-{i:05}",
        WORDS[i % WORDS.len()],
        WORDS[(i / 16) % WORDS.len()]
    )
}

/// A write transaction for seeding, as user `bench`.
pub async fn begin(store: &Store) -> WriteTx {
    store
        .begin_write(&Actor::user("bench", 1))
        .await
        .expect("begin a write")
}

/// How many events the store holds.
pub async fn event_count(store: &Store) -> i64 {
    let mut conn = store.read().await.expect("read");
    let query = EventQuery {
        limit: Some(0),
        ..EventQuery::default()
    };
    events::list(&mut conn, query, events::PersonalFields::Shown)
        .await
        .expect("events")
        .total_events
}
