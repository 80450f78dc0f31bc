//! The admin UI on a phone and without JavaScript (`js/narrow-walk.cjs`, Chromium through playwright-core):
//! the Menu button folds the navigation at 390 px, no page scrolls sideways, the flag list's switches stay on
//! the screen and long names break after hyphens only; with JavaScript off every page of the navigation opens
//! and a switch flipped by its form says so on the next page. Screenshots go to the walk's folder.
//! Also the one search of every page (`js/search-walk.cjs`): "/", typing, Enter, Tab to a result.

use crate::processes::{admin, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_on_a_phone_and_without_javascript() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(json!({"username": "anna", "password": "correct horse battery", "rootRole": "Admin"})),
    )
    .await;
    let long_flag = "checkout-with-saved-cards-and-express-delivery-for-returning-customers";
    for (name, description) in [
        (long_flag, "The whole new checkout, behind one switch"),
        ("dark-mode", "Dark theme for the web shop"),
    ] {
        let created = admin(
            &control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name, "description": description})),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let shots = screenshots();
    let mut walk = Walk::start(
        "narrow-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("SCREENSHOTS", shots.to_str().unwrap()),
            ("LONG_FLAG", long_flag),
        ],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    // The switch flipped without JavaScript is stored.
    let stored = admin(
        &control_plane,
        "GET",
        &format!("/api/admin/projects/default/features/{long_flag}"),
        None,
    )
    .await;
    assert_eq!(stored.body["environments"][0]["name"], "development");
    assert_eq!(stored.body["environments"][0]["enabled"], true);
    for shot in [
        "narrow-menu-open-390",
        "narrow-flag-list-390",
        "narrow-no-js-390",
    ] {
        let path = shots.join(format!("{shot}.png"));
        assert!(path.exists(), "{} was not saved", path.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_from_every_page() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "anna", "password": "correct horse battery", "rootRole": "Viewer"}),
        ),
    )
    .await;
    for (name, description) in [
        ("express-checkout", "Pay in one step"),
        ("dark-mode", "A darker theme"),
    ] {
        admin(
            &control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name, "description": description})),
        )
        .await;
    }
    let shots = screenshots();
    let mut walk = Walk::start(
        "search-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("SCREENSHOTS", shots.to_str().unwrap()),
            ("WORDS", "one step"),
            ("FLAG", "express-checkout"),
        ],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    assert!(shots.join("search-results-390.png").exists());
}
