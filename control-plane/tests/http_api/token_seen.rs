//! Tokens' "last used" (`seenAt`): noted in memory when a token authenticates on the control plane (admin
//! API, SDK routes, gRPC) and written once per `--token-seen-interval`; reported by edges in their usage
//! batches (by hash), moving only forwards and never past the control plane's now; shown on the API tokens
//! page and the profile's token list. (An edge reporting a token used on it: `edge/tests/e2e/token_seen.rs`.)

use std::time::Duration;

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, CLIENT_TOKEN, EDGE_TOKEN, FRONTEND_TOKEN};
use crate::ui_browser::Browser;
use serde_json::Value;
use vexil_proto::v1;
use vexil_proto::v1::usage_client::UsageClient;
use vexil_shared::token::sha256;

crate::on_sqlite_and_postgres!(
    tokens_used_on_the_control_plane_get_seen_at_after_the_flush,
    edge_reports_move_seen_at_forwards_only,
);

/// `seenAt` of the API token named `name` (as the admin API lists it).
async fn seen_at(server: &Server, name: &str) -> Value {
    let list = server
        .get("/api/admin/api-tokens")
        .await
        .expect(200)
        .clone();
    let token = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|token| token["tokenName"] == name)
        .unwrap_or_else(|| panic!("no token {name} in {list}"))
        .clone();
    token["seenAt"].clone()
}

/// Waits (up to 10 s) until the token named `name` has a `seenAt`, and returns it.
async fn wait_for_seen_at(server: &Server, name: &str) -> String {
    for _ in 0..100 {
        if let Value::String(at) = seen_at(server, name).await {
            return at;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} has no seenAt after 10 s");
}

/// `2026-11-24T09:30:12.345Z` as the UI writes it: `2026-11-24 09:30 UTC`.
fn as_shown(at: &str) -> String {
    format!("{} {} UTC", &at[..10], &at[11..16])
}

/// The table row of the UI page `page` whose first cell names `name`.
fn row_of<'p>(page: &'p str, name: &str) -> &'p str {
    let at = page
        .find(&format!("<strong>{name}</strong>"))
        .unwrap_or_else(|| panic!("no row {name} in {page}"));
    let end = page[at..].find("</tr>").unwrap() + at;
    &page[at..end]
}

