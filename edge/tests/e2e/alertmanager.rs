//! A real Prometheus Alertmanager (Debian's `prometheus-alertmanager`, installed by scripts/test) whose
//! webhook receiver posts to a Vexil signal endpoint with the endpoint's token
//! (`http_config.authorization`): an alert at critical severity switches a flag off in production through
//! an action set, and an edge stops serving it within 15 s; a warning alert, firing then resolved, passes no
//! filter and changes nothing.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::database::TestDb;
use crate::processes::*;

/// Alertmanager's binary (`ALERTMANAGER` overrides).
fn alertmanager_binary() -> String {
    std::env::var("ALERTMANAGER").unwrap_or_else(|_| "/usr/bin/prometheus-alertmanager".to_owned())
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// A running Alertmanager, killed when dropped.
struct Alertmanager {
    child: Child,
    base: String,
    dir: tempfile::TempDir,
}

impl Alertmanager {
    /// Alertmanager with one route to a webhook at `url` carrying `token` as a bearer token, grouping by
    /// alert name with short waits, resolved alerts sent too; clustering off.
    fn start(url: &str, token: &str) -> Alertmanager {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "route:\n  receiver: vexil\n  group_by: ['alertname']\n  group_wait: 1s\n  group_interval: 1s\n  \
             repeat_interval: 1h\nreceivers:\n  - name: vexil\n    webhook_configs:\n      - url: '{url}'\n        \
             send_resolved: true\n        http_config:\n          authorization:\n            type: Bearer\n            \
             credentials: '{token}'\n"
        );
        let config_file = dir.path().join("alertmanager.yml");
        std::fs::write(&config_file, config).expect("config");
        let port = free_port();
        let child = Command::new(alertmanager_binary())
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!("--storage.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("alertmanager.log")).expect("log"),
            ))
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start {} ({error}): scripts/test installs Debian's prometheus-alertmanager",
                    alertmanager_binary()
                )
            });
        Alertmanager {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
        }
    }

    /// Whether it answers `/-/ready` (not yet listening: no).
    async fn ready(&self) -> bool {
        reqwest::get(format!("{}/-/ready", self.base))
            .await
            .is_ok_and(|response| response.status().is_success())
    }

    /// Posts alerts to Alertmanager's API v2.
    async fn post_alerts(&self, alerts: Value) {
        let answer = request(
            "POST",
            &format!("{}/api/v2/alerts", self.base),
            None,
            &[],
            Some(alerts),
        )
        .await;
        assert_eq!(answer.status, 200, "{:?}", answer.body);
    }
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.dir.path().join("alertmanager.log"));
            eprintln!(
                "--- Alertmanager's log:\n{}--- end",
                log.unwrap_or_default()
            );
        }
    }
}

