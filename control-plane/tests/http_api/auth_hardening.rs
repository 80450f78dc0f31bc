//! Issue 29 §1 through the real binary: cookie-authenticated admin writes need to come from Vexil's own
//! pages (CSRF), redirect parameters stay on this site, the API's sign-in cookie is Secure behind https,
//! events about people show their personal fields to Admins only, and a locked login still lets its owner in
//! from an address that has not been failing.

use crate::access::{sign_in, user_with_pat};
use crate::database::TestDb;
use crate::server::{Answer, Server, ADMIN_TOKEN};
use crate::ui_browser::Browser;
use serde_json::{json, Value};

/// Sends `method path` with a session `cookie`, the request headers a browser would add (`headers`) and a
/// body of `content_type`.
async fn with_cookie(
    server: &Server,
    method: &str,
    path: &str,
    cookie: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, String)>,
) -> Answer {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = server
        .client
        .request(method, format!("{}{path}", server.base))
        .header("Cookie", cookie);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some((content_type, body)) = body {
        request = request.header("Content-Type", content_type).body(body);
    }
    Answer::read(request.send().await.unwrap()).await
}

async fn enabled_in_development(server: &Server, base: &str, flag: &str) -> bool {
    let flag = server
        .get(&format!(
            "{base}/api/admin/projects/default/features/{flag}"
        ))
        .await
        .expect(200)
        .clone();
    flag["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|environment| environment["name"] == "development")
        .unwrap()["enabled"]
        .as_bool()
        .unwrap()
}

#[tokio::test]
async fn a_cookie_authenticated_admin_write_from_another_origin_is_refused() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "guarded"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "eddie", "password": "correct horse battery", "rootRole": "Editor"}),
        )
        .await
        .expect(201);
    let cookie = sign_in(&server, "eddie", "correct horse battery").await;
    let on = "/api/admin/projects/default/features/guarded/environments/development/on";
    let off = "/api/admin/projects/default/features/guarded/environments/development/off";
    let form = || Some(("application/x-www-form-urlencoded", "a=1".to_owned()));
    // Another port of the same host is another origin (but the same site: the Lax cookie goes along).
    let elsewhere = server.base.rsplit_once(':').unwrap().0.to_owned() + ":1";
    let cross_site: Vec<Vec<(&str, &str)>> = vec![
        vec![("Origin", &elsewhere), ("Sec-Fetch-Site", "same-site")],
        vec![("Origin", &elsewhere)],
        vec![("Origin", "null")],
        vec![("Sec-Fetch-Site", "cross-site")],
        vec![
            ("Sec-Fetch-Site", "same-site"),
            ("Origin", server.base.as_str()),
        ],
        vec![("Referer", "http://evil.example/page")],
    ];
    for headers in &cross_site {
        let answer = with_cookie(&server, "POST", on, &cookie, headers, form()).await;
        answer.expect_error(403, "NoAccessError");
        assert!(!enabled_in_development(&server, "", "guarded").await);
    }
    // A JSON write too: nothing is created.
    let created = with_cookie(
        &server,
        "POST",
        "/api/admin/projects/default/features",
        &cookie,
        &[("Origin", &elsewhere), ("Sec-Fetch-Site", "same-site")],
        Some(("application/json", json!({"name": "forged"}).to_string())),
    )
    .await;
    created.expect_error(403, "NoAccessError");
    server
        .get("/api/admin/projects/default/features/forged")
        .await
        .expect(404);
    // Reads are not changes: a cross-origin GET still answers (the browser keeps the answer from the page).
    with_cookie(
        &server,
        "GET",
        "/api/admin/projects",
        &cookie,
        &[("Origin", &elsewhere), ("Sec-Fetch-Site", "same-site")],
        None,
    )
    .await
    .expect(200);
    // From this origin, as the browser says it: allowed.
    with_cookie(
        &server,
        "POST",
        on,
        &cookie,
        &[("Origin", &server.base)],
        form(),
    )
    .await
    .expect(200);
    assert!(enabled_in_development(&server, "", "guarded").await);
    with_cookie(
        &server,
        "POST",
        off,
        &cookie,
        &[("Sec-Fetch-Site", "same-origin"), ("Origin", &server.base)],
        form(),
    )
    .await
    .expect(200);
    assert!(!enabled_in_development(&server, "", "guarded").await);
    // No browser at all (a script with the cookie): nothing says it is cross-site.
    with_cookie(&server, "POST", on, &cookie, &[], None)
        .await
        .expect(200);
    // A token is no cookie a page can make the browser send: unaffected by origins.
    let answer = server
        .send_with_headers(
            "POST",
            off,
            None,
            &[
                ("Authorization", ADMIN_TOKEN),
                ("Origin", &elsewhere),
                ("Sec-Fetch-Site", "cross-site"),
            ],
        )
        .await;
    answer.expect(200);
    assert!(!enabled_in_development(&server, "", "guarded").await);
}

