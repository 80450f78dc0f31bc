//! Webhook addons' deliveries to a real local HTTP receiver (matching events only, signed, with the event id),
//! through a failing receiver, across a kill -9 and from two replicas.

use crate::addons::{webhook, ADDONS, FEATURES, SECRET_AUTHORIZATION, SIGNING_SECRET};
use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::Duration;

crate::on_sqlite_and_postgres!(
    every_matching_event_is_delivered_signed_and_no_other,
    a_failing_receiver_gets_the_event_once_it_recovers,
    a_kill_between_the_write_and_the_delivery_delivers_after_restart,
);

/// Lets webhooks target this machine's receivers (loopback), as every delivery test here needs.
pub(crate) const ALLOW_PRIVATE: &str = "--allow-private-webhook-targets";

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    path: String,
    headers: HeaderMap,
    body: String,
}

/// How the receiver answers its n-th request (from 0) on a path.
pub(crate) type Behaviour = Arc<dyn Fn(&str, usize) -> Answer + Send + Sync>;

#[derive(Clone, Copy)]
pub(crate) enum Answer {
    Status(u16),
    /// Never answers (until the test ends).
    Hang,
}

#[derive(Clone)]
struct ReceiverState {
    received: Arc<Mutex<Vec<Received>>>,
    behaviour: Behaviour,
}

/// A real HTTP server on 127.0.0.1:0 that records every POST.
pub(crate) struct Receiver {
    pub(crate) base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub(crate) async fn start(behaviour: Behaviour) -> Receiver {
        let received = Arc::new(Mutex::new(Vec::new()));
        let state = ReceiverState {
            received: received.clone(),
            behaviour,
        };
        let app = axum::Router::new().fallback(receive).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { base, received }
    }

    pub(crate) fn received(&self, path: &str) -> Vec<Received> {
        let all = self.received.lock().unwrap();
        all.iter().filter(|r| r.path == path).cloned().collect()
    }

