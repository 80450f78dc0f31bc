//! Two control-plane replicas on one Postgres: one is killed, the edges keep serving and pick up writes
//! made on the other.

use std::time::Duration;

use crate::database::TestDb;
use crate::processes::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edges_survive_a_killed_replica_and_follow_the_other() {
    let db = TestDb::postgres().await;
    let mut first = Process::control_plane(&db.url, &[]);
    let second = Process::control_plane(&db.url, &[]);
    let edges = [
        Process::edge(&[first.grpc(), second.grpc()], &[]),
        Process::edge(&[first.grpc(), second.grpc()], &[]),
    ];

    // A write on one replica reaches edges subscribed to the other and the other's own API.
    create_enabled_flag(&second, "one").await;
    for edge in &edges {
        eventually(
            Duration::from_secs(3),
            "the edge serves the write",
            || async { frontend_flags(edge).await.toggle_names() == ["one"] },
        )
        .await;
    }
    eventually(
        Duration::from_secs(3),
        "the first replica follows the second",
        || async { frontend_flags(&first).await.toggle_names() == ["one"] },
    )
    .await;

    first.kill();
    for edge in &edges {
        assert_eq!(frontend_flags(edge).await.toggle_names(), ["one"]);
    }
    create_enabled_flag(&second, "two").await;
    for edge in &edges {
        eventually(
            Duration::from_secs(10),
            "the edge follows the surviving replica",
            || async { frontend_flags(edge).await.toggle_names() == ["one", "two"] },
        )
        .await;
    }
}
