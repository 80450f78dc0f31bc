//! The snapshot publisher: keeps the configuration of every environment (flags, segments), the tokens'
//! hashes and scopes and the settings in memory, re-reads them from the store whenever the revision moves,
//! and hands the delta to the edges' gRPC streams ([`grpc`]) and to this process's own SDK-facing API.
//!
//! The revision moves by a commit of this process (the store's `committed` signal), of another replica
//! (Postgres `LISTEN` on the revision channel) or of anything else (a periodic revision poll: the safety
//! net). The re-read is one consistent read transaction. It reads only what the new revisions' audit events
//! name ([`changes`]): for a one-flag change, that flag in each environment, so its cost does not grow with
//! the number of flags. The delta is the difference between the two configurations, so its size follows
//! what changed.

pub mod changes;
pub mod grpc;
pub mod published;

use std::sync::Arc;
use std::time::Duration;

use chrono::DateTime;
use tokio::sync::watch;
use vexil_proto::v1;
use vexil_serving::ServingSnapshot;
use vexil_shared::token::TokenKind;
use vexil_shared::{ApiError, CompileOptions};

use crate::domain::{client_document, ui_config};
use crate::store::tokens::{self as token_store, TokenRow};
use crate::store::{
    environments as environment_store, events as event_store, Backend, Store, StoreError,
    REVISION_CHANNEL,
};
use changes::Changed;
use published::{Configuration, EnvironmentDoc, Published};

/// How often the revision is polled even without a notification.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The publisher's handle: the current [`Published`] value, watched by every edge stream.
#[derive(Clone)]
pub struct Publisher {
    published: watch::Receiver<Arc<Published>>,
}

impl Publisher {
    /// Reads the configuration once, then keeps it current in the background. `serving` (the control
    /// plane's own `/api/frontend` and client API) receives every update too.
    pub async fn start(
        store: Store,
        database_url: &str,
        frontend_api_enabled: bool,
        serving: Arc<vexil_serving::ServingState>,
    ) -> Result<Publisher, ApiError> {
        let first = read_configuration(&store, frontend_api_enabled).await?;
        let options = CompileOptions::default();
        serving
            .current
            .store(Some(Arc::new(ServingSnapshot::from_full(
                Published::first(first.clone()).full(&published::EnvironmentFilter(Vec::new())),
                &options,
            ))));
        let (sender, published) = watch::channel(Arc::new(Published::first(first)));
        let wake = store.committed();
        if store.backend() == Backend::Postgres {
            tokio::spawn(listen_for_revisions(database_url.to_owned(), wake.clone()));
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = wake.notified() => {}
                    () = tokio::time::sleep(POLL_INTERVAL) => {}
                }
                // A failure is logged and counted by its conversion to ApiError; the next wake retries.
                let _ = refresh(&store, frontend_api_enabled, &sender, &serving, &options).await;
            }
        });
        Ok(Publisher { published })
    }

    pub fn watch(&self) -> watch::Receiver<Arc<Published>> {
        self.published.clone()
    }
}

/// Re-reads the configuration if the revision moved, and publishes the delta.
async fn refresh(
    store: &Store,
    frontend_api_enabled: bool,
    sender: &watch::Sender<Arc<Published>>,
    serving: &vexil_serving::ServingState,
    options: &CompileOptions,
) -> Result<(), ApiError> {
    let current = sender.borrow().clone();
    if store.revision().await? as u64 == current.revision() {
        return Ok(());
    }
    let Some(next) = read_changes(store, &current.configuration, frontend_api_enabled).await?
    else {
        return Ok(());
    };
    let (published, delta) = current.advance(next);
    let published = Arc::new(published);
    tracing::debug!(
        from = delta.from_revision,
        to = delta.to_revision,
        environments = delta.environments.len(),
        "publishing a delta"
    );
    if let Some(own) = serving.current.load_full() {
        let next = own.apply((*delta).clone(), options).unwrap_or_else(|gap| {
            tracing::warn!(%gap, "rebuilding the served snapshot in full");
            ServingSnapshot::from_full(
                published.full(&published::EnvironmentFilter(Vec::new())),
                options,
            )
        });
        serving.current.store(Some(Arc::new(next)));
    }
    metrics::gauge!("published_revision").set(published.revision() as f64);
    sender.send_replace(published);
    Ok(())
}

