//! Start-up and shutdown: store, tokens, metrics recorder, router, listener, signals.

use crate::config::{AuthType, Config};
use crate::domain::tokens::{self, InitialTokens};
use crate::domain::{first_start, ui_config};
use crate::edge_auth::{EdgeAuthenticator, ScopedUsage};
use crate::http::{self, AppState};
use crate::publisher::grpc::SnapshotService;
use crate::publisher::Publisher;
use crate::store::Store;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;
use vexil_proto::v1::snapshots_server::SnapshotsServer;
use vexil_proto::v1::usage_server::UsageServer;
use vexil_serving::{serve, shutdown, telemetry, ServingState};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot open the store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("cannot seed the new store: {0}")]
    Seed(vexil_shared::ApiError),
    #[error("cannot create the start-up tokens: {0}")]
    Tokens(vexil_shared::ApiError),
    #[error("cannot publish the configuration: {0}")]
    Publisher(vexil_shared::ApiError),
    #[error("cannot install the metrics recorder: {0}")]
    Metrics(String),
    #[error("cannot listen: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot set up TLS on the gRPC listener: {0}")]
    GrpcTls(String),
    #[error("cannot read the SAML settings: {0}")]
    Saml(String),
    #[error("cannot set up e-mail: {0}")]
    Mail(#[from] crate::mail::MailSetupError),
}

