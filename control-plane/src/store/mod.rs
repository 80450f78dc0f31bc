//! The store: sqlx over SQLite or Postgres through the `Any` driver, so one set of SQL (with `$1` placeholders)
//! serves both backends. Migrations run at connect. Rows come back decoded ([`encoding`]): booleans as
//! `bool`, timestamps as [`Timestamp`](crate::time::Timestamp), JSON columns as the [`crate::model`] types.
//!
//! Writes go through [`WriteTx`]: it starts a transaction whose first statement bumps the global revision,
//! records audit events, and commits the row changes, the events and the new revision together. Writers are
//! serialised: on SQLite by a single writer connection, on Postgres by the row lock the revision bump takes
//! (later statements of the transaction then see every earlier commit), so no update is lost. The publisher
//! reads through [`Store::consistent_read`]: every row of one revision.

pub mod account_links;
pub mod action_sets;
pub mod addons;
pub mod applications;
pub mod banners;
pub mod change_request_schedules;
pub mod change_requests;
pub mod context_fields;
pub mod dependencies;
mod encoding;
pub mod environments;
pub mod events;
pub mod favorites;
pub mod feature_links;
pub mod features;
pub mod groups;
pub mod instance_counts;
pub mod lifecycle;
pub mod metrics;
pub mod project_overview;
pub mod projects;
pub mod release_plans;
pub mod roles;
pub mod search;
pub mod segments;
pub mod settings;
pub mod signals;
pub mod sso_sign_ins;
pub mod strategies;
pub mod strategy_definitions;
pub mod tags;
pub mod tokens;
pub mod unleash_edges;
pub mod unleash_ui;
pub mod users;
pub mod variants;
mod write;

pub use write::{Actor, Counter, Mark, NewEvent, WriteMode, WriteTx};

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Transaction};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use vexil_shared::{ApiError, ErrorKind};

/// Which database the URL points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The database a connection talks to.
    pub fn of(conn: &AnyConnection) -> Backend {
        if conn.backend_name() == "SQLite" {
            Backend::Sqlite
        } else {
            Backend::Postgres
        }
    }
}

/// How long a request waits for a Postgres connection: past it, the database is taken to be down and the
/// request answers 503 (a load balancer's or Kubernetes' probe gives up after a second or a few).
const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);