/// Wakes the publisher on every `NOTIFY` of another replica's commit; reconnects after a failure.
async fn listen_for_revisions(database_url: String, wake: Arc<tokio::sync::Notify>) {
    loop {
        match sqlx::postgres::PgListener::connect(&database_url).await {
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

/// A consistent read transaction (Postgres: REPEATABLE READ; SQLite: a read transaction sees one WAL
/// snapshot), and the revision it sees.
async fn begin_read(
    store: &Store,
) -> Result<(sqlx::Transaction<'static, sqlx::Any>, u64), ApiError> {
    let mut tx = store.read_tx().await?;
    if store.backend() == Backend::Postgres {
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .execute(&mut *tx)
            .await
            .map_err(StoreError)?;
    }
    let revision: i64 =
        sqlx::query_scalar("SELECT value FROM vexil_counters WHERE name = 'revision'")
            .fetch_one(&mut *tx)
            .await
            .map_err(StoreError)?;
    Ok((tx, revision as u64))
}

/// Every environment's client document, the tokens and the settings (the stored `frontendApiOrigins`, and
/// `--frontend-api-enabled`), read in one transaction so that they belong to one revision.
async fn read_configuration(
    store: &Store,
    frontend_api_enabled: bool,
) -> Result<Configuration, ApiError> {
    let (mut tx, revision) = begin_read(store).await?;
    let configuration = read_everything(&mut tx, revision, frontend_api_enabled).await?;
    tx.rollback().await.map_err(StoreError)?;
    Ok(configuration)
}

/// The configuration after `previous`: `previous` with what the new revisions' events name re-read, or
/// all of it re-read when they name more (see [`Changed`]). `None` when the revision has not moved.
async fn read_changes(
    store: &Store,
    previous: &Configuration,
    frontend_api_enabled: bool,
) -> Result<Option<Configuration>, ApiError> {
    let (mut tx, revision) = begin_read(store).await?;
    if revision <= previous.revision {
        return Ok(None);
    }
    let events = event_store::of_revisions(
        &mut tx,
        previous.revision as i64,
        revision as i64,
        changes::MAX_EVENTS as i64 + 1,
    )
    .await?;
    let next = match Changed::of(&events, previous.revision as i64, revision as i64) {
        Changed::Everything => read_everything(&mut tx, revision, frontend_api_enabled).await?,
        Changed::Parts {
            flags,
            tokens,
            settings,
        } => {
            let mut next = previous.clone();
            next.revision = revision;
            for (environment, doc) in next.environments.iter_mut() {
                for name in &flags {
                    match client_document::feature_in(&mut tx, environment, name).await? {
                        Some(feature) => {
                            doc.features
                                .insert(name.clone(), Arc::new(v1::Feature::from(feature)));
                        }
                        None => {
                            doc.features.remove(name);
                        }
                    }
                }
            }
            if tokens {
                next.tokens = read_tokens(&mut tx).await?;
            }
            if settings {
                next.settings = read_settings(&mut tx, frontend_api_enabled).await?;
            }
            next
        }
    };
    tx.rollback().await.map_err(StoreError)?;
    Ok(Some(next))
}

async fn read_everything(
    tx: &mut sqlx::AnyConnection,
    revision: u64,
    frontend_api_enabled: bool,
) -> Result<Configuration, ApiError> {
    let mut environments = std::collections::BTreeMap::new();
    for environment in environment_store::list(tx).await? {
        let document = client_document::features_document(tx, &environment.name).await?;
        let state = vexil_proto::environment_state(&environment.name, document);
        environments.insert(
            environment.name,
            EnvironmentDoc {
                features: state
                    .features
                    .into_iter()
                    .map(|f| (f.name.clone(), Arc::new(f)))
                    .collect(),
                segments: state
                    .segments
                    .into_iter()
                    .map(|s| (s.id, Arc::new(s)))
                    .collect(),
            },
        );
    }
    Ok(Configuration {
        revision,
        environments,
        tokens: read_tokens(tx).await?,
        settings: read_settings(tx, frontend_api_enabled).await?,
    })
}

async fn read_tokens(
    tx: &mut sqlx::AnyConnection,
) -> Result<std::collections::BTreeMap<Vec<u8>, Arc<v1::TokenGrant>>, ApiError> {
    Ok(token_store::list(tx)
        .await?
        .into_iter()
        .filter_map(grant_of)
        .map(|grant| (grant.sha256.clone(), Arc::new(grant)))
        .collect())
}

async fn read_settings(
    tx: &mut sqlx::AnyConnection,
    frontend_api_enabled: bool,
) -> Result<v1::Settings, ApiError> {
    Ok(v1::Settings {
        frontend_api_origins: ui_config::frontend_api_origins(tx).await?,
        frontend_api_enabled,
    })
}

/// A stored token as the edges know it; `None` for a row that does not parse (only if edited by hand).
fn grant_of(row: TokenRow) -> Option<v1::TokenGrant> {
    let kind = v1::TokenKind::from(TokenKind::parse(&row.kind)?);
    let sha256 = decode_hex(&row.secret_hash)?;
    let projects: Vec<String> = serde_json::from_str(&row.projects).ok()?;
    let expires_at_ms = match &row.expires_at {
        Some(text) => Some(DateTime::parse_from_rfc3339(text).ok()?.timestamp_millis()),
        None => None,
    };
    Some(v1::TokenGrant {
        sha256,
        kind: kind as i32,
        projects,
        environment: row.environment,
        expires_at_ms,
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
