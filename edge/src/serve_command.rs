//! `vexil-edge serve`: subscribe to the control plane's snapshot stream and serve the SDK-facing API.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use vexil_serving::usage::MAX_NAME_CHARS;
use vexil_serving::ServingState;

use crate::http_server::{self, UpstreamStatus};
use crate::upstream::UpstreamAccess;
use crate::{snapshot_cache, subscriber, usage_reporter};

/// `<hostname>-<8 random hex digits>`, the host name cut so that the id is at most [`MAX_NAME_CHARS`].
fn default_edge_id() -> String {
    let host: String = gethostname::gethostname()
        .to_string_lossy()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS - 9)
        .collect();
    format!("{host}-{:08x}", fastrand::u32(..))
}

/// An edge id the control plane accepts in a usage batch: 1 to [`MAX_NAME_CHARS`] characters, no control
/// character.
fn parse_edge_id(text: &str) -> Result<String, String> {
    if text.is_empty()
        || text.chars().count() > MAX_NAME_CHARS
        || text.chars().any(char::is_control)
    {
        return Err(format!(
            "an edge id is 1 to {MAX_NAME_CHARS} characters, without control characters"
        ));
    }
    Ok(text.to_owned())
}

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port (printed as `listening on ADDR`).
    #[arg(long, env = "VEXIL_EDGE_LISTEN", default_value = "0.0.0.0:3063")]
    listen: SocketAddr,
    /// gRPC URLs of control planes (`http://host:4243`, or `https://host:4243` when their listener has TLS),
    /// comma-separated; tried in turn.
    #[arg(long, env = "VEXIL_UPSTREAM", value_delimiter = ',', required = true)]
    upstream: Vec<String>,
    /// This edge's token for the control plane (an `edge` API token), sent with every gRPC call as
    /// `authorization: Bearer …`; needed unless the control plane runs with `--auth-type none`.
    #[arg(long, env = "VEXIL_EDGE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// PEM file of the CA certificates that `https://` upstreams are verified against; without it, the
    /// bundled webpki (Mozilla) roots.
    #[arg(long, env = "VEXIL_UPSTREAM_CA", value_name = "FILE")]
    upstream_ca: Option<PathBuf>,
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
    /// This edge's identity towards the control plane (its usage batches and `/api/admin/metrics/edges`);
    /// default: `<hostname>-<8 random hex digits>`, new at each start. Set it (e.g. to the pod name) to keep
    /// one identity across restarts.
    #[arg(long, env = "VEXIL_EDGE_ID", value_parser = parse_edge_id)]
    edge_id: Option<String>,
    /// How often the usage batch (the SDKs' metrics and this edge's evaluations) is sent: `10s`, `1s`, `500ms`.
    #[arg(long, env = "VEXIL_METRICS_INTERVAL", default_value = "10s", value_parser = vexil_serving::serve::parse_duration)]
    metrics_interval: Duration,
    /// Most usage entries (per flag, application, environment and minute) kept while the control plane is
    /// unreachable; past it the oldest minutes are dropped (`usage_dropped_total`).
    #[arg(long, env = "VEXIL_METRICS_BUFFER", default_value_t = 100_000)]
    metrics_buffer: usize,
    /// Count the evaluations served per flag (reported in `/api/admin/metrics/edges`); `false` turns it off.
    #[arg(long, env = "VEXIL_COUNT_EVALUATIONS", default_value_t = true, action = clap::ArgAction::Set)]
    count_evaluations: bool,
    /// `--request-timeout` and `--header-read-timeout`.
    #[command(flatten)]
    http_timeouts: vexil_serving::serve::HttpTimeouts,
    /// `--max-streams`.
    #[command(flatten)]
    streams: vexil_serving::StreamArgs,
}

pub async fn run(args: ServeArgs) -> Result<(), String> {
    let edge_id = args.edge_id.clone().unwrap_or_else(default_edge_id);
    let access = Arc::new(UpstreamAccess::new(
        args.token.as_deref(),
        args.upstream_ca.as_deref(),
    )?);
    let (reporter, feeds) = usage_reporter::Reporter::new(
        access.clone(),
        args.upstream.clone(),
        edge_id.clone(),
        args.metrics_interval,
        args.metrics_buffer,
    );
    let serving = Arc::new(
        ServingState::new(args.trust_proxy)
            .with_usage(feeds.sink.clone())
            .counting_evaluations(args.count_evaluations)
            .with_max_streams(args.streams.max_streams),
    );
    if let Some(path) = &args.snapshot_cache {
        match snapshot_cache::load(path) {
            Ok(Some(snapshot)) => {
                tracing::info!(revision = snapshot.revision, path = %path.display(), "serving the cached snapshot");
                serving.install(snapshot);
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(%error, path = %path.display(), "ignoring the snapshot cache")
            }
        }
    }
    let status = Arc::new(UpstreamStatus::default());
    let link = subscriber::Subscriber {
        access,
        upstreams: args.upstream,
        environments: args.environments,
        edge_id,
        serving: serving.clone(),
        status: status.clone(),
        cache: args.snapshot_cache.map(snapshot_cache::CacheWriter::start),
        retired: feeds.retired,
    };
    tokio::spawn(link.run());
    tokio::spawn(reporter.run(serving.clone()));
    http_server::serve(args.listen, serving, status, args.http_timeouts).await
}
