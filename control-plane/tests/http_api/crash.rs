//! `kill -9` during a burst of writes, on SQLite and on Postgres: after a restart every acknowledged write is
//! there, with its audit event.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

crate::on_sqlite_and_postgres!(kill_9_loses_no_acknowledged_write);

const FEATURES: &str = "/api/admin/projects/default/features";

async fn kill_9_loses_no_acknowledged_write(db: TestDb) {
    let mut server = Server::start(&db, &[]).await;
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let client = server.client.clone();
            let url = format!("{}{FEATURES}", server.base);
            tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                for index in 0.. {
                    let name = format!("burst-{writer}-{index}");
                    let sent = client
                        .post(&url)
                        .header("Authorization", ADMIN_TOKEN)
                        .json(&json!({ "name": name }))
                        .timeout(Duration::from_secs(5))
                        .send()
                        .await;
                    match sent {
                        Ok(response) if response.status().as_u16() == 201 => {
                            acknowledged.push(name)
                        }
                        Ok(response) => {
                            panic!("unexpected status {} during the burst", response.status())
                        }
                        Err(_) => break, // The server is gone.
                    }
                }
                acknowledged
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_millis(700)).await;
    server.kill();
    let mut acknowledged = BTreeSet::new();
    for writer in writers {
        acknowledged.extend(writer.await.unwrap());
    }
    assert!(
        acknowledged.len() >= 10,
        "the burst was too small to mean anything: {}",
        acknowledged.len()
    );

    let server = Server::start(&db, &[]).await;
    let features = server.get(FEATURES).await.expect(200).clone();
    let stored: BTreeSet<String> = features["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect();
    let lost: Vec<&String> = acknowledged.difference(&stored).collect();
    assert!(
        lost.is_empty(),
        "acknowledged but lost after kill -9: {lost:?}"
    );
    // At most the writes in flight at the kill may have landed unacknowledged.
    assert!(stored.len() <= acknowledged.len() + 4);
    let events = server
        .get("/api/admin/events?type=feature-created&limit=1000")
        .await
        .expect(200)
        .clone();
    assert_eq!(
        events["totalEvents"].as_u64().unwrap() as usize,
        stored.len(),
        "one event per stored flag"
    );
    // And the store takes writes again.
    server
        .post(FEATURES, json!({"name": "after-restart"}))
        .await
        .expect(201);
}

/// Two replicas on one Postgres database: writes through both are serialised by the store, not by a process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_postgres_lose_no_update() {
    let db = TestDb::postgres().await;
    let first = Server::start(&db, &[]).await;
    let second = Server::start(&db, &[]).await;
    first
        .post(FEATURES, json!({"name": "shared"}))
        .await
        .expect(201);
    let strategies =
        "/api/admin/projects/default/features/shared/environments/production/strategies";
    let writes: Vec<_> = (0..10)
        .map(|round| {
            let replica = if round % 2 == 0 { &first } else { &second };
            let request = replica
                .client
                .post(format!("{}{strategies}", replica.base))
                .header("Authorization", ADMIN_TOKEN)
                .json(&json!({"name": "default"}));
            tokio::spawn(async move {
                request
                    .send()
                    .await
                    .map(|response| response.status().as_u16())
            })
        })
        .collect();
    for write in writes {
        assert_eq!(write.await.unwrap().unwrap(), 200);
    }
    let listed = second.get(strategies).await.expect(200).clone();
    let mut orders: Vec<i64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sortOrder"].as_i64().unwrap())
        .collect();
    orders.sort_unstable();
    assert_eq!(
        orders,
        (0..10).collect::<Vec<i64>>(),
        "every write saw the ones before, whichever replica"
    );
}
