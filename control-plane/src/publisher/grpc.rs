//! `vexil.v1.Snapshots/Subscribe`: per edge, a catch-up (the missing deltas, or a full snapshot), then
//! the deltas as revisions commit, and heartbeats while idle; the environments are those the caller's edge
//! token allows, and the stream ends (UNAUTHENTICATED) when that token is revoked or expires.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use vexil_proto::v1;
use vexil_proto::v1::snapshots_server::Snapshots;

use super::published::{EnvironmentFilter, Published};
use crate::edge_auth::EdgeCaller;

/// How often an idle stream carries a heartbeat.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);

pub struct SnapshotService {
    pub published: watch::Receiver<Arc<Published>>,
}

type Updates = Pin<Box<dyn tokio_stream::Stream<Item = Result<v1::SnapshotUpdate, Status>> + Send>>;

#[tonic::async_trait]
impl Snapshots for SnapshotService {
    type SubscribeStream = Updates;

    async fn subscribe(
        &self,
        request: Request<v1::SubscribeRequest>,
    ) -> Result<Response<Updates>, Status> {
        let caller = EdgeCaller::of_request(&request)?;
        let mut request = request.into_inner();
        request.environments = caller.environments(std::mem::take(&mut request.environments))?;
        tracing::info!(
            edge = %request.edge_id,
            last_revision = request.last_revision,
            version = %request.edge_version,
            "edge subscribed"
        );
        metrics::gauge!("connected_edges").increment(1.0);
        let (sender, receiver) = mpsc::channel(64);
        tokio::spawn(stream_updates(
            request,
            caller,
            self.published.clone(),
            sender,
        ));
        Ok(Response::new(Box::pin(ReceiverStream::new(receiver))))
    }
}

async fn stream_updates(
    request: v1::SubscribeRequest,
    caller: EdgeCaller,
    mut published: watch::Receiver<Arc<Published>>,
    sender: mpsc::Sender<Result<v1::SnapshotUpdate, Status>>,
) {
    let filter = EnvironmentFilter(request.environments);
    let mut sent = request.last_revision;
    let mut resumed = false;
    let mut current = published.borrow_and_update().clone();
    loop {
        let now_ms = vexil_shared::time::now_ms();
        if !caller.admitted(&current.configuration, now_ms) {
            let ended = Status::unauthenticated("the edge token was revoked or has expired");
            let _ = sender.send(Err(ended)).await;
            return finish(&request.edge_id);
        }
        let expires_in = caller.expires_in(&current.configuration, now_ms);
        // An edge ahead of this replica (it came from another one) waits for this replica to catch up.
        if current.revision() >= sent {
            let updates = if resumed {
                current.catch_up(sent, &filter)
            } else {
                resumed = true;
                current.resume(sent, &filter)
            };
            for update in updates {
                let update = v1::SnapshotUpdate {
                    update: Some(update),
                };
                metrics::counter!("snapshot_update_bytes_total")
                    .increment(prost::Message::encoded_len(&update) as u64);
                if sender.send(Ok(update)).await.is_err() {
                    return finish(&request.edge_id);
                }
            }
            sent = current.revision();
        }
        tokio::select! {
            changed = published.changed() => {
                if changed.is_err() {
                    return finish(&request.edge_id);
                }
                current = published.borrow_and_update().clone();
            }
            () = tokio::time::sleep(HEARTBEAT_INTERVAL) => {
                let beat = v1::SnapshotUpdate {
                    update: Some(v1::snapshot_update::Update::Heartbeat(v1::Heartbeat { revision: sent })),
                };
                if sender.send(Ok(beat)).await.is_err() {
                    return finish(&request.edge_id);
                }
            }
            () = sender.closed() => return finish(&request.edge_id),
            // Checked again at the top of the loop.
            () = until(expires_in) => {}
        }
    }
}

/// Sleeps for `duration`; forever when there is none.
async fn until(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}

fn finish(edge_id: &str) {
    tracing::info!(edge = %edge_id, "edge disconnected");
    metrics::gauge!("connected_edges").decrement(1.0);
}
