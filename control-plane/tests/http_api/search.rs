//! `GET /api/admin/search/features` and `GET /api/admin/search/events` on SQLite and on Postgres: each
//! filter, the sort orders, paging with its total, the answer's fields, readers of every role, and 400s for
//! bad parameters.

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::{Answer, Server};
use chrono::{Duration, NaiveDate};
use serde_json::{json, Value};

crate::on_sqlite_and_postgres!(
    feature_search,
    event_search,
    odd_characters_are_searched_as_text
);

const DEFAULT: &str = "/api/admin/projects/default/features";

async fn search(server: &Server, query: &str) -> Answer {
    server
        .get(&format!("/api/admin/search/features?{query}"))
        .await
}

/// The names of the flags found, in order, and the total.
async fn found(server: &Server, query: &str) -> (Vec<String>, i64) {
    let answer = search(server, query).await;
    let body = answer.expect(200);
    let names = body["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|feature| feature["name"].as_str().unwrap().to_owned())
        .collect();
    (names, body["total"].as_i64().expect("total"))
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| (*name).to_owned()).collect()
}

/// The day of a timestamp, and the days before and after it.
fn days_around(timestamp: &Value) -> (String, String, String) {
    let day = NaiveDate::parse_from_str(&timestamp.as_str().unwrap()[..10], "%Y-%m-%d").unwrap();
    let format = |day: NaiveDate| day.format("%Y-%m-%d").to_string();
    (
        format(day - Duration::days(1)),
        format(day),
        format(day + Duration::days(1)),
    )
}

async fn create_flag(server: &Server, project: &str, body: Value) {
    server
        .post(&format!("/api/admin/projects/{project}/features"), body)
        .await
        .expect(201);
}