#[tokio::test]
async fn behind_a_proxy_under_a_base_path_the_own_origin_is_the_forwarded_one() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--trust-proxy", "--base-path", "/vexil"]).await;
    server
        .post(
            "/vexil/api/admin/projects/default/features",
            json!({"name": "proxied"}),
        )
        .await
        .expect(201);
    server
        .post(
            "/vexil/api/admin/user-admin",
            json!({"username": "eddie", "password": "correct horse battery", "rootRole": "Editor"}),
        )
        .await
        .expect(201);
    let response = server
        .client
        .post(format!("{}/vexil/auth/simple/login", server.base))
        .header("X-Forwarded-Proto", "https")
        .header("X-Forwarded-Host", "flags.example.com")
        .header("Origin", "https://flags.example.com")
        .json(&json!({"username": "eddie", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let on = "/vexil/api/admin/projects/default/features/proxied/environments/development/on";
    let proxy = [
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-Host", "flags.example.com"),
        ("X-Forwarded-For", "198.51.100.7"),
    ];
    let form = || Some(("application/x-www-form-urlencoded", "a=1".to_owned()));
    for origin in [
        "https://evil.example",
        "http://flags.example.com.evil.example",
        "https://flags.example.com:8443",
    ] {
        let mut headers = proxy.to_vec();
        headers.push(("Origin", origin));
        with_cookie(&server, "POST", on, &cookie, &headers, form())
            .await
            .expect_error(403, "NoAccessError");
    }
    assert!(!enabled_in_development(&server, "/vexil", "proxied").await);
    let mut headers = proxy.to_vec();
    headers.push(("Origin", "https://flags.example.com"));
    with_cookie(&server, "POST", on, &cookie, &headers, form())
        .await
        .expect(200);
    assert!(enabled_in_development(&server, "/vexil", "proxied").await);
}

#[tokio::test]
async fn the_api_sign_in_cookie_is_secure_behind_https() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--trust-proxy"]).await;
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "sam", "password": "correct horse battery", "rootRole": "Viewer"}),
        )
        .await
        .expect(201);
    let set_cookie = |proto: Option<&'static str>| {
        let mut request = server
            .client
            .post(format!("{}/auth/simple/login", server.base))
            .json(&json!({"username": "sam", "password": "correct horse battery"}));
        if let Some(proto) = proto {
            request = request.header("X-Forwarded-Proto", proto);
        }
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200);
            response.headers()["set-cookie"]
                .to_str()
                .unwrap()
                .to_owned()
        }
    };
    let https = set_cookie(Some("https")).await;
    for attribute in ["vexil-session=", "HttpOnly", "SameSite=Lax", "Secure"] {
        assert!(https.contains(attribute), "{https}");
    }
    let http = set_cookie(None).await;
    assert!(!http.contains("Secure"), "{http}");
}

/// The `Location` a sign-in with the admin token and this `next` leads to.
async fn after_sign_in(server: &Server, base: &str, next: &str) -> String {
    let mut browser = Browser::new(server);
    browser.base = format!("{}{base}", server.base);
    let signed = browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", next)])
        .await;
    assert_eq!(signed.status, 303, "next {next:?}: {}", signed.text);
    signed.location.expect("a Location")
}

