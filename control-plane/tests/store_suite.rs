//! The store and domain, without HTTP, on SQLite and on Postgres: one transaction per write (row, audit event,
//! revision), no lost updates under concurrent writers, the client document that evaluation compiles, and a
//! session's single sign-out data (kept with it, returned once when it ends, gone with it).

#[path = "support/database.rs"]
mod database;

use database::TestDb;
use vexil_control_plane::domain::events::{self, EventQuery, PersonalFields::Shown};
use vexil_control_plane::domain::features::{self, CreateFeature};
use vexil_control_plane::domain::limits::Limits;
use vexil_control_plane::domain::roles::RoleReference;
use vexil_control_plane::domain::single_sign_out::{ProviderSession, SamlSubject};
use vexil_control_plane::domain::strategies;
use vexil_control_plane::domain::users::{self, CreateUser};
use vexil_control_plane::domain::{client_document, environments, first_start, projects};
use vexil_control_plane::model::constraint::Constraint;
use vexil_control_plane::model::strategy::StrategyInput;
use vexil_control_plane::store::features::{self as feature_store, FeatureRow};
use vexil_control_plane::store::strategies::{self as strategy_store, StrategyRow};
use vexil_control_plane::store::{Actor, Store};
use vexil_control_plane::time::Timestamp;
use vexil_shared::{Context, ErrorKind, Snapshot};

