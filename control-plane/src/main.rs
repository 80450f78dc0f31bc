use clap::Parser;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;
use vexil_control_plane::config::{Command, Config, LogFormat};

/// Logs go to standard error (in JSON with `--log-format json`, each line an object; colours only on a
/// terminal); standard output carries only the plain lines scripts read (`listening on ADDR`, …).
#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    let log_format = config.log_format;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match log_format {
        LogFormat::Json => logs.json().init(),
        LogFormat::Text => logs.init(),
    }
    vexil_serving::serve::raise_open_files_limit();
    if let Some(Command::Import(args)) = config.command.clone() {
        return match vexil_control_plane::import_command::run(
            &config.database_url,
            &config.limits,
            args,
        )
        .await
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("vexil-control-plane import: {error}");
                ExitCode::FAILURE
            }
        };
    }
    match vexil_control_plane::server::run(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "vexil-control-plane stopped");
            // The log line above says it already; in JSON a plain line would break the log's format.
            if log_format == LogFormat::Text {
                eprintln!("vexil-control-plane: {error}");
            }
            ExitCode::FAILURE
        }
    }
}