async fn feature_search(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (editor_id, editor) = user_with_pat(&server, "eddie", "Editor").await;
    let (_, viewer) = user_with_pat(&server, "vera", "Viewer").await;
    server
        .post(
            "/api/admin/projects",
            json!({"id": "web", "name": "Web", "environments": ["development"]}),
        )
        .await
        .expect(201);
    create_flag(
        &server,
        "default",
        json!({"name": "alpha-checkout", "description": "Checkout flow"}),
    )
    .await;
    let beta =
        json!({"name": "beta-box", "type": "experiment", "description": "The new SEARCH box"});
    server
        .send("POST", DEFAULT, Some(beta), Some(&editor))
        .await
        .expect(201);
    create_flag(
        &server,
        "default",
        json!({"name": "gamma-ops", "type": "operational"}),
    )
    .await;
    create_flag(
        &server,
        "default",
        json!({"name": "delta-kill", "type": "kill-switch"}),
    )
    .await;
    create_flag(
        &server,
        "web",
        json!({"name": "web-banner", "description": "50% off banner"}),
    )
    .await;
    server
        .put(&format!("{DEFAULT}/gamma-ops"), json!({"stale": true}))
        .await
        .expect(200);
    server
        .post_empty(&format!(
            "{DEFAULT}/alpha-checkout/environments/production/on"
        ))
        .await
        .expect(200);
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "beta-testers", "constraints": []}),
        )
        .await;
    let segment_id = segment.expect(201)["id"].clone();
    server
        .post(
            &format!("{DEFAULT}/beta-box/environments/development/strategies"),
            json!({"name": "default", "segments": [segment_id], "disabled": true}),
        )
        .await
        .expect(200);
    server
        .delete(&format!("{DEFAULT}/delta-kill"))
        .await
        .expect(202);
    for (flag, value) in [
        ("alpha-checkout", "payments"),
        ("beta-box", "payments"),
        ("beta-box", "beta"),
    ] {
        server
            .post(
                &format!("/api/admin/features/{flag}/tags"),
                json!({"type": "simple", "value": value}),
            )
            .await
            .expect(201);
    }

    server
        .post(
            &format!("{DEFAULT}/gamma-ops/dependencies"),
            json!({"feature": "alpha-checkout"}),
        )
        .await
        .expect(200);

    // No filter: the live flags, oldest first, and the whole answer of one.
    let all = names(&["alpha-checkout", "beta-box", "gamma-ops", "web-banner"]);
    assert_eq!(found(&server, "").await, (all.clone(), 4));
    let answer = search(&server, "query=alpha").await;
    let alpha = &answer.expect(200)["features"][0];
    assert_eq!(alpha["name"], "alpha-checkout");
    assert_eq!(alpha["description"], "Checkout flow");
    assert_eq!(alpha["type"], "release");
    assert_eq!(alpha["project"], "default");
    assert_eq!(alpha["stale"], false);
    assert_eq!(alpha["favorite"], false);
    assert_eq!(alpha["impressionData"], false);
    assert_eq!(alpha["dependencyType"], "parent");
    assert_eq!(alpha["archivedAt"], Value::Null);
    assert_eq!(alpha["segments"], json!([]));
    assert_eq!(alpha["tags"][0]["value"], "payments");
    assert_eq!(alpha["createdBy"]["id"], -1337);
    crate::server::assert_timestamp(&alpha["createdAt"]);
    let environments: Vec<(Value, Value, Value)> = alpha["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|env| {
            (
                env["name"].clone(),
                env["enabled"].clone(),
                env["hasStrategies"].clone(),
            )
        })
        .collect();
    assert_eq!(
        environments,
        vec![
            (json!("development"), json!(false), json!(false)),
            (json!("production"), json!(true), json!(true)),
        ]
    );
    let beta = search(&server, "query=beta").await;
    let beta = &beta.expect(200)["features"][0];
    assert_eq!(
        beta["createdBy"],
        json!({"id": editor_id, "name": "eddie", "imageUrl": ""})
    );
    assert_eq!(beta["segments"], json!(["beta-testers"]));
    assert_eq!(beta["dependencyType"], Value::Null);
    let gamma = search(&server, "query=gamma").await;
    assert_eq!(gamma.expect(200)["features"][0]["dependencyType"], "child");
    assert_eq!(beta["environments"][0]["hasStrategies"], true);
    assert_eq!(beta["environments"][0]["hasEnabledStrategies"], false);

    // Text: name or description, ignoring case; comma-separated terms match any; wildcards are literal.
    assert_eq!(
        found(&server, "query=search").await,
        (names(&["beta-box"]), 1)
    );
    assert_eq!(
        found(&server, "query=CHECKOUT,banner").await.0,
        names(&["alpha-checkout", "web-banner"])
    );
    assert_eq!(
        found(&server, "query=50%25").await.0,
        names(&["web-banner"])
    );
    assert_eq!(found(&server, "query=a_p").await, (Vec::new(), 0));
    // Project, type, state (stale), archived.
    assert_eq!(
        found(&server, "project=IS:web").await.0,
        names(&["web-banner"])
    );
    assert_eq!(found(&server, "project=IS_NOT:web").await.1, 3);
    assert_eq!(found(&server, "project=IS_ANY_OF:web,default").await.1, 4);
    assert_eq!(
        found(&server, "type=IS_ANY_OF:release,experiment").await.0,
        names(&["alpha-checkout", "beta-box", "web-banner"])
    );
    assert_eq!(
        found(&server, "type=IS_NONE_OF:release").await.0,
        names(&["beta-box", "gamma-ops"])
    );
    assert_eq!(
        found(&server, "state=IS:stale").await.0,
        names(&["gamma-ops"])
    );
    assert_eq!(found(&server, "state=IS_NOT:stale").await.1, 3);
    let archived = search(&server, "archived=IS:true").await;
    let archived = archived.expect(200);
    assert_eq!(archived["total"], 1);
    assert_eq!(archived["features"][0]["name"], "delta-kill");
    crate::server::assert_timestamp(&archived["features"][0]["archivedAt"]);
    assert_eq!(found(&server, "archived=IS:false").await.1, 4);
    // Tags: any, all, none, not all of the listed ones.
    let payments = names(&["alpha-checkout", "beta-box"]);
    assert_eq!(
        found(&server, "tag=INCLUDE:simple:payments").await.0,
        payments
    );
    assert_eq!(
        found(&server, "tag=INCLUDE_ANY_OF:simple:payments,simple:beta")
            .await
            .0,
        payments
    );
    assert_eq!(
        found(&server, "tag=INCLUDE_ALL_OF:simple:payments,simple:beta")
            .await
            .0,
        names(&["beta-box"])
    );
    assert_eq!(
        found(&server, "tag=DO_NOT_INCLUDE:simple:payments").await.0,
        names(&["gamma-ops", "web-banner"])
    );
    assert_eq!(
        found(&server, "tag=EXCLUDE_ALL:simple:payments,simple:beta")
            .await
            .0,
        names(&["alpha-checkout", "gamma-ops", "web-banner"])
    );
    assert_eq!(found(&server, "tag=INCLUDE:team:payments").await.1, 0);
    let tagged = search(&server, "query=beta-box").await;
    let values: Vec<(Value, Value)> = tagged.expect(200)["features"][0]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| (tag["type"].clone(), tag["value"].clone()))
        .collect();
    assert_eq!(
        values,
        vec![
            (json!("simple"), json!("beta")),
            (json!("simple"), json!("payments"))
        ]
    );
    // Per-environment state: any of the given states; off only where the project has the environment.
    assert_eq!(
        found(&server, "status=production:enabled").await.0,
        names(&["alpha-checkout"])
    );
    assert_eq!(
        found(&server, "status=production:disabled").await.0,
        names(&["beta-box", "gamma-ops"])
    );
    assert_eq!(
        found(
            &server,
            "status=production:enabled&status=development:disabled"
        )
        .await
        .1,
        4
    );
    assert_eq!(found(&server, "status=development:enabled").await.1, 0);
    // Filters combine.
    assert_eq!(
        found(
            &server,
            "project=IS:default&type=IS:release&status=production:enabled&query=flow"
        )
        .await
        .0,
        names(&["alpha-checkout"])
    );
    // Creation date.
    let (yesterday, today, tomorrow) = days_around(&alpha["createdAt"]);
    assert_eq!(
        found(&server, &format!("createdAt=IS_ON_OR_AFTER:{today}"))
            .await
            .1,
        4
    );
    assert_eq!(
        found(&server, &format!("createdAt=IS_ON_OR_AFTER:{tomorrow}"))
            .await
            .1,
        0
    );
    assert_eq!(
        found(&server, &format!("createdAt=IS_BEFORE:{tomorrow}"))
            .await
            .1,
        4
    );
    assert_eq!(
        found(&server, &format!("createdAt=IS_BEFORE:{today}"))
            .await
            .1,
        0
    );
    assert_eq!(
        found(&server, &format!("createdAt=IS_ON_OR_AFTER:{yesterday}"))
            .await
            .1,
        4
    );

    // Sorting, then paging with the total of every page.
    let mut by_name = all.clone();
    by_name.sort();
    assert_eq!(found(&server, "sortBy=name").await.0, by_name);
    by_name.reverse();
    assert_eq!(
        found(&server, "sortBy=name&sortOrder=desc").await.0,
        by_name
    );
    let mut newest_first = all.clone();
    newest_first.reverse();
    assert_eq!(
        found(&server, "sortBy=createdAt&sortOrder=desc").await.0,
        newest_first
    );
    assert_eq!(
        found(&server, "sortBy=type").await.0,
        names(&["beta-box", "gamma-ops", "alpha-checkout", "web-banner"])
    );
    assert_eq!(
        found(&server, "sortBy=stale&sortOrder=desc").await.0[0],
        "gamma-ops"
    );
    assert_eq!(
        found(&server, "sortBy=project&sortOrder=desc").await.0[0],
        "web-banner"
    );
    assert_eq!(
        found(&server, "sortBy=name&offset=1&limit=2").await,
        (names(&["beta-box", "gamma-ops"]), 4)
    );
    assert_eq!(found(&server, "offset=10").await, (Vec::new(), 4));
    assert_eq!(found(&server, "limit=0").await, (Vec::new(), 4));

    // Every signed-in role reads it.
    for token in [&viewer, &editor] {
        let answer = server
            .send(
                "GET",
                "/api/admin/search/features?query=alpha",
                None,
                Some(token),
            )
            .await;
        assert_eq!(answer.expect(200)["total"], 1);
    }
    server
        .send("GET", "/api/admin/search/features", None, None)
        .await
        .expect_error(401, "AuthenticationRequired");

    // Bad parameters: 400 naming the parameter.
    for (query, named) in [
        ("project=default", "project"),
        ("project=IS:", "project"),
        ("type=INCLUDE:release", "type"),
        ("state=IS:sleepy", "state"),
        ("status=production:on", "status"),
        ("status=production", "status"),
        ("archived=true", "archived"),
        ("createdAt=IS_AFTER:2026-01-01", "createdAt"),
        ("createdAt=IS_BEFORE:2026-13-01", "createdAt"),
        ("sortBy=lastSeenAt", "sortBy"),
        ("tag=simple:payments", "tag"),
        ("tag=INCLUDE:payments", "tag"),
        ("sortOrder=sideways", "sortOrder"),
        ("offset=-1", "offset"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("limit=1&limit=2", "limit"),
    ] {
        let message = search(&server, query)
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(named), "{query}: {message}");
    }
}

