//! `vexil-edge`: serves flag evaluations from lock-free snapshots.

mod eval_command;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Evaluate contexts against a features document with no server, printing what `/api/frontend` would
    /// answer: one JSON array of enabled flags per context, sorted by name.
    Eval(eval_command::EvalArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Eval(args) => eval_command::run(&args),
    }
}
