//! Webhook addons: CRUD, validation, permissions and masking; deliveries to a real local HTTP receiver
//! (matching events only, signed, with the event id), through a failing receiver and across a kill -9.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{assert_error_body, assert_timestamp, Server, ADMIN_TOKEN};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::Duration;

crate::on_sqlite_and_postgres!(
    addons_crud_validation_permissions_and_masking,
    every_matching_event_is_delivered_signed_and_no_other,
    a_failing_receiver_gets_the_event_once_it_recovers,
    a_kill_between_the_write_and_the_delivery_delivers_after_restart,
    private_and_link_local_targets_are_refused,
);

/// Lets webhooks target this machine's receivers (loopback), as every delivery test here needs.
const ALLOW_PRIVATE: &str = "--allow-private-webhook-targets";

const ADDONS: &str = "/api/admin/addons";
const FEATURES: &str = "/api/admin/projects/default/features";
const SECRET_AUTHORIZATION: &str = "Bearer receiver-secret-4711";
const SIGNING_SECRET: &str = "signing-secret-0815";

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: HeaderMap,
    body: String,
}

/// How the receiver answers its n-th request (from 0) on a path.
type Behaviour = Arc<dyn Fn(&str, usize) -> Answer + Send + Sync>;

#[derive(Clone, Copy)]
enum Answer {
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
struct Receiver {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start(behaviour: Behaviour) -> Receiver {
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

