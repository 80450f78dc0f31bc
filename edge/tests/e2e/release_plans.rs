//! A release template with two milestones applied to a flag: starting each milestone changes what the edge
//! serves (through the real control plane, its publisher and a real edge).

use std::time::Duration;

use serde_json::{json, Value};

use crate::database::TestDb;
use crate::processes::*;

const FLAG: &str = "/api/admin/projects/default/features/checkout/environments/development";

/// The strategy names the edge's client API gives `checkout`.
async fn served_strategies(edge: &Process) -> Vec<String> {
    let answer = get(
        &format!("{}/api/client/features", edge.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    answer.body["features"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|feature| feature["name"] == "checkout")
        .flat_map(|feature| {
            feature["strategies"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|strategy| strategy["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_each_milestone_changes_what_the_edge_serves() {
    let db = TestDb::sqlite().await;
    let control_plane = Process::control_plane(&db.url, &[]);
    let edge = Process::edge(&[control_plane.grpc()], &[]);
    eventually(Duration::from_secs(10), "edge ready", || async {
        get(&format!("{}/ready", edge.base), None).await.status == 200
    })
    .await;
    create_enabled_flag(&control_plane, "checkout").await;
    eventually(
        Duration::from_secs(5),
        "the edge serves checkout",
        || async { frontend_flags(&edge).await.toggle_names() == ["checkout"] },
    )
    .await;

    let template = admin(
        &control_plane,
        "POST",
        "/api/admin/release-plan-templates",
        Some(json!({
            "name": "Internal first",
            "milestones": [
                {"name": "Internal", "sortOrder": 0, "strategies": [
                    {"strategyName": "userWithId", "sortOrder": 0, "parameters": {"userIds": "alice"}}
                ]},
                {"name": "Everyone", "sortOrder": 1, "strategies": [
                    {"strategyName": "flexibleRollout", "sortOrder": 0,
                     "parameters": {"rollout": 100, "groupId": "{{featureName}}", "stickiness": "default"}}
                ]}
            ]
        })),
    )
    .await;
    let template_id = template.body["id"].as_str().unwrap().to_owned();
    let plan = admin(
        &control_plane,
        "POST",
        &format!("{FLAG}/release-plans"),
        Some(json!({"templateId": template_id})),
    )
    .await;
    let plan_id = plan.body["id"].as_str().unwrap().to_owned();
    let milestones: Vec<Value> = plan.body["milestones"].as_array().unwrap().clone();
    assert_eq!(
        milestones[1]["strategies"][0]["parameters"]["groupId"],
        "checkout"
    );

    // Internal: only alice; u1 (the frontend request's user) no longer gets the flag.
    let start = |index: usize| {
        format!(
            "{FLAG}/release-plans/{plan_id}/milestones/{}/start",
            milestones[index]["id"].as_str().unwrap()
        )
    };
    admin(&control_plane, "POST", &start(0), None).await;
    eventually(
        Duration::from_secs(5),
        "the edge serves the first milestone",
        || async {
            served_strategies(&edge).await == ["userWithId"]
                && frontend_flags(&edge).await.toggle_names().is_empty()
        },
    )
    .await;

    // Everyone: a full rollout grouped by the flag's name.
    admin(&control_plane, "POST", &start(1), None).await;
    eventually(
        Duration::from_secs(5),
        "the edge serves the second milestone",
        || async {
            served_strategies(&edge).await == ["flexibleRollout"]
                && frontend_flags(&edge).await.toggle_names() == ["checkout"]
        },
    )
    .await;
    let client = get(
        &format!("{}/api/client/features", edge.base),
        Some(CLIENT_TOKEN),
    )
    .await;
    let strategy = &client.body["features"][0]["strategies"][0];
    assert_eq!(strategy["parameters"]["groupId"], "checkout");
    assert_eq!(strategy["parameters"]["rollout"], "100");
}