async fn tokens_used_on_the_control_plane_get_seen_at_after_the_flush(db: TestDb) {
    let server = Server::start(
        &db,
        &[
            "--token-seen-interval",
            "200ms",
            "--init-edge-tokens",
            EDGE_TOKEN,
        ],
    )
    .await;
    let before = server
        .get("/api/admin/api-tokens")
        .await
        .expect(200)
        .clone();
    for token in before["tokens"].as_array().unwrap() {
        if token["tokenName"] != "init-admin-token-1" {
            assert!(token["seenAt"].is_null(), "never used yet: {token}");
        }
    }
    // The frontend token on the control plane's own SDK routes; the edge token on its gRPC channel.
    let frontend = server
        .send("GET", "/api/frontend", None, Some(FRONTEND_TOKEN))
        .await;
    assert_eq!(frontend.status, 200);
    let channel = tonic::transport::Endpoint::from_shared(server.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let authorization: tonic::metadata::MetadataValue<_> =
        format!("Bearer {EDGE_TOKEN}").parse().unwrap();
    let mut usage =
        UsageClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
            Ok(request)
        });
    usage
        .report(v1::UsageBatch {
            edge_id: "edge-t".to_owned(),
            batch_id: "b1".to_owned(),
            ..v1::UsageBatch::default()
        })
        .await
        .unwrap();
    let frontend_seen = wait_for_seen_at(&server, "init-frontend-token-1").await;
    let edge_seen = wait_for_seen_at(&server, "init-edge-token-1").await;
    let admin_seen = wait_for_seen_at(&server, "init-admin-token-1").await;
    let created = before["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|token| token["tokenName"] == "init-frontend-token-1")
        .unwrap()["createdAt"]
        .as_str()
        .unwrap()
        .to_owned();
    for at in [&frontend_seen, &edge_seen, &admin_seen] {
        assert!(at.as_str() >= created.as_str(), "{at} before {created}");
        assert!(at.ends_with('Z') && at.len() == 24, "{at}");
    }
    assert!(
        seen_at(&server, "init-client-token-1").await.is_null(),
        "the client token was never used"
    );

    // A personal access token: listed with seenAt once it was used.
    let (_, pat) = user_with_pat(&server, "alice", "Admin").await;
    let pats = server
        .send("GET", "/api/admin/user/tokens", None, Some(&pat))
        .await
        .expect(200)
        .clone();
    assert!(pats["pats"][0]["seenAt"].is_null(), "{pats}");
    let mut pat_seen = None;
    for _ in 0..100 {
        let pats = server
            .send("GET", "/api/admin/user/tokens", None, Some(&pat))
            .await
            .expect(200)
            .clone();
        if let Value::String(at) = &pats["pats"][0]["seenAt"] {
            pat_seen = Some(at.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pat_seen = pat_seen.expect("the PAT has a seenAt after 10 s");

    // The UI: "Last used" on the API tokens page and the profile.
    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[("username", "alice"), ("password", "correct horse battery")])
        .await;
    let tokens = browser.page("/admin/api").await;
    assert!(tokens.contains(">Last used</th>"), "{tokens}");
    let client_row = row_of(&tokens, "init-client-token-1");
    assert!(client_row.contains(">never</span>"), "{client_row}");
    let frontend_seen = seen_at(&server, "init-frontend-token-1").await;
    let frontend_row = row_of(&tokens, "init-frontend-token-1");
    assert!(
        frontend_row.contains(&as_shown(frontend_seen.as_str().unwrap())),
        "{frontend_row}"
    );
    let profile = browser.page("/profile").await;
    assert!(profile.contains(">Last used</th>"), "{profile}");
    let pat_row = row_of(&profile, "tests");
    assert!(pat_row.contains(&as_shown(&pat_seen)), "{pat_row}");
}

async fn edge_reports_move_seen_at_forwards_only(db: TestDb) {
    // A long interval: only the edge's reports write here.
    let server = Server::start(
        &db,
        &[
            "--token-seen-interval",
            "60m",
            "--init-edge-tokens",
            EDGE_TOKEN,
        ],
    )
    .await;
    let channel = tonic::transport::Endpoint::from_shared(server.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let authorization: tonic::metadata::MetadataValue<_> =
        format!("Bearer {EDGE_TOKEN}").parse().unwrap();
    let mut usage =
        UsageClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
            Ok(request)
        });
    let report = |batch_id: &str, tokens_seen: Vec<v1::TokenSeen>| v1::UsageBatch {
        edge_id: "edge-t".to_owned(),
        batch_id: batch_id.to_owned(),
        tokens_seen,
        ..v1::UsageBatch::default()
    };
    let seen = |secret: &str, seen_at_ms: i64| v1::TokenSeen {
        sha256: sha256(secret).to_vec(),
        seen_at_ms,
    };
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };

    // Not a SHA-256: refused, nothing written.
    let status = usage
        .report(report(
            "bad",
            vec![v1::TokenSeen {
                sha256: vec![1; 31],
                seen_at_ms: now_ms(),
            }],
        ))
        .await
        .expect_err("refused");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(
        status
            .message()
            .starts_with("tokens_seen[0].sha256 must be 32 bytes"),
        "{status:?}"
    );
    assert!(seen_at(&server, "init-client-token-1").await.is_null());

    // A use an hour ahead of the control plane's clock is dated now; an unknown hash changes nothing.
    let before_ms = now_ms();
    usage
        .report(report(
            "b1",
            vec![
                seen(CLIENT_TOKEN, before_ms + 3_600_000),
                seen("not-a-token", before_ms),
            ],
        ))
        .await
        .unwrap();
    let after_ms = now_ms();
    let first = seen_at(&server, "init-client-token-1").await;
    let first = first.as_str().expect("seenAt written with the batch");
    let first_ms = chrono::DateTime::parse_from_rfc3339(first)
        .unwrap()
        .timestamp_millis();
    assert!(
        (before_ms..=after_ms).contains(&first_ms),
        "{first} not within the report"
    );
    // An older use does not move it back.
    usage
        .report(report("b2", vec![seen(CLIENT_TOKEN, before_ms - 60_000)]))
        .await
        .unwrap();
    assert_eq!(seen_at(&server, "init-client-token-1").await, first);
    assert!(seen_at(&server, "init-frontend-token-1").await.is_null());
}