/// A database failure. Callers see 503 when the database does not answer ([`StoreError::is_unavailable`]),
/// else a generic 500; the cause goes to the log and the `store_errors_total` metric.
#[derive(Debug, thiserror::Error)]
#[error("store error: {0}")]
pub struct StoreError(#[from] pub sqlx::Error);

impl StoreError {
    /// Whether the database could not be reached or went away: no connection within the acquire timeout,
    /// a connection cut, or Postgres refusing connections or ending them (SQLSTATE class 08, "connection
    /// exception", and 57P, "operator intervention": shutting down, starting up).
    pub fn is_unavailable(&self) -> bool {
        match &self.0 {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => true,
            sqlx::Error::Database(error) => error
                .code()
                .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
            _ => false,
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        ::metrics::counter!("store_errors_total").increment(1);
        if error.is_unavailable() {
            tracing::warn!(%error, "the database is not answering");
            return ApiError::new(
                ErrorKind::Unavailable,
                "The database is not answering; try again shortly",
            );
        }
        tracing::error!(%error, "store operation failed");
        ApiError::internal()
    }
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
    url: String,
    committed: Arc<Notify>,
    outbox: Arc<Notify>,
    seen_pairs: Arc<lifecycle::SeenPairs>,
    known_applications: Arc<metrics::KnownApplications>,
}

/// A read transaction that sees one committed revision and everything written up to it (Postgres:
/// REPEATABLE READ; SQLite: a read transaction sees one WAL snapshot). Dropped, it rolls back.
pub struct ConsistentRead {
    tx: Transaction<'static, Any>,
    revision: i64,
}

impl ConsistentRead {
    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }

    /// The revision every read of this transaction belongs to.
    pub fn revision(&self) -> i64 {
        self.revision
    }
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
        let connect_url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                let separator = if url.contains('?') { '&' } else { '?' };
                format!("{url}{separator}mode=rwc")
            }
            _ => url.to_owned(),
        };
        let options = AnyConnectOptions::from_str(&connect_url)?;
        let (read, write) = match backend {
            Backend::Sqlite => {
                let write = sqlite_pool(1).connect_with(options.clone()).await?;
                // Both folders record into the same table, so each ignores the other's versions.
                let mut common = sqlx::migrate!("./migrations");
                common.set_ignore_missing(true);
                common.run(&write).await.map_err(sqlx::Error::from)?;
                let mut sqlite_only = sqlx::migrate!("./migrations-sqlite");
                sqlite_only.set_ignore_missing(true);
                sqlite_only.run(&write).await.map_err(sqlx::Error::from)?;
                let read = sqlite_pool(4).connect_with(options).await?;
                (read, write)
            }
            Backend::Postgres => {
                let pool = AnyPoolOptions::new()
                    .max_connections(10)
                    .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
                    .connect_with(options)
                    .await?;
                // Both folders record into the same table, so each ignores the other's versions.
                let mut common = sqlx::migrate!("./migrations");
                common.set_ignore_missing(true);
                common.run(&pool).await.map_err(sqlx::Error::from)?;
                let mut postgres_only = sqlx::migrate!("./migrations-postgres");
                postgres_only.set_ignore_missing(true);
                postgres_only.run(&pool).await.map_err(sqlx::Error::from)?;
                (pool.clone(), pool)
            }
        };
        Ok(Store {
            read,
            write,
            backend,
            url: url.to_owned(),
            committed: Arc::new(Notify::new()),
            outbox: Arc::new(Notify::new()),
            seen_pairs: Arc::default(),
            known_applications: Arc::default(),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Signalled after every committed write of this process (a permit is kept when nobody waits).
    pub fn committed(&self) -> Arc<Notify> {
        self.committed.clone()
    }

    /// The (flag, environment) pairs whose lifecycle stage this process recorded lately.
    pub fn seen_pairs(&self) -> &lifecycle::SeenPairs {
        &self.seen_pairs
    }

    /// The applications this process knows exist.
    pub fn known_applications(&self) -> &metrics::KnownApplications {
        &self.known_applications
    }

    /// Signalled after every committed write of this process that wrote addon deliveries.
    pub fn outbox_written(&self) -> Arc<Notify> {
        self.outbox.clone()
    }

    /// A connection for reads.
    pub async fn read(&self) -> Result<PoolConnection<Any>, StoreError> {
        Ok(self.read.acquire().await?)
    }

    /// A read transaction of one revision; see [`ConsistentRead`].
    #[tracing::instrument(name = "store.consistent_read", skip_all)]
    pub async fn consistent_read(&self) -> Result<ConsistentRead, StoreError> {
        let mut tx = self.read.begin().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                .execute(&mut *tx)
                .await?;
        }
        let revision = write::counter_value(&mut tx, Counter::Revision).await?;
        Ok(ConsistentRead { tx, revision })
    }

    /// A connection for writes that are not configuration (login sessions, usage): no revision, no audit
    /// event.
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
        revision_on(&mut conn).await
    }

    /// Starts a direct configuration write on behalf of `actor`; see [`WriteTx`].
    pub async fn begin_write(&self, actor: &Actor) -> Result<WriteTx, StoreError> {
        let tx = self.write.begin().await?;
        WriteTx::begin(
            tx,
            actor,
            self.backend,
            (self.committed.clone(), self.outbox.clone()),
        )
        .await
    }

    /// Wakes `wake` on every commit another process notifies on [`REVISION_CHANNEL`] (Postgres only; on
    /// SQLite, one process owns the file and its own commits signal [`Store::committed`]). Runs forever,
    /// reconnecting after a failure.
    pub async fn forward_revision_notifications(&self, wake: Arc<Notify>) {
        if self.backend != Backend::Postgres {
            return std::future::pending().await;
        }
        loop {
            match sqlx::postgres::PgListener::connect(&self.url).await {
                Ok(mut listener) => {
                    if let Err(error) = listener.listen(REVISION_CHANNEL).await {
                        tracing::warn!(%error, "cannot LISTEN for revisions");
                    } else {
                        loop {
                            match listener.recv().await {
                                Ok(_) => wake.notify_one(),
                                Err(error) => {
                                    tracing::warn!(%error, "revision notifications interrupted");
                                    break;
                                }
                            }
                        }
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot connect to LISTEN for revisions"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
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

/// The latest committed global revision, read on `conn`: every configuration write moves it on.
pub async fn revision_on(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    write::counter_value(conn, Counter::Revision).await
}
