//! Projects and environments through the admin API of the real binary, on SQLite and Postgres: environments,
//! a project using some of them, its flags following them, turning a flag on with and without strategies,
//! name validation, archiving several flags at once, and a project's update and delete, with the events
//! recorded.

use crate::database::TestDb;
use crate::server::{assert_timestamp, Server};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(projects_and_environments);

async fn event_types(server: &Server, query: &str) -> Vec<String> {
    let events = server
        .get(&format!("/api/admin/events?{query}"))
        .await
        .expect(200)
        .clone();
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

async fn projects_and_environments(db: TestDb) {
    let server = Server::start(&db, &[]).await;

    // Environments.
    let staging = server
        .post(
            "/api/admin/environments",
            json!({"name": "staging", "type": "test"}),
        )
        .await
        .expect(201)
        .clone();
    assert_timestamp(&staging["createdAt"]);
    assert_eq!(
        staging,
        json!({"name": "staging", "type": "test", "enabled": true, "protected": false, "sortOrder": 3,
               "projectCount": 0, "createdAt": staging["createdAt"]})
    );
    server
        .post(
            "/api/admin/environments",
            json!({"name": "staging", "type": "test"}),
        )
        .await
        .expect_error(409, "NameExistsError");
    let list = server
        .get("/api/admin/environments")
        .await
        .expect(200)
        .clone();
    assert_eq!(list["version"], 1);
    let names: Vec<&str> = list["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["development", "production", "staging"]);
    assert_eq!(list["environments"][0]["projectCount"], 1);
    let updated = server
        .put(
            "/api/admin/environments/update/staging",
            json!({"type": "preprod", "sortOrder": 0}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(
        (updated["type"].clone(), updated["sortOrder"].clone()),
        (json!("preprod"), json!(0))
    );
    assert_eq!(
        server
            .post_empty("/api/admin/environments/staging/off")
            .await
            .status,
        204
    );
    assert_eq!(
        server
            .post_empty("/api/admin/environments/staging/off")
            .await
            .status,
        204
    );
    assert_eq!(
        server
            .get("/api/admin/environments/staging")
            .await
            .expect(200)["enabled"],
        false
    );
    server
        .post_empty("/api/admin/environments/staging/on")
        .await;
    assert_eq!(
        event_types(&server, "type=environment-updated").await.len(),
        3,
        "update, off, on; not the repeated off"
    );

    // A project using some environments.
    let web = server
        .post(
            "/api/admin/projects",
            json!({"id": "web", "name": "Web", "environments": ["development"]}),
        )
        .await
        .expect(201)
        .clone();
    assert_eq!(web["environments"], json!(["development"]));
    assert_eq!(web["description"], Value::Null);
    server
        .post(
            "/api/admin/projects/web/environments",
            json!({"environment": "staging"}),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/admin/projects/web/environments",
            json!({"environment": "staging"}),
        )
        .await
        .expect_error(409, "NameExistsError");
    server
        .post(
            "/api/admin/projects/web/environments",
            json!({"environment": "qa"}),
        )
        .await
        .expect_error(404, "NotFoundError");
    assert_eq!(
        server.get("/api/admin/projects/web").await.expect(200)["environments"],
        json!(["staging", "development"])
    );

    // Flags of the project follow its environments.
    server
        .post(
            "/api/admin/projects/web/features",
            json!({"name": "banner"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/projects/web/features",
            json!({"name": "footer"}),
        )
        .await
        .expect(201);
    let banner = "/api/admin/projects/web/features/banner";
    server
        .post(
            &format!("{banner}/environments/staging/strategies"),
            json!({"name": "default"}),
        )
        .await
        .expect(200);
    server
        .post_empty(&format!("{banner}/environments/staging/on"))
        .await
        .expect(200);
    server
        .post_empty(&format!("{banner}/environments/production/on"))
        .await
        .expect_error(404, "NotFoundError");
    let flag = server.get(banner).await.expect(200).clone();
    let envs: Vec<(&str, bool)> = flag["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["enabled"].as_bool().unwrap()))
        .collect();
    assert_eq!(envs, [("staging", true), ("development", false)]);
    let listed = server
        .get("/api/admin/projects/web/features")
        .await
        .expect(200)
        .clone();
    assert_eq!(listed["version"], 2);
    assert_eq!(
        listed["features"][0]["environments"],
        json!([{"name": "staging", "enabled": true, "type": "preprod", "sortOrder": 0},
               {"name": "development", "enabled": false, "type": "development", "sortOrder": 1}])
    );

    // Turning on without a strategy adds flexibleRollout; removing the last one turns it off.
    let footer = "/api/admin/projects/web/features/footer/environments/development";
    server.post_empty(&format!("{footer}/on")).await.expect(200);
    let strategies = server
        .get(&format!("{footer}/strategies"))
        .await
        .expect(200)
        .clone();
    assert_eq!(strategies.as_array().unwrap().len(), 1);
    assert_eq!(strategies[0]["name"], "flexibleRollout");
    assert_eq!(
        strategies[0]["parameters"],
        json!({"rollout": "100", "stickiness": "default", "groupId": "footer"})
    );
    let id = strategies[0]["id"].as_str().unwrap();
    server
        .delete(&format!("{footer}/strategies/{id}"))
        .await
        .expect(200);
    let footer_flag = server
        .get("/api/admin/projects/web/features/footer")
        .await
        .expect(200)
        .clone();
    assert_eq!(footer_flag["environments"][1]["enabled"], false);
    assert_eq!(
        event_types(&server, "feature=footer").await,
        [
            "feature-environment-disabled",
            "feature-strategy-remove",
            "feature-environment-enabled",
            "feature-strategy-add",
            "feature-created"
        ]
    );

    // Disabling the only strategy turns the flag off; turning on with shouldActivateDisabledStrategies
    // re-enables it instead of adding another.
    server.post_empty(&format!("{footer}/on")).await.expect(200);
    let added = server
        .get(&format!("{footer}/strategies"))
        .await
        .expect(200)[0]
        .clone();
    let id = added["id"].as_str().unwrap();
    let replaced = server
        .put(
            &format!("{footer}/strategies/{id}"),
            json!({"name": "flexibleRollout", "disabled": true, "parameters": {"rollout": "30"}}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(replaced["disabled"], true);
    assert_eq!(
        replaced["sortOrder"], added["sortOrder"],
        "PUT without sortOrder keeps the place"
    );
    assert_eq!(
        replaced["parameters"],
        json!({"rollout": "30", "stickiness": "default", "groupId": "footer"})
    );
    let patched = server
        .patch(
            &format!("{footer}/strategies/{id}"),
            json!([{"op": "add", "path": "/title", "value": "Thirty"}]),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(
        (patched["title"].clone(), patched["disabled"].clone()),
        (json!("Thirty"), json!(true))
    );
    let footer_flag = server
        .get("/api/admin/projects/web/features/footer")
        .await
        .expect(200)
        .clone();
    assert_eq!(footer_flag["environments"][1]["enabled"], false);
    server
        .post_empty(&format!(
            "{footer}/on?shouldActivateDisabledStrategies=true"
        ))
        .await
        .expect(200);
    let strategies = server
        .get(&format!("{footer}/strategies"))
        .await
        .expect(200)
        .clone();
    assert_eq!(strategies.as_array().unwrap().len(), 1);
    assert_eq!(strategies[0]["disabled"], false);
    assert_eq!(strategies[0]["title"], "Thirty");
    assert_eq!(
        event_types(&server, "feature=footer&limit=5").await,
        [
            "feature-environment-enabled",
            "feature-strategy-update",
            "feature-strategy-update",
            "feature-environment-disabled",
            "feature-strategy-update"
        ]
    );

    // Validate names; archive several at once.
    server
        .post("/api/admin/features/validate", json!({"name": "free-name"}))
        .await
        .expect(200);
    server
        .post("/api/admin/features/validate", json!({"name": "bad name"}))
        .await
        .expect_error(400, "ValidationError");
    server
        .post(
            "/api/admin/projects/web/archive",
            json!({"features": ["banner", "footer"]}),
        )
        .await
        .expect(202);
    let archived = server
        .get("/api/admin/archive/features/web")
        .await
        .expect(200)
        .clone();
    assert_eq!(archived["features"].as_array().unwrap().len(), 2);

    // Project update and delete.
    server
        .delete("/api/admin/projects/web")
        .await
        .expect_error(400, "ValidationError");
    let renamed = server
        .put(
            "/api/admin/projects/web",
            json!({"name": "Web app", "mode": "protected"}),
        )
        .await
        .expect(200)
        .clone();
    assert_timestamp(&renamed["updatedAt"]);
    assert_eq!(
        (renamed["name"].clone(), renamed["mode"].clone()),
        (json!("Web app"), json!("protected"))
    );
    server
        .delete("/api/admin/projects/web/environments/staging")
        .await
        .expect(200);
    server
        .delete("/api/admin/projects/web/environments/staging")
        .await
        .expect_error(404, "NotFoundError");
    server.delete("/api/admin/archive/banner").await.expect(200);
    server.delete("/api/admin/archive/footer").await.expect(200);
    server.delete("/api/admin/projects/web").await.expect(200);
    server
        .get("/api/admin/projects/web")
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete("/api/admin/environments/staging")
        .await
        .expect(200);
    server
        .get("/api/admin/environments/staging")
        .await
        .expect_error(404, "NotFoundError");

    let events = server
        .get("/api/admin/events?project=web")
        .await
        .expect(200)
        .clone();
    let updated = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "project-updated")
        .unwrap()
        .clone();
    assert_eq!(
        (
            updated["preData"]["name"].clone(),
            updated["data"]["name"].clone()
        ),
        (json!("Web"), json!("Web app"))
    );
    let types = event_types(&server, "project=web&limit=3").await;
    assert_eq!(
        types,
        ["project-deleted", "feature-deleted", "feature-deleted"]
    );
    assert!(
        event_types(&server, "type=project-environment-removed")
            .await
            .len()
            == 1
    );
    assert!(
        event_types(&server, "type=project-environment-added")
            .await
            .len()
            == 1
    );
    assert_eq!(
        event_types(&server, "type=environment-deleted").await.len(),
        1
    );
}
