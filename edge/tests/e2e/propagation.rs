//! A write on the admin API reaches the edges; an edge restarted while the control plane is down serves
//! from its cache file; a revoked or expired token is refused within a second.

use std::time::Duration;

use sqlx::{AnyConnection, Connection};

use vexil_proto::v1;

use crate::database::TestDb;
use crate::processes::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_change_on_the_admin_api_is_served_by_two_edges() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let edges = [
        Process::edge(&[control_plane.grpc()], &[]),
        Process::edge(&[control_plane.grpc()], &[]),
    ];
    for edge in &edges {
        eventually(Duration::from_secs(10), "edge ready", || async {
            get(&format!("{}/ready", edge.base), None).await.status == 200
        })
        .await;
        assert!(frontend_flags(edge).await.toggle_names().is_empty());
    }

    create_enabled_flag(&control_plane, "checkout").await;
    // The control plane's own frontend API (single-binary installs) follows the same publisher.
    eventually(
        Duration::from_secs(2),
        "the control plane serves the new flag",
        || async { frontend_flags(&control_plane).await.toggle_names() == ["checkout"] },
    )
    .await;
    let revision = revision_of(&control_plane).await;
    for edge in &edges {
        eventually(
            Duration::from_secs(2),
            "the edge serves the new flag",
            || async { frontend_flags(edge).await.toggle_names() == ["checkout"] },
        )
        .await;
        assert_eq!(revision_of(edge).await, revision);
        let client = get(
            &format!("{}/api/client/features", edge.base),
            Some(CLIENT_TOKEN),
        )
        .await;
        assert_eq!(client.status, 200);
        assert_eq!(client.body["features"][0]["name"], "checkout");
        assert_eq!(client.body["features"][0]["enabled"], true);
    }

    // Off again: the edges follow.
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/default/features/checkout/environments/development/off",
        None,
    )
    .await;
    for edge in &edges {
        eventually(
            Duration::from_secs(2),
            "the edge serves the flag off",
            || async { frontend_flags(edge).await.toggle_names().is_empty() },
        )
        .await;
    }
    let metrics = get(
        &format!("{}/internal-backstage/prometheus", edges[0].base),
        None,
    )
    .await;
    let text = metrics.body.as_str().unwrap_or_default().to_owned();
    assert!(text.contains("upstream_connected 1"), "{text}");
    assert!(text.contains("snapshot_revision"), "{text}");
    assert!(text.contains("http_requests_total"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_restarted_while_the_control_plane_is_down_serves_its_cache() {
    let db = TestDb::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("snapshot.bin");
    let cache = cache.to_str().unwrap();
    let mut control_plane = Process::control_plane(&db.url, &[]);
    let upstream = control_plane.grpc().to_owned();
    let mut edge = Process::edge(&[&upstream], &["--snapshot-cache", cache]);
    create_enabled_flag(&control_plane, "cached").await;
    eventually(
        Duration::from_secs(5),
        "the edge serves the flag",
        || async { frontend_flags(&edge).await.toggle_names() == ["cached"] },
    )
    .await;
    control_plane.kill();
    // Still serving while disconnected.
    assert_eq!(frontend_flags(&edge).await.toggle_names(), ["cached"]);
    edge.kill();

    let edge = Process::edge(&[&upstream], &["--snapshot-cache", cache]);
    assert_eq!(get(&format!("{}/ready", edge.base), None).await.status, 200);
    assert_eq!(frontend_flags(&edge).await.toggle_names(), ["cached"]);
    let metrics = get(
        &format!("{}/internal-backstage/prometheus", edge.base),
        None,
    )
    .await;
    assert!(metrics
        .body
        .as_str()
        .unwrap_or_default()
        .contains("upstream_connected 0"));

    // Without a cache and without an upstream, the edge is not ready.
    let empty = Process::edge(&[&upstream], &[]);
    let ready = get(&format!("{}/ready", empty.base), None).await;
    assert_eq!(ready.status, 503);
    assert_eq!(ready.body["name"], "ServiceUnavailableError");
}

/// The flag names of an edge's client API answer to `query`.
async fn client_names(edge: &Process, query: &str) -> Vec<String> {
    let answer = get(
        &format!("{}/api/client/features{query}", edge.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    assert_eq!(answer.status, 200, "{query}: {}", answer.body);
    answer.body["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A flag's tags and its dependency reach an edge: the edge's client API filters by `?tag=`, lists the
/// dependency, and its frontend API answers by it; after a restart from its cache file, still.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_and_dependencies_reach_the_edges() {
    let db = TestDb::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("snapshot.bin");
    let cache = cache.to_str().unwrap();
    let mut control_plane = Process::control_plane(&db.url, &[]);
    let upstream = control_plane.grpc().to_owned();
    let mut edge = Process::edge(&[&upstream], &["--snapshot-cache", cache]);
    for name in ["parent", "child", "plain"] {
        create_enabled_flag(&control_plane, name).await;
    }
    admin(
        &control_plane,
        "POST",
        "/api/admin/features/child/tags",
        Some(serde_json::json!({"type": "simple", "value": "checkout"})),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/default/features/child/dependencies",
        Some(serde_json::json!({"feature": "parent"})),
    )
    .await;
    eventually(
        Duration::from_secs(5),
        "the edge filters by the tag",
        || async {
            // 503 until the edge has its first snapshot (it may start before the control plane answers).
            let answer = get(
                &format!("{}/api/client/features?tag=simple:checkout", edge.base),
                Some(CLIENT_TOKEN),
            )
            .await;
            answer.status == 200
                && answer.body["features"][0]["name"] == "child"
                && answer.body["features"].as_array().map(Vec::len) == Some(1)
        },
    )
    .await;
    assert_eq!(client_names(&edge, "").await, ["child", "parent", "plain"]);
    let child = get(
        &format!("{}/api/client/features/child", edge.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    assert_eq!(
        child.body["dependencies"],
        serde_json::json!([{"feature": "parent", "enabled": true}])
    );
    assert!(child.body.get("tags").is_none(), "{}", child.body);
    assert_eq!(
        frontend_flags(&edge).await.toggle_names(),
        ["child", "parent", "plain"]
    );
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/default/features/parent/environments/development/off",
        None,
    )
    .await;
    eventually(
        Duration::from_secs(5),
        "the edge answers the child by its parent",
        || async { frontend_flags(&edge).await.toggle_names() == ["plain"] },
    )
    .await;
    // The cache file is written off the update path: wait for the parent's switch to be in it.
    eventually(
        Duration::from_secs(5),
        "the cache file holds the parent off",
        || async {
            let Ok(bytes) = std::fs::read(cache) else {
                return false;
            };
            let Ok(full) = <v1::Full as prost::Message>::decode(&bytes[..]) else {
                return false;
            };
            full.environments
                .iter()
                .filter(|e| e.environment == "development")
                .flat_map(|e| &e.features)
                .any(|f| f.name == "parent" && !f.enabled)
        },
    )
    .await;

    control_plane.kill();
    edge.kill();
    let edge = Process::edge(&[&upstream], &["--snapshot-cache", cache]);
    assert_eq!(get(&format!("{}/ready", edge.base), None).await.status, 200);
    assert_eq!(client_names(&edge, "?tag=simple:checkout").await, ["child"]);
    assert_eq!(frontend_flags(&edge).await.toggle_names(), ["plain"]);
}

/// Changes the token row the way the token API does: the row and a revision bump in one transaction.
async fn change_token(db: &TestDb, statement: &str) {
    sqlx::any::install_default_drivers();
    let mut conn = AnyConnection::connect(&db.url).await.expect("connect");
    let mut tx = conn.begin().await.unwrap();
    sqlx::query(statement)
        .bind(vexil_shared::token::sha256_hex(FRONTEND_TOKEN))
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("UPDATE vexil_counters SET value = value + 1 WHERE name = 'revision'")
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// The revision the edge serves, from its frontend answer's header.
async fn revision_of(edge: &Process) -> u64 {
    frontend_flags(edge)
        .await
        .header("x-vexil-revision")
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_or_expired_token_is_refused_by_the_edge_within_a_second() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    eventually(Duration::from_secs(10), "the token works", || async {
        frontend_flags(&edge).await.status == 200
    })
    .await;

    // Expiring in a moment (the token API's PUT): refused once the moment passes, with nothing else happening.
    let before = revision_of(&edge).await;
    let soon = (chrono::Utc::now() + chrono::Duration::milliseconds(1500))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let token_path = format!("/api/admin/api-tokens/{FRONTEND_TOKEN}");
    admin(
        &control_plane,
        "PUT",
        &token_path,
        Some(serde_json::json!({"expiresAt": soon})),
    )
    .await;
    eventually(
        Duration::from_secs(1),
        "the expiry reaches the edge",
        || async { revision_of(&edge).await > before },
    )
    .await;
    assert_eq!(frontend_flags(&edge).await.status, 200, "not expired yet");
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let expired = frontend_flags(&edge).await;
    assert_eq!(expired.status, 401, "{}", expired.body);
    assert_eq!(expired.body["name"], "AuthenticationRequired");

    // Valid again (a row change made outside the API, with its revision bump), then revoked on the API.
    change_token(
        &db,
        "UPDATE api_tokens SET expires_at = NULL WHERE secret_hash = $1",
    )
    .await;
    eventually(Duration::from_secs(1), "the token works again", || async {
        frontend_flags(&edge).await.status == 200
    })
    .await;
    admin(&control_plane, "DELETE", &token_path, None).await;
    let took = eventually(
        Duration::from_secs(1),
        "the revoked token is refused",
        || async { frontend_flags(&edge).await.status == 401 },
    )
    .await;
    eprintln!("revocation reached the edge in {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_frontend_api_switch_and_token_kinds_reach_the_edges() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &["--frontend-api-enabled", "false"]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    eventually(Duration::from_secs(10), "edge ready", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
    })
    .await;
    for process in [&control_plane, &edge] {
        let off = frontend_flags(process).await;
        assert_eq!(off.status, 404, "{}", off.body);
        assert_eq!(off.body["name"], "NotFoundError");
        // Before auth: no token gets 404 too.
        let anonymous = get(&format!("{}/api/frontend", process.base), None).await;
        assert_eq!(anonymous.status, 404);
        // Admin and frontend tokens on the client API: 403; no token: 401. An edge never receives admin
        // tokens, so it answers 401 to one, as to any token it does not know.
        let url = format!("{}/api/client/features", process.base);
        let admin_status = if process.grpc.is_some() { 403 } else { 401 };
        for (token, status) in [(ADMIN_TOKEN, admin_status), (FRONTEND_TOKEN, 403)] {
            let refused = get(&url, Some(token)).await;
            assert_eq!(refused.status, status, "{}", refused.body);
        }
        assert_eq!(get(&url, None).await.status, 401);
        assert_eq!(get(&url, Some(CLIENT_TOKEN)).await.status, 200);
    }
}

/// The `Access-Control-Allow-Origin` a process answers to a CORS preflight of the frontend API from `origin`.
async fn allowed_origin(process: &Process, origin: &str) -> Option<String> {
    let answer = request(
        "OPTIONS",
        &format!("{}/api/frontend", process.base),
        None,
        &[("Origin", origin), ("Access-Control-Request-Method", "GET")],
        None,
    )
    .await;
    assert_eq!(answer.status, 204);
    answer
        .header("access-control-allow-origin")
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allowed_origins_set_on_the_control_plane_reach_the_edges() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("snapshot.bin");
    let cache = cache.to_str().unwrap();
    let mut edge = Process::edge(&[control_plane.grpc()], &["--snapshot-cache", cache]);
    eventually(Duration::from_secs(10), "edge ready", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
    })
    .await;
    assert_eq!(
        allowed_origin(&edge, "https://evil.example")
            .await
            .as_deref(),
        Some("*")
    );

    admin(
        &control_plane,
        "POST",
        "/api/admin/ui-config",
        Some(serde_json::json!({"frontendSettings": {"frontendApiOrigins": ["https://app.example"]}})),
    )
    .await;
    eventually(
        Duration::from_secs(2),
        "the edge allows only the new origin",
        || async {
            allowed_origin(&edge, "https://app.example")
                .await
                .as_deref()
                == Some("https://app.example")
        },
    )
    .await;
    assert_eq!(allowed_origin(&edge, "https://evil.example").await, None);
    // A real request answers the same way, and the control plane's own frontend API agrees.
    let answer = request(
        "GET",
        &format!("{}/api/frontend", edge.base),
        Some(FRONTEND_TOKEN),
        &[("Origin", "https://app.example")],
        None,
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert_eq!(
        allowed_origin(&control_plane, "https://evil.example").await,
        None
    );

    // The origins are part of the snapshot the edge caches: a restart without the control plane keeps them.
    // The cache file is written in the background: the edge is killed once it holds them.
    eventually(
        Duration::from_secs(5),
        "the cache file holds the origins",
        || async {
            let bytes = std::fs::read(cache).unwrap_or_default();
            <v1::Full as prost::Message>::decode(&bytes[..])
                .ok()
                .and_then(|full| full.settings)
                .is_some_and(|settings| settings.frontend_api_origins == ["https://app.example"])
        },
    )
    .await;
    edge.kill();
    drop(control_plane);
    let edge = Process::edge(&["http://127.0.0.1:9"], &["--snapshot-cache", cache]);
    assert_eq!(
        allowed_origin(&edge, "https://app.example")
            .await
            .as_deref(),
        Some("https://app.example")
    );
    assert_eq!(allowed_origin(&edge, "https://evil.example").await, None);
}
