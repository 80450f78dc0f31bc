//! The gRPC channel between the control plane and its edges: every call needs an edge token, a scoped token
//! receives only its environment, a revoked token's stream ends, and the channel can run over TLS verified
//! against a given CA.

use std::time::{Duration, Instant};

use prost::Message;
use tonic::Code;
use vexil_proto::v1;
use vexil_proto::v1::snapshot_update::Update;
use vexil_proto::v1::snapshots_client::SnapshotsClient;
use vexil_proto::v1::usage_client::UsageClient;

use crate::database::TestDb;
use crate::processes::*;

/// A `Subscribe` call with `token` (if any) in the `authorization` metadata.
async fn subscribe(
    grpc: &str,
    token: Option<&str>,
    environments: &[&str],
) -> Result<tonic::Streaming<v1::SnapshotUpdate>, tonic::Status> {
    let mut client = SnapshotsClient::connect(grpc.to_owned())
        .await
        .expect("connect to the control plane's gRPC listener");
    let mut request = tonic::Request::new(v1::SubscribeRequest {
        edge_id: "channel-test".to_owned(),
        environments: environments.iter().map(|e| e.to_string()).collect(),
        last_revision: 0,
        edge_version: "test".to_owned(),
    });
    if let Some(token) = token {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ASCII"),
        );
    }
    client
        .subscribe(request)
        .await
        .map(tonic::Response::into_inner)
}

/// A `Report` call of an empty batch with `token` (if any).
async fn report(grpc: &str, token: Option<&str>) -> Result<v1::ReportAck, tonic::Status> {
    let mut client = UsageClient::connect(grpc.to_owned())
        .await
        .expect("connect to the control plane's gRPC listener");
    let mut request = tonic::Request::new(v1::UsageBatch {
        edge_id: "channel-test".to_owned(),
        batch_id: uuid_like(),
        edge_version: "test".to_owned(),
        ..Default::default()
    });
    if let Some(token) = token {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ASCII"),
        );
    }
    client
        .report(request)
        .await
        .map(tonic::Response::into_inner)
}

fn uuid_like() -> String {
    format!("batch-{}", fastrand::u64(..))
}

/// The first update of a stream, which must be a `Full`.
async fn first_full(stream: &mut tonic::Streaming<v1::SnapshotUpdate>) -> v1::Full {
    let message = tokio::time::timeout(Duration::from_secs(5), stream.message())
        .await
        .expect("an update within 5 s")
        .expect("no error")
        .expect("an update");
    match message.update {
        Some(Update::Full(full)) => full,
        other => panic!("expected a Full, got {other:?}"),
    }
}

