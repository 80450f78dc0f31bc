//! Release templates and a flag's release plan in a real browser against the real binaries:
//! `js/release-plan-walk.cjs` (playwright-core driving Debian's chromium, both installed by `scripts/test`).
//! The Admin alice makes a template of two milestones (0 %, then 100 %) on the Release templates pages,
//! applies it to checkout in development on the flag's page and starts each milestone; between the steps
//! the edge's `/api/frontend` must stop serving the flag, then serve it again. Every page is audited;
//! screenshots: `target/ui-screenshots/release-plan-*.png`.

use crate::processes::{admin, create_enabled_flag, eventually, frontend_flags, get, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_plan_is_made_applied_and_started_in_chromium() {
    let chromium = chromium();
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
    create_enabled_flag(&control_plane, "checkout").await;
    let limit = Duration::from_secs(10);
    eventually(limit, "the edge serves checkout", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
            && frontend_flags(&edge).await.toggle_names() == ["checkout"]
    })
    .await;

    let screenshots = screenshots();
    let mut walk = Walk::start(
        "release-plan-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    loop {
        let (checkpoint, _) = walk.next().await;
        match checkpoint.as_str() {
            "dark-launch" => {
                eventually(limit, "the edge stops serving checkout", || async {
                    frontend_flags(&edge).await.toggle_names().is_empty()
                })
                .await;
            }
            "everyone" => {
                eventually(limit, "the edge serves checkout again", || async {
                    frontend_flags(&edge).await.toggle_names() == ["checkout"]
                })
                .await;
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in ["01-template", "02-applied", "03-everyone"] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("release-plan-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
