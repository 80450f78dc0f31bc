//! The permission matrix through the real binary on SQLite and Postgres: predefined roles, a custom project
//! role, an environment-scoped custom role, direct and group-granted access, for each kind of admin write,
//! through personal access tokens, a session and the UI's forms.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::project_access::create_role;
use crate::server::{Answer, Server};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(the_permission_matrix);

/// One admin write: what it is, and the request that makes it (fresh names per caller, so an allowed write
/// never stands in another's way).
struct Write {
    what: &'static str,
    method: &'static str,
    path: String,
    body: Option<Value>,
}

fn writes(n: usize) -> Vec<Write> {
    let flag = "/api/admin/projects/a/features/flag";
    let write = |what, method, path: String, body: Option<Value>| Write {
        what,
        method,
        path,
        body,
    };
    vec![
        write(
            "create a flag in a",
            "POST",
            "/api/admin/projects/a/features".into(),
            Some(json!({"name": format!("new-{n}")})),
        ),
        write(
            "create a flag in b",
            "POST",
            "/api/admin/projects/b/features".into(),
            Some(json!({"name": format!("newb-{n}")})),
        ),
        write(
            "update a flag in a",
            "PATCH",
            flag.into(),
            Some(json!([{"op": "replace", "path": "/description", "value": format!("d{n}")}])),
        ),
        write(
            "add a strategy in development",
            "POST",
            format!("{flag}/environments/development/strategies"),
            Some(json!({"name": "default"})),
        ),
        write(
            "add a strategy in production",
            "POST",
            format!("{flag}/environments/production/strategies"),
            Some(json!({"name": "default"})),
        ),
        write(
            "set variants in development",
            "PUT",
            format!("{flag}/environments/development/variants"),
            Some(json!([])),
        ),
        write(
            "switch on in development",
            "POST",
            format!("{flag}/environments/development/on"),
            None,
        ),
        write(
            "switch on in production",
            "POST",
            format!("{flag}/environments/production/on"),
            None,
        ),
        write(
            "switch on in b",
            "POST",
            "/api/admin/projects/b/features/other/environments/development/on".into(),
            None,
        ),
        write(
            "create a segment",
            "POST",
            "/api/admin/segments".into(),
            Some(json!({"name": format!("segment-{n}"), "constraints": []})),
        ),
        write(
            "create an API token",
            "POST",
            "/api/admin/api-tokens".into(),
            Some(
                json!({"tokenName": format!("t{n}"), "type": "client", "environment": "development", "projects": ["a"]}),
            ),
        ),
        write(
            "create a user",
            "POST",
            "/api/admin/user-admin".into(),
            Some(json!({"username": format!("u{n}"), "rootRole": 3})),
        ),
        write(
            "give access in a",
            "POST",
            "/api/admin/projects/a/access".into(),
            Some(json!({"roles": [5], "users": [], "groups": []})),
        ),
    ]
}

