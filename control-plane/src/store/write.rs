//! One configuration write ([`WriteTx`]): the revision bump, the audit events, the ids from the counters,
//! and whether the write is direct or the application of an approved change request ([`WriteMode`]).

use super::encoding::json_text;
use super::{Backend, StoreError, REVISION_CHANNEL};
use crate::time::Timestamp;
use sqlx::{Any, AnyConnection, Transaction};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;
use tracing::Instrument;

/// Who makes a change: recorded as `createdBy` / `createdByUserId` of its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub user_id: i64,
}

impl Actor {
    /// Unleash's user id for changes made with an admin API token.
    pub const ADMIN_TOKEN_USER_ID: i64 = -1337;

    /// The actor of an API token.
    pub fn token(name: &str) -> Actor {
        Actor {
            name: name.to_owned(),
            user_id: Self::ADMIN_TOKEN_USER_ID,
        }
    }

    /// The actor of a signed-in user (session or personal access token).
    pub fn user(name: &str, id: i64) -> Actor {
        Actor {
            name: name.to_owned(),
            user_id: id,
        }
    }

    /// The actor of the system itself (seeding at start).
    pub fn system() -> Actor {
        Actor {
            name: "system".to_owned(),
            user_id: Self::ADMIN_TOKEN_USER_ID,
        }
    }
}

/// An audit event to record within a write.
#[derive(Debug, Clone, Default)]
pub struct NewEvent {
    pub event_type: &'static str,
    pub project: Option<String>,
    pub environment: Option<String>,
    pub feature_name: Option<String>,
    pub data: Option<serde_json::Value>,
    pub pre_data: Option<serde_json::Value>,
}

/// The counters of `vexil_counters`: the global revision, and the ids of events and of the resources whose
/// ids are numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Revision,
    Event,
    Segment,
    User,
    Group,
    Pat,
    ChangeRequest,
    ChangeRequestChange,
    ChangeRequestComment,
    Addon,
    AddonDelivery,
    InviteLink,
    Role,
    SignalEndpoint,
    SignalEndpointToken,
    Signal,
    ActionSet,
    Action,
    ActionSetEvent,
    Banner,
}

impl Counter {
    fn name(self) -> &'static str {
        match self {
            Counter::Revision => "revision",
            Counter::Event => "event",
            Counter::Segment => "segment",
            Counter::User => "user",
            Counter::Group => "group",
            Counter::Pat => "pat",
            Counter::ChangeRequest => "change_request",
            Counter::ChangeRequestChange => "change_request_change",
            Counter::ChangeRequestComment => "change_request_comment",
            Counter::Addon => "addon",
            Counter::AddonDelivery => "addon_delivery",
            Counter::InviteLink => "invite_link",
            Counter::Role => "role",
            Counter::SignalEndpoint => "signal_endpoint",
            Counter::SignalEndpointToken => "signal_endpoint_token",
            Counter::Signal => "signal",
            Counter::ActionSet => "action_set",
            Counter::Action => "action",
            Counter::ActionSetEvent => "action_set_event",
            Counter::Banner => "banner",
        }
    }
}

/// Moves a counter on by one and returns its new value: the one statement every id and revision comes from.
/// Within a transaction it takes the counter's row lock until commit.
pub(super) async fn increment(
    conn: &mut AnyConnection,
    counter: Counter,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE vexil_counters SET value = value + 1 WHERE name = $1 RETURNING value",
    )
    .bind(counter.name())
    .fetch_one(conn)
    .await?)
}

/// A counter's current value.
pub(super) async fn counter_value(
    conn: &mut AnyConnection,
    counter: Counter,
) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT value FROM vexil_counters WHERE name = $1")
            .bind(counter.name())
            .fetch_one(conn)
            .await?,
    )
}

/// What [`enqueue`] matches an event on.
struct Enqueued<'a> {
    event_id: i64,
    event_type: &'a str,
    project: Option<&'a str>,
    environment: Option<&'a str>,
}

