//! Records the git revision of the build as `VEXIL_GIT_REVISION` (reported by ui-config as
//! `versionInfo.current.oss`): the variable itself when set at build time, else `git rev-parse HEAD`, else
//! "unknown" (a build outside a git checkout); and rebuilds when a migration changes.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=VEXIL_GIT_REVISION");
    // `sqlx::migrate!` embeds these folders; cargo does not watch them by itself.
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=migrations-postgres");
    println!("cargo:rerun-if-changed=migrations-sqlite");
    let revision = std::env::var("VEXIL_GIT_REVISION")
        .ok()
        .filter(|value| !value.is_empty())
        .or_else(|| git(&["rev-parse", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    // Rebuild when HEAD moves: the HEAD file, the branch it points at, and packed refs.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    println!("cargo:rustc-env=VEXIL_GIT_REVISION={revision}");
}
