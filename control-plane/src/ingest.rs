//! Usage ingest adapters: the gRPC `vexil.v1.Usage/Report` the edges send their batches to, the sink the
//! SDK routes of `vexil-serving` post into (single-binary installs), the periodic roll-up of minute
//! buckets into hours, and the periodic write of the tokens this process saw used.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};
use vexil_proto::v1;
use vexil_proto::v1::usage_server::Usage;
use vexil_serving::token_sightings::TokenSightings;
use vexil_serving::usage::UsageSink;
use vexil_shared::{ApiError, ErrorKind};

use crate::domain::{metrics, tokens};
use crate::store::Store;
use crate::time::Clock;

/// How often minute buckets older than 48 h are rolled up.
const ROLL_UP_INTERVAL: Duration = Duration::from_secs(600);

pub struct UsageService {
    pub store: Store,
    pub clock: Clock,
}

#[tonic::async_trait]
impl Usage for UsageService {
    async fn report(
        &self,
        request: Request<v1::UsageBatch>,
    ) -> Result<Response<v1::ReportAck>, Status> {
        let batch = request.into_inner();
        let edge = batch.edge_id.clone();
        let batch_id = batch.batch_id.clone();
        let duplicate = metrics::ingest_batch(&self.store, batch, (self.clock)())
            .await
            .map_err(|error| match error.kind {
                ErrorKind::Validation => {
                    // Not the ids: they may be what is wrong (the reason names fields, never whole values).
                    tracing::warn!(reason = %error.message, "usage batch refused");
                    Status::invalid_argument(error.message)
                }
                _ => Status::unavailable(error.message),
            })?;
        tracing::debug!(%edge, batch = %batch_id, duplicate, "usage batch");
        metrics::count_batch(duplicate);
        Ok(Response::new(v1::ReportAck { duplicate }))
    }
}

/// The SDKs' posts to the control plane itself: one transaction each.
pub struct StoreSink {
    pub store: Store,
}

impl UsageSink for StoreSink {
    fn record(
        &self,
        usage: vexil_serving::usage::Usage,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + '_>>
    {
        Box::pin(metrics::ingest(&self.store, usage))
    }
}

/// Rolls up old minute buckets and prunes what is past its retention now and then, forever.
pub async fn roll_up_forever(store: Store, clock: Clock, retention: metrics::Retention) {
    loop {
        match metrics::roll_up(&store, clock(), retention).await {
            Ok(rolled) if rolled != metrics::RolledUp::default() => tracing::info!(
                minute_buckets = rolled.minute_buckets,
                clients_pruned = rolled.clients_pruned,
                "usage rolled up"
            ),
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "cannot roll up the usage buckets"),
        }
        tokio::time::sleep(ROLL_UP_INTERVAL).await;
    }
}

/// Writes the tokens this process saw used (`sightings`: admin API, SDK routes, gRPC) as their "last used",
/// one transaction every `interval`, forever.
pub async fn note_tokens_seen_forever(
    store: Store,
    clock: Clock,
    sightings: Arc<TokenSightings>,
    interval: Duration,
) {
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match tokens::write_sightings(&store, &sightings, clock()).await {
            Ok(0) => {}
            Ok(written) => tracing::debug!(tokens = written, "token use noted"),
            Err(error) => {
                tracing::warn!(%error, "cannot note the tokens used; kept for the next try")
            }
        }
    }
}

/// For `Arc<StoreSink>` as the serving state's sink.
pub fn sink(store: Store) -> Arc<dyn UsageSink> {
    Arc::new(StoreSink { store })
}
