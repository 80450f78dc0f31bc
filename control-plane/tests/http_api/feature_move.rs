//! Moving a flag to another project (`POST …/features/:f/changeProject`) through the real binary on SQLite
//! and Postgres: the flag and its strategies move, `feature-project-change` is recorded; refused with
//! nothing changed for an unknown, archived or the same project, a flag with dependencies, with a pending
//! change request or a strategy on a project segment, and for a caller without MOVE_FEATURE_TOGGLE in either
//! project.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(move_a_flag_to_another_project);

const DEFAULT: &str = "/api/admin/projects/default";

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

async fn event_count(server: &Server) -> i64 {
    server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
        .as_i64()
        .unwrap()
}

fn move_path(flag: &str) -> String {
    format!("{DEFAULT}/features/{flag}/changeProject")
}

async fn move_a_flag_to_another_project(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for project in ["mobile", "closed"] {
        server
            .post(
                "/api/admin/projects",
                json!({"id": project, "name": project}),
            )
            .await
            .expect(201);
    }
    server
        .post_empty("/api/admin/projects/archive/closed")
        .await
        .expect(200);
    for flag in [
        "checkout",
        "parent",
        "child",
        "pending",
        "segmented",
        "lone",
        "fielded",
    ] {
        server
            .post(&format!("{DEFAULT}/features"), json!({"name": flag}))
            .await
            .expect(201);
    }
    server
        .post(
            &format!("{DEFAULT}/features/checkout/environments/development/strategies"),
            json!({"name": "default"}),
        )
        .await
        .expect(200);
    server
        .post(
            &format!("{DEFAULT}/features/child/dependencies"),
            json!({"feature": "parent"}),
        )
        .await
        .expect(200);
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "staff", "project": "default", "constraints": []}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    server
        .post(
            &format!("{DEFAULT}/features/segmented/environments/development/strategies"),
            json!({"name": "default", "segments": [segment]}),
        )
        .await
        .expect(200);

    // A constraint on a context field of the default project only.
    server
        .post(&format!("{DEFAULT}/context"), json!({"name": "plan"}))
        .await
        .expect(201);
    server
        .post(
            &format!("{DEFAULT}/features/fielded/environments/development/strategies"),
            json!({"name": "default", "constraints": [
                {"contextName": "plan", "operator": "IN", "values": ["gold"]}
            ]}),
        )
        .await
        .expect(200);

    // Moved, with its strategies; gone from the old project.
    server
        .post(&move_path("checkout"), json!({"newProjectId": "mobile"}))
        .await
        .expect(200);
    let moved = server
        .get("/api/admin/projects/mobile/features/checkout")
        .await
        .expect(200)
        .clone();
    assert_eq!(moved["project"], "mobile");
    let strategies = server
        .get("/api/admin/projects/mobile/features/checkout/environments/development/strategies")
        .await
        .expect(200)
        .clone();
    assert_eq!(strategies[0]["name"], "default");
    server
        .get(&format!("{DEFAULT}/features/checkout"))
        .await
        .expect_error(404, "NotFoundError");
    let events = events_of_type(&server, "feature-project-change").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["project"], "mobile");
    assert_eq!(events[0]["featureName"], "checkout");
    assert_eq!(
        events[0]["data"],
        json!({"oldProject": "default", "newProject": "mobile"})
    );

    // A pending change request for `pending`.
    server
        .put(
            &format!("{DEFAULT}/environments/development/change-requests/config"),
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    let (_, bob) = user_with_pat(&server, "bob", "Editor").await;
    server
        .send(
            "POST",
            &format!("{DEFAULT}/environments/development/change-requests"),
            Some(json!({"feature": "pending", "action": "updateEnabled", "payload": {"enabled": true}})),
            Some(&bob),
        )
        .await
        .expect(200);

    // Refusals: nothing changes.
    let before = event_count(&server).await;
    for (flag, body, status, words) in [
        (
            "lone",
            json!({"newProjectId": "nope"}),
            400,
            "does not exist",
        ),
        ("lone", json!({"newProjectId": "closed"}), 400, "archived"),
        ("lone", json!({"newProjectId": "default"}), 400, "already"),
        ("lone", json!({"newProjectId": ""}), 400, "newProjectId"),
        ("lone", json!({"project": "mobile"}), 400, "newProjectId"),
        (
            "child",
            json!({"newProjectId": "mobile"}),
            400,
            "dependencies",
        ),
        (
            "parent",
            json!({"newProjectId": "mobile"}),
            400,
            "dependencies",
        ),
        (
            "pending",
            json!({"newProjectId": "mobile"}),
            400,
            "change request",
        ),
        (
            "segmented",
            json!({"newProjectId": "mobile"}),
            400,
            "segment",
        ),
        ("fielded", json!({"newProjectId": "mobile"}), 400, "plan"),
        ("nope", json!({"newProjectId": "mobile"}), 404, "nope"),
    ] {
        let answer = server.post(&move_path(flag), body.clone()).await;
        assert_eq!(answer.status, status, "{flag} {body}: {:?}", answer.body);
        let message = answer.body["message"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{flag} {body}: {message}");
    }
    assert_eq!(event_count(&server).await, before);
    for flag in ["lone", "child", "parent", "pending", "segmented", "fielded"] {
        assert_eq!(
            server
                .get(&format!("{DEFAULT}/features/{flag}"))
                .await
                .expect(200)["project"],
            "default"
        );
    }

    // Permission in both projects: a role with MOVE_FEATURE_TOGGLE given in default only is not enough.
    let role = server
        .post(
            "/api/admin/roles",
            json!({"name": "mover", "description": "Moves flags", "type": "custom",
                   "permissions": [{"name": "MOVE_FEATURE_TOGGLE"}]}),
        )
        .await
        .expect(200)["roles"]["id"]
        .as_i64()
        .unwrap();
    let (dana, dana_pat) = user_with_pat(&server, "dana", "Viewer").await;
    let body = json!({"newProjectId": "mobile"});
    server
        .send(
            "POST",
            &move_path("lone"),
            Some(body.clone()),
            Some(&dana_pat),
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .post(
            &format!("{DEFAULT}/access"),
            json!({"roles": [role], "users": [dana], "groups": []}),
        )
        .await
        .expect(200);
    let message = server
        .send(
            "POST",
            &move_path("lone"),
            Some(body.clone()),
            Some(&dana_pat),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("MOVE_FEATURE_TOGGLE"), "{message}");
    assert_eq!(
        server
            .get(&format!("{DEFAULT}/features/lone"))
            .await
            .expect(200)["project"],
        "default"
    );
    server
        .post(
            "/api/admin/projects/mobile/access",
            json!({"roles": [role], "users": [dana], "groups": []}),
        )
        .await
        .expect(200);
    server
        .send("POST", &move_path("lone"), Some(body), Some(&dana_pat))
        .await
        .expect(200);
    assert_eq!(
        server
            .get("/api/admin/projects/mobile/features/lone")
            .await
            .expect(200)["project"],
        "mobile"
    );
}
