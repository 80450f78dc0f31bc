//! The permission rule through the real binary on SQLite and Postgres: every admin route with every
//! credential, and an unknown admin path's 404 before any authentication.

use crate::access::{create_token, create_user, sign_in, user_with_pat, PAST};
use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN, EDGE_TOKEN, FRONTEND_TOKEN};
use serde_json::json;

crate::on_sqlite_and_postgres!(every_admin_route_with_every_credential);

/// An unknown admin path answers the JSON 404 before any authentication or permission check; a known one
/// asks for them: 401 without a credential, 403 for a Viewer outside what the rule gives them. A path is in
/// the area of the route it matches: `…/features/groups` is a flag's (Configuration), not the groups' (Access).
#[tokio::test]
async fn an_unknown_admin_path_is_404_before_authentication() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;
    for credential in [None, Some(viewer.as_str())] {
        for (method, path) in [
            ("GET", "/api/admin/nope"),
            ("DELETE", "/api/admin/user-admin/3/nope"),
            ("POST", "/api/admin/user/nope"),
        ] {
            let answer = server.send(method, path, None, credential).await;
            let message = answer.expect_error(404, "NotFoundError");
            assert_eq!(message, format!("No route for {method} {path}"));
        }
        let answer = server
            .send("GET", "/api/admin/user-admin", None, credential)
            .await;
        match credential {
            None => answer.expect_error(401, "AuthenticationRequired"),
            Some(_) => answer.expect_error(403, "NoAccessError"),
        };
    }
    let features_groups = "/api/admin/projects/default/features/groups";
    let answer = server
        .send("GET", features_groups, None, Some(&viewer))
        .await;
    answer.expect_error(404, "NotFoundError");
    let answer = server
        .send("DELETE", features_groups, None, Some(&viewer))
        .await;
    answer.expect_error(403, "NoAccessError");
}

/// The credential kinds of the permission table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Missing,
    Unknown,
    Expired,
    AdminToken,
    ClientToken,
    FrontendToken,
    EdgeToken,
    AdminPat,
    EditorPat,
    ViewerPat,
    /// The session of a Viewer whose group gives the Editor role.
    EditorBySessionAndGroup,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Unauthenticated,
    Forbidden,
    Allowed,
}

/// The permission rule, restated independently of the code: by the first segment after `/api/admin/`, and
/// the change-request configuration.
fn expected(kind: Kind, method: &str, path: &str) -> Expect {
    let area = path
        .trim_start_matches("/api/admin/")
        .split('/')
        .next()
        .unwrap();
    // The caller's own account, their favourites and what Unleash's UI records of them (each user's own:
    // Viewers too, no admin token).
    let own_account = matches!(area, "user" | "feedback" | "splash" | "record-ui-error")
        || path.ends_with("/favorites");
    // Roles are read by everyone (a project's Owner picks from them) and changed by Admins.
    let roles_read = method == "get" && area == "roles";
    let access = matches!(
        area,
        "user-admin"
            | "groups"
            | "api-tokens"
            | "service-account"
            | "auth"
            | "invite-link"
            | "scim-settings"
            | "access"
            | "signal-endpoints"
    ) || (area == "roles" && !roles_read)
        || path.starts_with("/api/admin/projects/roles/")
        // Action sets, Admins' as in Unleash (they act with a service account's permissions).
        || path.starts_with("/api/admin/projects/{projectId}/actions")
        // The statistics as CSV and Unleash Edge's token requests: Admins' (Unleash's ADMIN).
        || path == "/api/admin/instance-admin/statistics/csv"
        || path == "/edge/issue-token";
    // A project's access: read with PROJECT_USER_ACCESS_READ (Editors have it everywhere), changed with
    // PROJECT_USER_ACCESS_WRITE (Admins and the project's Owners, not Editors).
    let project_access = path.starts_with("/api/admin/projects/{projectId}/")
        && (path.ends_with("/access") || path.ends_with("/roles"));
    // Switching change requests on or off is the Admins' alone (issue 29 §1.2), like a settings change; so
    // are maintenance mode (UPDATE_MAINTENANCE_MODE, a root permission no predefined role but Admin holds),
    // writing release templates (Vexil has no RELEASE_PLAN_TEMPLATE permission) and a flag type's lifetime
    // (Unleash's ADMIN).
    let settings = matches!(
        area,
        "ui-config" | "settings" | "addons" | "maintenance" | "release-plan-templates" | "banners"
    ) || path.ends_with("/change-requests/config")
        || path == "/api/admin/feature-types/{id}/lifetime";
    // The export, the playground and archive validation are reads asked with a POST body: Viewers may.
    let read = method == "get"
        || path == "/api/admin/features-batch/export"
        || path == "/api/admin/playground"
        || path == "/api/admin/projects/{projectId}/archive/validate"
        || path == "/api/admin/playground/advanced";
    let allowed = match kind {
        Kind::Missing | Kind::Unknown | Kind::Expired => return Expect::Unauthenticated,
        Kind::ClientToken | Kind::FrontendToken | Kind::EdgeToken => false,
        Kind::AdminToken => !own_account,
        Kind::AdminPat => true,
        Kind::EditorPat | Kind::EditorBySessionAndGroup if project_access => read,
        Kind::ViewerPat if project_access => false,
        Kind::EditorPat | Kind::EditorBySessionAndGroup => {
            own_account || (!access && (read || !settings))
        }
        Kind::ViewerPat => own_account || (read && !access),
    };
    if allowed {
        Expect::Allowed
    } else {
        Expect::Forbidden
    }
}

