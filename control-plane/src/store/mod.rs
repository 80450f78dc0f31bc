//! The store: sqlx over SQLite or Postgres through the `Any` driver, so one set of SQL (with `$1` placeholders)
//! serves both backends. Migrations run at connect.
//!
//! Writes go through [`WriteTx`]: it starts a transaction whose first statement bumps the global revision,
//! records audit events, and commits the row changes, the events and the new revision together. Writers are
//! serialised: on SQLite by a single writer connection, on Postgres by the row lock the revision bump takes
//! (later statements of the transaction then see every earlier commit), so no update is lost.

pub mod change_requests;
pub mod context_fields;
pub mod environments;
pub mod events;
pub mod features;
pub mod groups;
pub mod metrics;
pub mod projects;
pub mod segments;
pub mod settings;
pub mod strategies;
pub mod strategy_definitions;
pub mod tokens;
pub mod users;
pub mod variants;

use chrono::{SecondsFormat, Utc};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Transaction};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use vexil_shared::ApiError;

/// Which database the URL points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database failure. Callers see a generic 500; the cause goes to the log and the `store_errors_total` metric.
#[derive(Debug, thiserror::Error)]
#[error("store error: {0}")]
pub struct StoreError(#[from] pub sqlx::Error);

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        tracing::error!(%error, "store operation failed");
        ::metrics::counter!("store_errors_total").increment(1);
        ApiError::internal()
    }
}

/// A stored JSON column that does not parse: only possible if the database was edited by hand.
pub fn corrupt_json(column: &str, error: serde_json::Error) -> StoreError {
    StoreError(sqlx::Error::Decode(
        format!("column {column} holds invalid JSON: {error}").into(),
    ))
}

/// The current time as the store writes it: RFC 3339 UTC with milliseconds.
pub fn timestamp_now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The Postgres channel every committed write notifies with its revision (`pg_notify`), so that the other
/// replicas republish at once.
pub const REVISION_CHANNEL: &str = "vexil_revision";

/// Connection pools: `read` for queries, `write` for [`WriteTx`] (one connection on SQLite).
#[derive(Clone)]
pub struct Store {
    read: AnyPool,
    write: AnyPool,
    backend: Backend,
    committed: Arc<Notify>,
}

impl Store {
    /// Connects, creating a missing SQLite file, and runs the migrations.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(StoreError(sqlx::Error::Configuration(
                "the database URL must start with sqlite: or postgres:".into(),
            )));
        };
        let url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                let separator = if url.contains('?') { '&' } else { '?' };
                format!("{url}{separator}mode=rwc")
            }
            _ => url.to_owned(),
        };
        let options = AnyConnectOptions::from_str(&url)?;
        let (read, write) = match backend {
            Backend::Sqlite => {
                let write = sqlite_pool(1).connect_with(options.clone()).await?;
                sqlx::migrate!("./migrations")
                    .run(&write)
                    .await
                    .map_err(sqlx::Error::from)?;
                let read = sqlite_pool(4).connect_with(options).await?;
                (read, write)
            }
            Backend::Postgres => {
                let pool = AnyPoolOptions::new()
                    .max_connections(10)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(options)
                    .await?;
                sqlx::migrate!("./migrations")
                    .run(&pool)
                    .await
                    .map_err(sqlx::Error::from)?;
                (pool.clone(), pool)
            }
        };
        Ok(Store {
            read,
            write,
            backend,
            committed: Arc::new(Notify::new()),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Signalled after every committed write of this process (a permit is kept when nobody waits).
    pub fn committed(&self) -> Arc<Notify> {
        self.committed.clone()
    }

    /// A connection for reads.
    pub async fn read(&self) -> Result<PoolConnection<Any>, StoreError> {
        Ok(self.read.acquire().await?)
    }

    /// A read transaction.
    pub async fn read_tx(&self) -> Result<Transaction<'static, Any>, StoreError> {
        Ok(self.read.begin().await?)
    }

    /// A connection for writes that are not configuration (login sessions): no revision, no audit event.
    pub async fn bookkeeping(&self) -> Result<PoolConnection<Any>, StoreError> {
        Ok(self.write.acquire().await?)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.read().await?;
        conn.ping().await?;
        Ok(())
    }

    /// The latest committed global revision.
    pub async fn revision(&self) -> Result<i64, StoreError> {
        let mut conn = self.read().await?;
        let revision: i64 =
            sqlx::query_scalar("SELECT value FROM vexil_counters WHERE name = 'revision'")
                .fetch_one(&mut *conn)
                .await?;
        Ok(revision)
    }

    /// Starts a configuration write on behalf of `actor`; see [`WriteTx`].
    pub async fn begin_write(&self, actor: &Actor) -> Result<WriteTx, StoreError> {
        let mut tx = self.write.begin().await?;
        let revision: i64 = sqlx::query_scalar(
            "UPDATE vexil_counters SET value = value + 1 WHERE name = 'revision' RETURNING value",
        )
        .fetch_one(&mut *tx)
        .await?;
        Ok(WriteTx {
            tx,
            revision,
            actor: actor.clone(),
            now: timestamp_now(),
            events: 0,
            backend: self.backend,
            committed: self.committed.clone(),
        })
    }

    /// Closes the pools (on SQLite this checkpoints the WAL).
    pub async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }
}

