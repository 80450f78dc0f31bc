//! The change-request gate, through the domain alone (no HTTP), on SQLite and Postgres: with change requests
//! on for `development`, every direct write of a flag's switch, strategies or variants there, and every
//! archive of a flag of the project, is refused with 403 and writes nothing; `production` stays writable;
//! and the same writes go through when an approved change request applies them; a scheduled request that two
//! writers try to apply at once is applied by one of them, once.

#[allow(dead_code)] // shared with the store suite
#[path = "support/database.rs"]
mod database;

use database::TestDb;
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use uuid::Uuid;
use vexil_control_plane::domain::access::{Credential, Grants, Who};
use vexil_control_plane::domain::change_requests::{
    self, Attempt, ChangeInput, ChangeInputs, ChangeRequestConfigInput, StateInput,
};
use vexil_control_plane::domain::features::{self, ArchiveFeatures, CreateFeature};
use vexil_control_plane::domain::limits::Limits;
use vexil_control_plane::domain::roles::RootRole;
use vexil_control_plane::domain::{first_start, strategies, variants};
use vexil_control_plane::model::change_request::{Change, ChangeRequestState, NoPayload};
use vexil_control_plane::model::strategy::{StrategyInput, StrategySortOrder};
use vexil_control_plane::model::variant::FlagVariant;
use vexil_control_plane::store::{Actor, Store, WriteTx};
use vexil_shared::{ApiError, ErrorKind};

on_sqlite_and_postgres!(
    direct_writes_to_a_protected_environment_are_refused_by_the_domain,
    an_approved_change_request_applies_every_kind_of_change,
    two_writers_apply_a_schedule_once,
);

const PROJECT: &str = "default";
const FLAG: &str = "checkout";
const PROTECTED: &str = "development";
const OPEN: &str = "production";

fn alice() -> Actor {
    Actor::user("alice", 11)
}

fn bob() -> Actor {
    Actor::user("bob", 12)
}

fn strategy(name: &str) -> StrategyInput {
    StrategyInput {
        name: name.to_owned(),
        title: None,
        disabled: None,
        sort_order: None,
        constraints: None,
        parameters: None,
        variants: None,
        segments: None,
    }
}

fn blue() -> Vec<FlagVariant> {
    serde_json::from_value(json!([{"name": "blue", "weightType": "variable"}])).unwrap()
}

/// A store with flag `checkout` holding one strategy in each environment, change requests on for
/// `development` (2 approvals); returns the ids of the two strategies (development, production).
async fn protected_store(db: &TestDb) -> (Store, Uuid, Uuid) {
    let store = Store::connect(&db.url).await.unwrap();
    first_start::seed(&store).await.unwrap();
    let mut tx = store.begin_write(&alice()).await.unwrap();
    let flag = CreateFeature {
        name: FLAG.to_owned(),
        feature_type: None,
        description: None,
        impression_data: None,
        tags: None,
    };
    features::create(&mut tx, PROJECT, flag, &Limits::default())
        .await
        .unwrap();
    let mut ids = Vec::new();
    for environment in [PROTECTED, OPEN] {
        let added = strategies::add(
            &mut tx,
            PROJECT,
            FLAG,
            environment,
            strategy("default"),
            &Limits::default(),
        )
        .await
        .unwrap();
        ids.push(added.id.parse::<Uuid>().unwrap());
    }
    let config = ChangeRequestConfigInput {
        change_requests_enabled: true,
        required_approvals: Some(1.into()),
    };
    change_requests::configure(&mut tx, PROJECT, PROTECTED, config)
        .await
        .unwrap();
    assert!(tx.commit().await.unwrap());
    (store, ids[0], ids[1])
}

type Write<'a> = Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send + 'a>>;

/// A write of the flag's configuration in `environment`.
type WriteKind = for<'a> fn(&'a mut WriteTx, &'static str, Uuid) -> Write<'a>;

