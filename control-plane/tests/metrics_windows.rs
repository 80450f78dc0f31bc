//! The metrics views with an injected clock, on SQLite and on Postgres: each window (last minute, last hour,
//! last day) exactly at its edges, the roll-up of minute buckets into hours, an edge batch counted once,
//! counts that saturate instead of overflowing, bounded variant names and strategy lists, and the pruning of
//! clients not seen within their retention.

#[allow(dead_code)] // shared with the store suite
#[path = "support/database.rs"]
mod database;

use database::TestDb;
use sqlx::Connection;
use vexil_control_plane::domain::metrics::{self, Retention, YesNo, DAY_MS, HOUR_MS, MINUTE_MS};
use vexil_control_plane::store::Store;
use vexil_proto::v1;
use vexil_serving::usage::Usage;

on_sqlite_and_postgres!(
    the_minute_and_hour_windows_hold_exactly_at_their_edges,
    the_last_day_holds_exactly_at_its_edge,
    old_minutes_roll_up_into_hours_and_old_hours_go,
    a_retried_batch_is_counted_once,
    counts_near_the_maximum_saturate_in_the_views_and_the_roll_up,
    variant_names_and_strategy_lists_are_bounded_in_storage,
    clients_not_seen_within_the_retention_are_pruned,
);

/// A whole hour, so that minute and hour arithmetic is easy to follow.
const T0: i64 = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS;

fn count(flag: &str, app: &str, minute_ms: i64, yes: u64, no: u64) -> v1::FlagCount {
    v1::FlagCount {
        feature_name: flag.to_owned(),
        app_name: app.to_owned(),
        environment: "development".to_owned(),
        minute_ms,
        yes,
        no,
        variants: Default::default(),
    }
}

fn seen(app: &str, at_ms: i64) -> v1::ApplicationSeen {
    v1::ApplicationSeen {
        app_name: app.to_owned(),
        seen_at_ms: at_ms,
        registered: true,
        strategies: vec!["default".to_owned()],
    }
}

async fn store(db: &TestDb) -> Store {
    Store::connect(&db.url).await.unwrap()
}

/// Rolls up at `now_ms`, keeping hours for `hours_kept_ms` and clients for `clients_kept_ms`; returns how
/// many minute buckets were rolled up.
async fn roll_up(store: &Store, now_ms: i64, hours_kept_ms: i64, clients_kept_ms: i64) -> u64 {
    let retention = Retention {
        hours_kept_ms,
        clients_kept_ms,
    };
    metrics::roll_up(store, now_ms, retention)
        .await
        .unwrap()
        .minute_buckets
}

/// One number straight from the database (what no view shows: stored variant names).
async fn scalar(db: &TestDb, sql: &str) -> i64 {
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
}

async fn last_hour(store: &Store, now: i64) -> Option<YesNo> {
    let views = metrics::feature_toggles(store, now).await.unwrap();
    views.last_hour.get("checkout").copied()
}

async fn last_minute(store: &Store, now: i64) -> Option<YesNo> {
    let views = metrics::feature_toggles(store, now).await.unwrap();
    views.last_minute.get("checkout").copied()
}

async fn the_minute_and_hour_windows_hold_exactly_at_their_edges(db: TestDb) {
    let store = store(&db).await;
    metrics::ingest(
        &store,
        Usage {
            applications: vec![seen("shop", T0)],
            instances: vec![],
            counts: vec![count("checkout", "shop", T0, 3, 1)],
            unleash_edges: Vec::new(),
        },
    )
    .await
    .unwrap();
    let pair = Some(YesNo { yes: 3, no: 1 });
    // The bucket [T0, T0 + 60 s) overlaps (N − 60 s, N] for N in [T0, T0 + 120 s).
    assert_eq!(last_minute(&store, T0 - 1).await, None, "not yet received");
    assert_eq!(last_minute(&store, T0).await, pair);
    assert_eq!(last_minute(&store, T0 + 2 * MINUTE_MS - 1).await, pair);
    assert_eq!(
        last_minute(&store, T0 + 2 * MINUTE_MS).await,
        Some(YesNo::default()),
        "out of the last minute, still in the hour: zeros"
    );
    // … and (N − 60 min, N] for N in [T0, T0 + 61 min).
    assert_eq!(last_hour(&store, T0 + HOUR_MS + MINUTE_MS - 1).await, pair);
    assert_eq!(last_hour(&store, T0 + HOUR_MS + MINUTE_MS).await, None);

    // #1 and #5 use the hour too.
    let edge = T0 + HOUR_MS + MINUTE_MS;
    let inside = metrics::seen_toggles(&store, edge - 1).await.unwrap();
    assert_eq!(inside.len(), 1);
    assert_eq!(inside[0].app_name, "shop");
    assert_eq!(inside[0].seen_toggles, ["checkout"]);
    assert_eq!(inside[0].metrics_count, 4);
    assert!(metrics::seen_toggles(&store, edge)
        .await
        .unwrap()
        .is_empty());
    let apps = metrics::seen_apps(&store, edge - 1).await.unwrap();
    assert_eq!(apps["checkout"][0].app_name, "shop");
    assert!(metrics::seen_apps(&store, edge).await.unwrap().is_empty());
    // #4 remembers every name ever reported.
    let details = metrics::application(&store, "shop").await.unwrap();
    assert_eq!(details.seen_toggles, ["checkout"]);
}