fn rfc3339(offset: chrono::TimeDelta) -> String {
    (chrono::Utc::now() + offset).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn alert(name: &str, severity: &str, ends_at: Option<String>) -> Value {
    let mut alert = json!({
        "labels": {"alertname": name, "severity": severity, "service": "checkout"},
        "annotations": {"summary": format!("{name} on checkout")},
        "startsAt": rfc3339(chrono::TimeDelta::seconds(-60)),
    });
    if let Some(ends_at) = ends_at {
        alert["endsAt"] = json!(ends_at);
    }
    json!([alert])
}

/// The signals the endpoint received, the newest first.
async fn signals(control_plane: &Process, endpoint: i64) -> Vec<Value> {
    let path = format!("/api/admin/signal-endpoints/{endpoint}/signals");
    admin(control_plane, "GET", &path, None).await.body["signalEndpointSignals"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Whether the edge serves `flag` on to the production client token.
async fn served_on(edge: &Process, token: &str, flag: &str) -> bool {
    let answer = get(&format!("{}/api/client/features", edge.base), Some(token)).await;
    answer.body["features"]
        .as_array()
        .and_then(|features| features.iter().find(|feature| feature["name"] == flag))
        .is_some_and(|feature| feature["enabled"] == true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alert_switches_a_flag_off_in_production_and_the_edge_follows() {
    assert!(
        Path::new(&alertmanager_binary()).exists(),
        "{} is missing: scripts/test installs Debian's prometheus-alertmanager",
        alertmanager_binary()
    );
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    let projects = "/api/admin/projects/default";
    admin(
        &control_plane,
        "POST",
        &format!("{projects}/features"),
        Some(json!({"name": "checkout"})),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        &format!("{projects}/features/checkout/environments/production/on"),
        None,
    )
    .await;
    let token = admin(
        &control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "production", "type": "client", "environment": "production", "projects": ["*"]})),
    )
    .await
    .body["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    eventually(
        Duration::from_secs(10),
        "the edge serves checkout on",
        || served_on(&edge, &token, "checkout"),
    )
    .await;

    // The endpoint, its token, a service account and the action set.
    let endpoint = admin(
        &control_plane,
        "POST",
        "/api/admin/signal-endpoints",
        Some(json!({"name": "alertmanager"})),
    )
    .await
    .body["id"]
        .as_i64()
        .unwrap();
    let secret = admin(
        &control_plane,
        "POST",
        &format!("/api/admin/signal-endpoints/{endpoint}/tokens"),
        Some(json!({"name": "alertmanager"})),
    )
    .await
    .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let actor = admin(
        &control_plane,
        "POST",
        "/api/admin/service-account",
        Some(json!({"username": "alerts", "name": "Alerts", "rootRole": 2})),
    )
    .await
    .body["id"]
        .as_i64()
        .unwrap();
    let set = admin(
        &control_plane,
        "POST",
        &format!("{projects}/actions"),
        Some(json!({
            "name": "checkout off on critical alerts",
            "actorId": actor,
            "match": {"source": "signal-endpoint", "sourceId": endpoint, "payload": {
                "status": {"operator": "IN", "values": ["firing"]},
                "commonLabels.severity": {"operator": "IN", "values": ["critical"]},
            }},
            "actions": [{"action": "TOGGLE_FEATURE_OFF", "sortOrder": 1, "executionParams":
                {"project": "default", "featureName": "checkout", "environment": "production"}}],
        })),
    )
    .await
    .body["id"]
        .as_i64()
        .unwrap();

    let url = format!("{}/api/signal-endpoint/alertmanager", control_plane.base);
    let alertmanager = Alertmanager::start(&url, &secret);
    eventually(Duration::from_secs(15), "Alertmanager ready", || {
        alertmanager.ready()
    })
    .await;

    // A warning, firing then resolved: two signals, no filter passed, nothing changes.
    alertmanager
        .post_alerts(alert("DiskSlow", "warning", None))
        .await;
    eventually(
        Duration::from_secs(15),
        "the firing warning arrives",
        || async { signals(&control_plane, endpoint).await.len() == 1 },
    )
    .await;
    alertmanager
        .post_alerts(alert(
            "DiskSlow",
            "warning",
            Some(rfc3339(chrono::TimeDelta::zero())),
        ))
        .await;
    eventually(
        Duration::from_secs(15),
        "the resolved warning arrives",
        || async {
            signals(&control_plane, endpoint)
                .await
                .first()
                .is_some_and(|signal| signal["payload"]["status"] == "resolved")
        },
    )
    .await;
    let received = signals(&control_plane, endpoint).await;
    assert_eq!(received[0]["tokenName"], "alertmanager");
    assert_eq!(
        received[0]["payload"]["commonLabels"]["alertname"],
        "DiskSlow"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(served_on(&edge, &token, "checkout").await);
    let log = admin(
        &control_plane,
        "GET",
        &format!("{projects}/actions/{set}/events"),
        None,
    )
    .await;
    assert_eq!(log.body["actionSetEvents"], json!([]), "{}", log.body);

    // A critical alert: off in production, and the edge stops serving it, within 15 s of the post.
    let posted = Instant::now();
    alertmanager
        .post_alerts(alert("HighErrorRate", "critical", None))
        .await;
    eventually(
        Duration::from_secs(15),
        "the edge stops serving checkout",
        || async { !served_on(&edge, &token, "checkout").await },
    )
    .await;
    assert!(posted.elapsed() < Duration::from_secs(15));
    let log = admin(
        &control_plane,
        "GET",
        &format!("{projects}/actions/{set}/events"),
        None,
    )
    .await;
    let executions = log.body["actionSetEvents"].as_array().unwrap();
    assert_eq!(executions.len(), 1, "{}", log.body);
    assert_eq!(executions[0]["state"], "success");
    assert_eq!(
        executions[0]["signal"]["payload"]["commonLabels"]["severity"],
        "critical"
    );
    let events = admin(
        &control_plane,
        "GET",
        "/api/admin/events?type=feature-environment-disabled",
        None,
    )
    .await;
    assert_eq!(events.body["events"][0]["createdBy"], "alerts");
    assert_eq!(events.body["events"][0]["environment"], "production");
}