fn write_kinds() -> Vec<(&'static str, WriteKind)> {
    vec![
        ("switch on", |tx, env, _| {
            Box::pin(features::set_enabled(tx, PROJECT, FLAG, env, true, false))
        }),
        ("switch off", |tx, env, _| {
            Box::pin(features::set_enabled(tx, PROJECT, FLAG, env, false, false))
        }),
        ("add a strategy", |tx, env, _| {
            Box::pin(async move {
                strategies::add(
                    tx,
                    PROJECT,
                    FLAG,
                    env,
                    strategy("default"),
                    &Limits::default(),
                )
                .await
                .map(drop)
            })
        }),
        ("replace a strategy", |tx, env, id| {
            Box::pin(async move {
                let mut input = strategy("default");
                input.title = Some("renamed".to_owned());
                strategies::update(tx, PROJECT, FLAG, env, id, input, &Limits::default())
                    .await
                    .map(drop)
            })
        }),
        ("patch a strategy", |tx, env, id| {
            Box::pin(async move {
                let patch = serde_json::from_value(
                    json!([{"op": "replace", "path": "/title", "value": "patched"}]),
                )
                .unwrap();
                strategies::patch(tx, PROJECT, FLAG, env, id, patch, &Limits::default())
                    .await
                    .map(drop)
            })
        }),
        ("reorder strategies", |tx, env, id| {
            Box::pin(async move {
                let order = vec![StrategySortOrder {
                    id: id.to_string(),
                    sort_order: 9,
                }];
                strategies::set_sort_order(tx, PROJECT, FLAG, env, order).await
            })
        }),
        ("delete a strategy", |tx, env, id| {
            Box::pin(strategies::delete(tx, PROJECT, FLAG, env, id))
        }),
        ("set variants", |tx, env, _| {
            Box::pin(async move {
                variants::set(tx, PROJECT, FLAG, env, blue())
                    .await
                    .map(drop)
            })
        }),
        ("patch variants", |tx, env, _| {
            Box::pin(async move {
                let patch = serde_json::from_value(
                    json!([{"op": "add", "path": "/-", "value": {"name": "red"}}]),
                )
                .unwrap();
                variants::patch(tx, PROJECT, FLAG, env, patch)
                    .await
                    .map(drop)
            })
        }),
    ]
}

async fn direct_writes_to_a_protected_environment_are_refused_by_the_domain(db: TestDb) {
    let (store, protected_id, open_id) = protected_store(&db).await;
    let revision = store.revision().await.unwrap();
    for (name, write) in write_kinds() {
        let mut tx = store.begin_write(&alice()).await.unwrap();
        let error = write(&mut tx, PROTECTED, protected_id)
            .await
            .expect_err(name);
        assert_eq!(error.kind, ErrorKind::NoAccess, "{name}: {error:?}");
        assert!(
            error.message.contains("Change requests are enabled"),
            "{name}: {}",
            error.message
        );
        drop(tx);
        assert_eq!(store.revision().await.unwrap(), revision, "{name}");

        // The environment without change requests takes the same write directly.
        let mut tx = store.begin_write(&alice()).await.unwrap();
        write(&mut tx, OPEN, open_id)
            .await
            .unwrap_or_else(|error| panic!("{name} in {OPEN}: {error:?}"));
    }
    // Archiving is refused while any environment of the project takes change requests.
    let mut tx = store.begin_write(&alice()).await.unwrap();
    let error = features::archive(&mut tx, PROJECT, FLAG).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::NoAccess);
    let archive = ArchiveFeatures {
        features: vec![FLAG.to_owned()],
    };
    let error = features::archive_many(&mut tx, PROJECT, archive)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::NoAccess);
    drop(tx);
    assert_eq!(store.revision().await.unwrap(), revision);

    // A transaction applying an approved change request passes the gate for each kind.
    for (name, write) in write_kinds() {
        let mut tx = store.begin_write(&alice()).await.unwrap();
        tx.apply_change_request(1);
        write(&mut tx, PROTECTED, protected_id)
            .await
            .unwrap_or_else(|error| panic!("{name} while applying: {error:?}"));
    }
}

fn change(change: Change) -> ChangeInput {
    ChangeInput {
        feature: Some(FLAG.to_owned()),
        change,
    }
}

