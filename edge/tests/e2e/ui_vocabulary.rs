//! The admin UI's words for the API's names (issue 30 §3) in a real browser against the real binary:
//! `js/vocabulary-walk.cjs` adds a gradual rollout with a constraint by typing and pressing Tab and Enter, and
//! finds the constraint on the flag page as a chip by its words; this test checks that the admin API stored
//! the API's names (`flexibleRollout`, `STR_ENDS_WITH`) for what the person read as words. Screenshots of the
//! strategy form and the flag page (1280 and 390 px, light and dark) go to
//! `target/ui-screenshots/vocabulary-*.png`.

use crate::processes::{admin, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;

const FLAG: &str = "new-checkout";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_constraint_typed_in_words_is_a_chip_on_the_flag_page() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": FLAG, "description": "One-page checkout"})),
    )
    .await;
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "vocabulary-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium), ("FLAG", FLAG)],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "saved");
    let stored = admin(
        &control_plane,
        "GET",
        &format!("/api/admin/projects/default/features/{FLAG}/environments/development/strategies"),
        None,
    )
    .await;
    let strategy = &stored.body[0];
    assert_eq!(strategy["name"], "flexibleRollout", "{}", stored.body);
    assert_eq!(strategy["parameters"]["rollout"], "50");
    assert_eq!(
        strategy["constraints"],
        json!([{"contextName": "email", "operator": "STR_ENDS_WITH", "values": ["@example.com"],
            "caseInsensitive": true, "inverted": false}])
    );
    walk.resume().await;
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    for page in ["strategy-form", "flag-page"] {
        for width in [1280, 390] {
            for theme in ["light", "dark"] {
                let path = screenshots.join(format!("vocabulary-{page}-{width}-{theme}.png"));
                assert!(path.exists(), "{} was not saved", path.display());
            }
        }
    }
}