fn environments_of(full: &v1::Full) -> Vec<&str> {
    full.environments
        .iter()
        .map(|e| e.environment.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_grpc_call_needs_a_valid_edge_token_within_its_scope() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let grpc = control_plane.grpc().to_owned();

    // No token, or a token of another kind: UNAUTHENTICATED, on both services.
    for token in [
        None,
        Some("*:*.not-a-token"),
        Some(ADMIN_TOKEN),
        Some(CLIENT_TOKEN),
        Some(FRONTEND_TOKEN),
    ] {
        let refused = subscribe(&grpc, token, &[]).await.expect_err("refused");
        assert_eq!(
            refused.code(),
            Code::Unauthenticated,
            "{token:?}: {refused}"
        );
        let refused = report(&grpc, token).await.expect_err("refused");
        assert_eq!(
            refused.code(),
            Code::Unauthenticated,
            "{token:?}: {refused}"
        );
    }

    // The start-up edge token: every environment, and no edge token among the grants it receives.
    let mut stream = subscribe(&grpc, Some(EDGE_TOKEN), &[])
        .await
        .expect("subscribed");
    let full = first_full(&mut stream).await;
    assert_eq!(environments_of(&full), ["development", "production"]);
    assert!(report(&grpc, Some(EDGE_TOKEN)).await.is_ok());

    // A token scoped to production, made on the admin API (secret shown once).
    let created = admin(
        &control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(serde_json::json!({"tokenName": "edge-prod", "type": "edge", "environment": "production"})),
    )
    .await;
    assert_eq!(created.status, 201);
    assert_eq!(created.body["type"], "edge");
    assert_eq!(created.body["environment"], "production");
    let scoped = created.body["secret"]
        .as_str()
        .expect("the secret")
        .to_owned();
    let hashes = [
        vexil_shared::token::sha256(EDGE_TOKEN).to_vec(),
        vexil_shared::token::sha256(&scoped).to_vec(),
    ];
    // Once published, it works; outside its environment it is PERMISSION_DENIED.
    let published = Instant::now();
    let mut scoped_stream = loop {
        match subscribe(&grpc, Some(&scoped), &["production"]).await {
            Ok(stream) => break stream,
            Err(status) => {
                assert_eq!(status.code(), Code::Unauthenticated, "{status}");
                assert!(
                    published.elapsed() < Duration::from_secs(2),
                    "the new edge token works within 2 s"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let full = first_full(&mut scoped_stream).await;
    assert_eq!(environments_of(&full), ["production"]);
    for asked in [&["development"][..], &["production", "development"]] {
        let refused = subscribe(&grpc, Some(&scoped), asked)
            .await
            .expect_err("refused");
        assert_eq!(
            refused.code(),
            Code::PermissionDenied,
            "{asked:?}: {refused}"
        );
    }
    // Asking for nothing in particular is asking for what the token allows.
    let mut everything_allowed = subscribe(&grpc, Some(&scoped), &[])
        .await
        .expect("subscribed");
    let full = first_full(&mut everything_allowed).await;
    assert_eq!(environments_of(&full), ["production"]);
    for grant in &full.tokens {
        assert!(
            !hashes.contains(&grant.sha256),
            "an edge token's grant was sent to an edge"
        );
    }

    // Edge tokens have no business on the control plane's admin and SDK APIs, nor on an edge's.
    let edge = Process::edge(&[&grpc], &[]);
    eventually(Duration::from_secs(10), "the edge is ready", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
    })
    .await;
    for path in [
        "/api/admin/projects",
        "/api/frontend",
        "/api/client/features",
    ] {
        let refused = get(&format!("{}{path}", control_plane.base), Some(EDGE_TOKEN)).await;
        assert_eq!(
            (refused.status, refused.body["name"].as_str()),
            (403, Some("NoAccessError")),
            "{path}: {}",
            refused.body
        );
    }
    for path in ["/api/frontend", "/api/client/features"] {
        let refused = get(&format!("{}{path}", edge.base), Some(EDGE_TOKEN)).await;
        assert_eq!(refused.status, 401, "{path} on the edge: {}", refused.body);
    }

    // Revoked: its open streams end within a second, UNAUTHENTICATED.
    admin(
        &control_plane,
        "DELETE",
        &format!("/api/admin/api-tokens/{scoped}"),
        None,
    )
    .await;
    let revoked = Instant::now();
    for stream in [&mut scoped_stream, &mut everything_allowed] {
        let ended = loop {
            let message = tokio::time::timeout(Duration::from_secs(1), stream.message())
                .await
                .expect("the stream ends within a second of the revocation");
            match message {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the stream ended without a status"),
                Err(status) => break status,
            }
        };
        assert_eq!(ended.code(), Code::Unauthenticated, "{ended}");
    }
    eprintln!(
        "the revocation ended the streams in {:?}",
        revoked.elapsed()
    );
    assert!(revoked.elapsed() < Duration::from_secs(1));
    let refused = subscribe(&grpc, Some(&scoped), &["production"])
        .await
        .expect_err("refused");
    assert_eq!(refused.code(), Code::Unauthenticated);
    // The start-up token's stream is untouched.
    assert!(report(&grpc, Some(EDGE_TOKEN)).await.is_ok());
    drop(stream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_needs_a_valid_token_unless_authentication_is_off() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    create_enabled_flag(&control_plane, "secret-plans").await;
    let without = Process::edge_with_token(&[control_plane.grpc()], None, &[]);
    let wrong = Process::edge_with_token(&[control_plane.grpc()], Some(CLIENT_TOKEN), &[]);
    let right = Process::edge(&[control_plane.grpc()], &[]);
    eventually(
        Duration::from_secs(10),
        "the edge with the token serves",
        || async { frontend_flags(&right).await.toggle_names() == ["secret-plans"] },
    )
    .await;
    // Several attempts later, the others still have nothing.
    tokio::time::sleep(Duration::from_secs(1)).await;
    for edge in [&without, &wrong] {
        assert_eq!(get(&format!("{}/ready", edge.base), None).await.status, 503);
    }

    // With `--auth-type none` the channel is open, like the admin API.
    let open_db = TestDb::sqlite().await;
    let open = Process::control_plane(&open_db.url, &["--auth-type", "none"]);
    let tokenless = Process::edge_with_token(&[open.grpc()], None, &[]);
    eventually(
        Duration::from_secs(10),
        "the edge without a token is ready",
        || async { get(&format!("{}/ready", tokenless.base), None).await.status == 200 },
    )
    .await;
    assert!(report(open.grpc(), None).await.is_ok());
}

/// A throwaway CA and a certificate it signed for 127.0.0.1 and localhost, as PEM files in `dir`:
/// `(ca.pem, server.pem, server.key)`.
fn certificates(dir: &std::path::Path) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "Vexil test CA");
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA certificate");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let server_key = rcgen::KeyPair::generate().expect("server key");
    let server_params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("server params");
    let server_cert = server_params
        .signed_by(&server_key, &issuer)
        .expect("server certificate");
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write a PEM file");
        path.to_str().expect("UTF-8 path").to_owned()
    };
    (
        write("ca.pem", ca_cert.pem()),
        write("server.pem", server_cert.pem()),
        write("server.key", server_key.serialize_pem()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edges_subscribe_over_tls_verified_against_the_given_ca() {
    let db = TestDb::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(dir.path());
    let control_plane =
        Process::control_plane(&db.url, &["--grpc-tls-cert", &cert, "--grpc-tls-key", &key]);
    let address = control_plane
        .grpc()
        .trim_start_matches("http://")
        .to_owned();
    let https = format!("https://{address}");
    create_enabled_flag(&control_plane, "over-tls").await;

    let trusting = Process::edge(
        &[&https],
        &["--upstream-ca", &ca, "--metrics-interval", "500ms"],
    );
    eventually(
        Duration::from_secs(10),
        "the edge serves over TLS",
        || async { frontend_flags(&trusting).await.toggle_names() == ["over-tls"] },
    )
    .await;
    // Its usage reports go over the same channel.
    let batches = eventually(
        Duration::from_secs(15),
        "a usage batch is acknowledged",
        || async {
            let text = get(
                &format!("{}/internal-backstage/prometheus", trusting.base),
                None,
            )
            .await
            .body
            .as_str()
            .unwrap_or_default()
            .to_owned();
            text.lines()
                .any(|line| line.starts_with("usage_batches_sent_total") && !line.ends_with(" 0"))
        },
    )
    .await;
    eprintln!("first usage batch over TLS after {batches:?}");

    // Not trusting the throwaway CA (the bundled roots), or speaking plain text to the TLS listener: nothing.
    let untrusting = Process::edge(&[&https], &[]);
    let plain = Process::edge(&[&format!("http://{address}")], &[]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    for edge in [&untrusting, &plain] {
        assert_eq!(get(&format!("{}/ready", edge.base), None).await.status, 503);
    }
}

/// A new token of `kind` for `environment` on the admin API; its secret.
async fn new_token(control_plane: &Process, kind: &str, environment: &str) -> String {
    let created = admin(
        control_plane,
        "POST",
        "/api/admin/api-tokens",
        Some(serde_json::json!({
            "tokenName": format!("{kind}-{environment}-{}", fastrand::u32(..)),
            "type": kind,
            "environment": environment,
        })),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.body["secret"]
        .as_str()
        .expect("the secret")
        .to_owned()
}

fn hash(secret: &str) -> Vec<u8> {
    vexil_shared::token::sha256(secret).to_vec()
}

fn hashes_of(grants: &[v1::TokenGrant]) -> std::collections::BTreeSet<Vec<u8>> {
    grants.iter().map(|grant| grant.sha256.clone()).collect()
}

/// The next delta of a stream (heartbeats skipped) that carries a token change.
async fn next_token_delta(stream: &mut tonic::Streaming<v1::SnapshotUpdate>) -> v1::Delta {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), stream.message())
            .await
            .expect("an update within 5 s")
            .expect("no error")
            .expect("an update");
        if let Some(Update::Delta(delta)) = message.update {
            if !delta.upserted_tokens.is_empty() || !delta.removed_tokens.is_empty() {
                return delta;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_receives_only_the_sdk_tokens_it_may_let_in() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let grpc = control_plane.grpc().to_owned();
    let production_client = new_token(&control_plane, "client", "production").await;
    let production_frontend = new_token(&control_plane, "frontend", "production").await;
    let admin_made = new_token(&control_plane, "admin", "*").await;
    let scoped = new_token(&control_plane, "edge", "production").await;
    let development_edge = new_token(&control_plane, "edge", "development").await;
    let development_sdk = [hash(CLIENT_TOKEN), hash(FRONTEND_TOKEN)];
    let never = [
        hash(ADMIN_TOKEN),
        hash(&admin_made),
        hash(EDGE_TOKEN),
        hash(&scoped),
        hash(&development_edge),
    ];

    // An edge for production: production's client and frontend tokens, nothing else.
    let mut stream = subscribe(&grpc, Some(&scoped), &[])
        .await
        .expect("subscribed");
    let full = first_full(&mut stream).await;
    assert_eq!(
        hashes_of(&full.tokens),
        [hash(&production_client), hash(&production_frontend)]
            .into_iter()
            .collect(),
        "the tokens a production edge receives"
    );

    // Later: a development token is made and one revoked, a production one made and one revoked; the
    // deltas carry the production ones only.
    let later_development = new_token(&control_plane, "client", "development").await;
    admin(
        &control_plane,
        "DELETE",
        &format!("/api/admin/api-tokens/{later_development}"),
        None,
    )
    .await;
    let later_admin = new_token(&control_plane, "admin", "*").await;
    admin(
        &control_plane,
        "DELETE",
        &format!("/api/admin/api-tokens/{later_admin}"),
        None,
    )
    .await;
    let later_production = new_token(&control_plane, "frontend", "production").await;
    let delta = next_token_delta(&mut stream).await;
    assert_eq!(
        (
            hashes_of(&delta.upserted_tokens),
            delta.removed_tokens.len()
        ),
        ([hash(&later_production)].into_iter().collect(), 0),
        "the first delta with tokens a production edge receives"
    );
    admin(
        &control_plane,
        "DELETE",
        &format!("/api/admin/api-tokens/{production_client}"),
        None,
    )
    .await;
    let delta = next_token_delta(&mut stream).await;
    assert!(delta.upserted_tokens.is_empty(), "{delta:?}");
    assert_eq!(delta.removed_tokens, [hash(&production_client)]);
    drop(stream);

    // An edge for every environment: every environment's SDK tokens, still no admin or edge token.
    let mut everything = subscribe(&grpc, Some(EDGE_TOKEN), &[])
        .await
        .expect("subscribed");
    let full = first_full(&mut everything).await;
    let received = hashes_of(&full.tokens);
    for expected in development_sdk
        .iter()
        .chain([hash(&production_frontend), hash(&later_production)].iter())
    {
        assert!(received.contains(expected), "an SDK token is missing");
    }
    for refused in &never {
        assert!(
            !received.contains(refused),
            "an admin or edge token was sent"
        );
    }
    // Asking for one environment with it: that environment's SDK tokens only.
    let mut development = subscribe(&grpc, Some(EDGE_TOKEN), &["development"])
        .await
        .expect("subscribed");
    let full = first_full(&mut development).await;
    assert_eq!(
        hashes_of(&full.tokens),
        development_sdk.iter().cloned().collect()
    );

    // A real edge for production keeps no admin or other environment's token in its cache file.
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("snapshot.bin");
    let edge = Process::edge_with_token(
        &[&grpc],
        Some(&scoped),
        &["--snapshot-cache", cache.to_str().unwrap()],
    );
    eventually(Duration::from_secs(10), "the edge is ready", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
    })
    .await;
    let cached = eventually_read(&cache).await;
    let kept = v1::Full::decode(&cached[..]).expect("a Full");
    assert_eq!(
        hashes_of(&kept.tokens),
        [hash(&production_frontend), hash(&later_production)]
            .into_iter()
            .collect()
    );
    for secret in [
        ADMIN_TOKEN,
        admin_made.as_str(),
        CLIENT_TOKEN,
        FRONTEND_TOKEN,
    ] {
        let refused = hash(secret);
        assert!(
            !cached
                .windows(refused.len())
                .any(|window| window == refused),
            "the cache file holds the hash of a token the edge may not let in"
        );
    }
    // The edge answers 401 (unknown) to the admin token, as to any token it does not know.
    let refused = get(
        &format!("{}/api/client/features", edge.base),
        Some(ADMIN_TOKEN),
    )
    .await;
    assert_eq!(refused.status, 401, "{}", refused.body);
}

/// The cache file's bytes, once the edge wrote it.
async fn eventually_read(path: &std::path::Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    eventually(Duration::from_secs(5), "the cache file is written", || {
        let read = std::fs::read(path).unwrap_or_default();
        let written = !read.is_empty();
        bytes = read;
        async move { written }
    })
    .await;
    bytes
}