async fn the_last_day_holds_exactly_at_its_edge(db: TestDb) {
    let store = store(&db).await;
    let seen_at = T0 + 1234;
    metrics::ingest(
        &store,
        Usage {
            applications: vec![seen("shop", seen_at)],
            ..Usage::default()
        },
    )
    .await
    .unwrap();
    let listed = |now| {
        let store = store.clone();
        async move {
            metrics::applications(&store, None, "", now)
                .await
                .unwrap()
                .total
        }
    };
    assert_eq!(listed(seen_at - 1).await, 0, "seen after now");
    assert_eq!(listed(seen_at).await, 1);
    assert_eq!(listed(seen_at + DAY_MS - 1).await, 1);
    assert_eq!(
        listed(seen_at + DAY_MS).await,
        0,
        "(N − 24 h, N] excludes N − 24 h"
    );
    let filtered = metrics::applications(&store, Some("flexibleRollout"), "", seen_at)
        .await
        .unwrap();
    assert_eq!(filtered.total, 0);
    let filtered = metrics::applications(&store, Some("default"), "/x", seen_at)
        .await
        .unwrap();
    assert_eq!(
        filtered.applications[0].links.app_details,
        "/x/api/admin/metrics/applications/shop"
    );
}

async fn old_minutes_roll_up_into_hours_and_old_hours_go(db: TestDb) {
    let store = store(&db).await;
    metrics::ingest(
        &store,
        Usage {
            counts: vec![
                count("checkout", "shop", T0, 3, 1),
                count("checkout", "shop", T0 + 59 * MINUTE_MS, 2, 0),
                count("checkout", "shop", T0 + HOUR_MS, 7, 7),
            ],
            ..Usage::default()
        },
    )
    .await
    .unwrap();
    let hourly = |now| {
        let store = store.clone();
        async move {
            metrics::feature_usage(&store, "checkout", now)
                .await
                .unwrap()
                .data
                .into_iter()
                .map(|h| (h.timestamp, h.yes, h.no))
                .collect::<Vec<_>>()
        }
    };
    let before = hourly(T0 + 2 * HOUR_MS).await;
    assert_eq!(before.len(), 2);
    assert_eq!((before[0].1, before[0].2), (5, 1));
    // At T0 + 49 h the hour of T0 is older than 48 h: rolled up; the next hour stays in minutes.
    let rolled = roll_up(&store, T0 + 49 * HOUR_MS, 90 * DAY_MS, 90 * DAY_MS).await;
    assert_eq!(rolled, 2);
    assert_eq!(
        hourly(T0 + 2 * HOUR_MS).await,
        before,
        "same hours, same sums"
    );
    // A second roll-up adds nothing twice.
    roll_up(&store, T0 + 49 * HOUR_MS, 90 * DAY_MS, 90 * DAY_MS).await;
    assert_eq!(hourly(T0 + 2 * HOUR_MS).await, before);
    // Hours older than the retention go.
    roll_up(&store, T0 + 49 * HOUR_MS, 48 * HOUR_MS + 1, 90 * DAY_MS).await;
    assert_eq!(hourly(T0 + 2 * HOUR_MS).await, before[1..].to_vec());
}

