//! Change requests through the real binary, on SQLite and Postgres: the configuration (clamping), the 403 on
//! direct writes and atomic apply; the helpers the state table's and the ui-config's tests share.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Answer, Server, CLIENT_TOKEN};
use serde_json::{json, Value};
use std::time::Duration;

crate::on_sqlite_and_postgres!(
    change_request_configuration_is_clamped,
    direct_writes_are_refused_while_change_requests_are_on,
    a_failing_change_applies_nothing,
);

pub(crate) const PROJECT: &str = "/api/admin/projects/default";
pub(crate) const FLAG: &str = "/api/admin/projects/default/features/checkout";
const DEV: &str = "/api/admin/projects/default/features/checkout/environments/development";
const CONFIG_DEV: &str =
    "/api/admin/projects/default/environments/development/change-requests/config";
pub(crate) const CHANGES_DEV: &str =
    "/api/admin/projects/default/environments/development/change-requests";

pub(crate) fn request_path(id: i64) -> String {
    format!("{PROJECT}/change-requests/{id}")
}

pub(crate) async fn as_user(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
    pat: &str,
) -> Answer {
    server.send(method, path, body, Some(pat)).await
}

pub(crate) async fn set_state(server: &Server, id: i64, state: &str, pat: Option<&str>) -> Answer {
    let body = json!({"state": state});
    match pat {
        Some(pat) => {
            as_user(
                server,
                "PUT",
                &format!("{}/state", request_path(id)),
                Some(body),
                pat,
            )
            .await
        }
        None => {
            server
                .put(&format!("{}/state", request_path(id)), body)
                .await
        }
    }
}

pub(crate) async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

pub(crate) async fn event_count(server: &Server) -> i64 {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap()
}

pub(crate) async fn create_flag(server: &Server, name: &str) {
    server
        .post(&format!("{PROJECT}/features"), json!({"name": name}))
        .await
        .expect(201);
}

pub(crate) async fn enable_change_requests(server: &Server, environment: &str, approvals: i64) {
    server
        .put(
            &format!("{PROJECT}/environments/{environment}/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": approvals}),
        )
        .await
        .expect(200);
}

