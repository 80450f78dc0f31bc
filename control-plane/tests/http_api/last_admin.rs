//! Issue 30: an instance cannot lose its last way in. The last user with the Admin root role can be neither
//! deleted nor demoted (admin API and UI forms; a second Admin makes it possible), and the sign-in page always
//! offers the operator's admin token, also once users exist. An Admin through a group counts: the last Admin
//! of their own may stop being one while such an Admin remains, and no write takes the role from the last
//! active one — a group's root role, its deletion, a member's leaving it, a user's deletion or deactivation,
//! through the admin API, the UI and SCIM — while an instance without any Admin user is held to nothing.

use crate::database::TestDb;
use crate::scim::{admin_user, enable, scim, scim_error, GROUP, PATCH};
use crate::server::{Answer, Server, ADMIN_TOKEN};
use crate::ui_access::create_user;
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    the_last_admin_stays_an_admin,
    the_admin_token_signs_in_while_users_exist,
    an_admin_through_a_group_counts,
    provisioning_keeps_an_admin,
    an_instance_without_admin_users_is_not_held,
);

async fn root_role(server: &Server, id: i64) -> i64 {
    server
        .get(&format!("/api/admin/user-admin/{id}"))
        .await
        .expect(200)["rootRole"]
        .as_i64()
        .unwrap()
}

