//! `vexil-edge serve`: subscribe to the control plane's snapshot stream and serve the SDK-facing API.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use vexil_serving::ServingState;

use crate::http_server::{self, UpstreamStatus};
use crate::{snapshot_cache, subscriber};

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port (printed as `listening on ADDR`).
    #[arg(long, env = "VEXIL_EDGE_LISTEN", default_value = "0.0.0.0:3063")]
    listen: SocketAddr,
    /// gRPC URLs of control planes (`http://host:4243`), comma-separated; tried in turn.
    #[arg(long, env = "VEXIL_UPSTREAM", value_delimiter = ',', required = true)]
    upstream: Vec<String>,
    /// File the last snapshot is written to (atomically) and served from at start, before the upstream
    /// answers.
    #[arg(long, env = "VEXIL_SNAPSHOT_CACHE", value_name = "FILE")]
    snapshot_cache: Option<PathBuf>,
    /// Environments to serve, comma-separated; all when absent.
    #[arg(long, env = "VEXIL_EDGE_ENVIRONMENTS", value_delimiter = ',')]
    environments: Vec<String>,
    /// Take the caller's IP from the first `X-Forwarded-For` hop (behind a trusted proxy only).
    #[arg(long, env = "VEXIL_TRUST_PROXY")]
    trust_proxy: bool,
    /// This edge's identity towards the control plane; a random one when absent.
    #[arg(long, env = "VEXIL_EDGE_ID")]
    edge_id: Option<String>,
}

pub async fn run(args: ServeArgs) -> Result<(), String> {
    let serving = Arc::new(ServingState::new(args.trust_proxy));
    if let Some(path) = &args.snapshot_cache {
        match snapshot_cache::load(path) {
            Ok(Some(snapshot)) => {
                tracing::info!(revision = snapshot.revision, path = %path.display(), "serving the cached snapshot");
                serving.current.store(Some(Arc::new(snapshot)));
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(%error, path = %path.display(), "ignoring the snapshot cache")
            }
        }
    }
    let status = Arc::new(UpstreamStatus::default());
    let link = subscriber::Subscriber {
        upstreams: args.upstream,
        environments: args.environments,
        edge_id: args
            .edge_id
            .unwrap_or_else(|| format!("edge-{}", uuid::Uuid::new_v4())),
        serving: serving.clone(),
        status: status.clone(),
        cache: args.snapshot_cache,
    };
    tokio::spawn(link.run());
    http_server::serve(args.listen, serving, status).await
}
