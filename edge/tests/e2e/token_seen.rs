//! A token's "last used" through an edge: a frontend token used only on the edge's `/api/frontend` gets its
//! `seenAt` on the control plane's admin API once the edge's usage batch (which carries the hashes of the
//! tokens it saw, never a secret) is ingested; an unused token keeps `null`. The control plane's own
//! `--token-seen-interval` is long here, so only the edge's report can have written it.

use std::time::Duration;

use serde_json::Value;

use crate::database::TestDb;
use crate::processes::*;

crate::on_sqlite_and_postgres!(a_token_used_on_an_edge_gets_seen_at_on_the_control_plane,);

async fn seen_at(control_plane: &Process, name: &str) -> Value {
    let list = admin(control_plane, "GET", "/api/admin/api-tokens", None).await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    list.body["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .find(|token| token["tokenName"] == name)
        .unwrap_or_else(|| panic!("no token {name}"))["seenAt"]
        .clone()
}

async fn a_token_used_on_an_edge_gets_seen_at_on_the_control_plane(db: TestDb) {
    let control_plane = Process::control_plane(&db.url, &["--token-seen-interval", "60m"]);
    let edge = Process::edge(&[control_plane.grpc()], &["--metrics-interval", "200ms"]);
    assert!(seen_at(&control_plane, "init-frontend-token-1")
        .await
        .is_null());
    eventually(
        Duration::from_secs(20),
        "the edge answers /api/frontend",
        || async { frontend_flags(&edge).await.status == 200 },
    )
    .await;
    eventually(
        Duration::from_secs(20),
        "the frontend token used on the edge has a seenAt on the control plane",
        || async {
            seen_at(&control_plane, "init-frontend-token-1")
                .await
                .is_string()
        },
    )
    .await;
    let at = seen_at(&control_plane, "init-frontend-token-1").await;
    let at = chrono::DateTime::parse_from_rfc3339(at.as_str().unwrap()).expect("RFC 3339");
    let age = chrono::Utc::now().signed_duration_since(at);
    assert!(
        (0..60_000).contains(&age.num_milliseconds()),
        "seen {age} ago"
    );
    assert!(
        seen_at(&control_plane, "init-client-token-1")
            .await
            .is_null(),
        "the client token was not used"
    );
}
