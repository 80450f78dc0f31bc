use clap::Parser;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;
use vexil_control_plane::config::{Config, LogFormat};

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match config.log_format {
        LogFormat::Json => logs.json().init(),
        LogFormat::Text => logs.init(),
    }
    match vexil_control_plane::server::run(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "vexil-control-plane stopped");
            eprintln!("vexil-control-plane: {error}");
            ExitCode::FAILURE
        }
    }
}
