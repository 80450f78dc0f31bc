//! Issue 32 §4: SCIM Groups at `/scim/v2/Groups` on SQLite and Postgres (created, filtered, members added and
//! removed the ways Okta and Entra send them, replaced, deleted, checked in the admin API's view, with their
//! events), and the admin API's side of provisioning: provisioned users and groups refused but for their root
//! role, and the deletes of every provisioned user and group.

use crate::database::TestDb;
use crate::scim::{admin_user, create_user, enable, events, scim, scim_error, GROUP, PATCH};
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    groups_and_their_members,
    provisioned_ones_are_refused_to_the_admin_api_and_deleted_all_at_once,
);

/// The admin API's view of the group with this SCIM id.
async fn admin_group(server: &Server, scim_id: &str) -> Value {
    let groups = server.get("/api/admin/groups").await.expect(200).clone();
    groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["scimId"] == scim_id)
        .cloned()
        .unwrap()
}

async fn groups_and_their_members(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let token = enable(&server).await;
    let ann = create_user(&server, &token, "ann@example.com", "Ann").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ben = create_user(&server, &token, "ben@example.com", "Ben").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let group = scim(&server, &token, "POST", "/Groups", Some(json!({
        "schemas": [GROUP], "displayName": "Engineering", "externalId": "eng", "members": [{"value": ann, "display": "Ann"}]
    }))).await;
    let group = group.expect(201).clone();
    let id = group["id"].as_str().unwrap().to_owned();
    assert_eq!(group["displayName"], "Engineering");
    assert_eq!(group["externalId"], "eng");
    assert_eq!(
        group["members"],
        json!([{"value": ann, "$ref": format!("{}/scim/v2/Users/{ann}", server.base), "type": "User"}])
    );
    let member_names = |group: &Value| -> Vec<String> {
        let mut names: Vec<String> = group["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|member| member["user"]["username"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let stored = admin_group(&server, &id).await;
    assert_eq!(stored["name"], "Engineering");
    assert_eq!(member_names(&stored), ["ann@example.com"]);
    assert_eq!(events(&server, "group-created").await.len(), 1);
    assert_eq!(events(&server, "group-user-added").await.len(), 1);
    // Filter by displayName.
    let found = scim(
        &server,
        &token,
        "GET",
        "/Groups?filter=displayName%20eq%20%22engineering%22",
        None,
    )
    .await;
    assert_eq!(found.expect(200)["totalResults"], 1);
    // Okta adds a member, then removes one by filter; Entra removes with the members as the value.
    scim(&server, &token, "PATCH", &format!("/Groups/{id}"), Some(json!({
        "schemas": [PATCH], "Operations": [{"op": "add", "path": "members", "value": [{"value": ben}]}]
    }))).await.expect(200);
    assert_eq!(
        member_names(&admin_group(&server, &id).await),
        ["ann@example.com", "ben@example.com"]
    );
    scim(&server, &token, "PATCH", &format!("/Groups/{id}"), Some(json!({
        "schemas": [PATCH], "Operations": [{"op": "remove", "path": format!("members[value eq \"{ann}\"]")}]
    }))).await.expect(200);
    assert_eq!(
        member_names(&admin_group(&server, &id).await),
        ["ben@example.com"]
    );
    scim(&server, &token, "PATCH", &format!("/Groups/{id}"), Some(json!({
        "schemas": [PATCH], "Operations": [{"op": "Remove", "path": "members", "value": [{"value": ben}]}]
    }))).await.expect(200);
    assert!(member_names(&admin_group(&server, &id).await).is_empty());
    assert_eq!(events(&server, "group-user-removed").await.len(), 2);
    // Replace: the name and the members.
    let replaced = scim(&server, &token, "PUT", &format!("/Groups/{id}"), Some(json!({
        "schemas": [GROUP], "displayName": "Platform", "members": [{"value": ann}, {"value": ben}]
    }))).await;
    assert_eq!(replaced.expect(200)["members"].as_array().unwrap().len(), 2);
    let stored = admin_group(&server, &id).await;
    assert_eq!(stored["name"], "Platform");
    assert_eq!(
        member_names(&stored),
        ["ann@example.com", "ben@example.com"]
    );
    // Refusals change nothing.
    let bad = scim(&server, &token, "PATCH", &format!("/Groups/{id}"), Some(json!({
        "schemas": [PATCH], "Operations": [{"op": "add", "path": "members", "value": [{"value": "nobody"}]}]
    }))).await;
    scim_error(&bad, 400, Some("invalidValue"));
    server
        .post("/api/admin/groups", json!({"name": "Taken"}))
        .await
        .expect(201);
    let taken = scim(
        &server,
        &token,
        "POST",
        "/Groups",
        Some(json!({"schemas": [GROUP], "displayName": "Taken"})),
    )
    .await;
    scim_error(&taken, 409, Some("uniqueness"));
    let bad = scim(
        &server,
        &token,
        "POST",
        "/Groups",
        Some(json!({"schemas": [GROUP]})),
    )
    .await;
    scim_error(&bad, 400, Some("invalidValue"));
    assert_eq!(member_names(&admin_group(&server, &id).await).len(), 2);
    // Delete.
    assert_eq!(
        scim(&server, &token, "DELETE", &format!("/Groups/{id}"), None)
            .await
            .status,
        204
    );
    scim_error(
        &scim(&server, &token, "GET", &format!("/Groups/{id}"), None).await,
        404,
        None,
    );
    assert_eq!(events(&server, "group-deleted").await.len(), 1);
}

async fn provisioned_ones_are_refused_to_the_admin_api_and_deleted_all_at_once(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let token = enable(&server).await;
    let scim_id = create_user(&server, &token, "pat@example.com", "Pat").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let user = admin_user(&server, &scim_id).await.unwrap();
    let user_id = user["id"].as_i64().unwrap();
    let path = format!("/api/admin/user-admin/{user_id}");
    let message = server
        .put(&path, json!({"name": "Not Pat"}))
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("managed by SCIM"), "{message}");
    server
        .delete(&path)
        .await
        .expect_error(403, "NoAccessError");
    server
        .post(
            &format!("{path}/change-password"),
            json!({"password": "correct horse battery"}),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert_eq!(admin_user(&server, &scim_id).await.unwrap()["name"], "Pat");
    // The root role stays Vexil's to give.
    assert_eq!(
        server.put(&path, json!({"rootRole": 2})).await.expect(200)["rootRole"],
        2
    );
    let group = scim(
        &server,
        &token,
        "POST",
        "/Groups",
        Some(json!({"schemas": [GROUP], "displayName": "Ops", "members": [{"value": scim_id}]})),
    )
    .await;
    let group_scim_id = group.expect(201)["id"].as_str().unwrap().to_owned();
    let groups = server.get("/api/admin/groups").await.expect(200).clone();
    let group = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["scimId"] == group_scim_id.as_str())
        .unwrap()
        .clone();
    let group_path = format!("/api/admin/groups/{}", group["id"]);
    let body = json!({"name": "Ops", "users": [{"user": {"id": user_id}}]});
    let message = server
        .put(
            &group_path,
            json!({"name": "Renamed", "users": [{"user": {"id": user_id}}]}),
        )
        .await
        .expect_error(403, "NoAccessError");
    assert!(message.contains("managed by SCIM"), "{message}");
    server
        .put(&group_path, json!({"name": "Ops", "users": []}))
        .await
        .expect_error(403, "NoAccessError");
    server
        .delete(&group_path)
        .await
        .expect_error(403, "NoAccessError");
    let mut with_role = body.clone();
    with_role["rootRole"] = json!(2);
    assert_eq!(
        server.put(&group_path, with_role).await.expect(200)["rootRole"],
        2
    );
    // Everything provisioned goes at once; what was not stays.
    server
        .post("/api/admin/groups", json!({"name": "Local"}))
        .await
        .expect(201);
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "local", "rootRole": 3}),
        )
        .await
        .expect(201);
    server
        .delete("/api/admin/groups/scim-groups")
        .await
        .expect(200);
    let groups = server.get("/api/admin/groups").await.expect(200).clone();
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|group| group["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Local"]);
    server
        .delete("/api/admin/user-admin/scim-users")
        .await
        .expect(200);
    let users = server
        .get("/api/admin/user-admin")
        .await
        .expect(200)
        .clone();
    let names: Vec<&str> = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|user| user["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["local"]);
    assert_eq!(
        scim(&server, &token, "GET", "/Users", None)
            .await
            .expect(200)["totalResults"],
        0
    );
}
