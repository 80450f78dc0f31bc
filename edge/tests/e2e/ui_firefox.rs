//! The admin web UI in Firefox against the real binaries: `js/ui-firefox.cjs` (puppeteer-core driving
//! Debian's firefox-esr over WebDriver BiDi, both installed by `scripts/test`) signs in, creates a flag,
//! switches it on, adds a strategy with a constraint, toggles the switch by keyboard, opens Segments and
//! Archive and archives the flag, every control found by its accessible name; between its steps this test
//! asks the edge's `/api/frontend` what SDKs now get. The walk fails when a page scrolls sideways at 1280 or
//! 390 px; screenshots go to `target/ui-screenshots/firefox-*`.

use crate::processes::{admin, eventually, Process};
use crate::ui::{answered, assert_installed, screenshots, Walk, USERS};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// Pinned, as `scripts/test` installs it.
const PUPPETEER_CORE: (&str, &str) = ("puppeteer-core", "25.16.0");

/// Fails (never skips) when the browser or the driver is missing: `scripts/test` installs both.
fn firefox() -> String {
    assert_installed(PUPPETEER_CORE);
    let path = std::env::var("FIREFOX").unwrap_or_else(|_| "/usr/bin/firefox-esr".to_owned());
    assert!(
        Path::new(&path).exists(),
        "firefox is missing at {path}: run the tests with scripts/test, which installs Debian's firefox-esr"
    );
    path
}

/// Whether the flag is stored as enabled in development.
async fn enabled_in_development(control_plane: &Process, flag: &str) -> Value {
    let answer = admin(
        control_plane,
        "GET",
        &format!("/api/admin/projects/default/features/{flag}"),
        None,
    )
    .await;
    answer.body["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|environment| environment["name"] == "development")
        })
        .map(|development| development["enabled"].clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_walk_in_firefox() {
    let firefox = firefox();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    let screenshots = screenshots();
    // An earlier run's screenshots must not stand in for this run's.
    for entry in std::fs::read_dir(&screenshots).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("firefox-"))
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    let mut walk = Walk::start(
        "ui-firefox.cjs",
        &control_plane.base,
        &[("FIREFOX", &firefox)],
    )
    .patience(Duration::from_secs(180));
    let flag = "checkout-ff";
    let mut seen = Vec::new();
    loop {
        let (checkpoint, _) = walk.next().await;
        let limit = Duration::from_secs(10);
        match checkpoint.as_str() {
            // On with no strategy: every user everywhere.
            "enabled" => {
                eventually(limit, "every user in DE answered", || async {
                    answered(&edge, flag, "DE", &USERS).await.len() == USERS.len()
                })
                .await;
            }
            // flexibleRollout 100 % with country IN [NO, SE].
            "constrained" | "keyboard-on" => {
                eventually(
                    limit,
                    "NO and SE answered for every user, DE for none",
                    || async {
                        answered(&edge, flag, "NO", &USERS).await.len() == USERS.len()
                            && answered(&edge, flag, "SE", &USERS).await.len() == USERS.len()
                            && answered(&edge, flag, "DE", &USERS).await.is_empty()
                    },
                )
                .await;
                assert_eq!(enabled_in_development(&control_plane, flag).await, true);
            }
            "keyboard-off" => {
                eventually(
                    limit,
                    "the switched-off flag answered for nobody",
                    || async { answered(&edge, flag, "NO", &USERS).await.is_empty() },
                )
                .await;
                assert_eq!(enabled_in_development(&control_plane, flag).await, false);
            }
            "archived" => {
                eventually(limit, "the archived flag leaves the edge", || async {
                    answered(&edge, flag, "NO", &USERS).await.is_empty()
                })
                .await;
                let archive =
                    admin(&control_plane, "GET", "/api/admin/archive/features", None).await;
                assert!(
                    archive.body["features"]
                        .as_array()
                        .is_some_and(|features| features
                            .iter()
                            .any(|feature| feature["name"] == flag)),
                    "{flag} is not in the archive: {}",
                    archive.body
                );
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        seen.push(checkpoint);
        walk.resume().await;
    }
    assert_eq!(
        seen,
        [
            "enabled",
            "constrained",
            "keyboard-off",
            "keyboard-on",
            "archived"
        ],
        "the walk skipped a step"
    );
    walk.finish().await;
    for page in [
        "01-sign-in",
        "02-flags-empty",
        "03-new-flag",
        "04-flag-on",
        "05-strategy-form",
        "06-flag-strategy",
        "07-segments",
        "08-archive-empty",
        "09-archive-confirm",
        "10-archive",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("firefox-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
