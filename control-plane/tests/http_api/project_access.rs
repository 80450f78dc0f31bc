//! Access per project through the real binary on SQLite and Postgres: permissions, custom roles, a project's
//! access for people and groups (the permission matrix over every kind of admin write: `permission_matrix`).

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    permissions_and_custom_roles,
    a_projects_access_for_people_and_groups,
);

async fn events_of_type(server: &Server, event_type: &str) -> Vec<Value> {
    server
        .get(&format!("/api/admin/events?type={event_type}&limit=1000"))
        .await
        .expect(200)["events"]
        .as_array()
        .unwrap()
        .clone()
}

pub(crate) async fn create_role(server: &Server, body: Value) -> i64 {
    server.post("/api/admin/roles", body).await.expect(200)["roles"]["id"]
        .as_i64()
        .unwrap()
}

async fn permissions_and_custom_roles(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let listing = server
        .get("/api/admin/permissions")
        .await
        .expect(200)
        .clone();
    assert_eq!(listing["version"], 2);
    let names = |level: &Value| -> Vec<String> {
        level
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(names(&listing["permissions"]["root"]).contains(&"CREATE_PROJECT".to_owned()));
    assert!(names(&listing["permissions"]["project"]).contains(&"UPDATE_FEATURE".to_owned()));
    let environments = listing["permissions"]["environments"].as_array().unwrap();
    let production = environments
        .iter()
        .find(|e| e["name"] == "production")
        .expect("production's permissions");
    let switch = production["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "UPDATE_FEATURE_ENVIRONMENT")
        .unwrap();
    assert_eq!(switch["environment"], "production");
    assert_eq!(switch["type"], "environment");

    let roles = server.get("/api/admin/roles").await.expect(200).clone();
    let predefined: Vec<(i64, String, String)> = roles["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["name"].as_str().unwrap().to_owned(),
                r["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        predefined,
        [
            (1, "Admin".into(), "root".into()),
            (2, "Editor".into(), "root".into()),
            (3, "Viewer".into(), "root".into()),
            (4, "Owner".into(), "project".into()),
            (5, "Member".into(), "project".into()),
        ]
    );

    // A custom project role, one of its permissions scoped to an environment.
    let body = json!({"name": "switch in development", "description": "Switch only", "type": "custom",
        "permissions": [{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"},
                        {"name": "UPDATE_FEATURE"}]});
    server
        .post("/api/admin/roles/validate", body.clone())
        .await
        .expect(200);
    let id = create_role(&server, body.clone()).await;
    assert!(id > 5);
    server
        .post("/api/admin/roles", body.clone())
        .await
        .expect_error(409, "NameExistsError");
    let role = server
        .get(&format!("/api/admin/roles/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(role["type"], "custom");
    let held: Vec<(String, Value)> = role["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_owned(),
                p["environment"].clone(),
            )
        })
        .collect();
    assert!(held.contains(&("UPDATE_FEATURE_ENVIRONMENT".into(), json!("development"))));
    assert!(held.contains(&("UPDATE_FEATURE".into(), Value::Null)));
    assert_eq!(events_of_type(&server, "role-created").await.len(), 1);

    // Bad bodies change nothing and say why.
    for (bad, field) in [
        (json!({"name": "", "permissions": []}), "name"),
        (json!({"name": "x", "type": "root"}), "type"),
        (
            json!({"name": "x", "permissions": [{"name": "NOPE"}]}),
            "permissions[0]",
        ),
        (
            json!({"name": "x", "permissions": [{"name": "CREATE_PROJECT"}]}),
            "permissions[0]",
        ),
        (
            json!({"name": "x", "permissions": [{"name": "CREATE_FEATURE_STRATEGY"}]}),
            "permissions[0]",
        ),
        (
            json!({"name": "x", "permissions": [{"name": "CREATE_FEATURE_STRATEGY", "environment": "mars"}]}),
            "permissions[0]",
        ),
        (
            json!({"name": "x", "type": "root-custom", "permissions": [{"name": "UPDATE_FEATURE"}]}),
            "permissions[0]",
        ),
    ] {
        let message = server
            .post("/api/admin/roles", bad.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.starts_with(field), "{bad}: {message}");
    }
    assert_eq!(
        server.get("/api/admin/roles").await.expect(200)["roles"]
            .as_array()
            .unwrap()
            .len(),
        6
    );

    // Update, then in use: the role cannot be deleted; unused, it can; predefined ones never.
    let renamed = server
        .put(
            &format!("/api/admin/roles/{id}"),
            json!({"name": "development switcher", "type": "custom",
                   "permissions": [{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"}]}),
        )
        .await;
    assert_eq!(renamed.expect(200)["roles"]["name"], "development switcher");
    let (user, _) = user_with_pat(&server, "dana", "Viewer").await;
    server
        .post(
            "/api/admin/projects/default/access",
            json!({"roles": [id], "users": [user], "groups": []}),
        )
        .await
        .expect(200);
    let usage = server
        .get(&format!("/api/admin/projects/roles/{id}/access"))
        .await
        .expect(200)
        .clone();
    assert_eq!(
        usage["projects"],
        json!([{"project": "default", "role": id, "userCount": 1, "serviceAccountCount": 0, "groupCount": 0}])
    );
    let message = server
        .delete(&format!("/api/admin/roles/{id}"))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("in use"), "{message}");
    server
        .delete(&format!("/api/admin/projects/default/users/{user}/roles"))
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/roles/{id}"))
        .await
        .expect(200);
    server
        .get(&format!("/api/admin/roles/{id}"))
        .await
        .expect_error(404, "NotFoundError");
    server
        .delete("/api/admin/roles/4")
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(events_of_type(&server, "role-updated").await.len(), 1);
    assert_eq!(events_of_type(&server, "role-deleted").await.len(), 1);

    // A custom root role: its root permissions, nothing in projects.
    let root = create_role(
        &server,
        json!({"name": "segment keeper", "type": "root-custom", "permissions": [{"name": "CREATE_SEGMENT"}]}),
    )
    .await;
    let (keeper, keeper_pat) = user_with_pat(&server, "keeper", "Viewer").await;
    server
        .put(
            &format!("/api/admin/user-admin/{keeper}"),
            json!({"rootRole": root}),
        )
        .await
        .expect(200);
    let access = server
        .get(&format!(
            "/api/admin/user-admin/{keeper}/permissions?project=default&environment=production"
        ))
        .await
        .expect(200)
        .clone();
    assert_eq!(access["rootRole"]["name"], "segment keeper");
    let has = |level: &str, name: &str| {
        access["overview"][level]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["hasPermission"]
            .clone()
    };
    assert_eq!(has("root", "CREATE_SEGMENT"), true);
    assert_eq!(has("root", "CREATE_PROJECT"), false);
    assert_eq!(has("environment", "UPDATE_FEATURE_ENVIRONMENT"), false);
    server
        .send(
            "POST",
            "/api/admin/segments",
            Some(json!({"name": "kept", "constraints": []})),
            Some(&keeper_pat),
        )
        .await
        .expect(201);
    server
        .send(
            "POST",
            "/api/admin/projects",
            Some(json!({"id": "nope", "name": "nope"})),
            Some(&keeper_pat),
        )
        .await
        .expect_error(403, "NoAccessError");
    // A custom root role in use is not deleted; a project role is no root role.
    server
        .delete(&format!("/api/admin/roles/{root}"))
        .await
        .expect_error(400, "ValidationError");
    server
        .put(
            &format!("/api/admin/user-admin/{keeper}"),
            json!({"rootRole": 4}),
        )
        .await
        .expect_error(400, "ValidationError");
}

async fn a_projects_access_for_people_and_groups(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (alice, alice_pat) = user_with_pat(&server, "alice", "Editor").await;
    let (bob, bob_pat) = user_with_pat(&server, "bob", "Viewer").await;
    let group = server
        .post(
            "/api/admin/groups",
            json!({"name": "team", "users": [{"user": {"id": bob}}]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();

    // The creator of a project becomes its Owner (an admin token has no account: no one).
    server
        .send(
            "POST",
            "/api/admin/projects",
            Some(json!({"id": "shop", "name": "Shop"})),
            Some(&alice_pat),
        )
        .await
        .expect(201);
    let access = server
        .get("/api/admin/projects/shop/access")
        .await
        .expect(200)
        .clone();
    assert_eq!(access["users"].as_array().unwrap().len(), 1);
    assert_eq!(access["users"][0]["id"], alice);
    assert_eq!(access["users"][0]["roles"], json!([4]));
    assert_eq!(access["users"][0]["roleId"], 4);
    let role_names: Vec<&str> = access["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(role_names, ["Owner", "Member"]);

    // The Owner (an Editor, who may not give access elsewhere) gives the team Member; bob may now work here.
    let answer = server
        .send(
            "POST",
            "/api/admin/projects/shop/access",
            Some(json!({"roles": [5], "groups": [group], "users": []})),
            Some(&alice_pat),
        )
        .await;
    answer.expect(200);
    server
        .send(
            "POST",
            "/api/admin/projects/default/access",
            Some(json!({"roles": [5], "groups": [group], "users": []})),
            Some(&alice_pat),
        )
        .await
        .expect_error(403, "NoAccessError");
    let created = server
        .send(
            "POST",
            "/api/admin/projects/shop/features",
            Some(json!({"name": "cart"})),
            Some(&bob_pat),
        )
        .await;
    created.expect(201);
    // Bob may not give access himself.
    server
        .send(
            "PUT",
            &format!("/api/admin/projects/shop/users/{bob}/roles"),
            Some(json!({"roles": [4]})),
            Some(&bob_pat),
        )
        .await
        .expect_error(403, "NoAccessError");

    // Refusals change nothing.
    for (body, field) in [
        (json!({"roles": [1], "groups": [], "users": [bob]}), "roles"),
        (
            json!({"roles": [99], "groups": [], "users": [bob]}),
            "roles",
        ),
        (json!({"roles": [5], "groups": [], "users": [999]}), "users"),
        (
            json!({"roles": [5], "groups": [999], "users": []}),
            "groups",
        ),
        (json!({"roles": [], "groups": [], "users": [bob]}), "roles"),
    ] {
        let message = server
            .post("/api/admin/projects/shop/access", body.clone())
            .await
            .expect_error(400, "ValidationError");
        assert!(message.starts_with(field), "{body}: {message}");
    }
    server
        .post(
            "/api/admin/projects/nowhere/access",
            json!({"roles": [5], "groups": [], "users": [bob]}),
        )
        .await
        .expect_error(404, "NotFoundError");
    let access = server
        .get("/api/admin/projects/shop/access")
        .await
        .expect(200)
        .clone();
    assert_eq!(access["users"].as_array().unwrap().len(), 1);
    assert_eq!(access["groups"][0]["id"], group);
    assert_eq!(access["groups"][0]["roles"], json!([5]));
    assert_eq!(access["groups"][0]["userCount"], 1);
    // The group names the projects where it has a role.
    let team = server
        .get(&format!("/api/admin/groups/{group}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(team["projects"], json!(["shop"]));

    // Revoked, it is gone at the next request.
    server
        .delete(&format!("/api/admin/projects/shop/groups/{group}/roles"))
        .await
        .expect(200);
    let team = server
        .get(&format!("/api/admin/groups/{group}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(team["projects"], json!([]));
    server
        .send(
            "POST",
            "/api/admin/projects/shop/features",
            Some(json!({"name": "cart2"})),
            Some(&bob_pat),
        )
        .await
        .expect_error(403, "NoAccessError");

    // PUT replaces the whole access.
    server
        .put(
            "/api/admin/projects/shop/access",
            json!({"roles": [{"id": 5, "users": [bob], "groups": []}]}),
        )
        .await
        .expect(200);
    let access = server
        .get("/api/admin/projects/shop/access")
        .await
        .expect(200)
        .clone();
    let users: Vec<i64> = access["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_i64().unwrap())
        .collect();
    assert_eq!(users, [bob]);
    assert!(access["groups"].as_array().unwrap().is_empty());
    server
        .put(
            &format!("/api/admin/projects/shop/users/{bob}/roles"),
            json!({"roles": [4]}),
        )
        .await
        .expect(200);
    server
        .put(
            "/api/admin/projects/shop/users/999/roles",
            json!({"roles": [4]}),
        )
        .await
        .expect_error(404, "NotFoundError");

    for (event_type, count) in [
        ("project-access-added", 2),
        ("project-access-group-roles-deleted", 1),
        ("project-access-updated", 1),
        ("project-access-user-roles-updated", 1),
    ] {
        let events = events_of_type(&server, event_type).await;
        assert_eq!(events.len(), count, "{event_type}: {events:?}");
        assert!(events.iter().all(|e| e["project"] == "shop"));
    }
    let overview = server
        .get("/api/admin/access/overview")
        .await
        .expect(200)
        .clone();
    let bobs = overview["overview"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["userId"] == bob)
        .unwrap()
        .clone();
    assert_eq!(bobs["accessibleProjects"], json!(["shop"]));
    assert_eq!(bobs["groups"], json!(["team"]));
    assert_eq!(bobs["rootRole"], "Viewer");
    // Only Admins read the overview.
    server
        .send("GET", "/api/admin/access/overview", None, Some(&alice_pat))
        .await
        .expect_error(403, "NoAccessError");
}