    /// Waits until `path` has received `count` requests (or fails after 30 s).
    async fn wait_for(&self, path: &str, count: usize) -> Vec<Received> {
        for _ in 0..300 {
            let received = self.received(path);
            if received.len() >= count {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "{path} received {:?}, not {count} requests",
            self.received(path)
        );
    }
}

async fn receive(
    State(state): State<ReceiverState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let path = uri.path().to_owned();
    let index = {
        let mut received = state.received.lock().unwrap();
        let index = received.iter().filter(|r| r.path == path).count();
        received.push(Received {
            path: path.clone(),
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        index
    };
    match (state.behaviour)(&path, index) {
        Answer::Status(status) => StatusCode::from_u16(status).unwrap(),
        Answer::Hang => {
            std::future::pending::<()>().await;
            StatusCode::OK
        }
    }
}

pub(crate) fn always_ok() -> Behaviour {
    Arc::new(|_, _| Answer::Status(200))
}

fn header<'a>(received: &'a Received, name: &str) -> &'a str {
    received
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

fn hmac_hex(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body.as_bytes());
    let bytes = mac.finalize().into_bytes();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The addon's delivery log once it holds `count` entries (or fails after 30 s).
pub(crate) async fn log_of(server: &Server, id: i64, count: usize) -> Vec<Value> {
    let mut last = Value::Null;
    for _ in 0..300 {
        let answer = server.get(&format!("{ADDONS}/{id}/events")).await;
        last = answer.expect(200)["integrationEvents"].clone();
        if last.as_array().unwrap().len() >= count {
            return last.as_array().unwrap().clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the delivery log of addon {id} is {last}, not {count} entries long");
}

async fn every_matching_event_is_delivered_signed_and_no_other(db: TestDb) {
    let receiver = Receiver::start(always_ok()).await;
    let server = Server::start(&db, &[ALLOW_PRIVATE]).await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other"}),
        )
        .await
        .expect(201);
    // A: flag creations and switches of project default in development, signed, with extra headers.
    let mut a = webhook(
        &format!("{}/a", receiver.base),
        json!(["feature-created", "feature-environment-enabled"]),
    );
    a["parameters"]["authorization"] = json!(SECRET_AUTHORIZATION);
    a["parameters"]["signingSecret"] = json!(SIGNING_SECRET);
    a["parameters"]["customHeaders"] = json!("{\"X-Team\": \"flags\"}");
    a["projects"] = json!(["default"]);
    a["environments"] = json!(["development"]);
    let a_id = server.post(ADDONS, a).await.expect(200)["id"]
        .as_i64()
        .unwrap();
    // Sending the masked answer back keeps every secret (the deliveries below carry them).
    let masked = server
        .get(&format!("{ADDONS}/{a_id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(masked["parameters"]["signingSecret"], "*****");
    server
        .put(&format!("{ADDONS}/{a_id}"), masked)
        .await
        .expect(200);
    // B: archives anywhere, with a body template.
    let mut b = webhook(&format!("{}/b", receiver.base), json!(["feature-archived"]));
    b["parameters"]["bodyTemplate"] =
        json!("{\"kind\": \"{{event.type}}\", \"flag\": \"{{event.featureName}}\", \"by\": \"{{event.createdBy}}\"}");
    let b_id = server.post(ADDONS, b).await.expect(200)["id"]
        .as_i64()
        .unwrap();
    // C: disabled, so nothing.
    let mut c = webhook(&format!("{}/c", receiver.base), json!(["feature-created"]));
    c["enabled"] = json!(false);
    server.post(ADDONS, c).await.expect(200);

    server
        .post(FEATURES, json!({"name": "hooked"}))
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/other/features",
            json!({"name": "elsewhere"}),
        )
        .await
        .expect(201);
    for environment in ["development", "production"] {
        server
            .post_empty(&format!("{FEATURES}/hooked/environments/{environment}/on"))
            .await
            .expect(200);
    }
    server
        .delete(&format!("{FEATURES}/hooked"))
        .await
        .expect(202);

    let delivered = receiver.wait_for("/a", 2).await;
    let archived = receiver.wait_for("/b", 1).await;
    let log_a = log_of(&server, a_id, 2).await;
    log_of(&server, b_id, 1).await;
    // Nothing else arrives.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.received("/a").len(), 2);
    assert_eq!(receiver.received("/b").len(), 1);
    assert!(receiver.received("/c").is_empty());

    let events = server
        .get("/api/admin/events?limit=1000")
        .await
        .expect(200)
        .clone();
    let id_of = |event_type: &str, environment: Option<&str>| {
        events["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| {
                e["type"] == event_type
                    && e["featureName"] == "hooked"
                    && environment.is_none_or(|env| e["environment"] == env)
            })
            .map(|e| e["id"].as_i64().unwrap())
            .unwrap()
    };
    let expected = [
        ("feature-created", id_of("feature-created", None)),
        (
            "feature-environment-enabled",
            id_of("feature-environment-enabled", Some("development")),
        ),
    ];
    for (received, (event_type, event_id)) in delivered.iter().zip(expected) {
        let body: Value = serde_json::from_str(&received.body).unwrap();
        assert_eq!(body["type"], event_type);
        assert_eq!(body["id"], event_id);
        assert_eq!(body["featureName"], "hooked");
        assert_eq!(header(received, "x-vexil-event-id"), event_id.to_string());
        assert_eq!(
            header(received, "x-vexil-signature"),
            format!("sha256={}", hmac_hex(SIGNING_SECRET, &received.body))
        );
        assert_ne!(
            header(received, "x-vexil-signature"),
            format!("sha256={}", hmac_hex("another secret", &received.body))
        );
        assert_eq!(header(received, "authorization"), SECRET_AUTHORIZATION);
        assert_eq!(header(received, "x-team"), "flags");
        assert_eq!(header(received, "content-type"), "application/json");
    }
    let templated: Value = serde_json::from_str(&archived[0].body).unwrap();
    assert_eq!(
        templated,
        json!({"kind": "feature-archived", "flag": "hooked", "by": "init-admin-token-1"})
    );
    assert!(header(&archived[0], "x-vexil-signature").is_empty());

    // The delivery log: newest first, Unleash's integration event shape.
    assert_eq!(log_a.len(), 2);
    for (entry, (event_type, event_id)) in log_a.iter().rev().zip(expected) {
        assert_eq!(entry["state"], "success");
        assert_eq!(entry["integrationId"], a_id);
        assert!(entry["id"].as_str().unwrap().parse::<u64>().is_ok());
        assert_eq!(entry["event"]["type"], event_type);
        assert_eq!(entry["event"]["id"], event_id);
        assert_eq!(entry["details"]["attempts"], 1);
        assert_eq!(entry["details"]["statusCode"], 200);
        assert!(entry["stateDetails"].as_str().unwrap().contains("200"));
        assert_timestamp(&entry["createdAt"]);
    }
    let ids: Vec<u64> = log_a
        .iter()
        .map(|e| e["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(ids[0] > ids[1]);
    let paged = server
        .get(&format!("{ADDONS}/{a_id}/events?limit=1&offset=1"))
        .await;
    assert_eq!(paged.expect(200)["integrationEvents"], json!([log_a[1]]));
    let everything = format!("{log_a:?}");
    assert!(!everything.contains(SECRET_AUTHORIZATION) && !everything.contains(SIGNING_SECRET));
}

async fn a_failing_receiver_gets_the_event_once_it_recovers(db: TestDb) {
    // /flaky answers 500 twice, then 200; /down always 500.
    let receiver = Receiver::start(Arc::new(|path, index| match (path, index) {
        ("/flaky", 0 | 1) | ("/down", _) => Answer::Status(500),
        _ => Answer::Status(200),
    }))
    .await;
    let server = Server::start(
        &db,
        &[
            "--webhook-retry-base",
            "100ms",
            "--webhook-max-attempts",
            "3",
            ALLOW_PRIVATE,
        ],
    )
    .await;
    let flaky = server
        .post(
            ADDONS,
            webhook(
                &format!("{}/flaky", receiver.base),
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let down = server
        .post(
            ADDONS,
            webhook(
                &format!("{}/down", receiver.base),
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    server
        .post(FEATURES, json!({"name": "retried"}))
        .await
        .expect(201);

    let attempts = receiver.wait_for("/flaky", 3).await;
    let event_ids: Vec<&str> = attempts
        .iter()
        .map(|r| header(r, "x-vexil-event-id"))
        .collect();
    assert!(!event_ids[0].is_empty());
    assert!(
        event_ids.iter().all(|id| *id == event_ids[0]),
        "{event_ids:?}"
    );
    let log = log_of(&server, flaky, 1).await;
    assert_eq!(log[0]["state"], "success");
    assert_eq!(log[0]["details"]["attempts"], 3);
    assert_eq!(log[0]["event"]["id"].to_string(), event_ids[0]);

    let failed = log_of(&server, down, 1).await;
    assert_eq!(failed[0]["state"], "failed");
    assert_eq!(failed[0]["details"]["attempts"], 3);
    assert_eq!(failed[0]["details"]["statusCode"], 500);
    assert!(
        failed[0]["stateDetails"]
            .as_str()
            .unwrap()
            .contains("Status code: 500"),
        "{}",
        failed[0]
    );
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(receiver.received("/down").len(), 3, "bounded attempts");
    assert_eq!(
        receiver.received("/flaky").len(),
        3,
        "no delivery after success"
    );
}

async fn a_kill_between_the_write_and_the_delivery_delivers_after_restart(db: TestDb) {
    // The first attempt hangs: the control plane is killed while it waits for the answer.
    let receiver = Receiver::start(Arc::new(|_, index| {
        if index == 0 {
            Answer::Hang
        } else {
            Answer::Status(200)
        }
    }))
    .await;
    let options = [
        "--webhook-timeout",
        "2s",
        "--webhook-retry-base",
        "100ms",
        ALLOW_PRIVATE,
    ];
    let mut server = Server::start(&db, &options).await;
    let id = server
        .post(
            ADDONS,
            webhook(
                &format!("{}/hook", receiver.base),
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    server
        .post(FEATURES, json!({"name": "survivor"}))
        .await
        .expect(201);
    let first = receiver.wait_for("/hook", 1).await;
    server.kill();

    // After the restart the claim's lease runs out and the event is delivered.
    let server = Server::start(&db, &options).await;
    let delivered = receiver.wait_for("/hook", 2).await;
    assert_eq!(
        header(&delivered[1], "x-vexil-event-id"),
        header(&first[0], "x-vexil-event-id")
    );
    let body: Value = serde_json::from_str(&delivered[1].body).unwrap();
    assert_eq!(body["featureName"], "survivor");
    let log = log_of(&server, id, 1).await;
    assert_eq!(log[0]["state"], "success");
    assert_eq!(log[0]["event"]["featureName"], "survivor");
}

/// Two replicas on one Postgres database, both sending: in a normal run each event reaches the receiver
/// once (the claim's lease keeps the other replica off a row it sends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_send_each_event_once() {
    let db = TestDb::postgres().await;
    let receiver = Receiver::start(always_ok()).await;
    let first = Server::start(&db, &[ALLOW_PRIVATE]).await;
    let second = Server::start(&db, &[ALLOW_PRIVATE]).await;
    let id = first
        .post(
            ADDONS,
            webhook(
                &format!("{}/both", receiver.base),
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let flags = 30;
    for index in 0..flags {
        let replica = if index % 2 == 0 { &first } else { &second };
        replica
            .post(FEATURES, json!({"name": format!("replicated-{index}")}))
            .await
            .expect(201);
    }
    let received = receiver.wait_for("/both", flags).await;
    log_of(&first, id, flags).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let received_now = receiver.received("/both");
    let mut ids: Vec<&str> = received_now
        .iter()
        .map(|r| header(r, "x-vexil-event-id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), flags, "{received:?}");
    assert_eq!(received_now.len(), flags, "an event was sent twice");
}