/// Runs the control plane until SIGTERM or SIGINT; in-flight requests finish first.
pub async fn run(config: Config) -> Result<(), StartError> {
    let store = Store::connect(&config.database_url).await?;
    first_start::seed(&store).await.map_err(StartError::Seed)?;
    ui_config::ensure_instance_id(&store).await?;
    tracing::info!(backend = ?store.backend(), "store ready, migrations applied");

    let mailer = crate::mail::Mailer::from_settings(&config.mail)?;
    let auth_enabled = config.auth_type == AuthType::OpenSource;
    let initial = InitialTokens {
        admin: config.init_admin_tokens.clone(),
        client: config.init_client_tokens.clone(),
        frontend: config.init_frontend_tokens.clone(),
        edge: config.init_edge_tokens.clone(),
    };
    if let Some(secret) = tokens::seed(&store, &initial, auth_enabled, &config.limits)
        .await
        .map_err(StartError::Tokens)?
    {
        // Shown once, on standard output, never through the logs.
        println!("created the first admin token (it is not shown again): {secret}");
    }

    let prometheus =
        telemetry::install_prometheus().map_err(|error| StartError::Metrics(error.to_string()))?;
    // Present from the first scrape, at zero.
    metrics::counter!("store_errors_total").increment(0);
    let upkeep = prometheus.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            upkeep.run_upkeep();
        }
    });

    let serving = Arc::new(ServingState {
        anonymous: !auth_enabled,
        ..ServingState::new(config.trust_proxy)
            .with_usage(crate::ingest::sink(store.clone()))
            .with_max_streams(config.streams.max_streams)
    });
    let publisher = Publisher::start(store.clone(), config.frontend_api_enabled, serving.clone())
        .await
        .map_err(StartError::Publisher)?;

    let clock: crate::time::Clock = Arc::new(vexil_shared::time::now_ms);
    tokio::spawn(crate::ingest::roll_up_forever(
        store.clone(),
        clock.clone(),
        crate::domain::metrics::Retention {
            hours_kept_ms: i64::from(config.metrics_retention_days)
                * crate::domain::metrics::DAY_MS,
            clients_kept_ms: i64::from(config.client_retention_days)
                * crate::domain::metrics::DAY_MS,
        },
    ));
    tokio::spawn(crate::ingest::note_tokens_seen_forever(
        store.clone(),
        clock.clone(),
        serving.token_sightings.clone(),
        config.token_seen_interval,
    ));
    tokio::spawn(crate::webhooks::deliver_forever(
        store.clone(),
        config.webhooks,
    ));
    // Scheduled change requests: stopped once the requests have drained, before the store closes (a write
    // in progress finishes; an unfinished one rolls back and is applied at the next start).
    let (stop_scheduler, stopped) = tokio::sync::watch::channel(false);
    let scheduler = tokio::spawn(crate::scheduler::apply_forever(
        store.clone(),
        config.limits.clone(),
        stopped.clone(),
    ));
    let stale_marker = tokio::spawn(crate::stale_marker::mark_forever(
        store.clone(),
        config.potentially_stale_interval,
        stopped,
    ));
    // Action sets run on received signals: woken by this process's receiver, stopped with the scheduler.
    let signal_received = crate::actions::Wake::default();
    let processor = tokio::spawn(crate::actions::process_forever(
        store.clone(),
        config.limits.clone(),
        signal_received.clone(),
        stop_scheduler.subscribe(),
    ));
    let (routes, openapi) = http::routes().split_for_parts();
    let state = Arc::new(AppState {
        clock: clock.clone(),
        store: store.clone(),
        auth_enabled,
        sign_in_config: crate::domain::sso_settings::SignInConfig {
            password_flag: !config.disable_password_auth,
            oidc_env: config.oidc.settings(),
            saml_env: config.saml.settings().map_err(StartError::Saml)?,
        },
        oidc: Default::default(),
        base_path: config.base_path.clone(),
        prometheus,
        openapi: http::openapi::render(openapi, &config.base_path),
        limits: config.limits.clone(),
        published: publisher.watch(),
        trust_proxy: config.trust_proxy,
        sdk_url: config.sdk_url.clone(),
        sign_in: Default::default(),
        password_work: Default::default(),
        token_sightings: serving.token_sightings.clone(),
        playground: Default::default(),
        webhook_targets: config.webhooks.targets(),
        serving: serving.clone(),
        mailer: mailer.map(Arc::new),
        public_url: config.public_url.clone(),
        reset_requests: Default::default(),
        signal_received,
    });
    let app = http::router(
        routes.merge(crate::ui::router(&state)).with_state(state),
        serving.clone(),
        &config.base_path,
        config.body_limit,
        config.http_timeouts.request_timeout,
    );
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let address = listener.local_addr()?;
    let grpc_listener = tokio::net::TcpListener::bind(config.grpc_listen).await?;
    let grpc_address = grpc_listener.local_addr()?;
    let (mut grpc_builder, grpc_transport) = grpc_server(&config)?;
    if grpc_transport == GrpcTransport::Plain && !grpc_address.ip().is_loopback() {
        tracing::warn!(
            address = %grpc_address,
            "the gRPC listener is not on a loopback address and has no TLS: edge tokens and the \
             configuration cross the network in plain text; set --grpc-tls-cert and --grpc-tls-key"
        );
    }
    if !auth_enabled && !grpc_address.ip().is_loopback() {
        tracing::warn!(
            address = %grpc_address,
            "--auth-type none: the gRPC listener asks for no edge token; anyone who reaches it receives \
             every environment's configuration"
        );
    }
    // Every call needs an edge token (the channel is open only with `--auth-type none`).
    let authenticator = EdgeAuthenticator::new(
        publisher.watch(),
        !auth_enabled,
        serving.token_sightings.clone(),
    );
    // The edges' streams never end on their own, so the gRPC server is not drained at shutdown: it stops
    // with the process, and the edges reconnect elsewhere.
    let snapshots = SnapshotsServer::with_interceptor(
        SnapshotService {
            published: publisher.watch(),
        },
        authenticator.clone(),
    );
    let usage = tonic::service::interceptor::InterceptedService::new(
        UsageServer::new(ScopedUsage {
            usage: crate::ingest::UsageService {
                store: store.clone(),
                clock,
            },
            published: publisher.watch(),
        })
        .max_decoding_message_size(vexil_proto::MAX_USAGE_BATCH_BYTES),
        authenticator,
    );
    tokio::spawn(async move {
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(grpc_listener);
        if let Err(error) = grpc_builder
            .add_service(snapshots)
            .add_service(usage)
            .serve_with_incoming(incoming)
            .await
        {
            tracing::error!(%error, "the gRPC server stopped");
        }
    });
    println!("listening on {address}");
    println!("grpc listening on {grpc_address}");
    std::io::stdout().flush()?;
    tracing::info!(%address, %grpc_address, base_path = %config.base_path, "listening");
    serve::serve(
        listener,
        app,
        config.http_timeouts.header_read_timeout,
        async {
            let signal = shutdown::signal(|signal, error| {
                tracing::error!(%error, "cannot listen for {}", signal.name());
            })
            .await;
            tracing::info!("{} received", signal.name());
            // The SDKs' change streams never end on their own: end them, so that the requests drain.
            serving.close_streams();
        },
    )
    .await?;
    let _ = stop_scheduler.send(true);
    if let Err(error) = scheduler.await {
        tracing::warn!(%error, "the change request scheduler ended abnormally");
    }
    if let Err(error) = processor.await {
        tracing::warn!(%error, "the action processor ended abnormally");
    }
    if let Err(error) = stale_marker.await {
        tracing::warn!(%error, "the potentially-stale job ended abnormally");
    }
    tracing::info!("shutting down: requests drained, closing the store");
    store.close().await;
    Ok(())
}

/// Whether the gRPC listener speaks TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GrpcTransport {
    Tls,
    Plain,
}

/// The gRPC server, with TLS from `--grpc-tls-cert` and `--grpc-tls-key` when they are given (clap asks for
/// both or neither).
fn grpc_server(config: &Config) -> Result<(tonic::transport::Server, GrpcTransport), StartError> {
    let builder = tonic::transport::Server::builder();
    let (Some(cert), Some(key)) = (&config.grpc_tls_cert, &config.grpc_tls_key) else {
        return Ok((builder, GrpcTransport::Plain));
    };
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|error| {
            StartError::GrpcTls(format!("cannot read {}: {error}", path.display()))
        })
    };
    let identity = tonic::transport::Identity::from_pem(read(cert)?, read(key)?);
    let builder = builder
        .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
        .map_err(|error| StartError::GrpcTls(error.to_string()))?;
    Ok((builder, GrpcTransport::Tls))
}
