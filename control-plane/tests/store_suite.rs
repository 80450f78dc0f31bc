//! The store and domain, without HTTP, on SQLite and on Postgres: one transaction per write (row, audit event,
//! revision), no lost updates under concurrent writers, and the client document that evaluation compiles.

#[path = "support/database.rs"]
mod database;

use database::TestDb;
use vexil_control_plane::domain::events::{self, EventQuery};
use vexil_control_plane::domain::features::{self, CreateFeature};
use vexil_control_plane::domain::limits::Limits;
use vexil_control_plane::domain::strategies;
use vexil_control_plane::domain::{client_document, environments, first_start, projects};
use vexil_control_plane::model::constraint::Constraint;
use vexil_control_plane::model::strategy::StrategyInput;
use vexil_control_plane::store::{Actor, Store};
use vexil_shared::{Context, ErrorKind, Snapshot};

on_sqlite_and_postgres!(
    the_first_start_seeds_once,
    a_write_commits_its_row_its_event_and_one_revision,
    a_failed_write_leaves_nothing_behind,
    a_no_op_write_moves_nothing,
    concurrent_writers_lose_no_update,
    the_client_document_compiles_and_evaluates,
);

async fn seeded_store(db: &TestDb) -> Store {
    let store = Store::connect(&db.url).await.unwrap();
    first_start::seed(&store).await.unwrap();
    store
}

fn tester() -> Actor {
    Actor {
        name: "tester".to_owned(),
        user_id: 7,
    }
}

fn flag(name: &str) -> CreateFeature {
    CreateFeature {
        name: name.to_owned(),
        feature_type: None,
        description: None,
        impression_data: None,
        tags: None,
    }
}

fn strategy(name: &str, constraints: Vec<Constraint>) -> StrategyInput {
    StrategyInput {
        name: name.to_owned(),
        title: None,
        disabled: None,
        sort_order: None,
        constraints: Some(constraints),
        parameters: None,
        variants: None,
        segments: None,
    }
}

fn user_in(users: &[&str]) -> Constraint {
    Constraint {
        context_name: "userId".to_owned(),
        operator: "IN".to_owned(),
        values: users.iter().map(|user| (*user).to_owned()).collect(),
        value: None,
        case_insensitive: false,
        inverted: false,
    }
}

async fn event_count(store: &Store) -> i64 {
    let mut conn = store.read().await.unwrap();
    events::list(&mut conn, EventQuery::default())
        .await
        .unwrap()
        .total_events
}

async fn a_write_commits_its_row_its_event_and_one_revision(db: TestDb) {
    let store = seeded_store(&db).await;
    let revision = store.revision().await.unwrap();
    let events_before = event_count(&store).await;

    let mut tx = store.begin_write(&tester()).await.unwrap();
    let created = features::create(&mut tx, "default", flag("alpha"), &Limits::default())
        .await
        .unwrap();
    assert!(tx.commit().await.unwrap());

    assert_eq!(created.name, "alpha");
    assert_eq!(store.revision().await.unwrap(), revision + 1);
    let mut conn = store.read().await.unwrap();
    let list = events::of_feature(&mut conn, "alpha").await.unwrap();
    assert_eq!(list.total_events, 1);
    let event = &list.events[0];
    assert_eq!(event.event_type, "feature-created");
    assert_eq!(event.created_by, "tester");
    assert_eq!(event.created_by_user_id, 7);
    assert_eq!(event.project.as_deref(), Some("default"));
    assert_eq!(event.data.as_ref().unwrap()["name"], "alpha");
    assert_eq!(event_count(&store).await, events_before + 1);
    let flag = features::get(&mut conn, "default", "alpha").await.unwrap();
    assert_eq!(flag.summary.created_at, event.created_at);
}

async fn a_failed_write_leaves_nothing_behind(db: TestDb) {
    let store = seeded_store(&db).await;
    let revision = store.revision().await.unwrap();
    let events_before = event_count(&store).await;
    {
        let mut tx = store.begin_write(&tester()).await.unwrap();
        features::create(&mut tx, "default", flag("beta"), &Limits::default())
            .await
            .unwrap();
        let error = features::create(&mut tx, "default", flag("beta"), &Limits::default())
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::NameExists);
        // Dropped without commit: rolled back.
    }
    assert_eq!(store.revision().await.unwrap(), revision);
    assert_eq!(event_count(&store).await, events_before);
    let mut conn = store.read().await.unwrap();
    let error = features::get(&mut conn, "default", "beta")
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::NotFound);
}

async fn a_no_op_write_moves_nothing(db: TestDb) {
    let store = seeded_store(&db).await;
    let mut tx = store.begin_write(&tester()).await.unwrap();
    features::create(&mut tx, "default", flag("gamma"), &Limits::default())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let revision = store.revision().await.unwrap();

    let mut tx = store.begin_write(&tester()).await.unwrap();
    features::set_enabled(&mut tx, "default", "gamma", "development", false, false)
        .await
        .unwrap();
    assert!(
        !tx.commit().await.unwrap(),
        "turning off an off flag commits nothing"
    );
    assert_eq!(store.revision().await.unwrap(), revision);

    let mut tx = store.begin_write(&tester()).await.unwrap();
    features::revive(&mut tx, "gamma", &Limits::default())
        .await
        .unwrap();
    assert!(
        !tx.commit().await.unwrap(),
        "reviving a live flag commits nothing"
    );
    assert_eq!(store.revision().await.unwrap(), revision);
}