async fn token_browser(server: &Server) -> (Browser, String) {
    let mut browser = Browser::new(server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let csrf = browser.get("/admin/users").await.csrf();
    (browser, csrf)
}

async fn the_last_admin_stays_an_admin(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let editor = create_user(&server, "ed", "Editor").await;
    let ada = create_user(&server, "ada", "Admin").await;
    // The API refuses to demote or delete the only Admin user, and changes nothing.
    let message = server
        .put(
            &format!("/api/admin/user-admin/{ada}"),
            json!({"rootRole": "Editor"}),
        )
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("last Admin user"), "{message}");
    let message = server
        .delete(&format!("/api/admin/user-admin/{ada}"))
        .await
        .expect_error(400, "ValidationError");
    assert!(
        message.contains("last Admin user cannot be deleted"),
        "{message}"
    );
    assert_eq!(root_role(&server, ada).await, 1);
    // The same rule in the UI's user forms, the message shown.
    let (mut browser, csrf) = token_browser(&server).await;
    let demote = |role: &'static str| {
        [
            ("csrf", csrf.clone()),
            ("name", "Ada".to_owned()),
            ("email", String::new()),
            ("rootRole", role.to_owned()),
        ]
    };
    let fields = demote("2");
    let form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refused = browser.post(&format!("/admin/users/{ada}"), &form).await;
    let text = refused.expect(400);
    assert!(
        text.contains("the last Admin user must keep the Admin root role"),
        "{text}"
    );
    assert_eq!(root_role(&server, ada).await, 1);
    let refused = browser
        .post(&format!("/admin/users/{ada}/delete"), &[("csrf", &csrf)])
        .await;
    let text = refused.expect(400);
    assert!(
        text.contains("The last Admin user cannot be deleted"),
        "{text}"
    );
    assert_eq!(root_role(&server, ada).await, 1);
    // Other users are not concerned.
    server
        .put(
            &format!("/api/admin/user-admin/{editor}"),
            json!({"rootRole": "Viewer"}),
        )
        .await
        .expect(200);
    // A second Admin makes both possible; then that one is the last.
    let bea = create_user(&server, "bea", "Admin").await;
    let saved = browser.post(&format!("/admin/users/{ada}"), &form).await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert_eq!(root_role(&server, ada).await, 2);
    server
        .put(
            &format!("/api/admin/user-admin/{bea}"),
            json!({"rootRole": "Viewer"}),
        )
        .await
        .expect_error(400, "ValidationError");
    server
        .put(
            &format!("/api/admin/user-admin/{ada}"),
            json!({"rootRole": "Admin"}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/user-admin/{bea}"))
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/user-admin/{ada}"))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(root_role(&server, ada).await, 1);
}

async fn the_admin_token_signs_in_while_users_exist(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    // The first user is an Editor: no user can administer the instance, the operator's token still can.
    create_user(&server, "ed", "Editor").await;
    let mut browser = Browser::new(&server);
    let login = browser.get("/login").await;
    let text = login.expect(200);
    assert!(text.contains("Sign in with an admin token"), "{text}");
    assert!(text.contains("name=\"token\""), "{text}");
    let wrong = browser.sign_in(&[("token", "*:*.not-the-token")]).await;
    assert!(wrong.expect(401).contains("not valid"), "{}", wrong.text);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/admin/users")])
        .await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    assert_eq!(signed.location.as_deref(), Some("/admin/users"));
    assert!(signed.set_cookies[0].starts_with("vexil-admin-token="));
    let users = browser.get("/admin/users").await;
    let text = users.expect(200);
    assert!(text.contains("ed"));
    // The header says a token is signed in, and offers no profile: a token has no account.
    assert!(
        text.contains("<span class=\"who\">Admin token init-admin-token-1</span>"),
        "{text}"
    );
    assert!(!text.contains(">Profile</a>"), "{text}");
}

async fn create_group(server: &Server, name: &str, role: &str, members: &[i64]) -> i64 {
    let users: Vec<Value> = members
        .iter()
        .map(|id| json!({"user": {"id": id}}))
        .collect();
    server
        .post(
            "/api/admin/groups",
            json!({"name": name, "rootRole": role, "users": users}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap()
}

/// The group's stored root role and member ids.
async fn group_state(server: &Server, id: i64) -> (Value, Vec<i64>) {
    let group = server.get(&format!("/api/admin/groups/{id}")).await;
    let group = group.expect(200).clone();
    let mut members: Vec<i64> = group["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|member| member["user"]["id"].as_i64().unwrap())
        .collect();
    members.sort_unstable();
    (group["rootRole"].clone(), members)
}

/// A 400 `ValidationError` (`{id, name, message}`) whose message has `fragment`.
fn refused(answer: &Answer, fragment: &str) {
    let message = answer.expect_error(400, "ValidationError");
    assert!(message.contains(fragment), "{message}");
    assert!(
        message.contains("give another user the Admin root role first"),
        "{message}"
    );
}

async fn an_admin_through_a_group_counts(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let ada = create_user(&server, "ada", "Admin").await;
    let gus = create_user(&server, "gus", "Editor").await;
    let admins = create_group(&server, "admins", "Admin", &[gus]).await;
    // gus is an Admin through the group: ada, the last Admin of her own, may stop being one.
    server
        .put(
            &format!("/api/admin/user-admin/{ada}"),
            json!({"rootRole": "Editor"}),
        )
        .await
        .expect(200);
    assert_eq!(root_role(&server, ada).await, 2);
    // The personal dashboard names the Admins as the rule counts them: gus, through the group.
    let answer = server.get("/api/admin/personal-dashboard").await;
    let dashboard = answer.expect(200);
    let named: Vec<&str> = dashboard["admins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|admin| admin["username"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["gus"], "{dashboard}");
    // Now gus is the only Admin, through the group: nothing may take that away, and nothing changes.
    let group_path = format!("/api/admin/groups/{admins}");
    let answer = server
        .put(
            &group_path,
            json!({"name": "admins", "rootRole": "Editor", "users": [{"user": {"id": gus}}]}),
        )
        .await;
    refused(
        &answer,
        "rootRole: group admins gives the last active Admin user",
    );
    let answer = server
        .put(
            &group_path,
            json!({"name": "admins", "rootRole": "Admin", "users": []}),
        )
        .await;
    refused(
        &answer,
        "users: the last active Admin user has the Admin root role through group admins",
    );
    refused(
        &server.delete(&group_path).await,
        "Group admins cannot be deleted",
    );
    refused(
        &server.delete(&format!("/api/admin/user-admin/{gus}")).await,
        "The last Admin user cannot be deleted",
    );
    assert_eq!(group_state(&server, admins).await, (json!(1), vec![gus]));
    assert_eq!(root_role(&server, gus).await, 2);
    // gus's own root role is not what makes him an Admin: it may change.
    server
        .put(
            &format!("/api/admin/user-admin/{gus}"),
            json!({"rootRole": "Viewer"}),
        )
        .await
        .expect(200);
    // The same refusals in the UI's group forms.
    let (mut browser, csrf) = token_browser(&server).await;
    let refused_page = browser
        .post(
            &format!("/admin/groups/{admins}"),
            &[
                ("csrf", csrf.as_str()),
                ("name", "admins"),
                ("rootRole", "2"),
                ("member", &gus.to_string()),
            ],
        )
        .await;
    let text = refused_page.expect(400);
    assert!(text.contains("gives the last active Admin user"), "{text}");
    let refused_page = browser
        .post(
            &format!("/admin/groups/{admins}/delete"),
            &[("csrf", &csrf)],
        )
        .await;
    let text = refused_page.expect(400);
    assert!(text.contains("Group admins cannot be deleted"), "{text}");
    assert_eq!(group_state(&server, admins).await, (json!(1), vec![gus]));

    // A second Admin, through another group: gus may leave the first and it may go.
    let ops = create_group(&server, "ops", "Admin", &[ada]).await;
    server
        .put(
            &group_path,
            json!({"name": "admins", "rootRole": "Admin", "users": []}),
        )
        .await
        .expect(200);
    server.delete(&group_path).await.expect(200);
    // ada is the last one, through ops; gus is deleted without a word.
    server
        .delete(&format!("/api/admin/user-admin/{gus}"))
        .await
        .expect(200);
    refused(
        &server.delete(&format!("/api/admin/groups/{ops}")).await,
        "Group ops cannot be deleted",
    );
    refused(
        &server.delete(&format!("/api/admin/user-admin/{ada}")).await,
        "The last Admin user cannot be deleted",
    );
    assert_eq!(group_state(&server, ops).await, (json!(1), vec![ada]));
}

async fn an_instance_without_admin_users_is_not_held(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    // No Admin user at all (the operator works with the admin token): nothing is refused for their sake.
    let ed = create_user(&server, "ed", "Editor").await;
    let group = create_group(&server, "editors", "Editor", &[ed]).await;
    server
        .put(
            &format!("/api/admin/groups/{group}"),
            json!({"name": "editors", "rootRole": "Viewer", "users": []}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/groups/{group}"))
        .await
        .expect(200);
    server
        .delete(&format!("/api/admin/user-admin/{ed}"))
        .await
        .expect(200);
}

async fn provisioning_keeps_an_admin(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let token = enable(&server).await;
    let sam_scim = crate::scim::create_user(&server, &token, "sam@example.com", "Sam").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let sam = admin_user(&server, &sam_scim).await.unwrap()["id"]
        .as_i64()
        .unwrap();
    let created = scim(
        &server,
        &token,
        "POST",
        "/Groups",
        Some(json!({
            "schemas": [GROUP], "displayName": "Ops", "members": [{"value": sam_scim}]
        })),
    )
    .await;
    let group_scim = created.expect(201)["id"].as_str().unwrap().to_owned();
    let groups = server.get("/api/admin/groups").await.expect(200).clone();
    let ops = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["scimId"] == group_scim.as_str())
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    // An Admin gives the provisioned group the Admin root role: sam is the only Admin user, through it.
    server
        .put(
            &format!("/api/admin/groups/{ops}"),
            json!({"name": "Ops", "rootRole": "Admin", "users": [{"user": {"id": sam}}]}),
        )
        .await
        .expect(200);
    // The provider may not take sam out of the group, delete it, deactivate or delete sam: 400, nothing changed.
    let leave = json!({
        "schemas": [PATCH], "Operations": [{"op": "remove", "path": "members", "value": [{"value": sam_scim}]}]
    });
    let group_path = format!("/Groups/{group_scim}");
    let answer = scim(&server, &token, "PATCH", &group_path, Some(leave.clone())).await;
    let detail = scim_error(&answer, 400, Some("invalidValue"));
    assert!(
        detail.contains(
            "members: the last active Admin user has the Admin root role through group Ops"
        ),
        "{detail}"
    );
    let answer = scim(&server, &token, "DELETE", &group_path, None).await;
    let detail = scim_error(&answer, 400, Some("invalidValue"));
    assert!(detail.contains("Group Ops cannot be deleted"), "{detail}");
    let user_path = format!("/Users/{sam_scim}");
    let deactivate = json!({
        "schemas": [PATCH], "Operations": [{"op": "replace", "path": "active", "value": false}]
    });
    let answer = scim(&server, &token, "PATCH", &user_path, Some(deactivate)).await;
    let detail = scim_error(&answer, 400, Some("invalidValue"));
    assert!(
        detail.contains("The last active Admin user cannot be deactivated"),
        "{detail}"
    );
    let answer = scim(&server, &token, "DELETE", &user_path, None).await;
    let detail = scim_error(&answer, 400, Some("invalidValue"));
    assert!(
        detail.contains("The last Admin user cannot be deleted"),
        "{detail}"
    );
    // Nor the admin API's delete of every provisioned group or user.
    refused(
        &server.delete("/api/admin/groups/scim-groups").await,
        "Group Ops cannot be deleted",
    );
    refused(
        &server.delete("/api/admin/user-admin/scim-users").await,
        "The last Admin user cannot be deleted",
    );
    assert_eq!(group_state(&server, ops).await, (json!(1), vec![sam]));
    let stored = admin_user(&server, &sam_scim).await.unwrap();
    assert!(stored.get("active").is_none(), "{stored}");
    // With an Admin of their own besides, the provider has its way.
    create_user(&server, "ada", "Admin").await;
    let answer = scim(&server, &token, "PATCH", &group_path, Some(leave)).await;
    answer.expect(200);
    assert_eq!(group_state(&server, ops).await, (json!(1), vec![]));
    let answer = scim(&server, &token, "DELETE", &user_path, None).await;
    assert_eq!(answer.status, 204, "{}", answer.body);
}
