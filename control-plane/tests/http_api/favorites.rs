//! Favourite flags and projects (issue 30, Unleash's favorites routes) through the real binary: each user's
//! own, marked in the search and the project list and listed first when asked, one event per change and none
//! for a repeat, 404 for unknown things, 403 for an API token (no user), gone with the flag.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(favourites_are_each_users_own_and_listed_first);

async fn as_user(server: &Server, pat: &str, method: &str, path: &str) -> (u16, Value) {
    let answer = server.send(method, path, None, Some(pat)).await;
    (answer.status, answer.body.clone())
}

fn names(search: &Value) -> Vec<String> {
    search["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|flag| flag["name"].as_str().expect("name").to_owned())
        .collect()
}

async fn favorite_events(server: &Server) -> Vec<(String, Value)> {
    let events = server.get("/api/admin/events").await.expect(200).clone();
    events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| {
            event["type"]
                .as_str()
                .is_some_and(|t| t.contains("favorited"))
        })
        .map(|event| {
            (
                event["type"].as_str().unwrap().to_owned(),
                event["data"].clone(),
            )
        })
        .collect()
}

async fn favourites_are_each_users_own_and_listed_first(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    for name in ["alpha", "beta", "gamma"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    server
        .post("/api/admin/projects", json!({"id": "shop", "name": "Shop"}))
        .await
        .expect(201);
    let (_, anna) = user_with_pat(&server, "anna", "Viewer").await;
    let (_, ben) = user_with_pat(&server, "ben", "Editor").await;
    let flag_favorite = "/api/admin/projects/default/features/gamma/favorites";

    // A Viewer may mark favourites: they are hers alone.
    assert_eq!(as_user(&server, &anna, "POST", flag_favorite).await.0, 200);
    assert_eq!(
        as_user(&server, &anna, "POST", flag_favorite).await.0,
        200,
        "again: no change"
    );
    let search = "/api/admin/search/features?project=IS:default&sortBy=name&favoritesFirst=true";
    let (status, for_anna) = as_user(&server, &anna, "GET", search).await;
    assert_eq!(status, 200, "{for_anna}");
    assert_eq!(names(&for_anna), ["gamma", "alpha", "beta"]);
    assert_eq!(for_anna["features"][0]["favorite"], true);
    assert_eq!(for_anna["features"][1]["favorite"], false);
    let (_, for_ben) = as_user(&server, &ben, "GET", search).await;
    assert_eq!(names(&for_ben), ["alpha", "beta", "gamma"]);
    assert_eq!(for_ben["features"][2]["favorite"], false);
    // Without favoritesFirst the order is the one asked, the mark stays.
    let (_, plain) = as_user(
        &server,
        &anna,
        "GET",
        "/api/admin/search/features?sortBy=name",
    )
    .await;
    assert_eq!(names(&plain), ["alpha", "beta", "gamma"]);
    assert_eq!(plain["features"][2]["favorite"], true);
    // The total counts every match, favourites or not.
    assert_eq!(for_anna["total"], 3);

    // Projects: marked and first for the user.
    assert_eq!(
        as_user(&server, &ben, "POST", "/api/admin/projects/shop/favorites")
            .await
            .0,
        200
    );
    let (_, projects) = as_user(&server, &ben, "GET", "/api/admin/projects").await;
    assert_eq!(projects["projects"][0]["id"], "shop", "{projects}");
    assert_eq!(projects["projects"][0]["favorite"], true);
    let (_, projects) = as_user(&server, &anna, "GET", "/api/admin/projects").await;
    assert_eq!(projects["projects"][0]["id"], "default", "{projects}");
    assert!(projects["projects"][1].get("favorite").is_none());

    // One event per change, none for the repeat.
    assert_eq!(
        favorite_events(&server).await,
        [
            ("project-favorited".to_owned(), json!({"project": "shop"})),
            ("feature-favorited".to_owned(), json!({"feature": "gamma"})),
        ]
    );

    // Unknown flag or project: 404; a flag of another project: 404; bad input changes nothing.
    for path in [
        "/api/admin/projects/default/features/nope/favorites",
        "/api/admin/projects/shop/features/gamma/favorites",
        "/api/admin/projects/nope/favorites",
    ] {
        let answer = server.send("POST", path, None, Some(&anna)).await;
        answer.expect_error(404, "NotFoundError");
    }
    // An admin token has no user: 403 with the error body, and nothing stored.
    let answer = server
        .send(
            "POST",
            "/api/admin/projects/default/features/alpha/favorites",
            None,
            Some(crate::server::ADMIN_TOKEN),
        )
        .await;
    answer.expect_error(403, "NoAccessError");
    assert_eq!(favorite_events(&server).await.len(), 2);
    let bad = server
        .send(
            "GET",
            "/api/admin/search/features?favoritesFirst=maybe",
            None,
            Some(&anna),
        )
        .await;
    bad.expect_error(400, "ValidationError");

    // Removing: the mark goes, one event; removing again changes nothing.
    assert_eq!(
        as_user(&server, &anna, "DELETE", flag_favorite).await.0,
        200
    );
    assert_eq!(
        as_user(&server, &anna, "DELETE", flag_favorite).await.0,
        200
    );
    let (_, for_anna) = as_user(&server, &anna, "GET", search).await;
    assert_eq!(names(&for_anna), ["alpha", "beta", "gamma"]);
    assert_eq!(favorite_events(&server).await.len(), 3);

    // A favourite flag deleted from the archive leaves no favourite behind.
    assert_eq!(
        as_user(
            &server,
            &ben,
            "POST",
            "/api/admin/projects/default/features/beta/favorites"
        )
        .await
        .0,
        200
    );
    server
        .delete("/api/admin/projects/default/features/beta")
        .await
        .expect(202);
    server.delete("/api/admin/archive/beta").await.expect(200);
    let (status, for_ben) = as_user(&server, &ben, "GET", search).await;
    assert_eq!(status, 200);
    assert_eq!(names(&for_ben), ["alpha", "gamma"]);
}