    fn received(&self, path: &str) -> Vec<Received> {
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

fn always_ok() -> Behaviour {
    Arc::new(|_, _| Answer::Status(200))
}

fn webhook(url: &str, events: Value) -> Value {
    json!({
        "provider": "webhook",
        "description": "to the receiver",
        "enabled": true,
        "parameters": {"url": url},
        "events": events,
    })
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
async fn log_of(server: &Server, id: i64, count: usize) -> Vec<Value> {
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

async fn addons_crud_validation_permissions_and_masking(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let empty = server.get(ADDONS).await.expect(200).clone();
    assert_eq!(empty["addons"], json!([]));
    let provider = &empty["providers"][0];
    assert_eq!(provider["name"], "webhook");
    assert!(provider["events"]
        .as_array()
        .unwrap()
        .contains(&json!("feature-created")));
    let parameters = provider["parameters"].as_array().unwrap();
    let sensitive: Vec<&str> = parameters
        .iter()
        .filter(|p| p["sensitive"] == true)
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        sensitive,
        ["url", "authorization", "customHeaders", "signingSecret"]
    );

    // Bad input: 400 with a clear message, nothing stored.
    let good = webhook("https://hooks.example.com/x", json!(["feature-created"]));
    let mut cases = Vec::new();
    let mut case = |change: &dyn Fn(&mut Value), expected: &str| {
        let mut body = good.clone();
        change(&mut body);
        cases.push((body, expected.to_owned()));
    };
    case(
        &|b| b["provider"] = json!("slack"),
        "Unknown addon provider slack",
    );
    case(
        &|b| b["parameters"]["url"] = json!("ftp://x.example"),
        "http or https",
    );
    case(
        &|b| b["parameters"]["url"] = json!("not a url"),
        "not a URL",
    );
    case(
        &|b| b["parameters"] = json!({}),
        "parameters.url is required",
    );
    case(
        &|b| b["events"] = json!(["no-such-event"]),
        "no-such-event is not a known event type",
    );
    case(
        &|b| b["parameters"]["customHeaders"] = json!("[1, 2]"),
        "customHeaders",
    );
    case(
        &|b| b["parameters"]["bodyTemplate"] = json!(7),
        "must be a string",
    );
    case(&|b| b["parameters"]["nope"] = json!("x"), "not a parameter");
    case(&|b| b["enabled"] = json!("yes"), "enabled");
    case(&|b| b["events"] = json!("feature-created"), "events");
    for (body, expected) in cases {
        let answer = server.post(ADDONS, body.clone()).await;
        let message = answer.expect_error(400, "ValidationError");
        assert!(message.contains(&expected), "{body}: {message}");
    }
    let malformed = server
        .send_with_headers(
            "POST",
            ADDONS,
            None,
            &[
                ("Content-Type", "application/json"),
                ("Authorization", ADMIN_TOKEN),
            ],
        )
        .await;
    assert_eq!(malformed.status, 400);
    assert_eq!(server.get(ADDONS).await.expect(200)["addons"], json!([]));

    // Create: 200, secrets masked.
    let mut body = good.clone();
    body["parameters"] = json!({
        "url": "https://hooks.example.com/x",
        "authorization": SECRET_AUTHORIZATION,
        "signingSecret": SIGNING_SECRET,
        "customHeaders": "{\"X-Team\": \"flags\"}",
        "contentType": "application/json",
    });
    body["projects"] = json!(["default"]);
    let created = server.post(ADDONS, body).await.expect(200).clone();
    let id = created["id"].as_i64().unwrap();
    assert!(id >= 1);
    assert_eq!(created["provider"], "webhook");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["description"], "to the receiver");
    assert_eq!(created["events"], json!(["feature-created"]));
    assert_eq!(created["projects"], json!(["default"]));
    assert_eq!(created["environments"], json!([]));
    assert_eq!(
        created["parameters"],
        json!({"url": "*****", "authorization": "*****", "signingSecret": "*****",
               "customHeaders": "*****", "contentType": "application/json"})
    );
    let one = server
        .get(&format!("{ADDONS}/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(one, created);
    let list = server.get(ADDONS).await.expect(200).clone();
    assert_eq!(list["addons"], json!([created]));

    // An update that sends the masks back keeps the secrets; absent projects are kept.
    let mut update = created.clone();
    update["description"] = json!("renamed");
    update["events"] = json!(["feature-created", "feature-archived"]);
    let updated_body = json!({
        "provider": "webhook", "enabled": false, "description": "renamed",
        "parameters": update["parameters"], "events": update["events"],
    });
    let updated = server
        .put(&format!("{ADDONS}/{id}"), updated_body)
        .await
        .expect(200)
        .clone();
    assert_eq!(updated["description"], "renamed");
    assert_eq!(updated["enabled"], false);
    assert_eq!(updated["projects"], json!(["default"]));
    assert_eq!(updated["parameters"]["authorization"], "*****");
    // A bad update changes nothing.
    let bad = server
        .put(
            &format!("{ADDONS}/{id}"),
            webhook("mailto:x@example.com", json!([])),
        )
        .await;
    bad.expect_error(400, "ValidationError");
    assert_eq!(
        server.get(&format!("{ADDONS}/{id}")).await.expect(200),
        &updated
    );

    // Unknown ids: 404.
    for path in [
        format!("{ADDONS}/9999"),
        format!("{ADDONS}/abc"),
        format!("{ADDONS}/9999/events"),
    ] {
        server.get(&path).await.expect_error(404, "NotFoundError");
    }
    server
        .put(&format!("{ADDONS}/9999"), good.clone())
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete(&format!("{ADDONS}/9999"))
        .await
        .expect_error(404, "NotFoundError");

    // Permissions: Viewers and Editors read, only admins write.
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    for pat in [&viewer, &editor] {
        let read = server.send("GET", ADDONS, None, Some(pat)).await;
        assert_eq!(read.status, 200);
        assert_eq!(
            read.body["addons"][0]["parameters"]["authorization"],
            "*****"
        );
        let refused = server
            .send("POST", ADDONS, Some(good.clone()), Some(pat))
            .await;
        assert_eq!(refused.status, 403);
        assert_error_body(&refused.body, "NoAccessError");
        let refused = server
            .send("DELETE", &format!("{ADDONS}/{id}"), None, Some(pat))
            .await;
        assert_eq!(refused.status, 403);
    }
    let unauthenticated = server
        .client
        .get(format!("{}{ADDONS}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status().as_u16(), 401);

    // Delete: 200, then gone.
    assert_eq!(server.delete(&format!("{ADDONS}/{id}")).await.status, 200);
    server
        .get(&format!("{ADDONS}/{id}"))
        .await
        .expect_error(404, "NotFoundError");

    // Audited, with the secrets masked in every event.
    let events = server
        .get("/api/admin/events?limit=1000")
        .await
        .expect(200)
        .clone();
    let types: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|t| t.starts_with("addon-config"))
        .collect();
    assert_eq!(
        types,
        [
            "addon-config-deleted",
            "addon-config-updated",
            "addon-config-created"
        ]
    );
    let everything = format!("{events}{list}{one}{updated}");
    for secret in [
        SECRET_AUTHORIZATION,
        SIGNING_SECRET,
        "hooks.example.com",
        "X-Team",
    ] {
        assert!(!everything.contains(secret), "{secret} shown");
    }
    let created_event = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "addon-config-created")
        .unwrap();
    assert_eq!(
        created_event["data"]["parameters"]["authorization"],
        "*****"
    );
    assert_eq!(created_event["createdBy"], "init-admin-token-1");
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

async fn private_and_link_local_targets_are_refused(db: TestDb) {
    let receiver = Receiver::start(always_ok()).await;
    let port = receiver.base.rsplit(':').next().unwrap().to_owned();
    let server = Server::start(&db, &[]).await;
    let metadata = [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
    ];
    let link_local = ["http://169.254.1.2:8080/x", "http://[fe80::1]/x"];
    let private = [
        format!("{}/x", receiver.base),
        format!("http://localhost:{port}/x"),
        "http://127.1.2.3/x".to_owned(),
        "http://2130706433/x".to_owned(),
        "http://[::1]/x".to_owned(),
        "http://[::ffff:127.0.0.1]/x".to_owned(),
        "http://0.0.0.0/x".to_owned(),
        "http://10.1.2.3/x".to_owned(),
        "http://172.16.0.1/x".to_owned(),
        "http://172.31.255.254/x".to_owned(),
        "http://192.168.1.1/x".to_owned(),
        "http://[fd12:3456::1]/x".to_owned(),
    ];
    let refused = |answer: crate::server::Answer, url: &str, mentions: &str| {
        let message = answer.expect_error(400, "ValidationError");
        assert!(message.contains("parameters.url"), "{url}: {message}");
        assert!(message.contains(mentions), "{url}: {message}");
    };
    for url in metadata.iter().chain(&link_local) {
        let answer = server
            .post(ADDONS, webhook(url, json!(["feature-created"])))
            .await;
        refused(answer, url, "link-local");
    }
    for url in &private {
        let answer = server
            .post(ADDONS, webhook(url, json!(["feature-created"])))
            .await;
        refused(answer, url, ALLOW_PRIVATE);
    }
    // Public addresses and names that do not resolve (yet) are taken.
    let public = server
        .post(
            ADDONS,
            webhook("http://93.184.215.14/x", json!(["feature-created"])),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let unresolved = server
        .post(
            ADDONS,
            webhook(
                "https://hooks.example.invalid/x",
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    // An update to a private target is refused and changes nothing.
    let before = server
        .get(&format!("{ADDONS}/{public}"))
        .await
        .expect(200)
        .clone();
    let answer = server
        .put(
            &format!("{ADDONS}/{public}"),
            webhook(&private[0], json!(["feature-created"])),
        )
        .await;
    refused(answer, &private[0], ALLOW_PRIVATE);
    assert_eq!(
        server.get(&format!("{ADDONS}/{public}")).await.expect(200),
        &before
    );
    for id in [public, unresolved] {
        assert_eq!(server.delete(&format!("{ADDONS}/{id}")).await.status, 200);
    }
    drop(server);

    // With the flag: private and loopback targets are taken, link-local and metadata ones never.
    let mut server = Server::start(&db, &[ALLOW_PRIVATE]).await;
    for url in metadata.iter().chain(&link_local) {
        let answer = server
            .post(ADDONS, webhook(url, json!(["feature-created"])))
            .await;
        refused(answer, url, "link-local");
    }
    let by_address = server
        .post(
            ADDONS,
            webhook(
                &format!("{}/address", receiver.base),
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    let by_name = server
        .post(
            ADDONS,
            webhook(
                &format!("http://localhost:{port}/name"),
                json!(["feature-created"]),
            ),
        )
        .await
        .expect(200)["id"]
        .as_i64()
        .unwrap();
    server.terminate();

    // Started again without it: a delivery to them is refused (the name resolved when sending), recorded
    // as failed at once in the delivery log (which Viewers read), without the address; nothing is sent.
    let server = Server::start(&db, &[]).await;
    server
        .post(FEATURES, json!({"name": "after-restart"}))
        .await
        .expect(201);
    for id in [by_address, by_name] {
        let log = log_of(&server, id, 1).await;
        assert_eq!(log[0]["state"], "failed", "{}", log[0]);
        assert_eq!(log[0]["details"]["attempts"], 1, "{}", log[0]);
        let details = log[0]["stateDetails"].as_str().unwrap();
        assert!(details.contains("loopback"), "{details}");
        assert!(details.contains(ALLOW_PRIVATE), "{details}");
        assert!(
            !details.contains("127.0.0.1") && !details.contains(&port),
            "{details}"
        );
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.received("/address").is_empty());
    assert!(receiver.received("/name").is_empty());
}