/// SQLite: WAL so readers never block the writer; `synchronous=FULL` so a commit is on disk before it is
/// acknowledged, even across a power cut (NORMAL would only survive a process crash); a busy timeout for
/// checkpoints; foreign keys on.
fn sqlite_pool(max_connections: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(30))
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute(
                    "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                     PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;",
                )
                .await?;
                Ok(())
            })
        })
}

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

/// One configuration write. Dropped without [`WriteTx::commit`], it rolls back; committed without any event
/// (a no-op), it rolls back too, so the revision only moves when something changed.
pub struct WriteTx {
    tx: Transaction<'static, Any>,
    revision: i64,
    actor: Actor,
    now: String,
    events: usize,
    backend: Backend,
    committed: Arc<Notify>,
}

impl WriteTx {
    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }

    /// The timestamp of this write, the same for all its rows and events.
    pub fn now(&self) -> &str {
        &self.now
    }

    /// Who makes this write.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// The revision this write commits as.
    pub fn revision(&self) -> i64 {
        self.revision
    }

    /// The next id of a counter of `vexil_counters` (`user`, `group`, `pat`).
    pub async fn next_id(&mut self, counter: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "UPDATE vexil_counters SET value = value + 1 WHERE name = $1 RETURNING value",
        )
        .bind(counter)
        .fetch_one(&mut *self.tx)
        .await?)
    }

    /// Records an audit event of this write.
    pub async fn record(&mut self, event: NewEvent) -> Result<i64, StoreError> {
        let id: i64 = sqlx::query_scalar(
            "UPDATE vexil_counters SET value = value + 1 WHERE name = 'event' RETURNING value",
        )
        .fetch_one(&mut *self.tx)
        .await?;
        sqlx::query(
            "INSERT INTO events (id, type, created_at, created_by, created_by_user_id, project, environment, \
             feature_name, data, pre_data, revision) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(id)
        .bind(event.event_type)
        .bind(&self.now)
        .bind(&self.actor.name)
        .bind(self.actor.user_id)
        .bind(event.project)
        .bind(event.environment)
        .bind(event.feature_name)
        .bind(event.data.map(|value| value.to_string()))
        .bind(event.pre_data.map(|value| value.to_string()))
        .bind(self.revision)
        .execute(&mut *self.tx)
        .await?;
        self.events += 1;
        Ok(id)
    }

    /// Commits the write if it recorded an event, else rolls it back. Returns whether it committed. A commit
    /// wakes this process's publisher and, on Postgres, notifies [`REVISION_CHANNEL`] (delivered at commit).
    pub async fn commit(mut self) -> Result<bool, StoreError> {
        if self.events == 0 {
            self.tx.rollback().await?;
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
        self.committed.notify_one();
        Ok(true)
    }
}
