//! The admin UI keeping people's place (issue 30 §4) and Unleash's copies, in Chromium against the real
//! binary: `js/enhance-walk.cjs` filters the flag list as it types, opens a project from the picker, adds and
//! removes a constraint in place by keyboard (the focus on the new row, no page load), moves the rollout
//! slider with ArrowRight, copies the strategy to production, flips a switch and finds the focus on it again,
//! and clones the flag. This test checks what the admin API stored at each step.

use crate::processes::{admin, Process};
use crate::ui::{chromium, Walk};
use serde_json::{json, Value};

const FLAG: &str = "new-checkout";

async fn strategies(control_plane: &Process, flag: &str, environment: &str) -> Vec<Value> {
    let stored = admin(
        control_plane,
        "GET",
        &format!(
            "/api/admin/projects/default/features/{flag}/environments/{environment}/strategies"
        ),
        None,
    )
    .await;
    stored.body.as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_keep_their_place_and_copy_strategies_and_flags() {
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
        "/api/admin/projects",
        Some(json!({"id": "web", "name": "web"})),
    )
    .await;
    for name in [FLAG, "dark-mode", "search-autocomplete"] {
        admin(
            &control_plane,
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name})),
        )
        .await;
    }
    admin(
        &control_plane,
        "POST",
        &format!("/api/admin/projects/default/features/{FLAG}/environments/development/strategies"),
        Some(json!({"name": "default"})),
    )
    .await;
    let mut walk = Walk::start(
        "enhance-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium), ("FLAG", FLAG)],
    );

    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "saved");
    let development = strategies(&control_plane, FLAG, "development").await;
    let added = &development[1];
    assert_eq!(added["name"], "flexibleRollout", "{development:?}");
    assert_eq!(added["parameters"]["rollout"], "42");
    assert_eq!(
        added["constraints"],
        json!([{"contextName": "country", "operator": "IN", "values": ["NO", "SE"],
            "caseInsensitive": false, "inverted": false}])
    );

    walk.resume().await;
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "copied");
    let production = strategies(&control_plane, FLAG, "production").await;
    assert_eq!(production.len(), 1, "{production:?}");
    for key in ["name", "parameters", "constraints"] {
        assert_eq!(production[0][key], added[key], "{key}");
    }

    walk.resume().await;
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "cloned");
    let clone = format!("{FLAG}-eu");
    let cloned = strategies(&control_plane, &clone, "production").await;
    assert_eq!(cloned.len(), 1, "{cloned:?}");
    assert_eq!(cloned[0]["parameters"]["groupId"], clone.as_str());
    let flag = admin(
        &control_plane,
        "GET",
        &format!("/api/admin/projects/default/features/{clone}"),
        None,
    )
    .await;
    let production_on = flag.body["environments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|environment| environment["name"] == "production" && environment["enabled"] == true);
    assert!(
        production_on,
        "the clone is on where the flag was: {}",
        flag.body
    );

    walk.resume().await;
    let (checkpoint, _) = walk.next().await;
    assert_eq!(checkpoint, "done");
    walk.finish().await;
}