#[tokio::test]
async fn redirect_parameters_lead_only_to_this_site() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let off_site = [
        "/\t/evil.example/x",
        "/%09/evil.example/x",
        "//evil.example",
        "/\\evil.example",
        "/%5Cevil.example",
        "/%2F/evil.example",
        "\\\\evil.example",
        "https://evil.example/",
        "/\r\n/evil.example",
        "/x%0d%0aSet-Cookie:%20a=b",
        "/x\nSet-Cookie: a=b",
        " /projects/default",
        "/pro jects",
        "/projects/défault",
    ];
    for next in off_site {
        assert_eq!(after_sign_in(&server, "", next).await, "/", "next {next:?}");
    }
    assert_eq!(
        after_sign_in(&server, "", "/projects/default?page=2").await,
        "/projects/default?page=2"
    );
    // The sign-in page keeps only a local `next` in its form.
    let mut browser = Browser::new(&server);
    let page = browser.get("/login?next=/%09/evil.example/x").await;
    assert!(
        page.expect(200).contains("name=\"next\" value=\"/\""),
        "{}",
        page.text
    );
    let page = browser.get("/login?next=%2Fa%0Ab").await;
    assert!(page.expect(200).contains("name=\"next\" value=\"/\""));
    // A switch's `back` likewise.
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "switched"}),
        )
        .await
        .expect(201);
    let mut browser = Browser::new(&server);
    browser
        .sign_in(&[("token", ADMIN_TOKEN), ("next", "/")])
        .await;
    let csrf = browser.get("/projects/default").await.csrf();
    let switch = "/projects/default/features/switched/environments/development/switch";
    for (n, back) in ["/\t/evil.example/x", "/a\r\nb", "//evil.example"]
        .into_iter()
        .enumerate()
    {
        let enabled = if n % 2 == 0 { "true" } else { "false" };
        let answer = browser
            .post(
                switch,
                &[("csrf", &csrf), ("enabled", enabled), ("back", back)],
            )
            .await;
        assert_eq!(answer.status, 303, "back {back:?}: {}", answer.text);
        assert_eq!(answer.location.as_deref(), Some("/"), "back {back:?}");
    }
}

#[tokio::test]
async fn under_a_base_path_the_sign_in_leads_back_to_the_page_asked_for() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--base-path", "/vexil"]).await;
    let mut browser = Browser::new(&server);
    browser.base = format!("{}/vexil", server.base);
    let page = browser.get("/projects/default?page=2").await;
    assert_eq!(page.status, 303);
    assert_eq!(
        page.location.as_deref(),
        Some("/vexil/login?next=%2Fvexil%2Fprojects%2Fdefault%3Fpage%3D2")
    );
    assert_eq!(
        after_sign_in(&server, "/vexil", "/vexil/projects/default?page=2").await,
        "/vexil/projects/default?page=2"
    );
    // Off this site, or outside the base path: the home under it.
    for next in [
        "//evil.example",
        "/elsewhere",
        "/vexilx",
        "/\t/evil.example",
    ] {
        assert_eq!(
            after_sign_in(&server, "/vexil", next).await,
            "/vexil/",
            "next {next:?}"
        );
    }
}

/// Every event of `event_type` as `credential` reads it from the list, the search and the flag-less views.
async fn user_events(server: &Server, credential: &str, event_type: &str) -> Vec<Value> {
    let listed = server
        .send(
            "GET",
            &format!("/api/admin/events?type={event_type}"),
            None,
            Some(credential),
        )
        .await;
    let mut events = listed.expect(200)["events"].as_array().unwrap().clone();
    let searched = server
        .send(
            "GET",
            &format!("/api/admin/search/events?type=IS:{event_type}"),
            None,
            Some(credential),
        )
        .await;
    events.extend(searched.expect(200)["events"].as_array().unwrap().clone());
    assert!(!events.is_empty(), "no {event_type} events");
    events
}

