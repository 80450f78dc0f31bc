//! A gRPC stand-in between an edge and the real control plane: snapshot streams pass through unchanged; usage
//! batches are passed on, except that in a batch naming a chosen application that name gets a NUL first, so
//! that the control plane refuses the batch as it refuses any invalid one (`INVALID_ARGUMENT`).

use std::net::SocketAddr;

use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use vexil_proto::v1;
use vexil_proto::v1::snapshots_client::SnapshotsClient;
use vexil_proto::v1::snapshots_server::{Snapshots, SnapshotsServer};
use vexil_proto::v1::usage_client::UsageClient;
use vexil_proto::v1::usage_server::{Usage, UsageServer};

/// A running stand-in; stopped when dropped.
pub struct SpoilingProxy {
    /// `http://ADDR` for an edge's `--upstream`.
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SpoilingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Forward {
    upstream: String,
    spoiled_app: String,
}

/// The same request with the caller's metadata (credentials included), for the upstream.
fn forwarded<T>(request: Request<T>) -> Request<T> {
    let (metadata, _, message) = request.into_parts();
    Request::from_parts(metadata, Default::default(), message)
}

fn unavailable(error: impl std::fmt::Display) -> Status {
    Status::unavailable(error.to_string())
}

#[tonic::async_trait]
impl Snapshots for Forward {
    type SubscribeStream = tonic::Streaming<v1::SnapshotUpdate>;

    async fn subscribe(
        &self,
        request: Request<v1::SubscribeRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let mut client = SnapshotsClient::connect(self.upstream.clone())
            .await
            .map_err(unavailable)?;
        client.subscribe(forwarded(request)).await
    }
}

#[tonic::async_trait]
impl Usage for Forward {
    async fn report(
        &self,
        request: Request<v1::UsageBatch>,
    ) -> Result<Response<v1::ReportAck>, Status> {
        let mut request = forwarded(request);
        let batch = request.get_mut();
        let spoil = |name: &mut String| {
            if *name == self.spoiled_app {
                name.push('\0');
            }
        };
        batch
            .applications
            .iter_mut()
            .for_each(|a| spoil(&mut a.app_name));
        batch
            .instances
            .iter_mut()
            .for_each(|i| spoil(&mut i.app_name));
        batch.counts.iter_mut().for_each(|c| spoil(&mut c.app_name));
        let mut client = UsageClient::connect(self.upstream.clone())
            .await
            .map_err(unavailable)?;
        client.report(request).await
    }
}

impl SpoilingProxy {
    /// Listens on 127.0.0.1 and forwards to `upstream` (`http://ADDR`), spoiling `spoiled_app`.
    pub async fn start(upstream: &str, spoiled_app: &str) -> SpoilingProxy {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("bind the proxy");
        let url = format!("http://{}", listener.local_addr().expect("proxy address"));
        let forward = Forward {
            upstream: upstream.to_owned(),
            spoiled_app: spoiled_app.to_owned(),
        };
        let task = tokio::spawn(async move {
            let served = tonic::transport::Server::builder()
                .add_service(SnapshotsServer::new(forward.clone()))
                .add_service(UsageServer::new(forward))
                .serve_with_incoming(TcpIncoming::from(listener))
                .await;
            if let Err(error) = served {
                eprintln!("the usage proxy stopped: {error}");
            }
        });
        SpoilingProxy { url, task }
    }
}
