//! A project's members through the real binary on SQLite and Postgres, as Unleash counts them: the distinct
//! users with a role in the project, directly or through a group that has one there (each once), 0 where
//! nobody has a role — in the overview, the health report, the status, the insights, the personal dashboard,
//! the project list and the UI's overview page; members added in the last 30 days from when they got their
//! role.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::ui_access::create_user;
use crate::ui_browser::Browser;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(members_are_the_users_with_a_role_in_the_project);

const OWNER: i64 = 4;
const MEMBER: i64 = 5;

async fn grant(server: &Server, project: &str, roles: &[i64], users: &[i64], groups: &[i64]) {
    server
        .post(
            &format!("/api/admin/projects/{project}/access"),
            json!({"roles": roles, "users": users, "groups": groups}),
        )
        .await
        .expect(200);
}

/// Makes every direct grant of `user` look given 40 days ago.
async fn age_grants(db: &TestDb, user: i64) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let at = chrono::Utc::now() - chrono::Duration::days(40);
    let at = at.format("%Y-%m-%dT%H:%M:%S%.3fZ");
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let sql = format!("UPDATE project_user_roles SET created_at = '{at}' WHERE user_id = {user}");
    conn.execute(sql.as_str()).await.unwrap();
}

/// Each project's `memberCount` in the project list and in the personal dashboard (which must agree).
async fn member_counts(server: &Server) -> Vec<(String, i64)> {
    let of = |list: &Value| -> Vec<(String, i64)> {
        let mut counts: Vec<(String, i64)> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|project| {
                let count = project["memberCount"].as_i64().expect("memberCount");
                (project["id"].as_str().unwrap().to_owned(), count)
            })
            .collect();
        counts.sort();
        counts
    };
    let listed = of(&server.get("/api/admin/projects").await.expect(200)["projects"]);
    let dashboard = server.get("/api/admin/personal-dashboard").await;
    assert_eq!(of(&dashboard.expect(200)["projects"]), listed);
    listed
}

/// The members of `project` in its overview, health report, status and insights (which must agree), with the
/// members added in the last 30 days (stats and insights, which must agree too).
async fn members_of(server: &Server, project: &str) -> (i64, i64) {
    let read = |what: &'static str| async move {
        let path = format!("/api/admin/projects/{project}/{what}");
        server.get(&path).await.expect(200).clone()
    };
    let overview = read("overview").await;
    let count = overview["members"].as_i64().unwrap();
    assert_eq!(read("health-report").await["members"], count);
    assert_eq!(read("status").await["resources"]["members"], count);
    let insights = read("insights").await;
    assert_eq!(insights["members"]["currentMembers"], count);
    let added = insights["members"]["change"].as_i64().unwrap();
    assert_eq!(overview["stats"]["projectMembersAddedCurrentWindow"], added);
    (count, added)
}

async fn members_are_the_users_with_a_role_in_the_project(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let ann = create_user(&server, "ann", "Editor").await;
    let ben = create_user(&server, "ben", "Viewer").await;
    let cat = create_user(&server, "cat", "Viewer").await;
    // Never given a role in a project: counted nowhere, whatever their root role.
    create_user(&server, "dan", "Admin").await;
    let bot = server
        .post(
            "/api/admin/service-account",
            json!({"username": "bot", "name": "Bot", "rootRole": 3}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    for (id, name) in [("shop", "Shop"), ("quiet", "Quiet")] {
        server
            .post("/api/admin/projects", json!({"id": id, "name": name}))
            .await
            .expect(201);
    }
    let team = server
        .post(
            "/api/admin/groups",
            json!({"name": "team", "users": [{"user": {"id": ann}}, {"user": {"id": cat}}]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    // Nobody has a role anywhere yet: no project has members (not every user of the instance).
    assert_eq!(members_of(&server, "default").await, (0, 0));
    assert_eq!(
        member_counts(&server).await,
        [
            ("default".to_owned(), 0),
            ("quiet".to_owned(), 0),
            ("shop".to_owned(), 0)
        ]
    );

    // default: ann as Owner and through the team (once), ben, cat through the team: 3.
    grant(&server, "default", &[OWNER], &[ann], &[]).await;
    grant(&server, "default", &[MEMBER], &[ben], &[team]).await;
    // shop: the team (ann, cat) as Owner and as Member, and the service account: 3.
    grant(&server, "shop", &[OWNER, MEMBER], &[bot], &[team]).await;
    assert_eq!(members_of(&server, "default").await, (3, 3));
    assert_eq!(members_of(&server, "shop").await, (3, 3));
    assert_eq!(members_of(&server, "quiet").await, (0, 0));
    assert_eq!(
        member_counts(&server).await,
        [
            ("default".to_owned(), 3),
            ("quiet".to_owned(), 0),
            ("shop".to_owned(), 3)
        ]
    );
    // The UI's overview page says the same.
    let mut browser = Browser::new(&server);
    let signed = browser.sign_in(&[("token", ADMIN_TOKEN)]).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    let page = browser.get("/projects/default/overview").await;
    let text = page.expect(200);
    assert!(text.contains("<p>3 members</p>"), "{text}");
    assert!(
        text.contains("3 members joined in the last 30 days."),
        "{text}"
    );
    assert!(
        text.contains("<a href=\"/projects/default/access\">Who has access</a>"),
        "{text}"
    );
    let page = browser.get("/projects/quiet/overview").await;
    let text = page.expect(200);
    assert!(text.contains("<p>0 members</p>"), "{text}");
    assert!(!text.contains("joined in the last"), "{text}");

    // A member whose role is older than the window still counts, but not as added.
    age_grants(&db, ben).await;
    assert_eq!(members_of(&server, "default").await, (3, 2));

    // ann leaves the team: still a member of default (her own role), no longer of shop.
    server
        .put(
            &format!("/api/admin/groups/{team}"),
            json!({"name": "team", "users": [{"user": {"id": cat}}]}),
        )
        .await
        .expect(200);
    assert_eq!(members_of(&server, "default").await, (3, 2));
    assert_eq!(members_of(&server, "shop").await, (2, 2));
    // The team loses its roles in default: cat goes; ben's and ann's own roles stay.
    server
        .delete(&format!("/api/admin/projects/default/groups/{team}/roles"))
        .await
        .expect(200);
    assert_eq!(members_of(&server, "default").await, (2, 1));
    // A deleted user is nobody's member.
    server
        .delete(&format!("/api/admin/user-admin/{cat}"))
        .await
        .expect(200);
    assert_eq!(members_of(&server, "shop").await, (1, 1));
    assert_eq!(
        member_counts(&server).await,
        [
            ("default".to_owned(), 2),
            ("quiet".to_owned(), 0),
            ("shop".to_owned(), 1)
        ]
    );
    let page = browser.get("/projects/default/overview").await;
    let text = page.expect(200);
    assert!(text.contains("<p>2 members</p>"), "{text}");
    assert!(
        text.contains("1 member joined in the last 30 days."),
        "{text}"
    );
}