async fn set_state(store: &Store, actor: &Actor, id: i64, state: ChangeRequestState) {
    let mut tx = store.begin_write(actor).await.unwrap();
    let input = StateInput {
        state,
        comment: None,
        scheduled_at: None,
    };
    // Reviewed as an Admin: this test is about the gate, not who may review.
    let admin = Grants::admin();
    let who = Who {
        credential: Credential::User(RootRole::Admin),
        grants: &admin,
    };
    change_requests::change_state(&mut tx, PROJECT, id, input, &Limits::default(), who)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

async fn an_approved_change_request_applies_every_kind_of_change(db: TestDb) {
    let (store, protected_id, _) = protected_store(&db).await;
    let update: Change = serde_json::from_value(json!({
        "action": "updateStrategy",
        "payload": {"id": protected_id, "name": "default", "title": "renamed"}
    }))
    .unwrap();
    let changes = vec![
        change(Change::UpdateEnabled { enabled: true }),
        change(Change::AddStrategy(strategy("default"))),
        change(update),
        change(Change::ReorderStrategy(vec![StrategySortOrder {
            id: protected_id.to_string(),
            sort_order: 5,
        }])),
        change(Change::PatchVariant { variants: blue() }),
    ];
    let mut tx = store.begin_write(&alice()).await.unwrap();
    let draft =
        change_requests::add_changes(&mut tx, PROJECT, PROTECTED, ChangeInputs::Many(changes))
            .await
            .unwrap();
    tx.commit().await.unwrap();
    set_state(&store, &alice(), draft.id, ChangeRequestState::InReview).await;
    set_state(&store, &bob(), draft.id, ChangeRequestState::Approved).await;
    set_state(&store, &alice(), draft.id, ChangeRequestState::Applied).await;

    let mut conn = store.read().await.unwrap();
    let flag = features::get(&mut conn, PROJECT, FLAG).await.unwrap();
    let development = flag
        .environments
        .iter()
        .find(|environment| environment.name == PROTECTED)
        .unwrap();
    assert!(development.enabled);
    assert_eq!(development.strategies.len(), 2);
    let renamed = development
        .strategies
        .iter()
        .find(|strategy| strategy.id == protected_id.to_string())
        .unwrap();
    assert_eq!(renamed.title.as_deref(), Some("renamed"));
    assert_eq!(renamed.sort_order, 5);
    assert_eq!(development.variants.len(), 1);
    drop(conn);

    // Deleting a strategy and archiving the flag go through a second request.
    let changes = vec![
        change(Change::DeleteStrategy { id: protected_id }),
        change(Change::ArchiveFeature(NoPayload)),
    ];
    let mut tx = store.begin_write(&alice()).await.unwrap();
    let second =
        change_requests::add_changes(&mut tx, PROJECT, PROTECTED, ChangeInputs::Many(changes))
            .await
            .unwrap();
    tx.commit().await.unwrap();
    set_state(&store, &alice(), second.id, ChangeRequestState::InReview).await;
    set_state(&store, &bob(), second.id, ChangeRequestState::Approved).await;
    set_state(&store, &alice(), second.id, ChangeRequestState::Applied).await;
    let mut conn = store.read().await.unwrap();
    let error = features::get(&mut conn, PROJECT, FLAG).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::NotFound, "archived");
    let remaining = strategies::list(&mut conn, PROJECT, FLAG, PROTECTED)
        .await
        .unwrap();
    assert!(remaining
        .iter()
        .all(|strategy| strategy.id != protected_id.to_string()));
}

/// Two writes begun at once (another replica's, say) for one due schedule: the second waits for the writers'
/// lock, then finds the schedule settled and writes nothing; one success event, the flag switched once.
async fn two_writers_apply_a_schedule_once(db: TestDb) {
    let (store, _, _) = protected_store(&db).await;
    let mut tx = store.begin_write(&alice()).await.unwrap();
    let changes = ChangeInputs::One(change(Change::UpdateEnabled { enabled: true }));
    let draft = change_requests::add_changes(&mut tx, PROJECT, PROTECTED, changes)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    set_state(&store, &alice(), draft.id, ChangeRequestState::InReview).await;
    set_state(&store, &bob(), draft.id, ChangeRequestState::Approved).await;
    // Scheduled with an API token (no account to check), a moment ahead.
    let token = Actor::token("admin");
    let at = chrono::Utc::now() + chrono::TimeDelta::milliseconds(500);
    let mut tx = store.begin_write(&token).await.unwrap();
    let input = StateInput {
        state: ChangeRequestState::Scheduled,
        comment: None,
        scheduled_at: Some(at.to_rfc3339()),
    };
    let admin = Grants::admin();
    let who = Who {
        credential: Credential::Token(vexil_shared::token::TokenKind::Admin),
        grants: &admin,
    };
    change_requests::change_state(&mut tx, PROJECT, draft.id, input, &Limits::default(), who)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;

    let attempt = |store: Store| async move {
        let mut tx = store.begin_write(&Actor::token("admin")).await.unwrap();
        let attempt = change_requests::apply_scheduled(&mut tx, draft.id, &Limits::default())
            .await
            .unwrap();
        // Held open a moment: the other write is begun meanwhile.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        if attempt == Attempt::Applied {
            assert!(tx.commit().await.unwrap());
        }
        attempt
    };
    let (first, second) = tokio::join!(
        tokio::spawn(attempt(store.clone())),
        tokio::spawn(attempt(store.clone()))
    );
    let mut attempts = [first.unwrap(), second.unwrap()];
    attempts.sort_by_key(|attempt| attempt != &Attempt::Applied);
    assert_eq!(attempts, [Attempt::Applied, Attempt::Gone]);
    assert_eq!(attempt(store.clone()).await, Attempt::Gone);

    let mut conn = store.read().await.unwrap();
    let count = |event_type: &'static str| {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM events WHERE type = $1").bind(event_type)
    };
    for event_type in [
        "change-request-scheduled-application-success",
        "change-request-applied",
        "feature-environment-enabled",
    ] {
        let counted = count(event_type).fetch_one(&mut *conn).await.unwrap();
        assert_eq!(counted, 1, "{event_type}");
    }
    let request = change_requests::get(&mut conn, PROJECT, draft.id)
        .await
        .unwrap();
    assert_eq!(request.state, ChangeRequestState::Applied);
}
