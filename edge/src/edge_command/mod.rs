//! `vexil-edge edge`: a drop-in Unleash Edge. Configured by Unleash Edge's flags and environment variables
//! ([`args`]), it mirrors any Unleash server (or a Vexil control plane) through the routes Unleash Edge
//! uses ([`upstream_http`]): one [`poller`] per startup token (reading the upstream's delta where it has one,
//! [`upstream_delta`], else its features document) feeds the [`mirror`], which advances the
//! serving state, so everything `vexil-edge serve` serves (frontend and client API, delta and streaming,
//! OFREP) answers from it; SDK tokens are validated upstream ([`validator`]); SDK metrics are forwarded
//! ([`metrics_forwarder`]); the state is backed up to a folder or Redis ([`persistence`]); [`routes`] adds
//! Unleash Edge's own routes.

mod args;
mod metrics_forwarder;
mod mirror;
mod persistence;
mod poller;
mod routes;
mod tokens;
mod upstream_delta;
mod upstream_http;
mod validator;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderName;
use axum::Router;
use vexil_serving::ServingState;
use vexil_shared::time::now_ms;

pub use args::EdgeArgs;

use crate::http_server::{self, UpstreamStatus};
use metrics_forwarder::{Forwarder, ForwarderSink};
use mirror::Mirror;
use persistence::Persistence;
use poller::StartupToken;
use upstream_http::{Identity, UnleashHttp};
use validator::Validator;

