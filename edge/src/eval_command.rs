//! `vexil-edge eval`: the engine on the command line, for operators asking "what does this user get?".

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use vexil_shared::model::from_json_path;
use vexil_shared::{CompileOptions, Context, FeaturesDocument, Projects, Snapshot};

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["context", "contexts"]))]
pub struct EvalArgs {
    /// A client-API features document (the body of `GET /api/client/features`).
    #[arg(long, value_name = "FILE.json")]
    features: PathBuf,
    /// One context as JSON, e.g. '{"userId":"42","properties":{"plan":"pro"}}'.
    #[arg(long, value_name = "JSON")]
    context: Option<String>,
    /// A file of contexts, one JSON object per line (`-` reads standard input).
    #[arg(long, value_name = "FILE.jsonl")]
    contexts: Option<PathBuf>,
    /// Only flags of these projects (comma-separated); all projects when absent.
    #[arg(long, value_delimiter = ',', value_name = "a,b")]
    projects: Vec<String>,
    /// The host name `applicationHostname` strategies compare with (default: this machine's).
    #[arg(long, value_name = "NAME")]
    hostname: Option<String>,
}

/// Exit status for bad input, as clap uses for bad arguments.
const BAD_INPUT: u8 = 2;

pub fn run(args: &EvalArgs) -> ExitCode {
    match evaluate(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("vexil-edge eval: {message}");
            ExitCode::from(BAD_INPUT)
        }
    }
}

fn evaluate(args: &EvalArgs) -> Result<(), String> {
    let text = fs::read_to_string(&args.features)
        .map_err(|e| format!("cannot read {}: {e}", args.features.display()))?;
    let doc = FeaturesDocument::from_json(&text)
        .map_err(|e| format!("{}: {e}", args.features.display()))?;
    let snapshot = Snapshot::compile_with(
        &doc,
        &CompileOptions {
            hostname: args.hostname.clone(),
        },
    );
    let projects = Projects::from_list(&args.projects);

    let contexts: Vec<Context> = match (&args.context, &args.contexts) {
        (Some(json), _) => vec![from_json_path(json).map_err(|e| format!("--context: {e}"))?],
        (None, Some(path)) => read_contexts(path)?,
        (None, None) => unreachable!("clap requires --context or --contexts"),
    };

    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut line = Vec::new();
    for ctx in &contexts {
        line.clear();
        snapshot.write_toggles_json(ctx, &projects, &mut line);
        line.push(b'\n');
        out.write_all(&line).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

fn read_contexts(path: &PathBuf) -> Result<Vec<Context>, String> {
    let text = if path.as_os_str() == "-" {
        io::read_to_string(io::stdin()).map_err(|e| format!("cannot read standard input: {e}"))?
    } else {
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            from_json_path(line).map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))
        })
        .collect()
}
