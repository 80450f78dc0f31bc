//! A project's overview as its landing page (issue 30, issue 35 §3), in Chromium against the real binary:
//! `js/overview-walk.cjs` opens a project with a long name from the project list and reads its health (a stale
//! flag and one past its type's lifetime, linked), flags by type, environments, members and the latest events
//! as sentences; then finds an empty project with a long unbroken name through the search, and follows its
//! first step, "Connect an SDK", from the keyboard. Every page is audited; nothing scrolls sideways at 390 px.
//! It leaves the pictures `docs/images/ui-project-overview-<width>-<scheme>.png`.

use crate::processes::{admin, Process};
use crate::ui::{chromium, Walk};
use serde_json::json;
use sqlx::{AnyConnection, Connection};
use std::path::Path;
use std::time::SystemTime;

const LONG_NAME: &str =
    "Payments platform for the Nordic and Baltic markets: checkout, invoicing and refunds";
const UNBROKEN_NAME: &str = "Experimentation-laboratory-for-the-mobile-applications-team";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_overview_is_the_landing_page() {
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
            "rootRole": "Editor"}),
        ),
    )
    .await;
    for (id, name) in [("payments", LONG_NAME), ("mobile-lab", UNBROKEN_NAME)] {
        admin(
            &control_plane,
            "POST",
            "/api/admin/projects",
            Some(json!({"id": id, "name": name, "description": "Where the money moves."})),
        )
        .await;
    }
    let flags = "/api/admin/projects/payments/features";
    for (name, kind) in [
        ("new-checkout", "release"),
        (
            "invoice-pdf-renderer-with-a-rather-long-flag-name",
            "release",
        ),
        ("payments-kill-switch", "kill-switch"),
        ("refund-experiment", "experiment"),
        ("retired-banner", "release"),
        ("summer-promo", "release"),
    ] {
        admin(
            &control_plane,
            "POST",
            flags,
            Some(json!({"name": name, "type": kind})),
        )
        .await;
    }
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/payments/stale",
        Some(json!({"features": ["retired-banner"], "stale": true})),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/payments/archive",
        Some(json!({"features": ["summer-promo"]})),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        &format!("{flags}/new-checkout/environments/production/on"),
        None,
    )
    .await;
    // One flag older than a release's 40 days (the control plane has no clock to wind).
    sqlx::any::install_default_drivers();
    let mut conn = AnyConnection::connect(&url).await.unwrap();
    sqlx::query(
        "UPDATE features SET created_at = '2026-01-05T09:00:00.000Z' \
         WHERE name = 'invoice-pdf-renderer-with-a-rather-long-flag-name'",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();

    let images = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/images");
    std::fs::create_dir_all(&images).unwrap();
    let started = SystemTime::now();
    let mut walk = Walk::start(
        "overview-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("IMAGES", images.to_str().unwrap()),
            ("LONG_NAME", LONG_NAME),
            ("UNBROKEN_NAME", UNBROKEN_NAME),
        ],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    for width in [1280, 390] {
        for scheme in ["light", "dark"] {
            let picture = images.join(format!("ui-project-overview-{width}-{scheme}.png"));
            let metadata = std::fs::metadata(&picture).unwrap();
            assert!(
                metadata.modified().unwrap() >= started,
                "{} taken now",
                picture.display()
            );
        }
    }
}
