//! The upstream link: subscribe to a control plane's snapshot stream, apply each update into a new
//! snapshot and swap it in; on any failure try the next upstream after a jittered exponential backoff,
//! serving the last snapshot meanwhile.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use vexil_proto::v1;
use vexil_proto::v1::snapshot_update::Update;
use vexil_proto::v1::snapshots_client::SnapshotsClient;
use vexil_serving::{ServingSnapshot, ServingState, SnapshotChange};
use vexil_shared::CompileOptions;

use crate::http_server::UpstreamStatus;
use crate::snapshot_cache;
use crate::upstream::UpstreamAccess;

/// The control plane sends a heartbeat every 5 s; three missed ones end the stream.
const SILENCE_LIMIT: Duration = Duration::from_secs(15);
/// A full snapshot of many thousand flags is well over tonic's default 4 MiB.
const MAX_MESSAGE: usize = 1 << 30;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

pub struct Subscriber {
    /// The edge token and TLS roots the upstreams are reached with.
    pub access: Arc<UpstreamAccess>,
    pub upstreams: Vec<String>,
    pub environments: Vec<String>,
    pub edge_id: String,
    pub serving: Arc<ServingState>,
    pub status: Arc<UpstreamStatus>,
    pub cache: Option<snapshot_cache::CacheWriter>,
    /// Where replaced snapshots go, so that the evaluations counted on them are still reported.
    pub retired: tokio::sync::mpsc::UnboundedSender<Arc<ServingSnapshot>>,
}

impl Subscriber {
    /// Runs forever.
    pub async fn run(self) {
        let mut backoff = BACKOFF_FIRST;
        for upstream in self.upstreams.iter().cycle() {
            match self.follow(upstream).await {
                Ok(()) => tracing::warn!(%upstream, "the snapshot stream ended"),
                Err(error) => tracing::warn!(%upstream, %error, "snapshot stream failed"),
            }
            if self.status.connected.swap(false, Ordering::Relaxed) {
                // It had worked: start the backoff over.
                backoff = BACKOFF_FIRST;
            }
            // Full jitter in [backoff/2, backoff).
            let pause = backoff.mul_f64(0.5 + fastrand::f64() / 2.0);
            tokio::time::sleep(pause).await;
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    /// One subscription, until it fails or ends.
    async fn follow(&self, upstream: &str) -> Result<(), String> {
        let channel = self
            .access
            .connect(upstream, |endpoint| {
                endpoint.connect_timeout(CONNECT_TIMEOUT)
            })
            .await?;
        let last_revision = self
            .serving
            .current
            .load()
            .as_ref()
            .map_or(0, |s| s.revision);
        let mut stream = SnapshotsClient::new(channel)
            .max_decoding_message_size(MAX_MESSAGE)
            .subscribe(v1::SubscribeRequest {
                edge_id: self.edge_id.clone(),
                environments: self.environments.clone(),
                last_revision,
                edge_version: env!("CARGO_PKG_VERSION").to_owned(),
            })
            .await
            .map_err(|status| status.to_string())?
            .into_inner();
        self.status.connected.store(true, Ordering::Relaxed);
        tracing::info!(%upstream, last_revision, "subscribed");
        let options = CompileOptions::default();
        loop {
            let message = tokio::time::timeout(SILENCE_LIMIT, stream.message())
                .await
                .map_err(|_| "no heartbeat from the upstream".to_owned())?
                .map_err(|status| status.to_string())?;
            let Some(v1::SnapshotUpdate {
                update: Some(update),
            }) = message
            else {
                return Ok(());
            };
            let change = match update {
                Update::Full(full) => SnapshotChange::Full(full),
                Update::Delta(delta) => SnapshotChange::Delta(delta),
                Update::Heartbeat(_) => {
                    self.status.touch();
                    continue;
                }
            };
            // A delta before any snapshot, or from another revision, ends the stream: resubscribe.
            let advanced = self
                .serving
                .advance(change, &options)
                .map_err(|error| error.to_string())?;
            tracing::debug!(revision = advanced.current.revision, "snapshot updated");
            // A resubscription at the current revision brings the settings alone, at the same revision.
            let new_revision = advanced
                .replaced
                .as_ref()
                .is_none_or(|old| old.revision != advanced.current.revision);
            if let Some(old) = advanced.replaced {
                let _ = self.retired.send(old);
            }
            self.status.touch();
            if new_revision {
                // When this revision started being served (the propagation benchmark reads it).
                metrics::gauge!("snapshot_applied_unix_seconds").set(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs_f64()),
                );
            }
            if let Some(cache) = &self.cache {
                cache.write(advanced.current);
            }
        }
    }
}