#[tokio::test]
async fn events_about_people_show_personal_fields_to_admins_only() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let alice = server
        .post(
            "/api/admin/user-admin",
            json!({"username": "alice", "email": "alice@example.com", "name": "Alice Liddell",
                   "password": "correct horse battery", "rootRole": "Editor"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    server
        .put(
            &format!("/api/admin/user-admin/{alice}"),
            json!({"rootRole": "Admin"}),
        )
        .await
        .expect(200);
    let group = server
        .post("/api/admin/groups", json!({"name": "wonderland"}))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    server
        .put(
            &format!("/api/admin/groups/{group}"),
            json!({"name": "wonderland", "users": [{"user": {"id": alice}}]}),
        )
        .await
        .expect(200);
    let (_, viewer) = user_with_pat(&server, "vic", "Viewer").await;
    let (_, editor) = user_with_pat(&server, "eve", "Editor").await;
    let (_, admin) = user_with_pat(&server, "ada", "Admin").await;
    let personal = ["alice@example.com", "Alice Liddell", "\"alice\""];
    for reader in [&viewer, &editor] {
        for event_type in ["user-created", "user-updated", "group-updated"] {
            let events = user_events(&server, reader, event_type).await;
            let text = Value::Array(events.clone()).to_string();
            for field in personal {
                assert!(!text.contains(field), "{field} in {event_type}: {text}");
            }
            // Still the event, with whom it is about.
            assert!(
                events.iter().any(|event| event["data"]["id"] == alice
                    || event["data"]["users"][0]["user"]["id"] == alice),
                "{text}"
            );
        }
        let updated = user_events(&server, reader, "user-updated").await;
        assert!(
            updated
                .iter()
                .all(|event| event["data"].get("rootRole").is_none()
                    && event["preData"].get("rootRole").is_none()),
            "{updated:?}"
        );
        // The text search does not look into what the reader cannot see.
        let found = server
            .send(
                "GET",
                "/api/admin/search/events?query=alice%40example",
                None,
                Some(reader),
            )
            .await;
        assert_eq!(found.expect(200)["total"], 0, "{}", found.body);
    }
    for reader in [ADMIN_TOKEN, admin.as_str()] {
        let events = user_events(&server, reader, "user-created").await;
        let text = Value::Array(events).to_string();
        for field in personal {
            assert!(text.contains(field), "{field} not in {text}");
        }
        let updated = user_events(&server, reader, "user-updated").await;
        assert!(
            updated
                .iter()
                .any(|event| event["data"]["rootRole"] == 1 && event["preData"]["rootRole"] == 2),
            "{updated:?}"
        );
        let found = server
            .send(
                "GET",
                "/api/admin/search/events?query=alice%40example",
                None,
                Some(reader),
            )
            .await;
        assert!(found.expect(200)["total"].as_i64().unwrap() >= 1);
    }
    // The UI's event log likewise.
    for (username, shown) in [("vic", false), ("ada", true)] {
        let mut browser = Browser::new(&server);
        let signed = browser
            .sign_in(&[
                ("username", username),
                ("password", "correct horse battery"),
                ("next", "/history"),
            ])
            .await;
        assert_eq!(signed.status, 303, "{}", signed.text);
        let page = browser.page("/history?type=user-created").await;
        assert_eq!(
            page.contains("alice@example.com"),
            shown,
            "{username}: {page}"
        );
    }
}

#[tokio::test]
async fn a_locked_login_still_takes_its_password_from_an_address_that_has_not_been_failing() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--trust-proxy"]).await;
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "boss", "password": "correct horse battery", "rootRole": "Admin"}),
        )
        .await
        .expect(201);
    let server = &server;
    let attempt = |password: &'static str, from: &'static str| async move {
        server
            .send_with_headers(
                "POST",
                "/auth/simple/login",
                Some(json!({"username": "boss", "password": password})),
                &[("X-Forwarded-For", from)],
            )
            .await
    };
    // Twelve wrong passwords from strangers: the login is locked for them.
    for n in 0..12 {
        let from = ["203.0.113.1", "203.0.113.2", "203.0.113.3"][n % 3];
        let answer = attempt("wrong password", from).await;
        assert!(
            matches!(answer.status, 401 | 429),
            "{}: {}",
            answer.status,
            answer.body
        );
    }
    attempt("correct horse battery", "203.0.113.2")
        .await
        .expect_error(429, "RateLimitError");
    // The owner, from an address that has not been failing, signs in.
    attempt("correct horse battery", "198.51.100.20")
        .await
        .expect(200);
    // The UI's sign-in too.
    for _ in 0..12 {
        attempt("wrong password", "203.0.113.4").await;
    }
    let mut browser = Browser::new(server);
    let csrf = browser.get("/login").await.csrf();
    let request = browser
        .client
        .post(format!("{}/login", server.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("X-Forwarded-For", "198.51.100.21")
        .body(format!(
            "username=boss&password=correct+horse+battery&next=%2F&csrf={csrf}"
        ));
    let signed = browser.send(request).await;
    assert_eq!(signed.status, 303, "{}", signed.text);
    // A stranger's address is still turned away, and so is one past its own limit.
    attempt("correct horse battery", "203.0.113.4")
        .await
        .expect_error(429, "RateLimitError");
}
