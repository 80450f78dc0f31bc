//! Webhook addons: CRUD, validation, permissions and masking, and private or link-local targets refused.
//! (Deliveries are in `addon_deliveries.rs`.)

use crate::access::user_with_pat;
use crate::addon_deliveries::{always_ok, log_of, Receiver, ALLOW_PRIVATE};
use crate::database::TestDb;
use crate::server::{assert_error_body, Server, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::time::Duration;

crate::on_sqlite_and_postgres!(
    addons_crud_validation_permissions_and_masking,
    private_and_link_local_targets_are_refused,
);

pub(crate) const ADDONS: &str = "/api/admin/addons";
pub(crate) const FEATURES: &str = "/api/admin/projects/default/features";
pub(crate) const SECRET_AUTHORIZATION: &str = "Bearer receiver-secret-4711";
pub(crate) const SIGNING_SECRET: &str = "signing-secret-0815";

pub(crate) fn webhook(url: &str, events: Value) -> Value {
    json!({
        "provider": "webhook",
        "description": "to the receiver",
        "enabled": true,
        "parameters": {"url": url},
        "events": events,
    })
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