async fn a_retried_batch_is_counted_once(db: TestDb) {
    let store = store(&db).await;
    let batch = v1::UsageBatch {
        edge_id: "edge-a".to_owned(),
        batch_id: "b1".to_owned(),
        applied_revision: 4,
        edge_version: "0.1.0".to_owned(),
        applications: vec![seen("shop", T0)],
        instances: vec![],
        counts: vec![count("checkout", "shop", T0, 3, 1)],
        evaluations: vec![v1::EvaluationCount {
            environment: "development".to_owned(),
            feature_name: "checkout".to_owned(),
            minute_ms: T0,
            enabled: 5,
            disabled: 2,
        }],
        tokens_seen: vec![],
        unleash_edges: vec![],
    };
    assert!(!metrics::ingest_batch(&store, batch.clone(), T0)
        .await
        .unwrap());
    assert!(metrics::ingest_batch(&store, batch.clone(), T0 + 1)
        .await
        .unwrap());
    let other = v1::UsageBatch {
        batch_id: "b2".to_owned(),
        ..batch.clone()
    };
    assert!(!metrics::ingest_batch(&store, other, T0 + 2).await.unwrap());
    assert_eq!(
        last_hour(&store, T0 + 2).await,
        Some(YesNo { yes: 6, no: 2 }),
        "b1 once, b2 once"
    );
    let edges = metrics::edges(&store, T0 + 2).await.unwrap().edges;
    assert_eq!(edges.len(), 1);
    assert_eq!(edges[0].edge_id, "edge-a");
    assert_eq!(edges[0].applied_revision, 4);
    assert_eq!(edges[0].evaluations_last_hour.enabled, 10);
    assert_eq!(edges[0].evaluations_last_hour.not_enabled, 4);
    let later = metrics::edges(&store, T0 + HOUR_MS + MINUTE_MS)
        .await
        .unwrap();
    assert_eq!(later.edges[0].evaluations_last_hour.enabled, 0);
}

fn with_variants(
    mut count: v1::FlagCount,
    names: impl Iterator<Item = String>,
    n: u64,
) -> v1::FlagCount {
    count.variants = names.map(|name| (name, n)).collect();
    count
}

async fn counts_near_the_maximum_saturate_in_the_views_and_the_roll_up(db: TestDb) {
    let store = store(&db).await;
    let most = u64::MAX;
    let big = |app: &str, minute_ms| {
        with_variants(
            count("checkout", app, minute_ms, most, most),
            ["red".to_owned()].into_iter(),
            most,
        )
    };
    // The same minute bucket twice (the upsert adds), and another application (the views sum).
    for app in ["shop", "shop", "web"] {
        metrics::ingest(
            &store,
            Usage {
                applications: vec![seen(app, T0)],
                counts: vec![big(app, T0)],
                ..Usage::default()
            },
        )
        .await
        .unwrap();
    }
    for batch_id in ["b1", "b2"] {
        let batch = v1::UsageBatch {
            edge_id: "edge-a".to_owned(),
            batch_id: batch_id.to_owned(),
            counts: vec![big("shop", T0 + MINUTE_MS)],
            evaluations: vec![v1::EvaluationCount {
                environment: "development".to_owned(),
                feature_name: "checkout".to_owned(),
                minute_ms: T0,
                enabled: most,
                disabled: most,
            }],
            ..v1::UsageBatch::default()
        };
        metrics::ingest_batch(&store, batch, T0).await.unwrap();
    }
    let saturated = YesNo {
        yes: i64::MAX,
        no: i64::MAX,
    };
    assert_eq!(last_hour(&store, T0 + 2 * MINUTE_MS).await, Some(saturated));
    assert_eq!(last_minute(&store, T0 + MINUTE_MS).await, Some(saturated));
    let seen_toggles = metrics::seen_toggles(&store, T0 + 2 * MINUTE_MS)
        .await
        .unwrap();
    assert!(seen_toggles.iter().all(|app| app.metrics_count == i64::MAX));
    let edges = metrics::edges(&store, T0 + 2 * MINUTE_MS)
        .await
        .unwrap()
        .edges;
    assert_eq!(edges[0].evaluations_last_hour.enabled, i64::MAX);
    assert_eq!(edges[0].evaluations_last_hour.not_enabled, i64::MAX);
    let hours = |now| {
        let store = store.clone();
        async move {
            metrics::feature_usage(&store, "checkout", now)
                .await
                .unwrap()
                .data
                .into_iter()
                .map(|h| (h.app_name, h.yes, h.no))
                .collect::<Vec<_>>()
        }
    };
    let expected = vec![
        ("shop".to_owned(), i64::MAX, i64::MAX),
        ("web".to_owned(), i64::MAX, i64::MAX),
    ];
    assert_eq!(hours(T0 + 2 * MINUTE_MS).await, expected);

    // Rolled up (the sums saturate), then a late bucket of the same hour is rolled onto it (the upsert adds).
    assert_eq!(
        roll_up(&store, T0 + 49 * HOUR_MS, 90 * DAY_MS, 90 * DAY_MS).await,
        3
    );
    metrics::ingest(
        &store,
        Usage {
            counts: vec![big("shop", T0 + 2 * MINUTE_MS)],
            ..Usage::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        roll_up(&store, T0 + 49 * HOUR_MS, 90 * DAY_MS, 90 * DAY_MS).await,
        1
    );
    assert_eq!(hours(T0 + 2 * MINUTE_MS).await, expected);
    assert_eq!(
        scalar(
            &db,
            "SELECT count FROM client_usage_hour_variants WHERE app_name = 'shop' AND variant = 'red'"
        )
        .await,
        i64::MAX
    );
}

async fn variant_names_and_strategy_lists_are_bounded_in_storage(db: TestDb) {
    let store = store(&db).await;
    let names = |prefix: &'static str, range: std::ops::Range<usize>| {
        range.map(move |i| format!("{prefix}{i:03}"))
    };
    // 100 names, then 50 of them again and 50 new ones in the same minute: the new ones are not kept.
    for (minute_ms, variants) in [
        (T0, names("v", 0..100).collect::<Vec<_>>()),
        (T0, names("v", 50..150).collect()),
        // Another minute of the same hour with 100 other names: the hour keeps 100 names too.
        (T0 + MINUTE_MS, names("w", 0..100).collect()),
    ] {
        metrics::ingest(
            &store,
            Usage {
                counts: vec![with_variants(
                    count("checkout", "shop", minute_ms, 1, 0),
                    variants.into_iter(),
                    1,
                )],
                ..Usage::default()
            },
        )
        .await
        .unwrap();
    }
    let minute_names = "SELECT COUNT(*) FROM client_usage_minute_variants WHERE minute_ms = ";
    assert_eq!(scalar(&db, &format!("{minute_names}{T0}")).await, 100);
    assert_eq!(
        scalar(
            &db,
            "SELECT count FROM client_usage_minute_variants WHERE variant = 'v060'"
        )
        .await,
        2
    );
    assert_eq!(
        scalar(&db, &format!("{minute_names}{}", T0 + MINUTE_MS)).await,
        100
    );
    roll_up(&store, T0 + 49 * HOUR_MS, 90 * DAY_MS, 90 * DAY_MS).await;
    assert_eq!(
        scalar(&db, "SELECT COUNT(*) FROM client_usage_hour_variants").await,
        100
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count FROM client_usage_hour_variants WHERE variant = 'v060'"
        )
        .await,
        2
    );

    // 25 distinct strategy lists: 20 are remembered; a known one still counts as seen.
    for i in 0..25 {
        let mut app = seen("shop", T0 + i);
        app.strategies = vec![format!("custom{i}")];
        metrics::ingest(
            &store,
            Usage {
                applications: vec![app],
                ..Usage::default()
            },
        )
        .await
        .unwrap();
    }
    let details = metrics::application(&store, "shop").await.unwrap();
    assert_eq!(details.strategies.len(), 20);
}