/// Writes an outbox row (`addon_deliveries`, see `store::addons`) for every enabled addon that listens to the event's type, project and environment
/// (as Unleash filters: an event without a project matches any project filter, an addon without one, or
/// with `*`, matches every project; the same for environments). Returns how many rows it wrote.
async fn enqueue(
    conn: &mut AnyConnection,
    event: Enqueued<'_>,
    now_ms: i64,
) -> Result<u64, StoreError> {
    let written = sqlx::query(
        "INSERT INTO addon_deliveries (event_id, addon_id, state, attempts, next_attempt_ms, lease_until_ms, \
         state_details, details) \
         SELECT $1, a.id, 'pending', 0, $2, 0, '', '{}' FROM addons a WHERE a.enabled = 1 \
         AND EXISTS (SELECT 1 FROM addon_filters f WHERE f.addon_id = a.id AND f.kind = 'event' AND f.value = $3) \
         AND ($4 IS NULL OR NOT EXISTS (SELECT 1 FROM addon_filters f WHERE f.addon_id = a.id AND f.kind = 'project') \
              OR EXISTS (SELECT 1 FROM addon_filters f WHERE f.addon_id = a.id AND f.kind = 'project' \
                         AND (f.value = '*' OR f.value = $4))) \
         AND ($5 IS NULL OR NOT EXISTS (SELECT 1 FROM addon_filters f WHERE f.addon_id = a.id AND f.kind = 'environment') \
              OR EXISTS (SELECT 1 FROM addon_filters f WHERE f.addon_id = a.id AND f.kind = 'environment' \
                         AND (f.value = '*' OR f.value = $5)))",
    )
    .bind(event.event_id)
    .bind(now_ms)
    .bind(event.event_type)
    .bind(event.project)
    .bind(event.environment)
    .execute(conn)
    .await?;
    Ok(written.rows_affected())
}

/// A point a [`WriteTx`] can go back to (a savepoint), with its event count then.
#[derive(Debug)]
pub struct Mark {
    events: usize,
    deliveries: u64,
}

/// What a [`WriteTx`] is doing, which decides whether change-request-protected environments may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// A write of the admin API: refused on an environment that takes changes only through change requests.
    Direct,
    /// The application of approved change request `id`: its changes go through.
    ApplyingChangeRequest { id: i64 },
}

/// One configuration write. Dropped without [`WriteTx::commit`], it rolls back; committed without any event
/// (a no-op), it rolls back too, so the revision only moves when something changed. Each one has a tracing
/// span (`store.write`, with its revision) whose close logs how long it took.
pub struct WriteTx {
    tx: Transaction<'static, Any>,
    revision: i64,
    actor: Actor,
    now: Timestamp,
    events: usize,
    deliveries: u64,
    mode: WriteMode,
    backend: Backend,
    committed: Arc<Notify>,
    outbox: Arc<Notify>,
    span: tracing::Span,
    started: Instant,
}

