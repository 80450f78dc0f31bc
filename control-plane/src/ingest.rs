//! Usage ingest adapters: the gRPC `vexil.v1.Usage/Report` the edges send their batches to, the sink the
//! SDK routes of `vexil-serving` post into (single-binary installs), and the periodic roll-up of minute
//! buckets into hours.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};
use vexil_proto::v1;
use vexil_proto::v1::usage_server::Usage;
use vexil_serving::usage::UsageSink;
use vexil_shared::{ApiError, ErrorKind};

use crate::domain::metrics;
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
                ErrorKind::Validation => Status::invalid_argument(error.message),
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

/// Rolls up old minute buckets now and then, forever.
pub async fn roll_up_forever(store: Store, clock: Clock, hours_kept: Duration) {
    let hours_kept_ms = i64::try_from(hours_kept.as_millis()).unwrap_or(i64::MAX);
    loop {
        match metrics::roll_up(&store, clock(), hours_kept_ms).await {
            Ok(rolled) if rolled > 0 => tracing::info!(rolled, "minute buckets rolled up"),
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "cannot roll up the usage buckets"),
        }
        tokio::time::sleep(ROLL_UP_INTERVAL).await;
    }
}

/// For `Arc<StoreSink>` as the serving state's sink.
pub fn sink(store: Store) -> Arc<dyn UsageSink> {
    Arc::new(StoreSink { store })
}
