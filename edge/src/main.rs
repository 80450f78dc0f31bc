//! `vexil-edge`: serves flag evaluations from lock-free snapshots.

mod edge_command;
mod eval_command;
mod http_server;
mod offline_command;
mod serve_command;
mod snapshot_cache;
mod subscriber;
mod upstream;
mod usage_reporter;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "vexil-edge",
    version,
    about = "Vexil edge: evaluates feature flags close to your users"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the frontend and client APIs from the snapshots a control plane streams over gRPC.
    Serve(serve_command::ServeArgs),
    /// Serve the frontend and client APIs from a features document, with no control plane; the file is
    /// reloaded when it changes.
    Offline(offline_command::OfflineArgs),
    /// Evaluate contexts against a features document with no server, printing what `/api/frontend` would
    /// answer: one JSON array of enabled flags per context, sorted by name.
    Eval(eval_command::EvalArgs),
    /// A drop-in Unleash Edge: mirror an Unleash server (or a Vexil control plane) through Unleash Edge's
    /// routes, configured by Unleash Edge's flags and environment variables (UPSTREAM_URL, TOKENS, …).
    Edge(Box<edge_command::EdgeArgs>),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Eval(args) => eval_command::run(&args),
        Command::Serve(args) => serve(serve_command::run(args), false),
        Command::Offline(args) => serve(offline_command::run(args), false),
        Command::Edge(args) => {
            let json = args.json_logs();
            serve(edge_command::run(*args), json)
        }
    }
}

/// Runs a server future on a multi-threaded runtime with logs on standard error (level via `RUST_LOG`;
/// colours only when standard error is a terminal; one JSON object a line with `json`).
fn serve(server: impl std::future::Future<Output = Result<(), String>>, json: bool) -> ExitCode {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && !json);
    if json {
        logs.json().init();
    } else {
        logs.init();
    }
    vexil_serving::serve::raise_open_files_limit();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("vexil-edge: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("vexil-edge: {message}");
            ExitCode::FAILURE
        }
    }
}