on_sqlite_and_postgres!(
    the_first_start_seeds_once,
    a_write_commits_its_row_its_event_and_one_revision,
    a_failed_write_leaves_nothing_behind,
    a_no_op_write_moves_nothing,
    concurrent_writers_lose_no_update,
    the_client_document_compiles_and_evaluates,
    whole_table_reads_match_row_by_row_reads,
    a_session_keeps_its_single_sign_out_until_it_ends,
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
    events::list(&mut conn, EventQuery::default(), Shown)
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
    let list = events::of_feature(&mut conn, "alpha", Shown).await.unwrap();
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
        Shown,
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

/// The client document's two large reads (every live flag; every strategy of an environment) come back from
/// the database as one JSON value: they must give exactly what the row-by-row reads of the same rows give,
/// awkward text, nulls, booleans, timestamps and JSON columns included.
async fn whole_table_reads_match_row_by_row_reads(db: TestDb) {
    let store = seeded_store(&db).await;
    let at = Timestamp::parse("2026-11-24T08:30:00.123Z").unwrap();
    let flags = [
        FeatureRow {
            name: "b-quoted".to_owned(),
            project_id: "default".to_owned(),
            feature_type: "release".to_owned(),
            description: Some("says \"hi\"\n\\ and ünïcödé ✓ \u{1F600}".to_owned()),
            stale: true,
            potentially_stale: false,
            impression_data: false,
            created_at: at,
            archived_at: None,
        },
        FeatureRow {
            name: "a-plain".to_owned(),
            project_id: "default".to_owned(),
            feature_type: "experiment".to_owned(),
            description: None,
            stale: false,
            potentially_stale: false,
            impression_data: true,
            created_at: Timestamp::EPOCH,
            archived_at: None,
        },
        FeatureRow {
            name: "c-archived".to_owned(),
            project_id: "default".to_owned(),
            feature_type: "release".to_owned(),
            description: None,
            stale: false,
            potentially_stale: false,
            impression_data: false,
            created_at: at,
            archived_at: Some(at),
        },
    ];
    let variants = serde_json::from_value(serde_json::json!([{
        "name": "blue \"v\"", "weight": 1000, "weightType": "fix", "stickiness": "userId",
        "payload": {"type": "json", "value": "{\"a\": [1, 2.5, null]}"}
    }]))
    .unwrap();
    let strategies = [
        StrategyRow {
            id: "s-2".to_owned(),
            feature_name: "b-quoted".to_owned(),
            environment: "development".to_owned(),
            name: "flexibleRollout".to_owned(),
            title: Some("Tïtle \"quoted\"".to_owned()),
            disabled: true,
            sort_order: 2,
            constraints: vec![user_in(&["ann", "b\"ob", "ç"])],
            parameters: [("rollout", "50"), ("groupId", "x\\y")]
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect(),
            variants,
            segments: vec![],
            created_at: at,
        },
        StrategyRow {
            id: "s-1".to_owned(),
            feature_name: "b-quoted".to_owned(),
            environment: "development".to_owned(),
            name: "default".to_owned(),
            title: None,
            disabled: false,
            sort_order: 1,
            constraints: vec![],
            parameters: Default::default(),
            variants: vec![],
            segments: vec![],
            created_at: at,
        },
        StrategyRow {
            id: "s-3".to_owned(),
            feature_name: "a-plain".to_owned(),
            environment: "development".to_owned(),
            name: "default".to_owned(),
            title: None,
            disabled: false,
            sort_order: 0,
            constraints: vec![],
            parameters: Default::default(),
            variants: vec![],
            segments: vec![],
            created_at: Timestamp::EPOCH,
        },
        StrategyRow {
            id: "s-4".to_owned(),
            feature_name: "a-plain".to_owned(),
            environment: "production".to_owned(),
            name: "default".to_owned(),
            title: None,
            disabled: false,
            sort_order: 0,
            constraints: vec![],
            parameters: Default::default(),
            variants: vec![],
            segments: vec![],
            created_at: at,
        },
    ];
    // Straight into the tables (a write transaction without an event would change nothing).
    let mut writer = store.bookkeeping().await.unwrap();
    for row in &flags {
        feature_store::insert(&mut writer, row).await.unwrap();
    }
    for row in &strategies {
        strategy_store::insert(&mut writer, row).await.unwrap();
    }
    for (flag, environment, enabled) in [
        ("b-quoted", "development", true),
        ("a-plain", "development", true),
        ("a-plain", "production", false),
    ] {
        feature_store::set_enabled(&mut writer, flag, environment, enabled)
            .await
            .unwrap();
    }
    drop(writer);

    let mut conn = store.read().await.unwrap();
    let live = feature_store::list_all_live(&mut conn).await.unwrap();
    assert_eq!(
        live,
        [flags[1].clone(), flags[0].clone()],
        "live flags by name"
    );
    for row in &live {
        let one = feature_store::get(&mut conn, &row.name).await.unwrap();
        assert_eq!(one.as_ref(), Some(row));
    }
    let in_development = strategy_store::list_in_environment(&mut conn, "development")
        .await
        .unwrap();
    let mut row_by_row = strategy_store::list(&mut conn, "a-plain", "development")
        .await
        .unwrap();
    row_by_row.extend(
        strategy_store::list(&mut conn, "b-quoted", "development")
            .await
            .unwrap(),
    );
    assert_eq!(in_development, row_by_row);
    assert_eq!(
        in_development,
        [
            strategies[2].clone(),
            strategies[1].clone(),
            strategies[0].clone()
        ],
        "by flag, then sortOrder"
    );
    assert_eq!(
        feature_store::enabled_in(&mut conn, "development")
            .await
            .unwrap(),
        ["a-plain", "b-quoted"]
    );
    assert!(feature_store::enabled_in(&mut conn, "production")
        .await
        .unwrap()
        .is_empty());
    assert!(strategy_store::list_in_environment(&mut conn, "nowhere")
        .await
        .unwrap()
        .is_empty());
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
    let events = events::list(&mut conn, EventQuery::default(), Shown)
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

/// What a single sign-on keeps for signing out at its provider stays with its session (never elsewhere), comes
/// back once when that session signs out, and goes with it; a password session has none; expired sessions go
/// (with theirs) when the next one opens.
async fn a_session_keeps_its_single_sign_out_until_it_ends(db: TestDb) {
    let store = seeded_store(&db).await;
    let mut tx = store.begin_write(&tester()).await.unwrap();
    let user = users::create(
        &mut tx,
        CreateUser {
            username: None,
            email: Some("ann@example.com".to_owned()),
            name: None,
            password: None,
            root_role: RoleReference::Id(3),
            send_email: Some(false),
        },
        None,
    )
    .await
    .unwrap();
    let row = users::require(tx.conn(), user.id).await.unwrap();
    tx.commit().await.unwrap();

    let oidc = ProviderSession::Oidc {
        id_token: "header.claims.signature".to_owned(),
        end_session_endpoint: "https://idp.example.com/session/end".to_owned(),
    };
    let saml = ProviderSession::Saml(SamlSubject {
        name_id: "ann@example.com".to_owned(),
        name_id_format: Some("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress".to_owned()),
        session_index: Some("_index".to_owned()),
    });
    let (_, with_oidc) = users::open_provider_session(&store, row.clone(), Some(&oidc))
        .await
        .unwrap();
    let (_, with_saml) = users::open_provider_session(&store, row.clone(), Some(&saml))
        .await
        .unwrap();
    let (_, with_password) = users::open_session(&store, row.clone()).await.unwrap();

    assert_eq!(
        users::sign_out(&store, &with_oidc).await.unwrap(),
        Some(oidc)
    );
    assert_eq!(
        users::sign_out(&store, &with_oidc).await.unwrap(),
        None,
        "taken once"
    );
    assert_eq!(users::sign_out(&store, &with_password).await.unwrap(), None);
    assert_eq!(
        users::sign_out(&store, &with_saml).await.unwrap(),
        Some(saml)
    );

    // An expired session (and the ID token it held) goes when the next session opens.
    let (_, stale) = users::open_provider_session(
        &store,
        row.clone(),
        Some(&ProviderSession::Oidc {
            id_token: "stale.token.here".to_owned(),
            end_session_endpoint: "https://idp.example.com/session/end".to_owned(),
        }),
    )
    .await
    .unwrap();
    {
        let mut conn = store.bookkeeping().await.unwrap();
        sqlx::query("UPDATE user_sessions SET expires_at = $1")
            .bind(Timestamp::now().plus_hours(-1))
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    users::open_session(&store, row).await.unwrap();
    let mut conn = store.read().await.unwrap();
    let held: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM user_sessions WHERE sign_out IS NOT NULL")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
    assert_eq!(held, 0, "an expired session kept its single sign-out data");
    drop(conn);
    assert_eq!(users::sign_out(&store, &stale).await.unwrap(), None);
}
