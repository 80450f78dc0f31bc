//! A project at a glance (issue 35 §3, Unleash 8.2's overview, health-report, status, insights and dora)
//! through the real binary, on SQLite and Postgres: values computed from stored flags (some aged in the
//! database: the control plane has no clock to wind), stale marks, an archived flag, switches in production,
//! SDK usage, tokens, segments and people; 404 for an unknown project, reads for Viewers, none for SDK tokens.
//! The personal dashboard: each caller's own flags (created or favourites) and favourite projects first, the
//! Admins (e-mail addresses only for those who may read users), a project's health and latest events.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Server, CLIENT_TOKEN};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    overview_health_status_insights_and_dora,
    the_personal_dashboard_is_each_callers_own
);

const PROJECT: &str = "/api/admin/projects/default";

/// Makes the flag `name` look created `days` days (and an hour) ago.
async fn age_flag(db: &TestDb, name: &str, days: i64) {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let at = chrono::Utc::now() - chrono::Duration::days(days) - chrono::Duration::hours(1);
    let at = at.format("%Y-%m-%dT%H:%M:%S%.3fZ");
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    conn.execute(format!("UPDATE features SET created_at = '{at}' WHERE name = '{name}'").as_str())
        .await
        .unwrap();
}

async fn read(server: &Server, pat: &str, what: &str) -> Value {
    server
        .send("GET", &format!("{PROJECT}/{what}"), None, Some(pat))
        .await
        .expect(200)
        .clone()
}

async fn project_events(server: &Server) -> i64 {
    let found = server
        .get("/api/admin/search/events?project=IS:default&limit=1")
        .await;
    found.expect(200)["total"].as_i64().unwrap()
}

