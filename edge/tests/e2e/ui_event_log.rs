//! The event log as a person reads it (issue 30 §2), in Chromium against the real binaries: `js/event-log-walk.cjs`
//! makes changes through the UI as anna, then reads them as sentences by day on the Events page and a flag's
//! page, opens a change from the keyboard and audits each page. It leaves the pictures
//! `docs/images/ui-event-log-<width>-<scheme>.png` (1280 and 390 px, light and dark).

use crate::processes::{admin, Process};
use crate::ui::{chromium, Walk};
use serde_json::json;
use std::path::Path;
use std::time::SystemTime;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_log_reads_as_sentences() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "anna", "name": "Anna Berg", "password": "correct horse battery",
            "rootRole": "Admin"}),
        ),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        "/api/admin/segments",
        Some(
            json!({"name": "beta-testers", "constraints": [{"contextName": "email",
            "operator": "STR_ENDS_WITH", "values": ["@beta.example.com"]}]}),
        ),
    )
    .await;
    for (name, kind) in [("dark-mode", "permission"), ("new-checkout", "release")] {
        admin(
            &control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name, "type": kind})),
        )
        .await;
    }
    let dark_mode = "/api/admin/projects/default/features/dark-mode/environments/production";
    admin(
        &control_plane,
        "POST",
        &format!("{dark_mode}/strategies"),
        Some(json!({"name": "flexibleRollout", "segments": [1],
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "dark-mode"}})),
    )
    .await;
    admin(
        &control_plane,
        "PUT",
        &format!("{dark_mode}/variants"),
        Some(json!([
            {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default",
                "payload": {"type": "json", "value": "{\"color\":\"blue\",\"contrast\":\"high\"}"}},
            {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "default"}])),
    )
    .await;

    let images = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/images");
    std::fs::create_dir_all(&images).unwrap();
    let started = SystemTime::now();
    let mut walk = Walk::start(
        "event-log-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("IMAGES", images.to_str().unwrap()),
        ],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    for width in [1280, 390] {
        for scheme in ["light", "dark"] {
            let picture = images.join(format!("ui-event-log-{width}-{scheme}.png"));
            let metadata = std::fs::metadata(&picture).unwrap();
            assert!(
                metadata.modified().unwrap() >= started,
                "{} taken now",
                picture.display()
            );
        }
    }
}