impl WriteTx {
    pub(super) async fn begin(
        mut tx: Transaction<'static, Any>,
        actor: &Actor,
        backend: Backend,
        signals: (Arc<Notify>, Arc<Notify>),
    ) -> Result<WriteTx, StoreError> {
        let (committed, outbox) = signals;
        let started = Instant::now();
        let revision = increment(&mut tx, Counter::Revision).await?;
        Ok(WriteTx {
            tx,
            revision,
            actor: actor.clone(),
            now: Timestamp::now(),
            events: 0,
            deliveries: 0,
            mode: WriteMode::Direct,
            backend,
            committed,
            outbox,
            span: tracing::debug_span!("store.write", revision, actor = %actor.name),
            started,
        })
    }

    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }

    /// The timestamp of this write, the same for all its rows and events.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Who makes this write.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// The revision this write commits as.
    pub fn revision(&self) -> i64 {
        self.revision
    }

    pub fn mode(&self) -> WriteMode {
        self.mode
    }

    /// From here on, this write applies approved change request `id` (only the change-request domain calls
    /// this, once the request's state machine allowed `Applied`), until [`WriteTx::end_change_request`].
    pub fn apply_change_request(&mut self, id: i64) {
        self.mode = WriteMode::ApplyingChangeRequest { id };
    }

    /// Back to a direct write.
    pub fn end_change_request(&mut self) {
        self.mode = WriteMode::Direct;
    }

    /// Marks a point this write can go back to ([`WriteTx::back_to`]), undoing a step that failed part way
    /// (an action of an action set) while keeping the steps before it.
    pub async fn mark(&mut self) -> Result<Mark, StoreError> {
        sqlx::query("SAVEPOINT vexil_step")
            .execute(&mut *self.tx)
            .await?;
        Ok(Mark {
            events: self.events,
            deliveries: self.deliveries,
        })
    }

    /// Keeps what was written since `mark`.
    pub async fn keep(&mut self, _mark: Mark) -> Result<(), StoreError> {
        sqlx::query("RELEASE SAVEPOINT vexil_step")
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    /// Undoes what was written since `mark`, its events included.
    pub async fn back_to(&mut self, mark: Mark) -> Result<(), StoreError> {
        sqlx::query("ROLLBACK TO SAVEPOINT vexil_step")
            .execute(&mut *self.tx)
            .await?;
        sqlx::query("RELEASE SAVEPOINT vexil_step")
            .execute(&mut *self.tx)
            .await?;
        self.events = mark.events;
        self.deliveries = mark.deliveries;
        Ok(())
    }

    /// The next id of a counter (`Counter::Revision` and `Counter::Event` belong to the write itself).
    pub async fn next_id(&mut self, counter: Counter) -> Result<i64, StoreError> {
        increment(&mut self.tx, counter).await
    }

    /// Records an audit event of this write, with an outbox row for every enabled addon it matches
    /// (`enqueue`), so the event and its deliveries commit together.
    pub async fn record(&mut self, event: NewEvent) -> Result<i64, StoreError> {
        let id = increment(&mut self.tx, Counter::Event).await?;
        let data = event.data.as_ref().map(json_text).transpose()?;
        let pre_data = event.pre_data.as_ref().map(json_text).transpose()?;
        sqlx::query(
            "INSERT INTO events (id, type, created_at, created_by, created_by_user_id, project, environment, \
             feature_name, data, pre_data, revision) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(id)
        .bind(event.event_type)
        .bind(self.now)
        .bind(&self.actor.name)
        .bind(self.actor.user_id)
        .bind(&event.project)
        .bind(&event.environment)
        .bind(event.feature_name)
        .bind(data)
        .bind(pre_data)
        .bind(self.revision)
        .execute(&mut *self.tx)
        .await?;
        let matched = Enqueued {
            event_id: id,
            event_type: event.event_type,
            project: event.project.as_deref(),
            environment: event.environment.as_deref(),
        };
        self.deliveries += enqueue(&mut self.tx, matched, self.now.millis()).await?;
        self.events += 1;
        Ok(id)
    }

    /// Commits the write if it recorded an event, else rolls it back. Returns whether it committed. A commit
    /// wakes this process's publisher (and its addon sender when it wrote deliveries) and, on Postgres,
    /// notifies [`REVISION_CHANNEL`] (delivered at commit).
    pub async fn commit(self) -> Result<bool, StoreError> {
        let span = self.span.clone();
        self.finish().instrument(span).await
    }

    async fn finish(mut self) -> Result<bool, StoreError> {
        if self.events == 0 {
            self.tx.rollback().await?;
            tracing::debug!(elapsed = ?self.started.elapsed(), "no change: rolled back");
            return Ok(false);
        }
        if self.backend == Backend::Postgres {
            // pg_notify returns void, which the Any driver cannot decode: select a constant around it.
            sqlx::query("SELECT 1 FROM (SELECT pg_notify($1, $2)) AS notified")
                .bind(REVISION_CHANNEL)
                .bind(self.revision.to_string())
                .execute(&mut *self.tx)
                .await?;
        }
        self.tx.commit().await?;
        tracing::debug!(events = self.events, elapsed = ?self.started.elapsed(), "committed");
        self.committed.notify_one();
        if self.deliveries > 0 {
            self.outbox.notify_one();
        }
        Ok(true)
    }
}