async fn overview_health_status_insights_and_dora(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (_, viewer) = user_with_pat(&server, "viewer", "Viewer").await;

    // An empty project: healthy, no flag, onboarding just started.
    let empty = read(&server, &viewer, "overview").await;
    assert_eq!(empty["version"], 1);
    assert_eq!(empty["name"], "Default");
    assert_eq!(empty["health"], 100);
    assert_eq!(empty["technicalDebt"], 0);
    assert_eq!(empty["featureTypeCounts"], json!([]));
    // The viewer has no role in the project: no member (`project_members` counts them).
    assert_eq!(empty["members"], 0);
    assert_eq!(empty["favorite"], false);
    assert_eq!(empty["featureLimit"], Value::Null);
    assert_eq!(
        empty["onboardingStatus"],
        json!({"status": "onboarding-started"})
    );
    assert_eq!(
        empty["environments"],
        json!([
            {"environment": "development", "changeRequestsEnabled": false},
            {"environment": "production", "changeRequestsEnabled": false}
        ])
    );
    assert_eq!(
        read(&server, &viewer, "dora").await,
        json!({"features": []})
    );

    // a: stale; b: a release older than 40 days; c: a kill-switch (no lifetime) 3 days old; d: an operational
    // flag older than 7 days; e: a new experiment; f: archived.
    for (name, kind) in [
        ("a", "release"),
        ("b", "release"),
        ("c", "kill-switch"),
        ("d", "operational"),
        ("e", "experiment"),
        ("f", "release"),
    ] {
        server
            .post(
                &format!("{PROJECT}/features"),
                json!({"name": name, "type": kind}),
            )
            .await
            .expect(201);
    }
    age_flag(&db, "b", 50).await;
    age_flag(&db, "c", 3).await;
    age_flag(&db, "d", 10).await;
    server
        .post(
            &format!("{PROJECT}/stale"),
            json!({"features": ["a"], "stale": true}),
        )
        .await
        .expect(202);
    server
        .post(&format!("{PROJECT}/archive"), json!({"features": ["f"]}))
        .await
        .expect(202);
    for flag in ["c", "e"] {
        server
            .post_empty(&format!(
                "{PROJECT}/features/{flag}/environments/production/on"
            ))
            .await
            .expect(200);
    }
    let overview = read(&server, &viewer, "overview").await;
    assert_eq!(
        overview["onboardingStatus"],
        json!({"status": "first-flag-created", "feature": "b"})
    );
    // Two of five live flags are healthy (c, e): 40 %.
    assert_eq!(overview["health"], 40);
    assert_eq!(overview["technicalDebt"], 60);
    assert_eq!(
        overview["featureTypeCounts"],
        json!([
            {"type": "experiment", "count": 1},
            {"type": "kill-switch", "count": 1},
            {"type": "operational", "count": 1},
            {"type": "release", "count": 2}
        ])
    );
    let events = project_events(&server).await;
    assert!(events >= 10, "{events}");
    assert_eq!(
        overview["stats"],
        json!({
            "avgTimeToProdCurrentWindow": 1.5,
            "createdCurrentWindow": 5,
            "createdPastWindow": 1,
            "archivedCurrentWindow": 1,
            "archivedPastWindow": 0,
            "projectActivityCurrentWindow": events,
            "projectActivityPastWindow": 0,
            "projectMembersAddedCurrentWindow": 0
        })
    );

    let dora = read(&server, &viewer, "dora").await;
    assert_eq!(
        dora,
        json!({
            "projectAverage": 1.5,
            "features": [{"name": "c", "timeToProduction": 3}, {"name": "e", "timeToProduction": 0}]
        })
    );

    let report = read(&server, &viewer, "health-report").await;
    assert_eq!(
        (
            &report["staleCount"],
            &report["potentiallyStaleCount"],
            &report["activeCount"]
        ),
        (&json!(1), &json!(2), &json!(4))
    );
    assert_eq!(
        (&report["health"], &report["technicalDebt"]),
        (&json!(40), &json!(60))
    );
    let names: Vec<&str> = report["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    assert_eq!(report["stats"], overview["stats"]);

    // An SDK reports e in development: pre-live, and the project is onboarded.
    let metrics = json!({
        "appName": "shop", "instanceId": "i1", "environment": "development",
        "bucket": {"start": "2026-11-22T00:00:00.000Z", "stop": "2026-11-22T00:01:00.000Z",
                   "toggles": {"e": {"yes": 3, "no": 1}}}
    });
    let posted = server
        .send(
            "POST",
            "/api/client/metrics",
            Some(metrics),
            Some(CLIENT_TOKEN),
        )
        .await;
    assert_eq!(posted.status, 202);
    assert_eq!(
        read(&server, &viewer, "overview").await["onboardingStatus"],
        json!({"status": "onboarded"})
    );

    let tokens_before = read(&server, &viewer, "status").await["resources"]["apiTokens"]
        .as_i64()
        .unwrap();
    server
        .post(
            &format!("{PROJECT}/api-tokens"),
            json!({"tokenName": "shop", "type": "client", "environment": "development"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/segments",
            json!({"name": "beta", "project": "default", "constraints": []}),
        )
        .await
        .expect(201);
    // e's stage is recorded from the usage (once the counts are written); a is marked completed.
    let started = std::time::Instant::now();
    loop {
        let stages = server.get(&format!("{PROJECT}/features/e/lifecycle")).await;
        let stages = stages.expect(200).clone();
        if stages.to_string().contains("\"pre-live\"") {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 10,
            "e never pre-live: {stages}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    server
        .post(
            &format!("{PROJECT}/features/a/lifecycle/complete"),
            json!({"status": "kept"}),
        )
        .await
        .expect(200);
    let status = read(&server, &viewer, "status").await;
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert_eq!(
        status["activityCountByDate"],
        json!([{"date": today, "count": project_events(&server).await}])
    );
    assert_eq!(
        status["resources"],
        json!({"apiTokens": tokens_before + 1, "members": 0, "segments": 1})
    );
    assert_eq!(status["health"], json!({"current": 40}));
    assert_eq!(status["technicalDebt"], json!({"current": 60}));
    assert_eq!(status["staleFlags"], json!({"total": 3}));
    let stage = |flags: i64| json!({"averageDays": null, "currentFlags": flags});
    assert_eq!(
        status["lifecycleSummary"],
        json!({
            "initial": stage(3), "preLive": stage(1), "live": stage(0), "completed": stage(1),
            "archived": {"currentFlags": 1, "last30Days": 1}
        })
    );

    let insights = read(&server, &viewer, "insights").await;
    let rating = |rating: i64| json!({"rating": rating, "activeCount": 4, "potentiallyStaleCount": 2, "staleCount": 1});
    assert_eq!(insights["health"], rating(40));
    assert_eq!(insights["technicalDebt"], rating(60));
    assert_eq!(insights["leadTime"], dora);
    assert_eq!(insights["featureTypeCounts"], overview["featureTypeCounts"]);
    assert_eq!(
        insights["members"],
        json!({"currentMembers": 0, "change": 0})
    );
    assert_eq!(insights["stats"]["createdCurrentWindow"], 5);

    // The viewer's favourite shows on the viewer's overview.
    server
        .send("POST", &format!("{PROJECT}/favorites"), None, Some(&viewer))
        .await
        .expect(200);
    assert_eq!(read(&server, &viewer, "overview").await["favorite"], true);

    for what in ["overview", "health-report", "status", "insights", "dora"] {
        server
            .get(&format!("/api/admin/projects/nowhere/{what}"))
            .await
            .expect_error(404, "NotFoundError");
        server
            .send("GET", &format!("{PROJECT}/{what}"), None, None)
            .await
            .expect_error(401, "AuthenticationRequired");
        server
            .send(
                "GET",
                &format!("{PROJECT}/{what}"),
                None,
                Some(CLIENT_TOKEN),
            )
            .await
            .expect_error(403, "NoAccessError");
    }
}

async fn the_personal_dashboard_is_each_callers_own(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let root = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "rita", "name": "Rita Root", "email": "rita@example.com",
                "password": "correct horse battery", "rootRole": "Admin"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let (anna_id, anna) = user_with_pat(&server, "anna", "Editor").await;
    let (ben_id, ben) = user_with_pat(&server, "ben", "Viewer").await;
    server
        .post("/api/admin/projects", json!({"id": "shop", "name": "Shop"}))
        .await
        .expect(201);
    server
        .send(
            "POST",
            &format!("{PROJECT}/features"),
            Some(json!({"name": "mine", "type": "experiment"})),
            Some(&anna),
        )
        .await
        .expect(201);
    server
        .post(&format!("{PROJECT}/features"), json!({"name": "fav"}))
        .await
        .expect(201);
    for path in [
        format!("{PROJECT}/features/fav/favorites"),
        "/api/admin/projects/shop/favorites".to_owned(),
    ] {
        server
            .send("POST", &path, None, Some(&ben))
            .await
            .expect(200);
    }
    server
        .post(
            &format!("{PROJECT}/stale"),
            json!({"features": ["fav"], "stale": true}),
        )
        .await
        .expect(202);

    let dashboard = |pat: String| {
        let server = &server;
        async move {
            server
                .send("GET", "/api/admin/personal-dashboard", None, Some(&pat))
                .await
                .expect(200)
                .clone()
        }
    };
    let for_ben = dashboard(ben.clone()).await;
    assert_eq!(
        for_ben["flags"],
        json!([{"name": "fav", "project": "default", "type": "release"}])
    );
    // Shop is ben's favourite: first. Default: one of two flags stale.
    assert_eq!(
        for_ben["projects"],
        json!([
            {"id": "shop", "name": "Shop", "health": 100, "technicalDebt": 0, "memberCount": 0, "featureCount": 0},
            {"id": "default", "name": "Default", "health": 50, "technicalDebt": 50, "memberCount": 0, "featureCount": 2}
        ])
    );
    // A Viewer may not read users: the Admins without their e-mail addresses.
    assert_eq!(
        for_ben["admins"],
        json!([{"id": root, "name": "Rita Root", "username": "rita"}])
    );
    assert_eq!(for_ben["projectOwners"], json!([]));
    let for_anna = dashboard(anna.clone()).await;
    assert_eq!(
        for_anna["flags"],
        json!([{"name": "mine", "project": "default", "type": "experiment"}])
    );
    assert_eq!(for_anna["projects"][0]["id"], "default");
    // The admin token: every Admin's address, no flags of its own.
    let for_token = server.get("/api/admin/personal-dashboard").await;
    let for_token = for_token.expect(200);
    assert_eq!(
        for_token["admins"],
        json!([{"id": root, "name": "Rita Root", "username": "rita", "email": "rita@example.com"}])
    );
    assert_eq!(for_token["flags"], json!([]));

    let details = server
        .send(
            "GET",
            "/api/admin/personal-dashboard/default",
            None,
            Some(&ben),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(
        details["insights"],
        json!({
            "avgHealthCurrentWindow": null, "avgHealthPastWindow": null, "totalFlags": 2, "activeFlags": 1,
            "staleFlags": 1, "potentiallyStaleFlags": 0, "health": 50, "technicalDebt": 50
        })
    );
    assert_eq!(
        details["onboardingStatus"],
        json!({"status": "first-flag-created", "feature": "mine"})
    );
    assert_eq!(details["owners"], json!([{"ownerType": "system"}]));
    assert_eq!(details["roles"], json!([]));
    let latest = details["latestEvents"].as_array().unwrap();
    assert_eq!(latest.len(), 6, "{latest:?}");
    assert_eq!(latest[0]["createdBy"], "init-admin-token-1");
    assert_eq!(latest[0]["createdByImageUrl"], "");
    assert!(latest[0]["id"].as_i64().unwrap() > latest[1]["id"].as_i64().unwrap());

    // anna becomes default's Owner, a group of ben's its Member: the owners (people first, e-mail addresses
    // only for who may read users) and ben's roles through his group.
    server
        .post(
            "/api/admin/projects/default/access",
            json!({"roles": [4], "users": [anna_id]}),
        )
        .await
        .expect(200);
    let team = server
        .post(
            "/api/admin/groups",
            json!({"name": "Web team", "users": [{"user": {"id": ben_id}}]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    server
        .post(
            "/api/admin/projects/default/access",
            json!({"roles": [5, 4], "groups": [team]}),
        )
        .await
        .expect(200);
    let details = server
        .send(
            "GET",
            "/api/admin/personal-dashboard/default",
            None,
            Some(&ben),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(
        details["owners"],
        json!([{"ownerType": "user", "name": "anna"}, {"ownerType": "group", "name": "Web team"}])
    );
    assert_eq!(
        details["roles"],
        json!([{"name": "Owner", "id": 4, "type": "project"}, {"name": "Member", "id": 5, "type": "project"}])
    );
    let for_ben = dashboard(ben.clone()).await;
    assert_eq!(
        for_ben["projectOwners"],
        json!([{"ownerType": "user", "name": "anna"}])
    );
    let details = server.get("/api/admin/personal-dashboard/default").await;
    assert_eq!(
        details.expect(200)["roles"],
        json!([]),
        "a token has no roles"
    );
    server
        .get("/api/admin/personal-dashboard/nowhere")
        .await
        .expect_error(404, "NotFoundError");
    server
        .send(
            "GET",
            "/api/admin/personal-dashboard",
            None,
            Some(CLIENT_TOKEN),
        )
        .await
        .expect_error(403, "NoAccessError");
}
