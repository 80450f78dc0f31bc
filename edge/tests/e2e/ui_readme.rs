//! The README's pictures of the admin UI (`docs/images/ui-flag-list.png`, `docs/images/ui-flag-page.png`,
//! `docs/images/ui-strategy-form.png` — also `ui-strategy-form-<width>-<scheme>.png`, 1280 and 390 px, light
//! and dark —, `docs/images/ui-event-log.png`), taken by `js/readme-shots.cjs` in Chromium from the real
//! binaries, with data a product team would have: flags of several types with descriptions and tags, rollouts
//! with constraints, a segment, variants, usage, a change request waiting, and a flag switched on in the UI by
//! a person. Every run
//! of the tests takes them again, so the README shows today's UI; commit them when they change.

use crate::processes::{admin, request, Process, CLIENT_TOKEN};
use crate::ui::{chromium, Walk};
use serde_json::{json, Value};
use std::path::Path;
use std::time::SystemTime;

/// (name, type, description): the flags the list shows.
const FLAGS: [(&str, &str, &str); 6] = [
    (
        "new-checkout",
        "release",
        "One-page checkout with saved cards and Vipps",
    ),
    (
        "pricing-page-v2",
        "experiment",
        "Annual plans first, monthly behind a toggle",
    ),
    (
        "search-autocomplete",
        "release",
        "Suggestions while typing in the product search",
    ),
    (
        "dark-mode",
        "permission",
        "Dark theme for the web shop, beta testers first",
    ),
    (
        "payments-kill-switch",
        "kill-switch",
        "Turns card payments off if the provider is down",
    ),
    (
        "recommendations-cache",
        "operational",
        "Serve product recommendations from the cache",
    ),
];

async fn strategy(control_plane: &Process, flag: &str, environment: &str, body: Value) {
    admin(
        control_plane,
        "POST",
        &format!(
            "/api/admin/projects/default/features/{flag}/environments/{environment}/strategies"
        ),
        Some(body),
    )
    .await;
}

async fn switch_on(control_plane: &Process, flag: &str, environment: &str) {
    admin(
        control_plane,
        "POST",
        &format!("/api/admin/projects/default/features/{flag}/environments/{environment}/on"),
        None,
    )
    .await;
}