/// Twenty writers add a strategy to the same flag at once; each computes "after the last one", a
/// read-modify-write that only serialised writers get right.
async fn concurrent_writers_lose_no_update(db: TestDb) {
    let store = seeded_store(&db).await;
    let mut tx = store.begin_write(&tester()).await.unwrap();
    features::create(&mut tx, "default", flag("delta"), &Limits::default())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let revision = store.revision().await.unwrap();

    let writers: Vec<_> = (0..20)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut tx = store.begin_write(&tester()).await.unwrap();
                strategies::add(
                    &mut tx,
                    "default",
                    "delta",
                    "production",
                    strategy("default", vec![]),
                    &Limits::default(),
                )
                .await
                .unwrap();
                tx.commit().await.unwrap();
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }

    let mut conn = store.read().await.unwrap();
    let list = strategies::list(&mut conn, "default", "delta", "production")
        .await
        .unwrap();
    let mut orders: Vec<i64> = list.iter().map(|strategy| strategy.sort_order).collect();
    orders.sort_unstable();
    assert_eq!(
        orders,
        (0..20).collect::<Vec<i64>>(),
        "every writer saw the one before"
    );
    assert_eq!(store.revision().await.unwrap(), revision + 20);
    let added = events::list(
        &mut conn,
        EventQuery {
            event_type: Some("feature-strategy-add".to_owned()),
            ..EventQuery::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(added.total_events, 20);
}

async fn the_client_document_compiles_and_evaluates(db: TestDb) {
    let store = seeded_store(&db).await;
    let mut tx = store.begin_write(&tester()).await.unwrap();
    features::create(&mut tx, "default", flag("epsilon"), &Limits::default())
        .await
        .unwrap();
    features::create(&mut tx, "default", flag("archived-one"), &Limits::default())
        .await
        .unwrap();
    let first = strategies::add(
        &mut tx,
        "default",
        "epsilon",
        "development",
        strategy("default", vec![user_in(&["ann"])]),
        &Limits::default(),
    )
    .await
    .unwrap();
    let mut disabled = strategy("default", vec![]);
    disabled.disabled = Some(true);
    strategies::add(
        &mut tx,
        "default",
        "epsilon",
        "development",
        disabled,
        &Limits::default(),
    )
    .await
    .unwrap();
    features::set_enabled(&mut tx, "default", "epsilon", "development", true, false)
        .await
        .unwrap();
    features::set_enabled(
        &mut tx,
        "default",
        "archived-one",
        "development",
        true,
        false,
    )
    .await
    .unwrap();
    features::archive(&mut tx, "default", "archived-one")
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut conn = store.read().await.unwrap();
    let document = client_document::features_document(&mut conn, "development")
        .await
        .unwrap();
    assert_eq!(document.features.len(), 1, "archived flags are left out");
    let feature = &document.features[0];
    assert_eq!(feature.name, "epsilon");
    assert!(feature.enabled);
    assert_eq!(
        feature.strategies.len(),
        1,
        "disabled strategies are left out"
    );
    assert_eq!(feature.strategies[0].id, None);
    assert_eq!(feature.strategies[0].constraints[0].values, vec!["ann"]);
    assert_eq!(first.constraints[0].values, vec!["ann"]);

    let snapshot = Snapshot::compile(&document);
    let ann = Context {
        user_id: Some("ann".to_owned()),
        ..Context::default()
    };
    let bob = Context {
        user_id: Some("bob".to_owned()),
        ..Context::default()
    };
    assert!(snapshot.is_enabled("epsilon", &ann));
    assert!(!snapshot.is_enabled("epsilon", &bob));

    let production = client_document::features_document(&mut conn, "production")
        .await
        .unwrap();
    assert!(
        !Snapshot::compile(&production).is_enabled("epsilon", &ann),
        "off in production"
    );
    let error = client_document::features_document(&mut conn, "nowhere")
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::NotFound);
}

/// Postgres only (a SQLite file cannot vanish under an open connection): a lost database fails the
/// readiness ping and writes, and nothing panics.
#[tokio::test]
async fn a_lost_postgres_database_fails_ping_and_writes() {
    let db = TestDb::postgres().await;
    let store = seeded_store(&db).await;
    store.ping().await.unwrap();
    db.drop_database().await;
    assert!(store.ping().await.is_err());
    assert!(store.begin_write(&tester()).await.is_err());
}

async fn the_first_start_seeds_once(db: TestDb) {
    let store = Store::connect(&db.url).await.unwrap();
    assert_eq!(store.revision().await.unwrap(), 0);
    let (first, second) = tokio::join!(first_start::seed(&store), first_start::seed(&store));
    first.unwrap();
    second.unwrap();
    first_start::seed(&store).await.unwrap();
    assert_eq!(
        store.revision().await.unwrap(),
        1,
        "one seeding write, however many starts"
    );

    let mut conn = store.read().await.unwrap();
    let project = projects::get(&mut conn, "default").await.unwrap();
    assert_eq!(project.environments, vec!["development", "production"]);
    let listed = environments::list(&mut conn).await.unwrap();
    let names: Vec<(&str, &str, i64)> = listed
        .environments
        .iter()
        .map(|e| (e.name.as_str(), e.environment_type.as_str(), e.sort_order))
        .collect();
    assert_eq!(
        names,
        [
            ("development", "development", 1),
            ("production", "production", 2)
        ]
    );
    let events = events::list(&mut conn, EventQuery::default())
        .await
        .unwrap();
    let seeded: Vec<(&str, &str)> = events
        .events
        .iter()
        .map(|e| (e.event_type.as_str(), e.created_by.as_str()))
        .collect();
    assert_eq!(
        seeded,
        [
            ("project-created", "system"),
            ("environment-created", "system"),
            ("environment-created", "system")
        ]
    );
    assert_eq!(project.created_at, events.events[0].created_at);
}
