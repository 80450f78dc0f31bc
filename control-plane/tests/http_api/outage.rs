//! A PostgreSQL outage under a running control plane: a private PostgreSQL server (its own data folder and
//! port, started with Debian's binaries) is stopped and started again. While it is down, writes and reads
//! answer 503 `ServiceUnavailableError` within about 2 s and `/ready` within 1 s, and nothing is half
//! written; once it is back, the next write succeeds at once.

use crate::server::{Server, ADMIN_TOKEN};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const FEATURES: &str = "/api/admin/projects/default/features";

/// A PostgreSQL server of this test's own, stopped and its folder deleted when dropped.
struct PrivatePostgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

/// The folder of Debian's PostgreSQL binaries (the newest version); the test fails without them.
fn postgres_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|versions| {
            versions
                .filter_map(Result::ok)
                .map(|version| version.path().join("bin"))
                .filter(|bin| bin.join("pg_ctl").exists() && bin.join("initdb").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|bin| {
        bin.parent()
            .and_then(Path::file_name)
            .and_then(|version| version.to_str())
            .and_then(|version| version.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop().unwrap_or_else(|| {
        panic!(
            "PostgreSQL's binaries (initdb, pg_ctl) are missing under /usr/lib/postgresql: \
             install Debian's postgresql package (scripts/test does)"
        )
    })
}

fn running_as_root() -> bool {
    let output = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

/// `program args…`, as the `postgres` user when we are root (PostgreSQL refuses to run as root).
fn as_owner(program: &Path, args: &[&str]) -> Command {
    if running_as_root() {
        let mut command = Command::new("runuser");
        command
            .args(["-u", "postgres", "--"])
            .arg(program)
            .args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

fn run(mut command: Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

impl PrivatePostgres {
    fn start() -> PrivatePostgres {
        let bin = postgres_bin();
        let dir = tempfile::Builder::new()
            .prefix("vexil-outage-postgres")
            .tempdir()
            .expect("temp dir");
        if running_as_root() {
            run(
                {
                    let mut chown = Command::new("chown");
                    chown.arg("postgres:").arg(dir.path());
                    chown
                },
                "chown the data folder",
            );
        }
        let data = dir.path().join("data");
        run(
            as_owner(
                &bin.join("initdb"),
                &[
                    "-D",
                    data.to_str().unwrap(),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--no-sync",
                ],
            ),
            "initdb",
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let postgres = PrivatePostgres { bin, dir, port };
        postgres.resume();
        postgres
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn pg_ctl(&self, args: &[&str], what: &str) {
        let data = self.dir.path().join("data");
        let mut all = vec!["-D", data.to_str().unwrap()];
        all.extend_from_slice(args);
        run(as_owner(&self.bin.join("pg_ctl"), &all), what);
    }

    /// Starts the server (again), waiting until it accepts connections.
    fn resume(&self) {
        let log = self.dir.path().join("server.log");
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.path().display()
        );
        self.pg_ctl(
            &[
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
            "pg_ctl start",
        );
    }

    /// Stops the server as an operator would (`fast`: open connections are ended), waiting until it is down.
    fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "-w", "stop"], "pg_ctl stop");
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = as_owner(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        )
        .output();
    }
}

/// The names of the flags of project default.
async fn flag_names(server: &Server) -> Vec<String> {
    let answer = server.get(FEATURES).await;
    answer.expect(200)["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_postgres_answers_503_quickly_and_recovery_is_immediate() {
    let postgres = PrivatePostgres::start();
    let url = postgres.url();
    let server = Server::start_with_args(&[
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        &url,
        "--init-admin-tokens",
        ADMIN_TOKEN,
    ])
    .await;
    server
        .post(FEATURES, json!({"name": "before"}))
        .await
        .expect(201);
    let events_before = server.get("/api/admin/events?limit=1000").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap();

    postgres.stop();

    // A write: 503 naming the database, within about 2 s.
    let started = Instant::now();
    let answer = server.post(FEATURES, json!({"name": "during"})).await;
    let write_took = started.elapsed();
    let message = answer.expect_error(503, "ServiceUnavailableError");
    assert!(message.contains("database"), "{message}");
    assert!(
        !message.contains("127.0.0.1"),
        "no address in the message: {message}"
    );
    eprintln!("a write with PostgreSQL stopped answered 503 in {write_took:?}");
    assert!(
        write_took < Duration::from_secs(3),
        "the write took {write_took:?}"
    );
    // A read too.
    let started = Instant::now();
    let answer = server.get(FEATURES).await;
    let read_took = started.elapsed();
    answer.expect_error(503, "ServiceUnavailableError");
    eprintln!("a read with PostgreSQL stopped answered 503 in {read_took:?}");
    assert!(
        read_took < Duration::from_secs(3),
        "the read took {read_took:?}"
    );
    // Readiness: 503 within a second, before a Kubernetes probe (1 s by default) gives up.
    let started = Instant::now();
    let answer = server.send("GET", "/ready", None, None).await;
    let ready_took = started.elapsed();
    answer.expect_error(503, "ServiceUnavailableError");
    eprintln!("/ready with PostgreSQL stopped answered 503 in {ready_took:?}");
    assert!(
        ready_took < Duration::from_millis(1500),
        "/ready took {ready_took:?}"
    );

    postgres.resume();

    // The next write succeeds at once; nothing of the refused one was written.
    let started = Instant::now();
    server
        .post(FEATURES, json!({"name": "after"}))
        .await
        .expect(201);
    let recovery = started.elapsed();
    eprintln!("the first write after PostgreSQL came back took {recovery:?}");
    assert!(
        recovery < Duration::from_secs(2),
        "recovery took {recovery:?}"
    );
    server.send("GET", "/ready", None, None).await.expect(200);
    assert_eq!(flag_names(&server).await, ["after", "before"]);
    server
        .get(&format!("{FEATURES}/during"))
        .await
        .expect_error(404, "NotFoundError");
    let events = server
        .get("/api/admin/events?limit=1000")
        .await
        .expect(200)
        .clone();
    let events_after = events["totalEvents"].as_i64().unwrap();
    assert_eq!(
        events_after - events_before,
        events_after_one_flag(&server).await,
        "only the events of the flag made after the outage were added"
    );
    assert!(
        !events.to_string().contains("\"during\""),
        "an event of the refused write"
    );
}

/// How many events one flag's creation records (`after`'s, counted by its name).
async fn events_after_one_flag(server: &Server) -> i64 {
    let answer = server.get("/api/admin/events/after").await;
    answer.expect(200)["totalEvents"].as_i64().unwrap()
}