async fn seed(control_plane: &Process) {
    admin(
        control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "anna", "name": "Anna Berg", "email": "anna@example.com",
            "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    let segment = admin(
        control_plane,
        "POST",
        "/api/admin/segments",
        Some(
            json!({"name": "beta-testers", "description": "Customers who joined the beta programme",
            "constraints": [{"contextName": "email", "operator": "STR_ENDS_WITH",
                "values": ["@beta.example.com"], "caseInsensitive": true}]}),
        ),
    )
    .await;
    let segment_id = segment.body["id"].clone();
    for (name, kind, description) in FLAGS {
        admin(
            control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name, "type": kind, "description": description})),
        )
        .await;
    }
    let nordics =
        json!([{"contextName": "country", "operator": "IN", "values": ["NO", "SE", "DK"]}]);
    strategy(
        control_plane,
        "new-checkout",
        "production",
        json!({"name": "flexibleRollout", "title": "Nordic customers first",
            "parameters": {"rollout": "25", "stickiness": "default", "groupId": "new-checkout"},
            "constraints": nordics}),
    )
    .await;
    strategy(
        control_plane,
        "new-checkout",
        "production",
        json!({"name": "userWithId", "parameters": {"userIds": "qa-anna,qa-lars"}}),
    )
    .await;
    strategy(
        control_plane,
        "new-checkout",
        "development",
        json!({"name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "new-checkout"}}),
    )
    .await;
    for environment in ["development", "production"] {
        switch_on(control_plane, "new-checkout", environment).await;
    }
    strategy(
        control_plane,
        "pricing-page-v2",
        "production",
        json!({"name": "flexibleRollout",
            "parameters": {"rollout": "50", "stickiness": "default", "groupId": "pricing-page-v2"},
            "variants": [
                {"name": "annual-first", "weight": 500, "stickiness": "default", "weightType": "variable"},
                {"name": "monthly-first", "weight": 500, "stickiness": "default", "weightType": "variable"}]}),
    )
    .await;
    switch_on(control_plane, "pricing-page-v2", "production").await;
    strategy(
        control_plane,
        "dark-mode",
        "production",
        json!({"name": "flexibleRollout", "segments": [segment_id],
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "dark-mode"}}),
    )
    .await;
    for (flag, environment) in [
        ("dark-mode", "production"),
        ("dark-mode", "development"),
        ("search-autocomplete", "development"),
        ("recommendations-cache", "development"),
        ("recommendations-cache", "production"),
    ] {
        switch_on(control_plane, flag, environment).await;
    }
    // Tags, and a change request waiting to switch pricing-page-v2 on in development (the list's badge).
    for (flag, value) in [
        ("new-checkout", "checkout"),
        ("pricing-page-v2", "growth"),
        ("dark-mode", "beta"),
    ] {
        admin(
            control_plane,
            "POST",
            &format!("/api/admin/features/{flag}/tags"),
            Some(json!({"type": "simple", "value": value})),
        )
        .await;
    }
    let development = "/api/admin/projects/default/environments/development";
    admin(
        control_plane,
        "PUT",
        &format!("{development}/change-requests/config"),
        Some(json!({"changeRequestsEnabled": true, "requiredApprovals": 1})),
    )
    .await;
    let waiting = admin(
        control_plane,
        "POST",
        &format!("{development}/change-requests"),
        Some(
            json!({"feature": "pricing-page-v2", "action": "updateEnabled",
            "payload": {"enabled": true}}),
        ),
    )
    .await;
    assert_eq!(waiting.status, 200, "{}", waiting.body);
    // Usage from a server SDK in development, so the list shows when flags were last seen.
    let now = chrono::Utc::now();
    let metrics = request(
        "POST",
        &format!("{}/api/client/metrics", control_plane.base),
        Some(CLIENT_TOKEN),
        &[],
        Some(
            json!({"appName": "web-shop", "instanceId": "web-shop-1", "bucket": {
            "start": (now - chrono::Duration::minutes(1)).to_rfc3339(), "stop": now.to_rfc3339(),
            "toggles": {"new-checkout": {"yes": 180, "no": 20}, "dark-mode": {"yes": 40, "no": 160},
                "search-autocomplete": {"yes": 200, "no": 0}}}}),
        ),
    )
    .await;
    assert_eq!(metrics.status, 202, "{}", metrics.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_pictures_show_todays_ui() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    seed(&control_plane).await;
    let images = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/images");
    std::fs::create_dir_all(&images).unwrap();
    let started = SystemTime::now();
    let names: Vec<&str> = FLAGS.iter().map(|(name, _, _)| *name).collect();
    let mut walk = Walk::start(
        "readme-shots.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("README_IMAGES", images.to_str().unwrap()),
            ("FLAGS", &names.join(",")),
            ("FLAG", "new-checkout"),
        ],
    );
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
    let mut pictures = vec![
        "ui-flag-list.png".to_owned(),
        "ui-flag-page.png".to_owned(),
        "ui-strategy-form.png".to_owned(),
        "ui-event-log.png".to_owned(),
    ];
    for width in [1280, 390] {
        for scheme in ["light", "dark"] {
            pictures.push(format!("ui-strategy-form-{width}-{scheme}.png"));
        }
    }
    for picture in &pictures {
        let metadata = std::fs::metadata(images.join(picture)).unwrap();
        assert!(
            metadata.modified().unwrap() >= started,
            "{picture} taken now"
        );
        assert!(
            metadata.len() > 20_000,
            "{picture}: {} bytes",
            metadata.len()
        );
    }
}
