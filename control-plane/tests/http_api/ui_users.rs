//! The admin web UI's users and groups pages over HTTP, through the real binary: users (create, root role,
//! password reset, delete, the filter of inactive users), groups (members, root role), validation beside the
//! field. (The browser walk is `edge/tests/e2e/ui_access.rs`.)

use crate::database::TestDb;
use crate::server::Server;
use crate::ui_access::{create_user, signed_in_as, with_token, PASSWORD};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    users_are_created_changed_reset_and_deleted,
    groups_hold_members_and_a_root_role,
    the_users_page_filters_inactive_users,
);

async fn users_are_created_changed_reset_and_deleted(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let mut browser = with_token(&server).await;
    let page = browser.get("/admin/users").await;
    let text = page.expect(200);
    assert!(text.contains("No users yet"), "{text}");
    let form = browser.get("/admin/users/create").await;
    for fragment in [
        "<label for=\"user-username\">Username</label>",
        "<label for=\"user-name\">Name</label>",
        "<label for=\"user-email\">Email</label>",
        "<label for=\"user-role\">Root role</label>",
        "<label for=\"user-password\">Password</label>",
        ">Create user</button>",
    ] {
        assert!(form.has(fragment), "{fragment}");
    }
    let csrf = form.csrf();
    let short = browser
        .post(
            "/admin/users/create",
            &[
                ("csrf", &csrf),
                ("username", "ed"),
                ("name", "Ed <i>"),
                ("rootRole", "2"),
                ("password", "short"),
            ],
        )
        .await;
    short.expect(400);
    assert!(short
        .text_of("user-password-error")
        .contains("at least 8 characters"));
    assert!(short.has("value=\"Ed &lt;i&gt;\""));
    assert!(short.has("<option value=\"2\" selected>Editor</option>"));
    let created = browser
        .post(
            "/admin/users/create",
            &[
                ("csrf", &csrf),
                ("username", "ed"),
                ("name", "Ed <i>"),
                ("email", "ed@example.com"),
                ("rootRole", "2"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let clash = browser
        .post(
            "/admin/users/create",
            &[("csrf", &csrf), ("username", "ed"), ("rootRole", "3")],
        )
        .await;
    clash.expect(409);
    assert!(clash
        .text_of("user-username-error")
        .contains("already exists"));
    let users = server
        .get("/api/admin/user-admin")
        .await
        .expect(200)
        .clone();
    let users = users["users"].as_array().unwrap();
    assert_eq!(users.len(), 1);
    assert_eq!(users[0]["rootRole"], 2);
    assert_eq!(users[0]["name"], "Ed <i>");
    let id = users[0]["id"].as_i64().unwrap();
    let list = browser.get("/admin/users").await;
    let text = list.expect(200);
    assert!(text.contains("Ed &lt;i&gt;") && !text.contains("Ed <i>"));
    assert!(text.contains("User Ed &lt;i&gt; created"), "{text}");
    assert!(text.contains("aria-label=\"Edit Ed &lt;i&gt;\""));
    // Root role and e-mail.
    let user_page = browser.get(&format!("/admin/users/{id}")).await;
    user_page.expect(200);
    let bad = browser
        .post(
            &format!("/admin/users/{id}"),
            &[
                ("csrf", &csrf),
                ("name", "Ed"),
                ("email", "not-an-email"),
                ("rootRole", "3"),
            ],
        )
        .await;
    bad.expect(400);
    assert!(bad
        .text_of("user-email-error")
        .contains("not a valid e-mail"));
    assert_eq!(
        server
            .get(&format!("/api/admin/user-admin/{id}"))
            .await
            .expect(200)["rootRole"],
        2
    );
    let saved = browser
        .post(
            &format!("/admin/users/{id}"),
            &[
                ("csrf", &csrf),
                ("name", "Ed"),
                ("email", "ed@example.com"),
                ("rootRole", "3"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    assert_eq!(
        server
            .get(&format!("/api/admin/user-admin/{id}"))
            .await
            .expect(200)["rootRole"],
        3
    );
    // Password reset: the confirmation must match; the new one signs in.
    let mismatch = browser
        .post(
            &format!("/admin/users/{id}/password"),
            &[
                ("csrf", &csrf),
                ("password", "new password 1"),
                ("confirmPassword", "new password 2"),
            ],
        )
        .await;
    mismatch.expect(400);
    assert!(mismatch
        .text_of("reset-confirm-error")
        .contains("does not match"));
    let reset = browser
        .post(
            &format!("/admin/users/{id}/password"),
            &[
                ("csrf", &csrf),
                ("password", "new password 1"),
                ("confirmPassword", "new password 1"),
            ],
        )
        .await;
    assert_eq!(reset.status, 303, "{}", reset.text);
    signed_in_as(&server, "ed", "new password 1").await;
    // Delete after a confirmation.
    let confirm = browser.get(&format!("/admin/users/{id}/delete")).await;
    assert!(confirm.expect(200).contains("Delete Ed?"));
    let deleted = browser
        .post(&format!("/admin/users/{id}/delete"), &[("csrf", &csrf)])
        .await;
    assert_eq!(deleted.status, 303);
    server
        .get(&format!("/api/admin/user-admin/{id}"))
        .await
        .expect_error(404, "NotFoundError");
}

async fn groups_hold_members_and_a_root_role(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_user(&server, "root", "Admin").await;
    let ann = create_user(&server, "ann", "Viewer").await;
    let bob = create_user(&server, "bob", "Viewer").await;
    let mut browser = signed_in_as(&server, "root", PASSWORD).await;
    let list = browser.get("/admin/groups").await;
    assert!(list.expect(200).contains("No groups yet."));
    let form = browser.get("/admin/groups/create").await;
    let text = form.expect(200);
    for fragment in [
        "<label for=\"group-name\">Name</label>",
        "<label for=\"group-role\">Root role</label>",
        "<legend>Members</legend>",
        &format!("<label for=\"member-{ann}\">ann</label>"),
    ] {
        assert!(text.contains(fragment), "{fragment} in {text}");
    }
    let csrf = form.csrf();
    let empty = browser
        .post(
            "/admin/groups/create",
            &[
                ("csrf", &csrf),
                ("name", ""),
                ("rootRole", "2"),
                ("member", &ann.to_string()),
            ],
        )
        .await;
    empty.expect(400);
    assert!(empty
        .text_of("group-name-error")
        .contains("name must be 1 to 100"));
    assert!(empty.has(&format!("value=\"{ann}\" checked")));
    let created = browser
        .post(
            "/admin/groups/create",
            &[
                ("csrf", &csrf),
                ("name", "ops <team>"),
                ("rootRole", "2"),
                ("member", &ann.to_string()),
                ("member", &bob.to_string()),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let group = server.get("/api/admin/groups").await.expect(200)["groups"][0].clone();
    assert_eq!(group["name"], "ops <team>");
    assert_eq!(group["rootRole"], 2);
    assert_eq!(group["users"].as_array().unwrap().len(), 2);
    let id = group["id"].as_i64().unwrap();
    let list = browser.get("/admin/groups").await;
    let text = list.expect(200);
    assert!(text.contains("ops &lt;team&gt;") && !text.contains("ops <team>"));
    assert!(
        text.contains("ann, bob") && text.contains("<td>Editor</td>"),
        "{text}"
    );
    assert!(text.contains("<span class=\"muted\">none</span>"), "{text}");
    // Given a role in a project, the group names it, a link to who has access there.
    server
        .post(
            "/api/admin/projects/default/access",
            json!({"roles": [5], "groups": [id], "users": []}),
        )
        .await
        .expect(200);
    let text = browser.get("/admin/groups").await.expect(200).to_string();
    assert!(
        text.contains(
            "href=\"/projects/default/access\" aria-label=\"Default: who has access\">Default</a>"
        ),
        "{text}"
    );
    // Bob leaves, the root role goes.
    let edit = browser.get(&format!("/admin/groups/{id}")).await;
    assert!(edit
        .expect(200)
        .contains(&format!("value=\"{bob}\" checked")));
    let saved = browser
        .post(
            &format!("/admin/groups/{id}"),
            &[
                ("csrf", &csrf),
                ("name", "ops"),
                ("rootRole", ""),
                ("member", &ann.to_string()),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let group = server
        .get(&format!("/api/admin/groups/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(group["rootRole"], Value::Null);
    assert_eq!(group["users"][0]["user"]["id"], ann);
    assert_eq!(group["users"].as_array().unwrap().len(), 1);
    let confirm = browser.get(&format!("/admin/groups/{id}/delete")).await;
    assert!(confirm.expect(200).contains("Delete ops?"));
    let deleted = browser
        .post(&format!("/admin/groups/{id}/delete"), &[("csrf", &csrf)])
        .await;
    assert_eq!(deleted.status, 303);
    server
        .get(&format!("/api/admin/groups/{id}"))
        .await
        .expect_error(404, "NotFoundError");
}

/// Makes a user look created and last signed in long ago (the control plane has no clock to wind).
async fn backdate_user(db: &TestDb, id: i64) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    conn.execute(
        format!(
            "UPDATE users SET created_at = '2020-01-01T00:00:00.000Z', \
             seen_at = '2020-01-02T00:00:00.000Z' WHERE id = {id}"
        )
        .as_str(),
    )
    .await
    .unwrap();
}

/// The users page's filter "Inactive (not seen for 180 days)" keeps the users `/api/admin/user-admin/inactive`
/// lists: not signed in for 180 days, and no personal access token of theirs used in that time either.
async fn the_users_page_filters_inactive_users(db: TestDb) {
    let server = Server::start(&db, &["--token-seen-interval", "200ms"]).await;
    let old = create_user(&server, "old-timer", "Viewer").await;
    create_user(&server, "newcomer", "Viewer").await;
    let (scripted, pat) = crate::access::user_with_pat(&server, "scripted", "Viewer").await;
    backdate_user(&db, old).await;
    backdate_user(&db, scripted).await;
    let inactive_names = |body: &Value| -> Vec<String> {
        body["inactiveUsers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|user| user["username"].as_str().unwrap().to_owned())
            .collect()
    };
    let listed = server.get("/api/admin/user-admin/inactive").await;
    assert_eq!(
        inactive_names(listed.expect(200)),
        ["old-timer", "scripted"]
    );

    create_user(&server, "boss", "Admin").await;
    let mut browser = signed_in_as(&server, "boss", PASSWORD).await;
    let all = browser.page("/admin/users").await;
    assert!(
        all.contains("<input type=\"checkbox\" name=\"inactive\" value=\"1\">Inactive (not seen for 180 days)"),
        "{all}"
    );
    for name in ["old-timer", "newcomer", "scripted"] {
        assert!(all.contains(&format!("<strong>{name}</strong>")), "{name}");
    }
    let filtered = browser.page("/admin/users?inactive=1").await;
    assert!(
        filtered.contains("name=\"inactive\" value=\"1\" checked>"),
        "{filtered}"
    );
    assert!(
        filtered.contains("<strong>old-timer</strong>"),
        "{filtered}"
    );
    assert!(filtered.contains("<strong>scripted</strong>"), "{filtered}");
    assert!(
        !filtered.contains("<strong>newcomer</strong>"),
        "{filtered}"
    );

    // Their personal access token used: no longer inactive, once the use is written.
    server
        .send("GET", "/api/admin/user/tokens", None, Some(&pat))
        .await
        .expect(200);
    let mut names = Vec::new();
    for _ in 0..100 {
        let listed = server.get("/api/admin/user-admin/inactive").await;
        names = inactive_names(listed.expect(200));
        if names == ["old-timer"] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(names, ["old-timer"]);
    let patted = server.get("/api/admin/user-admin/inactive").await;
    assert!(patted.expect(200)["inactiveUsers"][0]["patSeenAt"].is_null());
    let filtered = browser.page("/admin/users?inactive=1").await;
    assert!(
        filtered.contains("<strong>old-timer</strong>"),
        "{filtered}"
    );
    assert!(
        !filtered.contains("<strong>scripted</strong>"),
        "{filtered}"
    );
}
