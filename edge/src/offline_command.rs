//! `vexil-edge offline`: serve a client-API features document (the format Unleash exports) with tokens
//! from the command line and no control plane; the file is re-read when its modification time or size
//! changes (polled every second), and a file that no longer parses leaves the last good one in service.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustc_hash::FxHashMap;
use vexil_serving::snapshot::EnvironmentView;
use vexil_serving::{ServingSnapshot, ServingState, Settings, TokenGrant};
use vexil_shared::token::{self, SecretHash, TokenKind};
use vexil_shared::{CompileOptions, FeaturesDocument, Projects};

use crate::http_server::{self, UpstreamStatus};

const RELOAD_POLL: Duration = Duration::from_secs(1);

#[derive(clap::Args)]
pub struct OfflineArgs {
    /// A client-API features document (the body of `GET /api/client/features`).
    #[arg(long, value_name = "FILE.json")]
    features: PathBuf,
    /// Frontend token secrets (`project:environment.random`, scope from the prefix), comma-separated.
    #[arg(long, env = "VEXIL_FRONTEND_TOKENS", value_delimiter = ',')]
    frontend_tokens: Vec<String>,
    /// Client token secrets, comma-separated.
    #[arg(long, env = "VEXIL_CLIENT_TOKENS", value_delimiter = ',')]
    client_tokens: Vec<String>,
    /// Address to listen on; port 0 picks a free port (printed as `listening on ADDR`).
    #[arg(long, env = "VEXIL_EDGE_LISTEN", default_value = "0.0.0.0:3063")]
    listen: SocketAddr,
    /// Take the caller's IP from the first `X-Forwarded-For` hop (behind a trusted proxy only).
    #[arg(long, env = "VEXIL_TRUST_PROXY")]
    trust_proxy: bool,
    /// The host name `applicationHostname` strategies compare with (default: this machine's).
    #[arg(long, value_name = "NAME")]
    hostname: Option<String>,
    /// `--request-timeout` and `--header-read-timeout`.
    #[command(flatten)]
    http_timeouts: vexil_serving::serve::HttpTimeouts,
    /// `--max-streams`.
    #[command(flatten)]
    streams: vexil_serving::StreamArgs,
}

pub async fn run(args: OfflineArgs) -> Result<(), String> {
    let mut tokens = FxHashMap::default();
    for (secrets, kind) in [
        (&args.frontend_tokens, TokenKind::Frontend),
        (&args.client_tokens, TokenKind::Client),
    ] {
        for secret in secrets {
            let (projects, environment) = scope_of(secret).ok_or_else(|| {
                format!("{secret:?} is not a token of the form project:environment.random")
            })?;
            let hash = token::sha256(secret);
            let grant = TokenGrant::new(Some(&hash), kind, projects, environment, None);
            tokens.insert(hash, grant);
        }
    }
    let options = CompileOptions {
        hostname: args.hostname.clone(),
    };
    let offline = Offline {
        path: args.features.clone(),
        tokens,
        options,
    };
    let serving =
        Arc::new(ServingState::new(args.trust_proxy).with_max_streams(args.streams.max_streams));
    let (mut seen, first) = offline.read(1)?;
    serving.install(first);
    let status = Arc::new(UpstreamStatus::default());
    status.touch();
    let watcher_serving = serving.clone();
    let watcher_status = status.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(RELOAD_POLL).await;
            if file_stamp(&offline.path) == seen {
                continue;
            }
            let revision = watcher_serving
                .current
                .load()
                .as_ref()
                .map_or(0, |s| s.revision)
                + 1;
            match offline.read(revision) {
                Ok((stamp, snapshot)) => {
                    seen = stamp;
                    tracing::info!(revision, "reloaded the features file");
                    watcher_serving.install(snapshot);
                    watcher_status.touch();
                }
                Err(error) => {
                    seen = file_stamp(&offline.path);
                    tracing::warn!(%error, "keeping the last good features file");
                }
            }
        }
    });
    http_server::serve(args.listen, serving, status, args.http_timeouts).await
}

struct Offline {
    path: PathBuf,
    tokens: FxHashMap<SecretHash, TokenGrant>,
    options: CompileOptions,
}

impl Offline {
    /// Reads and compiles the file: one environment per token environment, all with the same document.
    fn read(&self, revision: u64) -> Result<(Option<(SystemTime, u64)>, ServingSnapshot), String> {
        let stamp = file_stamp(&self.path);
        let text = std::fs::read_to_string(&self.path)
            .map_err(|error| format!("cannot read {}: {error}", self.path.display()))?;
        let doc = FeaturesDocument::from_json(&text)
            .map_err(|error| format!("{}: {error}", self.path.display()))?;
        let mut environments = FxHashMap::default();
        for grant in self.tokens.values() {
            environments
                .entry(grant.environment.to_string())
                .or_insert_with(|| {
                    Arc::new(EnvironmentView::from_document(
                        &grant.environment,
                        doc.clone(),
                        &self.options,
                    ))
                });
        }
        Ok((
            stamp,
            ServingSnapshot {
                revision,
                environments,
                tokens: self.tokens.clone(),
                settings: Settings::default(),
                changes: Default::default(),
                client_documents: Default::default(),
            },
        ))
    }
}

fn file_stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// `(projects, environment)` from a secret's prefix `<projects>:<environment>.<random>`.
fn scope_of(secret: &str) -> Option<(Projects, String)> {
    let (projects, rest) = secret.split_once(':')?;
    let (environment, random) = rest.split_once('.')?;
    if projects.is_empty() || environment.is_empty() || random.is_empty() {
        return None;
    }
    let projects = if projects == "*" || projects == "[]" {
        Projects::All
    } else {
        Projects::Only([projects.to_owned()].into())
    };
    Some((projects, environment.to_owned()))
}