async fn every_admin_route_with_every_credential(db: TestDb) {
    let server = Server::start(&db, &["--init-edge-tokens", EDGE_TOKEN]).await;
    let expired = create_token(
        &server,
        json!({"tokenName": "old", "type": "admin", "expiresAt": PAST}),
    )
    .await;
    let (_, admin_pat) = user_with_pat(&server, "admin", "Admin").await;
    let (_, editor_pat) = user_with_pat(&server, "editor", "Editor").await;
    let (_, viewer_pat) = user_with_pat(&server, "viewer", "Viewer").await;
    let grouped = create_user(&server, "grouped", json!("Viewer")).await;
    server
        .post(
            "/api/admin/groups",
            json!({"name": "editors", "rootRole": 2, "users": [{"user": {"id": grouped}}]}),
        )
        .await
        .expect(201);
    let cookie = sign_in(&server, "grouped", "correct horse battery").await;

    let kinds: [(Kind, Option<(&str, &str)>); 11] = [
        (Kind::Missing, None),
        (Kind::Unknown, Some(("Authorization", "*:*.not-a-token"))),
        (Kind::Expired, Some(("Authorization", &expired))),
        (Kind::AdminToken, Some(("Authorization", ADMIN_TOKEN))),
        (Kind::ClientToken, Some(("Authorization", CLIENT_TOKEN))),
        (Kind::FrontendToken, Some(("Authorization", FRONTEND_TOKEN))),
        (Kind::EdgeToken, Some(("Authorization", EDGE_TOKEN))),
        (Kind::AdminPat, Some(("Authorization", &admin_pat))),
        (Kind::EditorPat, Some(("Authorization", &editor_pat))),
        (Kind::ViewerPat, Some(("Authorization", &viewer_pat))),
        (Kind::EditorBySessionAndGroup, Some(("Cookie", &cookie))),
    ];

    // Every admin operation of the OpenAPI document, so new routes are covered as they come.
    let document = server
        .send("GET", "/docs/openapi.json", None, None)
        .await
        .expect(200)
        .clone();
    let mut operations = Vec::new();
    for (template, methods) in document["paths"].as_object().unwrap() {
        // `/edge/issue-token` takes the admin API's credentials too.
        if !template.starts_with("/api/admin/") && template != "/edge/issue-token" {
            continue;
        }
        for method in methods.as_object().unwrap().keys() {
            operations.push((method.clone(), template.clone()));
        }
    }
    assert!(
        operations.len() >= 50,
        "{} admin operations",
        operations.len()
    );

    let mut failures = Vec::new();
    for (method, template) in &operations {
        // Parameters that exist nowhere, so allowed calls change nothing.
        let path = template
            .split('/')
            .map(|segment| match segment {
                "{groupId}" | "{id}" => "999999".to_owned(),
                _ if segment.starts_with('{') => "perm-table-none".to_owned(),
                _ => segment.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("/");
        let body = (method != "get").then(|| json!({}));
        for (kind, header) in &kinds {
            let headers: Vec<(&str, &str)> = header.iter().copied().collect();
            let answer = server
                .send_with_headers(&method.to_uppercase(), &path, body.clone(), &headers)
                .await;
            let want = expected(*kind, method, template);
            let ok = match want {
                Expect::Unauthenticated => {
                    answer.status == 401 && answer.body["name"] == "AuthenticationRequired"
                }
                Expect::Forbidden => answer.status == 403 && answer.body["name"] == "NoAccessError",
                Expect::Allowed => {
                    answer.status != 401 && answer.status != 403 && answer.status < 500
                }
            };
            if !ok {
                failures.push(format!(
                    "{method} {template} with {kind:?}: expected {want:?}, got {} {}",
                    answer.status, answer.body
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
