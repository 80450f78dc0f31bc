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

use tokio::sync::watch;
use tracing::Instrument;
use vexil_proto::v1;
use vexil_serving::{AdvanceError, SnapshotChange};
use vexil_shared::{ApiError, CompileOptions};

use crate::domain::tokens::{self, TokenGrant};
use crate::domain::{client_document, ui_config};
use crate::store::{
    environments as environment_store, events as event_store, ConsistentRead, Store,
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
        frontend_api_enabled: bool,
        serving: Arc<vexil_serving::ServingState>,
    ) -> Result<Publisher, ApiError> {
        let first = read_configuration(&store, frontend_api_enabled).await?;
        let options = CompileOptions::default();
        let full = Published::first(first.clone())
            .full_with_edge_tokens(&published::EnvironmentFilter(Vec::new()));
        // A full snapshot always applies.
        let _ = serving.advance(SnapshotChange::Full(full), &options);
        let (sender, published) = watch::channel(Arc::new(Published::first(first)));
        let wake = store.committed();
        let notifications = store.clone();
        let forwarded = wake.clone();
        tokio::spawn(async move {
            notifications
                .forward_revision_notifications(forwarded)
                .await
        });
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = wake.notified() => {}
                    () = tokio::time::sleep(POLL_INTERVAL) => {}
                }
                // A failure is logged and counted by its conversion to ApiError; the next wake retries.
                let _ = refresh(&store, frontend_api_enabled, &sender, &serving, &options)
                    .instrument(tracing::debug_span!("publisher.refresh"))
                    .await;
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
    // `NoSnapshot` cannot happen: `start` stores the first snapshot.
    if let Err(AdvanceError::Gap(gap)) =
        serving.advance(SnapshotChange::Delta((*delta).clone()), options)
    {
        tracing::warn!(%gap, "rebuilding the served snapshot in full");
        let full = published.full_with_edge_tokens(&published::EnvironmentFilter(Vec::new()));
        // A full snapshot always applies.
        let _ = serving.advance(SnapshotChange::Full(full), options);
    }
    metrics::gauge!("published_revision").set(published.revision() as f64);
    sender.send_replace(published);
    Ok(())
}

/// Every environment's client document, the tokens and the settings (the stored `frontendApiOrigins`, and
/// `--frontend-api-enabled`), read in one transaction so that they belong to one revision.
async fn read_configuration(
    store: &Store,
    frontend_api_enabled: bool,
) -> Result<Configuration, ApiError> {
    let mut read = store.consistent_read().await?;
    read_everything(&mut read, frontend_api_enabled).await
}

/// The configuration after `previous`: `previous` with what the new revisions' events name re-read, or
/// all of it re-read when they name more (see [`Changed`]). `None` when the revision has not moved.
async fn read_changes(
    store: &Store,
    previous: &Configuration,
    frontend_api_enabled: bool,
) -> Result<Option<Configuration>, ApiError> {
    let mut read = store.consistent_read().await?;
    let revision = read.revision() as u64;
    if revision <= previous.revision {
        return Ok(None);
    }
    let events = event_store::of_revisions(
        read.conn(),
        previous.revision as i64,
        revision as i64,
        changes::MAX_EVENTS as i64 + 1,
    )
    .await?;
    let next = match Changed::of(&events, previous.revision as i64, revision as i64) {
        Changed::Everything => read_everything(&mut read, frontend_api_enabled).await?,
        Changed::Parts {
            flags,
            tokens,
            settings,
        } => {
            let mut next = previous.clone();
            next.revision = revision;
            for (environment, doc) in next.environments.iter_mut() {
                for name in &flags {
                    match client_document::feature_in(read.conn(), environment, name).await? {
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
                next.tokens = read_tokens(&mut read).await?;
            }
            if settings {
                next.settings = read_settings(&mut read, frontend_api_enabled).await?;
            }
            next
        }
    };
    Ok(Some(next))
}

/// Everything, as of the read's revision.
async fn read_everything(
    read: &mut ConsistentRead,
    frontend_api_enabled: bool,
) -> Result<Configuration, ApiError> {
    let mut environments = std::collections::BTreeMap::new();
    for environment in environment_store::list(read.conn()).await? {
        let document = client_document::features_document(read.conn(), &environment.name).await?;
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
        revision: read.revision() as u64,
        environments,
        tokens: read_tokens(read).await?,
        settings: read_settings(read, frontend_api_enabled).await?,
    })
}

async fn read_tokens(
    read: &mut ConsistentRead,
) -> Result<std::collections::BTreeMap<Vec<u8>, Arc<v1::TokenGrant>>, ApiError> {
    Ok(tokens::grants(read.conn())
        .await?
        .into_iter()
        .map(grant_message)
        .map(|grant| (grant.sha256.clone(), Arc::new(grant)))
        .collect())
}

async fn read_settings(
    read: &mut ConsistentRead,
    frontend_api_enabled: bool,
) -> Result<v1::Settings, ApiError> {
    Ok(v1::Settings {
        frontend_api_origins: ui_config::frontend_api_origins(read.conn()).await?,
        frontend_api_enabled,
    })
}

/// A token's grant as the edges receive it.
fn grant_message(grant: TokenGrant) -> v1::TokenGrant {
    v1::TokenGrant {
        sha256: grant.sha256.to_vec(),
        kind: v1::TokenKind::from(grant.kind) as i32,
        projects: grant.projects,
        environment: grant.environment,
        expires_at_ms: grant.expires_at.map(|at| at.millis()),
    }
}