async fn the_permission_matrix(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for project in ["a", "b"] {
        server
            .post(
                "/api/admin/projects",
                json!({"id": project, "name": project}),
            )
            .await
            .expect(201);
    }
    server
        .post("/api/admin/projects/a/features", json!({"name": "flag"}))
        .await
        .expect(201);
    server
        .post("/api/admin/projects/b/features", json!({"name": "other"}))
        .await
        .expect(201);
    let switcher = create_role(
        &server,
        json!({"name": "switch in development", "permissions": [
            {"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"}]}),
    )
    .await;
    let flagger = create_role(
        &server,
        json!({"name": "flag author", "permissions": [{"name": "CREATE_FEATURE"}, {"name": "UPDATE_FEATURE"},
            {"name": "CREATE_FEATURE_STRATEGY", "environment": "development"},
            {"name": "CREATE_FEATURE_STRATEGY", "environment": "production"}]}),
    )
    .await;

    let (_, admin) = user_with_pat(&server, "admin", "Admin").await;
    let (_, editor) = user_with_pat(&server, "editor", "Editor").await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    let (owner_id, owner) = user_with_pat(&server, "owner", "Viewer").await;
    let (member_id, member) = user_with_pat(&server, "member", "Viewer").await;
    let (grouped_id, grouped) = user_with_pat(&server, "grouped", "Viewer").await;
    let (switcher_id, switching) = user_with_pat(&server, "switcher", "Viewer").await;
    let (flagger_id, flagging) = user_with_pat(&server, "flagger", "Viewer").await;
    let group = server
        .post(
            "/api/admin/groups",
            json!({"name": "members", "users": [{"user": {"id": grouped_id}}]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    server
        .put(
            "/api/admin/projects/a/access",
            json!({"roles": [
                {"id": 4, "users": [owner_id]},
                {"id": 5, "users": [member_id], "groups": [group]},
                {"id": switcher, "users": [switcher_id]},
                {"id": flagger, "users": [flagger_id]}]}),
        )
        .await
        .expect(200);

    // Expected status per write (in `writes` order): 2xx allowed, 403 refused.
    const Y: u16 = 200;
    const N: u16 = 403;
    let callers: [(&str, &str, [u16; 13]); 8] = [
        ("Admin", &admin, [Y, Y, Y, Y, Y, Y, Y, Y, Y, Y, Y, Y, Y]),
        ("Editor", &editor, [Y, Y, Y, Y, Y, Y, Y, Y, Y, Y, N, N, N]),
        ("Viewer", &viewer, [N, N, N, N, N, N, N, N, N, N, N, N, N]),
        (
            "Owner of a",
            &owner,
            [Y, N, Y, Y, Y, Y, Y, Y, N, N, N, N, Y],
        ),
        (
            "Member of a",
            &member,
            [Y, N, Y, Y, Y, Y, Y, Y, N, N, N, N, N],
        ),
        (
            "Member of a by group",
            &grouped,
            [Y, N, Y, Y, Y, Y, Y, Y, N, N, N, N, N],
        ),
        (
            "switch in development",
            &switching,
            [N, N, N, N, N, N, Y, N, N, N, N, N, N],
        ),
        (
            "flag author",
            &flagging,
            [Y, N, Y, Y, Y, N, N, N, N, N, N, N, N],
        ),
    ];
    let mut failures = Vec::new();
    for (n, (who, pat, expected)) in callers.iter().enumerate() {
        for (write, expected) in writes(n).iter().zip(expected) {
            let answer: Answer = server
                .send(write.method, &write.path, write.body.clone(), Some(pat))
                .await;
            let allowed = (200..300).contains(&answer.status);
            let ok = if *expected == N {
                answer.status == 403 && answer.body["name"] == "NoAccessError"
            } else {
                allowed
            };
            if !ok {
                failures.push(format!(
                    "{who}: {} ({} {}) answered {} {}",
                    write.what, write.method, write.path, answer.status, answer.body
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The same rule through a session and the UI's forms: the Member switches in a, not in b, and the
    // environment-scoped role switches in development only.
    for (username, allowed) in [
        ("member", [true, true, false]),
        ("switcher", [true, false, false]),
    ] {
        let mut browser = Browser::new(&server);
        let signed = browser
            .sign_in(&[
                ("username", username),
                ("password", "correct horse battery"),
                ("next", "/"),
            ])
            .await;
        assert_eq!(signed.status, 303, "{}", signed.text);
        let csrf = browser.get("/projects/a/features/flag").await.csrf();
        for ((path, enabled), allowed) in [
            (
                "/projects/a/features/flag/environments/development/switch",
                "false",
            ),
            (
                "/projects/a/features/flag/environments/production/switch",
                "false",
            ),
            (
                "/projects/b/features/other/environments/development/switch",
                "false",
            ),
        ]
        .into_iter()
        .zip(allowed)
        {
            let answer = browser
                .post(path, &[("csrf", &csrf), ("enabled", enabled)])
                .await;
            if allowed {
                assert_eq!(answer.status, 303, "{username} {path}: {}", answer.text);
            } else {
                assert_eq!(answer.status, 403, "{username} {path}: {}", answer.text);
            }
        }
    }

    // Approving a change request in production needs APPROVE_CHANGE_REQUEST there: the Owner and Editors
    // have it, a Member does not.
    server
        .put(
            "/api/admin/projects/a/environments/production/change-requests/config",
            json!({"changeRequestsEnabled": true, "requiredApprovals": 1}),
        )
        .await
        .expect(200);
    for (pat, status) in [(&member, 403), (&owner, 200)] {
        let created = server
            .send(
                "POST",
                "/api/admin/projects/a/environments/production/change-requests",
                Some(json!({"feature": "flag", "action": "updateEnabled", "payload": {"enabled": false}})),
                Some(&admin),
            )
            .await;
        let id = created.expect(200)["id"].as_i64().unwrap();
        let path = format!("/api/admin/projects/a/change-requests/{id}/state");
        server
            .send(
                "PUT",
                &path,
                Some(json!({"state": "In review"})),
                Some(&admin),
            )
            .await
            .expect(200);
        let answer = server
            .send("PUT", &path, Some(json!({"state": "Approved"})), Some(pat))
            .await;
        assert_eq!(answer.status, status, "{}", answer.body);
        if status == 200 {
            assert_eq!(answer.body["state"], "Approved");
        } else {
            assert_eq!(answer.body["name"], "NoAccessError");
            server
                .send(
                    "PUT",
                    &path,
                    Some(json!({"state": "Cancelled"})),
                    Some(&admin),
                )
                .await
                .expect(200);
        }
    }
}