/// The revision the control plane serves once the publisher has caught up (two equal reads 400 ms apart:
/// the publisher polls every 250 ms).
pub(crate) async fn settled_revision(server: &Server) -> u64 {
    let read = || async {
        let response = server
            .client
            .get(format!("{}/api/client/features", server.base))
            .header("Authorization", CLIENT_TOKEN)
            .send()
            .await
            .unwrap();
        response.headers()["x-vexil-revision"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    let mut last = read().await;
    loop {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let now = read().await;
        if now == last {
            return now;
        }
        last = now;
    }
}

async fn change_request_configuration_is_clamped(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let list = server
        .get(&format!("{PROJECT}/change-requests/config"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        list,
        json!([
            {"environment": "development", "type": "development", "changeRequestEnabled": false, "requiredApprovals": 1},
            {"environment": "production", "type": "production", "changeRequestEnabled": false, "requiredApprovals": 1},
        ])
    );
    let required = |list: &Value| list[0]["requiredApprovals"].as_i64().unwrap();
    for (sent, stored) in [
        (json!(0), 1),
        (json!(11), 10),
        (json!(-3), 1),
        (json!(1u64 << 62), 10),
        (json!(4), 4),
    ] {
        let answer = server
            .put(
                CONFIG_DEV,
                json!({"changeRequestsEnabled": true, "requiredApprovals": sent}),
            )
            .await;
        assert_eq!(answer.expect(200), &Value::Null);
        let list = server
            .get(&format!("{PROJECT}/change-requests/config"))
            .await;
        assert_eq!(required(list.expect(200)), stored, "sent {sent}");
        assert_eq!(list.body[0]["changeRequestEnabled"], true);
    }
    // Omitted: kept. Off keeps the count too.
    server
        .put(CONFIG_DEV, json!({"changeRequestsEnabled": false}))
        .await
        .expect(200);
    let list = server
        .get(&format!("{PROJECT}/change-requests/config"))
        .await
        .expect(200)
        .clone();
    assert_eq!(list[0]["changeRequestEnabled"], false);
    assert_eq!(required(&list), 4);
    assert_eq!(
        list[1]["changeRequestEnabled"], false,
        "production untouched"
    );

    // Bad input changes nothing.
    let before = event_count(&server).await;
    for body in [
        json!({"changeRequestsEnabled": true, "requiredApprovals": 1.5}),
        json!({"changeRequestsEnabled": true, "requiredApprovals": "3"}),
        json!({"requiredApprovals": 3}),
        json!({"changeRequestsEnabled": "yes"}),
    ] {
        let message = server
            .put(CONFIG_DEV, body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(
            message.contains("requiredApprovals") || message.contains("changeRequestsEnabled"),
            "{body}: {message}"
        );
    }
    server
        .put(
            "/api/admin/projects/nope/environments/development/change-requests/config",
            json!({"changeRequestsEnabled": true}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .put(
            &format!("{PROJECT}/environments/nowhere/change-requests/config"),
            json!({"changeRequestsEnabled": true}),
        )
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/projects/nope/change-requests/config")
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(event_count(&server).await, before);
    // The same setting again records nothing.
    server
        .put(
            CONFIG_DEV,
            json!({"changeRequestsEnabled": false, "requiredApprovals": 4}),
        )
        .await
        .expect(200);
    assert_eq!(event_count(&server).await, before);

    let events = events_of_type(&server, "change-request-configuration-updated").await;
    assert_eq!(events.len(), 5 + 1);
    assert_eq!(events[0]["environment"], "development");
    assert_eq!(events[0]["project"], "default");
    assert_eq!(
        events[0]["data"],
        json!({"changeRequestsEnabled": false, "requiredApprovals": 4})
    );
    assert_eq!(
        events[0]["preData"],
        json!({"changeRequestsEnabled": true, "requiredApprovals": 4})
    );

    // A deleted project takes its settings and requests along: re-created, it starts clean.
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other", "environments": ["development"]}),
        )
        .await
        .expect(201);
    let other = "/api/admin/projects/other";
    server
        .put(
            &format!("{other}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 3}),
        )
        .await
        .expect(200);
    server.delete(other).await.expect(200);
    server
        .post(
            "/api/admin/projects",
            json!({"id": "other", "name": "Other", "environments": ["development"]}),
        )
        .await
        .expect(201);
    assert_eq!(
        server
            .get(&format!("{other}/change-requests/config"))
            .await
            .expect(200),
        &json!([{"environment": "development", "type": "development", "changeRequestEnabled": false, "requiredApprovals": 1}])
    );
}

async fn direct_writes_are_refused_while_change_requests_are_on(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let strategy = server
        .post(&format!("{DEV}/strategies"), json!({"name": "default"}))
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    enable_change_requests(&server, "development", 1).await;
    let (_, editor) = user_with_pat(&server, "ed", "Editor").await;

    let before = event_count(&server).await;
    let strategy_path = format!("{DEV}/strategies/{strategy}");
    let writes: Vec<(&str, String, Option<Value>)> = vec![
        ("POST", format!("{DEV}/on"), None),
        ("POST", format!("{DEV}/off"), None),
        (
            "POST",
            format!("{DEV}/strategies"),
            Some(json!({"name": "default"})),
        ),
        (
            "PUT",
            strategy_path.clone(),
            Some(json!({"name": "default"})),
        ),
        (
            "PATCH",
            strategy_path.clone(),
            Some(json!([{"op": "replace", "path": "/disabled", "value": true}])),
        ),
        ("DELETE", strategy_path.clone(), None),
        (
            "POST",
            format!("{DEV}/strategies/set-sort-order"),
            Some(json!([{"id": strategy, "sortOrder": 3}])),
        ),
        (
            "PUT",
            format!("{DEV}/variants"),
            Some(json!([{"name": "a", "weightType": "variable"}])),
        ),
        ("PATCH", format!("{DEV}/variants"), Some(json!([]))),
        ("DELETE", FLAG.to_owned(), None),
        (
            "POST",
            format!("{PROJECT}/archive"),
            Some(json!({"features": ["checkout"]})),
        ),
    ];
    for (method, path, body) in &writes {
        for token in [None, Some(editor.as_str())] {
            let answer = match token {
                None => {
                    server
                        .send(method, path, body.clone(), Some(crate::server::ADMIN_TOKEN))
                        .await
                }
                Some(pat) => as_user(&server, method, path, body.clone(), pat).await,
            };
            let message = answer.expect_error(403, "NoAccessError");
            assert!(
                message.contains("change request"),
                "{method} {path}: {message}"
            );
        }
    }
    assert_eq!(event_count(&server).await, before, "nothing was written");
    // Reads still work; production (no change requests) takes direct writes; the flag's metadata too.
    server.get(&strategy_path).await.expect(200);
    let production = "/api/admin/projects/default/features/checkout/environments/production";
    server
        .post_empty(&format!("{production}/on"))
        .await
        .expect(200);
    server
        .put(
            FLAG,
            json!({"description": "metadata is not per environment"}),
        )
        .await
        .expect(200);
    // Off again: direct writes work again.
    server
        .put(CONFIG_DEV, json!({"changeRequestsEnabled": false}))
        .await
        .expect(200);
    server.post_empty(&format!("{DEV}/on")).await.expect(200);
}

/// A change that fails when applied (its strategy was deleted meanwhile by another request) applies nothing.
async fn a_failing_change_applies_nothing(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(&server, "checkout").await;
    let strategy = server
        .post(&format!("{DEV}/strategies"), json!({"name": "default"}))
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    enable_change_requests(&server, "development", 1).await;
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    let (_, carol) = user_with_pat(&server, "carol", "Editor").await;

    // Bob's request: turn on, add a strategy, then update the existing one.
    let first = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(json!([
            {"feature": "checkout", "action": "updateEnabled", "payload": {"enabled": true}},
            {"feature": "checkout", "action": "addStrategy", "payload": {"name": "userWithId", "parameters": {"userIds": "a"}}},
            {"feature": "checkout", "action": "updateStrategy", "payload": {"id": strategy, "name": "default", "title": "renamed"}},
        ])),
        &bob,
    )
    .await
    .expect(200)["id"]
        .as_i64()
        .unwrap();
    // Carol's request deletes that strategy, and is applied first.
    let second = as_user(
        &server,
        "POST",
        CHANGES_DEV,
        Some(
            json!({"feature": "checkout", "action": "deleteStrategy", "payload": {"id": strategy}}),
        ),
        &carol,
    )
    .await
    .expect(200)["id"]
        .as_i64()
        .unwrap();
    for (request, author, reviewer) in [(first, &bob, &carol), (second, &carol, &bob)] {
        set_state(&server, request, "In review", Some(author))
            .await
            .expect(200);
        assert_eq!(
            set_state(&server, request, "Approved", Some(reviewer))
                .await
                .expect(200)["state"],
            "Approved"
        );
    }
    set_state(&server, second, "Applied", None)
        .await
        .expect(200);
    assert_eq!(
        server.get(&format!("{DEV}/strategies")).await.expect(200),
        &json!([])
    );

    let flag_before = server.get(FLAG).await.expect(200).clone();
    let events_before = event_count(&server).await;
    let revision = settled_revision(&server).await;
    let message = set_state(&server, first, "Applied", None)
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("updateStrategy") && message.contains(&strategy),
        "{message}"
    );
    // Nothing applied: not the switch, not the added strategy, no event, no revision; still Approved.
    assert_eq!(server.get(FLAG).await.expect(200), &flag_before);
    assert_eq!(event_count(&server).await, events_before);
    assert_eq!(
        server.get(&request_path(first)).await.expect(200)["state"],
        "Approved"
    );
    assert_eq!(settled_revision(&server).await, revision);
}