pub async fn run(args: EdgeArgs) -> Result<(), String> {
    let environment: Vec<(String, String)> = std::env::vars().collect();
    for name in
        args::unsupported_variables(environment.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    {
        tracing::warn!(
            variable = name,
            "this Unleash Edge variable is not supported by vexil-edge edge and is ignored"
        );
    }
    if args.redis_mode != "single" {
        return Err(format!(
            "REDIS_MODE {}: only `single` is supported",
            args.redis_mode
        ));
    }
    if args.tokens.is_empty() {
        return Err("TOKENS: at least one client token is needed to fetch the features".to_owned());
    }
    let identity = Identity {
        app_name: args.http.app_name.clone(),
        instance_id: args
            .http
            .instance_id
            .clone()
            .unwrap_or_else(|| format!("vexil-edge@{}", uuid::Uuid::new_v4())),
        connection_id: uuid::Uuid::new_v4().to_string(),
    };
    let http = Arc::new(UnleashHttp::new(&args, identity)?);
    let startup = startup_tokens(&http, &args.tokens).await?;
    let pretrusted = args
        .pretrusted_tokens
        .iter()
        .map(|entry| tokens::parse_pretrusted(entry))
        .collect::<Result<Vec<_>, _>>()?;
    let persistence = match (&args.backup_folder, &args.redis_url) {
        (_, Some(url)) => Some(Persistence::Redis(
            redis::Client::open(url.as_str()).map_err(|e| format!("REDIS_URL: {e}"))?,
        )),
        (Some(folder), None) => Some(Persistence::Folder(folder.clone())),
        (None, None) => None,
    };

    let forwarder = Arc::new(Forwarder::new(http.clone(), startup.clone()));
    let status = Arc::new(UpstreamStatus::default());
    let revalidation = Duration::from_secs(args.token_revalidation_interval_seconds.max(1));
    let serving = Arc::new(
        ServingState::new(args.http.trust_proxy)
            .with_usage(Arc::new(ForwarderSink {
                forwarder: forwarder.clone(),
            }))
            .with_max_streams(args.http.streams.max_streams),
    );
    let mirror = Arc::new(Mirror::new(serving.clone(), args.http.cors_origin.clone()));
    if let Some(store) = &persistence {
        match store.load().await {
            Ok(Some(backup)) => {
                tracing::info!(from = %store.describe(), "serving the backup until the upstream answers");
                mirror.restore(backup, now_ms() + revalidation.as_millis() as i64);
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(%error, from = %store.describe(), "cannot read the backup")
            }
        }
    }
    let validator = Arc::new(Validator::new(
        http.clone(),
        mirror.clone(),
        startup.clone(),
    ));
    validator.trust(&pretrusted);
    serving.set_token_resolver(validator.clone());

    let interval = Duration::from_secs(args.features_refresh_interval_seconds.max(1));
    for token in poller::broadest(&startup) {
        tokio::spawn(poller::poll(
            http.clone(),
            mirror.clone(),
            status.clone(),
            token,
            interval,
            Arc::new(AtomicBool::new(false)),
        ));
    }
    tokio::spawn(validator.clone().revalidate_every(revalidation));
    tokio::spawn(
        forwarder
            .clone()
            .forward_every(Duration::from_secs(args.metrics_interval_seconds.max(1))),
    );
    let persistence = persistence.map(Arc::new);
    if let Some(store) = &persistence {
        tokio::spawn(back_up_every(store.clone(), mirror.clone()));
    }

    let prometheus = http_server::install_prometheus()?;
    let backstage = Arc::new(routes::Backstage {
        serving: serving.clone(),
        status: status.clone(),
        prometheus: prometheus.clone(),
        mirror: mirror.clone(),
        startup,
        disable_metrics: args.http.disable_metrics_endpoint,
        disable_features: args.http.disable_features_endpoint,
        disable_tokens: args.http.disable_tokens_endpoint,
    });
    let sdk = http_server::app(serving.clone(), status, prometheus);
    let mut app = sdk
        .clone()
        .merge(routes::proxy_aliases(sdk))
        .merge(routes::router(backstage));
    let base_path = args.http.base_path.trim_end_matches('/');
    if !base_path.is_empty() {
        if !base_path.starts_with('/') {
            return Err(format!("BASE_PATH {base_path:?} must start with /"));
        }
        app = Router::new().nest(base_path, app);
    }
    let token_header = HeaderName::try_from(args.http.token_header.as_str())
        .map_err(|e| format!("TOKEN_HEADER: {e}"))?;
    if token_header != axum::http::header::AUTHORIZATION {
        let header = Arc::new(token_header);
        app = app.layer(axum::middleware::from_fn(move |request, next| {
            routes::token_header(header.clone(), request, next)
        }));
    }
    if !(args.http.allow_list.is_empty() && args.http.deny_list.is_empty()) {
        let networks = Arc::new(routes::Networks {
            allow: args.http.allow_list.clone(),
            deny: args.http.deny_list.clone(),
        });
        app = app.layer(axum::middleware::from_fn(move |request, next| {
            routes::filter_callers(networks.clone(), request, next)
        }));
    }
    let interface: IpAddr = args
        .http
        .interface
        .parse()
        .map_err(|e| format!("INTERFACE {}: {e}", args.http.interface))?;
    let listen = SocketAddr::new(interface, args.http.port);
    let served = http_server::serve_app(listen, app, serving, args.http.http_timeouts).await;
    forwarder.flush().await;
    if let Some(store) = &persistence {
        if let Err(error) = store.save(&mirror.backup()).await {
            tracing::warn!(%error, "cannot write the backup at shutdown");
        }
    }
    served
}

/// Writes the backup every [`persistence::BACKUP_INTERVAL`] when it changed.
async fn back_up_every(store: Arc<Persistence>, mirror: Arc<Mirror>) {
    let mut last = None;
    loop {
        tokio::time::sleep(persistence::BACKUP_INTERVAL).await;
        let backup = mirror.backup();
        if last.as_ref() == Some(&backup) || !mirror.has_documents() {
            continue;
        }
        match store.save(&backup).await {
            Ok(()) => last = Some(backup),
            Err(error) => tracing::warn!(%error, to = %store.describe(), "cannot write the backup"),
        }
    }
}
/// The startup tokens with the scopes the upstream gives them (or, when it does not answer, their prefixes').
async fn startup_tokens(
    http: &UnleashHttp,
    secrets: &[String],
) -> Result<Vec<StartupToken>, String> {
    let secrets: Vec<&str> = secrets
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    let validated = match http.validate(&secrets).await {
        Ok(validated) => Some(validated),
        Err(error) => {
            tracing::warn!(%error, "cannot validate the startup tokens; using the scopes their prefixes name");
            None
        }
    };
    let mut out = Vec::new();
    for secret in secrets {
        let scope = match &validated {
            Some(list) => match list.iter().find(|v| v.token == secret) {
                Some(v) => v.scope.clone(),
                None => {
                    tracing::warn!(token = %tokens::redacted(secret), "the upstream does not know this startup token; ignoring it");
                    continue;
                }
            },
            None => tokens::scope_of_secret(secret).ok_or_else(|| {
                format!("TOKENS: {} names no environment", tokens::redacted(secret))
            })?,
        };
        out.push(StartupToken {
            secret: secret.to_owned(),
            scope,
        });
    }
    Ok(out)
}