/// The ids of the events found, in order, and the total.
async fn events_found(server: &Server, query: &str) -> (Vec<i64>, i64) {
    let answer = server
        .get(&format!("/api/admin/search/events?{query}"))
        .await;
    let body = answer.expect(200);
    let ids = body["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|event| event["id"].as_i64().unwrap())
        .collect();
    (ids, body["total"].as_i64().expect("total"))
}

async fn event_search(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (editor_id, editor) = user_with_pat(&server, "eddie", "Editor").await;
    let (_, viewer) = user_with_pat(&server, "vera", "Viewer").await;
    server
        .post("/api/admin/projects", json!({"id": "web", "name": "Web"}))
        .await
        .expect(201);
    create_flag(
        &server,
        "default",
        json!({"name": "alpha", "description": "Needle in the data"}),
    )
    .await;
    create_flag(&server, "web", json!({"name": "banner"})).await;
    let mine = json!({"name": "by-eddie"});
    server
        .send("POST", DEFAULT, Some(mine), Some(&editor))
        .await
        .expect(201);
    server
        .post_empty(&format!("{DEFAULT}/alpha/environments/production/on"))
        .await
        .expect(200);

    // Everything: newest first, as the events list has it, with its total.
    let every = server.get("/api/admin/events?limit=1000").await;
    let every = every.expect(200);
    let all_ids: Vec<i64> = every["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["id"].as_i64().unwrap())
        .collect();
    let total = every["totalEvents"].as_i64().unwrap();
    assert!(total > 10, "{total}");
    let (first_page, first_total) = events_found(&server, "").await;
    assert_eq!(first_total, total);
    assert_eq!(first_page, all_ids[..all_ids.len().min(50)]);
    // The event's fields are the events list's.
    let answer = server.get("/api/admin/search/events?limit=1").await;
    assert_eq!(answer.expect(200)["events"][0], every["events"][0]);

    // Type, flag, project, environment, creator, id.
    let created = events_found(&server, "type=IS:feature-created").await;
    assert_eq!(created.1, 3);
    assert!(
        created.0.windows(2).all(|pair| pair[0] > pair[1]),
        "newest first"
    );
    let alpha = events_found(&server, "feature=IS:alpha").await;
    assert_eq!(alpha.1, 3, "created, its strategy, switched on: {alpha:?}");
    let answer = server
        .get("/api/admin/search/events?feature=IS:alpha")
        .await;
    for event in answer.expect(200)["events"].as_array().unwrap() {
        assert_eq!(event["featureName"], "alpha");
    }
    assert_eq!(
        events_found(&server, "feature=IS_ANY_OF:alpha,banner")
            .await
            .1,
        4
    );
    assert_eq!(
        events_found(&server, "feature=IS:alpha&type=IS:feature-created")
            .await
            .1,
        1
    );
    assert_eq!(
        events_found(
            &server,
            "type=IS_ANY_OF:feature-created,feature-environment-enabled"
        )
        .await
        .1,
        4
    );
    let web = server
        .get("/api/admin/search/events?project=IS:web&type=IS:feature-created")
        .await;
    assert_eq!(web.expect(200)["events"][0]["featureName"], "banner");
    assert_eq!(
        events_found(
            &server,
            "environment=IS:production&type=IS:feature-environment-enabled"
        )
        .await
        .1,
        1
    );
    let of_eddie: Vec<i64> = every["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["createdByUserId"] == editor_id)
        .map(|event| event["id"].as_i64().unwrap())
        .collect();
    assert_eq!(of_eddie.len(), 2, "a personal access token and a flag");
    let by_eddie = format!("createdBy=IS:{editor_id}");
    assert_eq!(events_found(&server, &by_eddie).await, (of_eddie, 2));
    let by_eddie = server
        .get(&format!(
            "/api/admin/search/events?createdBy=IS_ANY_OF:{editor_id},7&type=IS:feature-created"
        ))
        .await;
    let by_eddie = by_eddie.expect(200);
    assert_eq!(by_eddie["total"], 1);
    assert_eq!(by_eddie["events"][0]["featureName"], "by-eddie");
    assert_eq!(by_eddie["events"][0]["createdBy"], "eddie");
    let ids = format!("id=IS_ANY_OF:{},{}", all_ids[0], all_ids[2]);
    assert_eq!(
        events_found(&server, &ids).await,
        (vec![all_ids[0], all_ids[2]], 2)
    );
    // Text in the data, ignoring case.
    let needle = server.get("/api/admin/search/events?query=NEEDLE").await;
    let needle = needle.expect(200);
    assert_eq!(needle["total"], 1);
    assert_eq!(needle["events"][0]["type"], "feature-created");
    assert_eq!(needle["events"][0]["featureName"], "alpha");
    assert_eq!(
        events_found(&server, "query=no-such-text-anywhere").await.1,
        0
    );
    // A substring inside a word, short texts (below a trigram) and the query syntax of the index are text.
    assert_eq!(events_found(&server, "query=eedl").await.1, 1);
    let needle_id = needle["events"][0]["id"].as_i64().unwrap();
    assert!(events_found(&server, "query=ne")
        .await
        .0
        .contains(&needle_id));
    for literal in [
        "%22needle%22",
        "needle%22%20OR%20%22a",
        "needle*",
        "NEAR(needle)",
    ] {
        let answer = server
            .get(&format!("/api/admin/search/events?query={literal}"))
            .await;
        assert_eq!(answer.expect(200)["total"], 0, "{literal}");
    }
    // Dates: from and to are whole days, both included.
    let (yesterday, today, tomorrow) = days_around(&every["events"][0]["createdAt"]);
    assert_eq!(
        events_found(&server, &format!("from=IS:{today}&to=IS:{today}"))
            .await
            .1,
        total
    );
    assert_eq!(
        events_found(&server, &format!("from=IS:{yesterday}"))
            .await
            .1,
        total
    );
    assert_eq!(
        events_found(&server, &format!("from=IS:{tomorrow}"))
            .await
            .1,
        0
    );
    assert_eq!(
        events_found(&server, &format!("to=IS:{yesterday}")).await.1,
        0
    );
    // Pages.
    assert_eq!(
        events_found(&server, "offset=1&limit=2").await,
        (all_ids[1..3].to_vec(), total)
    );
    assert_eq!(
        events_found(&server, "offset=100000").await,
        (Vec::new(), total)
    );

    // Every signed-in role reads it.
    for token in [&viewer, &editor] {
        let answer = server
            .send(
                "GET",
                "/api/admin/search/events?type=IS:feature-created",
                None,
                Some(token),
            )
            .await;
        assert_eq!(answer.expect(200)["total"], 3);
    }

    for (query, named) in [
        ("type=feature-created", "type"),
        ("feature=IS_NOT:alpha", "feature"),
        ("project=IS_ANY_OF:a,,b", "project"),
        ("createdBy=IS:eddie", "createdBy"),
        ("id=IS:first", "id"),
        ("from=2026-01-01", "from"),
        ("to=IS:01-01-2026", "to"),
        ("limit=1001", "limit"),
        ("offset=2147483648", "offset"),
    ] {
        let message = server
            .get(&format!("/api/admin/search/events?{query}"))
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(named), "{query}: {message}");
    }
}

/// Text that full-text search syntax, LIKE or SQL would read as operators is searched as plain text on both
/// databases (never a 500), and control characters other than NUL (which `bad_input` refuses) are text too.
async fn odd_characters_are_searched_as_text(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    create_flag(
        &server,
        "default",
        json!({"name": "odd", "description": "50% off* ^now NEAR(a b) it's \\ done"}),
    )
    .await;
    for query in [
        "%22",
        "%22%22%22%22",
        "*",
        "a*b",
        "NEAR(a%20b)",
        "%5Eabc",
        "%01%02%03",
        "%7F%7F%7F",
        "%1F",
        "%F0%9F%9A%80%F0%9F%9A%80",
        "%27%3B%20DROP%20TABLE%20events%3B%20--",
        "%5C",
        "%5C%5C%5C",
        "AND%20OR%20NOT",
        "col%3Avalue",
        "%2B%2B%2B",
    ] {
        let events = server
            .get(&format!("/api/admin/search/events?query={query}"))
            .await;
        events.expect(200);
        let flags = search(&server, &format!("query={query}")).await;
        flags.expect(200);
    }
    // Operators of the full-text syntax and LIKE's wildcards match themselves.
    for (query, expected) in [
        ("off*%20%5Enow", 1),
        ("NEAR(a%20b)", 1),
        ("50%25", 1),
        ("5_%25", 0),
    ] {
        let (ids, total) =
            events_found(&server, &format!("query={query}&type=IS:feature-created")).await;
        assert_eq!(
            (ids.len(), total),
            (expected, expected as i64),
            "events: {query}"
        );
        let (names, total) = found(&server, &format!("query={query}")).await;
        assert_eq!(
            (names.len(), total),
            (expected, expected as i64),
            "flags: {query}"
        );
    }
}