async fn clients_not_seen_within_the_retention_are_pruned(db: TestDb) {
    let store = store(&db).await;
    let instance = |id: &str, at_ms| v1::InstanceSeen {
        app_name: "shop".to_owned(),
        instance_id: id.to_owned(),
        seen_at_ms: at_ms,
        client_ip: None,
        sdk_version: None,
        environment: Some("development".to_owned()),
    };
    let late = T0 + 25 * DAY_MS;
    let mut registered_late = seen("shop", late);
    registered_late.strategies = vec!["flexibleRollout".to_owned()];
    for usage in [
        Usage {
            applications: vec![seen("shop", T0), seen("forgotten", T0)],
            instances: vec![instance("early", T0)],
            counts: vec![count("gone", "shop", T0, 1, 0)],
            unleash_edges: Vec::new(),
        },
        Usage {
            applications: vec![registered_late],
            instances: vec![instance("late", late)],
            counts: vec![count("kept", "shop", late, 1, 0)],
            unleash_edges: Vec::new(),
        },
    ] {
        metrics::ingest(&store, usage).await.unwrap();
    }
    let retention = Retention {
        hours_kept_ms: 90 * DAY_MS,
        clients_kept_ms: 30 * DAY_MS,
    };
    // Within the retention, nothing goes.
    let rolled = metrics::roll_up(&store, T0 + 30 * DAY_MS, retention)
        .await
        .unwrap();
    assert_eq!(rolled.clients_pruned, 0);
    let rolled = metrics::roll_up(&store, T0 + 30 * DAY_MS + 1, retention)
        .await
        .unwrap();
    // "forgotten" and its strategy list, shop's "early" instance, its "gone" flag name and its first list.
    assert_eq!(rolled.clients_pruned, 5);
    let error = metrics::application(&store, "forgotten").await.unwrap_err();
    assert_eq!(error.kind, vexil_shared::ErrorKind::NotFound);
    let shop = metrics::application(&store, "shop").await.unwrap();
    assert_eq!(shop.seen_toggles, ["kept"]);
    let instances: Vec<&str> = shop
        .instances
        .iter()
        .map(|i| i.instance_id.as_str())
        .collect();
    assert_eq!(instances, ["late"]);
    let lists: Vec<&Vec<String>> = shop.strategies.iter().map(|s| &s.strategies).collect();
    assert_eq!(lists, [&vec!["flexibleRollout".to_owned()]]);
}
