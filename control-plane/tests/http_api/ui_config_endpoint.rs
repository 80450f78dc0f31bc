//! The ui-config round trip through the real binary, on SQLite and Postgres: its fields, the frontend API
//! origins down to the CORS answer, bad input, who may write it, and password sign-in off.

use crate::access::user_with_pat;
use crate::change_requests::{as_user, event_count, events_of_type};
use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;
use std::time::Duration;

crate::on_sqlite_and_postgres!(ui_config_round_trip);

async fn ui_config_round_trip(db: TestDb) {
    let mut server = Server::start(&db, &["--limit-segment-values", "77"]).await;
    let config = server.get("/api/admin/ui-config").await.expect(200).clone();
    for field in [
        "slogan",
        "name",
        "version",
        "environment",
        "serviceUrl",
        "unleashUrl",
        "baseUriPath",
        "feedbackUriPath",
        "disablePasswordAuth",
        "emailEnabled",
        "maintenanceMode",
        "segmentValuesLimit",
        "strategySegmentsLimit",
        "resourceLimits",
        "networkViewEnabled",
        "frontendApiOrigins",
        "flags",
        "links",
        "authenticationType",
        "versionInfo",
        "oidcConfiguredThroughEnv",
        "samlConfiguredThroughEnv",
    ] {
        assert!(
            config.get(field).is_some(),
            "ui-config lacks {field}: {config}"
        );
    }
    assert_eq!(config["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(config["environment"], "Open Source");
    assert_eq!(config["baseUriPath"], "");
    assert_eq!(config["authenticationType"], "open-source");
    assert_eq!(config["disablePasswordAuth"], false);
    assert_eq!(config["flags"], json!({}));
    assert_eq!(config["frontendApiOrigins"], json!(["*"]));
    assert_eq!(config["resourceLimits"]["segmentValues"], 77);
    assert_eq!(config["resourceLimits"]["featureFlags"], 5000);
    assert_eq!(config["segmentValuesLimit"], 77);
    assert_eq!(config["serviceUrl"], server.base);
    assert_eq!(config["serviceUrl"], config["unleashUrl"]);
    let info = &config["versionInfo"];
    assert_eq!(info["latest"], json!({}));
    assert_eq!(info["isLatest"], true);
    assert_eq!(info["current"]["enterprise"], "");
    let oss = info["current"]["oss"].as_str().unwrap();
    assert!(
        oss == "unknown" || (oss.len() == 40 && oss.bytes().all(|b| b.is_ascii_hexdigit())),
        "{oss}"
    );
    assert_eq!(
        uuid::Uuid::parse_str(info["instanceId"].as_str().unwrap())
            .unwrap()
            .get_version_num(),
        4
    );

    // Set: normalised, shown, one event; the control plane's own frontend API answers by the new list.
    let set = server
        .post(
            "/api/admin/ui-config",
            json!({"frontendSettings": {"frontendApiOrigins": ["https://App.example.com/", "http://localhost:3000"]}}),
        )
        .await;
    assert_eq!(set.status, 200);
    let expected = json!(["https://app.example.com", "http://localhost:3000"]);
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["frontendApiOrigins"],
        expected
    );
    let events = events_of_type(&server, "setting-updated").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"], json!({"frontendApiOrigins": expected}));
    assert_eq!(events[0]["preData"], json!({"frontendApiOrigins": ["*"]}));
    let allowed = |origin: &'static str| {
        let server = &server;
        async move {
            let response = server
                .client
                .request(
                    reqwest::Method::OPTIONS,
                    format!("{}/api/frontend", server.base),
                )
                .header("Origin", origin)
                .header("Access-Control-Request-Method", "GET")
                .send()
                .await
                .unwrap();
            response
                .headers()
                .get("access-control-allow-origin")
                .map(|value| value.to_str().unwrap().to_owned())
        }
    };
    let mut waited = 0;
    while allowed("https://app.example.com").await.as_deref() != Some("https://app.example.com") {
        waited += 1;
        assert!(
            waited < 50,
            "the control plane's frontend API never used the new origins"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(allowed("https://evil.example.com").await, None);

    // Bad input: 400, nothing changes.
    let before = event_count(&server).await;
    for body in [
        json!({"frontendSettings": {"frontendApiOrigins": ["not a url"]}}),
        json!({"frontendSettings": {"frontendApiOrigins": ["https://example.com/path"]}}),
        json!({"frontendSettings": {"frontendApiOrigins": []}}),
        json!({"frontendSettings": {}}),
        json!({}),
    ] {
        server
            .post("/api/admin/ui-config", body)
            .await
            .expect_error(400, "ValidationError");
    }
    for body in [json!({}), json!({"frontendApiOrigins": ["ftp//x"]})] {
        server
            .post("/api/admin/ui-config/cors", body)
            .await
            .expect_error(400, "ValidationError");
    }
    assert_eq!(event_count(&server).await, before);

    // Editors and Viewers read it but may not write it.
    let (_, editor) = user_with_pat(&server, "ed", "Editor").await;
    as_user(&server, "GET", "/api/admin/ui-config", None, &editor)
        .await
        .expect(200);
    as_user(
        &server,
        "POST",
        "/api/admin/ui-config",
        Some(json!({"frontendSettings": {"frontendApiOrigins": ["*"]}})),
        &editor,
    )
    .await
    .expect_error(403, "NoAccessError");

    // The 8.x alias: 204; back to every origin.
    let cors = server
        .post(
            "/api/admin/ui-config/cors",
            json!({"frontendApiOrigins": ["*"]}),
        )
        .await;
    assert_eq!(cors.status, 204);
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["frontendApiOrigins"],
        json!(["*"])
    );
    let mut waited = 0;
    while allowed("https://evil.example.com").await.as_deref() != Some("*") {
        waited += 1;
        assert!(
            waited < 50,
            "the control plane's frontend API never allowed every origin again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(events_of_type(&server, "setting-updated").await.len(), 2);

    // Password sign-in off: reported.
    server.kill();
    let server = Server::start(&db, &["--disable-password-auth"]).await;
    let config = server.get("/api/admin/ui-config").await.expect(200).clone();
    assert_eq!(config["disablePasswordAuth"], true);
    assert_eq!(config["resourceLimits"]["segmentValues"], 1000);
    assert_eq!(config["frontendApiOrigins"], json!(["*"]));
}
