//! Settings reach an edge that resumes: a control plane restarted with other start flags (same database, so
//! the same revision) and origins changed while the edge was away both apply within a second of the edge
//! resubscribing.

use std::time::Duration;

use crate::database::TestDb;
use crate::processes::*;

/// The status of the edge's frontend API for the frontend token.
async fn frontend_status(edge: &Process) -> u16 {
    frontend_flags(edge).await.status
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
    answer
        .header("access-control-allow-origin")
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_frontend_api_switch_of_a_restarted_control_plane_reaches_a_resuming_edge() {
    let db = TestDb::sqlite().await;
    let mut control_plane = Process::control_plane(&db.url, &[]);
    let grpc_address = control_plane
        .grpc()
        .trim_start_matches("http://")
        .to_owned();
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    eventually(Duration::from_secs(10), "the edge serves", || async {
        frontend_status(&edge).await == 200
    })
    .await;

    // Same database, same revision: only the start flag differs.
    control_plane.kill();
    let mut control_plane =
        Process::control_plane_at(&db.url, &grpc_address, &["--frontend-api-enabled", "false"]);
    assert_eq!(frontend_status(&control_plane).await, 404);
    let took = eventually(
        Duration::from_secs(1),
        "the resuming edge turns the frontend API off",
        || async { frontend_status(&edge).await == 404 },
    )
    .await;
    eprintln!("the switch reached the resuming edge in {took:?}");

    // And back on.
    control_plane.kill();
    let _control_plane = Process::control_plane_at(&db.url, &grpc_address, &[]);
    eventually(
        Duration::from_secs(1),
        "the resuming edge turns the frontend API on again",
        || async { frontend_status(&edge).await == 200 },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_set_while_an_edge_was_away_reach_it_when_it_resumes() {
    let db = TestDb::sqlite().await;
    let mut control_plane = Process::control_plane(&db.url, &[]);
    let grpc_address = control_plane
        .grpc()
        .trim_start_matches("http://")
        .to_owned();
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    eventually(Duration::from_secs(10), "the edge serves", || async {
        frontend_status(&edge).await == 200
    })
    .await;
    assert_eq!(
        allowed_origin(&edge, "https://evil.example")
            .await
            .as_deref(),
        Some("*")
    );

    // The edge cannot reach this one (its gRPC listener is elsewhere) while the origins change.
    control_plane.kill();
    let mut elsewhere = Process::control_plane(&db.url, &[]);
    admin(
        &elsewhere,
        "POST",
        "/api/admin/ui-config",
        Some(serde_json::json!({"frontendSettings": {"frontendApiOrigins": ["https://app.example"]}})),
    )
    .await;
    elsewhere.kill();
    assert_eq!(
        allowed_origin(&edge, "https://evil.example")
            .await
            .as_deref(),
        Some("*"),
        "the edge was away"
    );

    let _control_plane = Process::control_plane_at(&db.url, &grpc_address, &[]);
    eventually(
        Duration::from_secs(1),
        "the resuming edge allows only the new origin",
        || async {
            allowed_origin(&edge, "https://app.example")
                .await
                .as_deref()
                == Some("https://app.example")
                && allowed_origin(&edge, "https://evil.example")
                    .await
                    .is_none()
        },
    )
    .await;
}
