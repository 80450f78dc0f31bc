//! Operations, on SQLite: health, readiness, Prometheus, the OpenAPI document, the base path, the first admin
//! token, `--auth-type none` and graceful shutdown on SIGTERM.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN, CLIENT_TOKEN};
use serde_json::{json, Value};

#[tokio::test]
async fn health_ready_and_prometheus() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    assert_eq!(
        server.send("GET", "/health", None, None).await.expect(200),
        &json!({"health": "GOOD"})
    );
    assert_eq!(
        server.send("GET", "/ready", None, None).await.expect(200),
        &json!({"health": "GOOD"})
    );
    server.get("/api/admin/projects").await.expect(200);
    server
        .send("GET", "/api/admin/projects", None, None)
        .await
        .expect(401);
    server.get("/api/admin/no-such-thing/42").await.expect(404);
    server.send("FROB", "/api/admin/projects", None, None).await;
    let response = server
        .client
        .get(format!("{}/internal-backstage/prometheus", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.unwrap();
    assert!(
        !text.contains("no-such-thing") && !text.contains("FROB"),
        "{text}"
    );
    for expected in [
        r#"http_requests_total{route="/api/admin/projects",method="GET",status="200"} 1"#,
        r#"http_requests_total{route="/api/admin/projects",method="GET",status="401"} 1"#,
        r#"http_request_duration_seconds_bucket{route="/api/admin/projects",method="GET",le="+Inf"} 2"#,
        // A path no route takes is counted under one label, never its own path; a made-up method too.
        r#"http_requests_total{route="unmatched",method="GET",status="404"} 1"#,
        r#"method="other""#,
        "store_errors_total 0",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

#[tokio::test]
async fn the_openapi_document_covers_every_route() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let document = server
        .send("GET", "/docs/openapi.json", None, None)
        .await
        .expect(200)
        .clone();
    assert!(document["openapi"].as_str().unwrap().starts_with("3."));
    let feature = "/api/admin/projects/{projectId}/features/{featureName}";
    let environment = format!("{feature}/environments/{{environment}}");
    let routes = [
        ("/health", "get"),
        ("/ready", "get"),
        ("/internal-backstage/prometheus", "get"),
        ("/docs/openapi.json", "get"),
        ("/api/admin/projects", "get"),
        ("/api/admin/projects", "post"),
        ("/api/admin/projects/{projectId}", "get"),
        ("/api/admin/projects/{projectId}", "put"),
        ("/api/admin/projects/{projectId}", "delete"),
        ("/api/admin/projects/{projectId}/environments", "post"),
        (
            "/api/admin/projects/{projectId}/environments/{environment}",
            "delete",
        ),
        ("/api/admin/environments", "get"),
        ("/api/admin/environments", "post"),
        ("/api/admin/environments/{name}", "get"),
        ("/api/admin/environments/{name}", "delete"),
        ("/api/admin/environments/update/{name}", "put"),
        ("/api/admin/environments/{name}/on", "post"),
        ("/api/admin/environments/{name}/off", "post"),
        ("/api/admin/projects/{projectId}/features", "get"),
        ("/api/admin/projects/{projectId}/features", "post"),
        (feature, "get"),
        (feature, "put"),
        (feature, "patch"),
        (feature, "delete"),
        ("/api/admin/projects/{projectId}/archive", "post"),
        ("/api/admin/features/validate", "post"),
        (&format!("{environment}/on"), "post"),
        (&format!("{environment}/off"), "post"),
        ("/api/admin/archive/features", "get"),
        ("/api/admin/archive/features/{projectId}", "get"),
        ("/api/admin/archive/revive/{featureName}", "post"),
        ("/api/admin/archive/{featureName}", "delete"),
        (&format!("{environment}/strategies"), "get"),
        (&format!("{environment}/strategies"), "post"),
        (&format!("{environment}/strategies/set-sort-order"), "post"),
        (&format!("{environment}/strategies/{{strategyId}}"), "get"),
        (&format!("{environment}/strategies/{{strategyId}}"), "put"),
        (&format!("{environment}/strategies/{{strategyId}}"), "patch"),
        (
            &format!("{environment}/strategies/{{strategyId}}"),
            "delete",
        ),
        ("/api/admin/events", "get"),
        ("/api/admin/events/{featureName}", "get"),
        ("/api/admin/search/features", "get"),
        ("/api/admin/search/events", "get"),
        (&format!("{environment}/variants"), "get"),
        (&format!("{environment}/variants"), "put"),
        (&format!("{environment}/variants"), "patch"),
        ("/api/admin/segments", "get"),
        ("/api/admin/segments", "post"),
        ("/api/admin/segments/{id}", "get"),
        ("/api/admin/segments/{id}", "put"),
        ("/api/admin/segments/{id}", "delete"),
        ("/api/admin/strategies", "get"),
        ("/api/admin/strategies", "post"),
        ("/api/admin/strategies/{strategyName}", "get"),
        ("/api/admin/strategies/{strategyName}", "put"),
        ("/api/admin/strategies/{strategyName}", "delete"),
        ("/api/admin/strategies/{strategyName}/deprecate", "post"),
        ("/api/admin/strategies/{strategyName}/reactivate", "post"),
        ("/api/admin/context", "get"),
        ("/api/admin/context", "post"),
        ("/api/admin/context/{contextField}", "get"),
        ("/api/admin/context/{contextField}", "put"),
        ("/api/admin/context/{contextField}", "delete"),
        ("/api/admin/playground", "post"),
        ("/api/admin/api-tokens", "get"),
        ("/api/admin/api-tokens", "post"),
        ("/api/admin/api-tokens/{token}", "put"),
        ("/api/admin/api-tokens/{token}", "delete"),
        ("/api/admin/user-admin", "get"),
        ("/api/admin/user-admin", "post"),
        ("/api/admin/user-admin/{id}", "get"),
        ("/api/admin/user-admin/{id}", "put"),
        ("/api/admin/user-admin/{id}", "delete"),
        ("/api/admin/user", "get"),
        ("/api/admin/user/tokens", "get"),
        ("/api/admin/user/tokens", "post"),
        ("/api/admin/user/tokens/{id}", "delete"),
        ("/auth/simple/login", "post"),
        ("/api/admin/groups", "get"),
        ("/api/admin/groups", "post"),
        ("/api/admin/groups/{groupId}", "get"),
        ("/api/admin/groups/{groupId}", "put"),
        ("/api/admin/groups/{groupId}", "delete"),
        ("/api/admin/service-account", "get"),
        ("/api/admin/service-account", "post"),
        ("/api/admin/service-account/{id}", "put"),
        ("/api/admin/service-account/{id}", "delete"),
        ("/api/admin/service-account/{id}/token", "get"),
        ("/api/admin/service-account/{id}/token", "post"),
        ("/api/admin/service-account/{id}/token/{tokenId}", "delete"),
        ("/api/admin/service-account/{id}/permissions", "get"),
        ("/api/admin/invite-link/tokens", "get"),
        ("/api/admin/invite-link/tokens", "post"),
        ("/api/admin/invite-link/tokens/{token}", "get"),
        ("/api/admin/invite-link/tokens/{token}", "put"),
        ("/invite/{token}/validate", "get"),
        ("/invite/{token}/signup", "post"),
        ("/api/admin/user-admin/reset-password", "post"),
        ("/auth/reset/validate", "get"),
        ("/auth/reset/password", "post"),
        ("/auth/reset/validate-password", "post"),
        ("/auth/reset/password-email", "post"),
        ("/api/admin/auth/oidc/settings", "get"),
        ("/api/admin/auth/oidc/settings", "post"),
        ("/api/admin/auth/saml/settings", "get"),
        ("/api/admin/auth/saml/settings", "post"),
        ("/api/admin/auth/simple/settings", "get"),
        ("/api/admin/auth/simple/settings", "post"),
        ("/api/admin/scim-settings", "get"),
        ("/api/admin/scim-settings", "post"),
        ("/api/admin/scim-settings/generate-new-token", "post"),
        ("/api/admin/user-admin/scim-users", "delete"),
        ("/api/admin/groups/scim-groups", "delete"),
        ("/scim/v2/ServiceProviderConfig", "get"),
        ("/scim/v2/ResourceTypes", "get"),
        ("/scim/v2/ResourceTypes/{id}", "get"),
        ("/scim/v2/Schemas", "get"),
        ("/scim/v2/Schemas/{id}", "get"),
        ("/scim/v2/Users", "get"),
        ("/scim/v2/Users", "post"),
        ("/scim/v2/Users/{id}", "get"),
        ("/scim/v2/Users/{id}", "put"),
        ("/scim/v2/Users/{id}", "patch"),
        ("/scim/v2/Users/{id}", "delete"),
        ("/scim/v2/Groups", "get"),
        ("/scim/v2/Groups", "post"),
        ("/scim/v2/Groups/{id}", "get"),
        ("/scim/v2/Groups/{id}", "put"),
        ("/scim/v2/Groups/{id}", "patch"),
        ("/scim/v2/Groups/{id}", "delete"),
        ("/scim/v2/.search", "post"),
        (
            "/api/admin/projects/{projectId}/change-requests/config",
            "get",
        ),
        (
            "/api/admin/projects/{projectId}/environments/{environment}/change-requests/config",
            "put",
        ),
        (
            "/api/admin/projects/{projectId}/environments/{environment}/change-requests",
            "post",
        ),
        ("/api/admin/projects/{projectId}/change-requests", "get"),
        (
            "/api/admin/projects/{projectId}/change-requests/scheduled",
            "get",
        ),
        (
            "/api/admin/projects/{projectId}/change-requests/{id}",
            "get",
        ),
        (
            "/api/admin/projects/{projectId}/change-requests/{id}",
            "delete",
        ),
        (
            "/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}",
            "put",
        ),
        (
            "/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}",
            "delete",
        ),
        (
            "/api/admin/projects/{projectId}/change-requests/{id}/state",
            "put",
        ),
        (
            "/api/admin/projects/{projectId}/change-requests/{id}/comments",
            "post",
        ),
        ("/api/admin/ui-config", "get"),
        ("/api/admin/ui-config", "post"),
        ("/api/admin/addons", "get"),
        ("/api/admin/addons", "post"),
        ("/api/admin/addons/{id}", "get"),
        ("/api/admin/addons/{id}", "put"),
        ("/api/admin/addons/{id}", "delete"),
        ("/api/admin/addons/{id}/events", "get"),
        ("/api/admin/ui-config/cors", "post"),
        ("/api/frontend", "get"),
        ("/api/frontend", "post"),
        ("/api/frontend", "options"),
        ("/api/frontend/features/{name}", "get"),
        ("/api/frontend/features/{name}", "options"),
        ("/api/client/features", "get"),
        ("/api/client/delta", "get"),
        ("/api/client/streaming", "get"),
        ("/ofrep/v1/evaluate/flags/{key}", "post"),
        ("/ofrep/v1/evaluate/flags", "post"),
        ("/ofrep/v1/events", "get"),
        ("/api/client/features/{name}", "get"),
        ("/api/client/register", "post"),
        ("/api/client/metrics", "post"),
        ("/api/client/metrics/bulk", "post"),
        ("/api/client/metrics/edge", "post"),
        ("/edge/validate", "post"),
        ("/api/frontend/client/metrics", "post"),
        ("/api/frontend/client/register", "post"),
        ("/api/admin/metrics/seen-toggles", "get"),
        ("/api/admin/metrics/feature-toggles", "get"),
        ("/api/admin/metrics/feature-toggles/{name}", "get"),
        ("/api/admin/metrics/applications", "get"),
        ("/api/admin/metrics/applications/{appName}", "get"),
        ("/api/admin/metrics/applications/{appName}", "post"),
        ("/api/admin/metrics/seen-apps", "get"),
        ("/api/admin/metrics/edges", "get"),
        ("/api/admin/client-metrics/features/{name}", "get"),
        (
            "/api/admin/context/{contextField}/legal-values/{legalValue}",
            "delete",
        ),
        ("/api/admin/metrics/applications/{appName}", "delete"),
        (
            "/api/admin/projects/{projectId}/api-tokens/{token}",
            "delete",
        ),
        ("/api/admin/api-tokens/{token}", "get"),
        ("/api/admin/client-metrics/features/{name}/raw", "get"),
        ("/api/admin/context/{contextField}/strategies", "get"),
        ("/api/admin/environments/project/{projectId}", "get"),
        ("/api/admin/event-creators", "get"),
        ("/api/admin/feature-types", "get"),
        ("/api/admin/instance-admin/statistics", "get"),
        ("/api/admin/metrics/applications/{appName}/overview", "get"),
        (
            "/api/admin/metrics/instances/{appName}/environment/{environment}",
            "get",
        ),
        ("/api/admin/metrics/unknown-flags", "get"),
        ("/api/admin/projects/{projectId}/api-tokens", "get"),
        ("/api/admin/projects/{projectId}/applications", "get"),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}",
            "get",
        ),
        ("/api/admin/projects/{projectId}/flag-creators", "get"),
        ("/api/admin/segments/strategies/{strategyId}", "get"),
        ("/api/admin/segments/{id}/strategies", "get"),
        ("/api/admin/telemetry/settings", "get"),
        ("/api/admin/user-admin/access", "get"),
        ("/api/admin/user-admin/admin-count", "get"),
        ("/api/admin/user-admin/inactive", "get"),
        ("/api/admin/user-admin/search", "get"),
        ("/api/admin/user/profile", "get"),
        ("/api/admin/user/roles", "get"),
        ("/api/admin/constraints/validate", "post"),
        ("/api/admin/context/validate", "post"),
        ("/api/admin/context/{contextField}/legal-values", "post"),
        ("/api/admin/projects/{projectId}/api-tokens", "post"),
        (
            "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off",
            "post",
        ),
        (
            "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/on",
            "post",
        ),
        ("/api/admin/projects/{projectId}/delete", "post"),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/clone",
            "post",
        ),
        ("/api/admin/projects/{projectId}/revive", "post"),
        ("/api/admin/projects/{projectId}/stale", "post"),
        ("/api/admin/segments/strategies", "post"),
        ("/api/admin/segments/validate", "post"),
        ("/api/admin/user-admin/inactive/delete", "post"),
        ("/api/admin/user-admin/validate-password", "post"),
        ("/api/admin/user-admin/{id}/change-password", "post"),
        ("/api/admin/user/change-password", "post"),
        ("/api/admin/environments/sort-order", "put"),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/variants-batch",
            "put",
        ),
        ("/api/admin/features-batch/export", "post"),
        ("/api/admin/features-batch/validate", "post"),
        ("/api/admin/features-batch/import", "post"),
        ("/api/admin/tag-types", "get"),
        ("/api/admin/tag-types", "post"),
        ("/api/admin/tag-types/validate", "post"),
        ("/api/admin/tag-types/{name}", "get"),
        ("/api/admin/tag-types/{name}", "put"),
        ("/api/admin/tag-types/{name}", "delete"),
        ("/api/admin/tags", "get"),
        ("/api/admin/tags", "post"),
        ("/api/admin/tags/{type}", "get"),
        ("/api/admin/tags/{type}/{value}", "get"),
        ("/api/admin/tags/{type}/{value}", "delete"),
        ("/api/admin/features/{featureName}/tags", "get"),
        ("/api/admin/features/{featureName}/tags", "post"),
        ("/api/admin/features/{featureName}/tags", "put"),
        (
            "/api/admin/features/{featureName}/tags/{type}/{value}",
            "delete",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
            "post",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
            "delete",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}",
            "delete",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/parents",
            "get",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/parent-variants",
            "get",
        ),
        ("/api/admin/projects/{projectId}/dependencies", "get"),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/favorites",
            "post",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/favorites",
            "delete",
        ),
        ("/api/admin/projects/{projectId}/favorites", "post"),
        ("/api/admin/projects/{projectId}/favorites", "delete"),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/lifecycle",
            "get",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete",
            "post",
        ),
        (
            "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete",
            "post",
        ),
        ("/api/admin/lifecycle/count", "get"),
        ("/api/admin/feature-types/{id}/lifetime", "put"),
        ("/api/admin/projects/{projectId}/overview", "get"),
        ("/api/admin/projects/{projectId}/health-report", "get"),
        ("/api/admin/projects/{projectId}/status", "get"),
        ("/api/admin/projects/{projectId}/insights", "get"),
        ("/api/admin/projects/{projectId}/dora", "get"),
        ("/api/admin/personal-dashboard", "get"),
        ("/api/admin/personal-dashboard/{projectId}", "get"),
        ("/api/admin/permissions", "get"),
        ("/api/admin/roles", "get"),
        ("/api/admin/roles", "post"),
        ("/api/admin/roles/validate", "post"),
        ("/api/admin/roles/{roleId}", "get"),
        ("/api/admin/roles/{roleId}", "put"),
        ("/api/admin/roles/{roleId}", "delete"),
        ("/api/admin/projects/roles/{roleId}/access", "get"),
        ("/api/admin/user-admin/{id}/permissions", "get"),
        ("/api/admin/access/overview", "get"),
        ("/api/admin/projects/{projectId}/access", "get"),
        ("/api/admin/projects/{projectId}/access", "post"),
        ("/api/admin/projects/{projectId}/access", "put"),
        (
            "/api/admin/projects/{projectId}/users/{userId}/roles",
            "put",
        ),
        (
            "/api/admin/projects/{projectId}/users/{userId}/roles",
            "delete",
        ),
        (
            "/api/admin/projects/{projectId}/groups/{groupId}/roles",
            "put",
        ),
        (
            "/api/admin/projects/{projectId}/groups/{groupId}/roles",
            "delete",
        ),
    ];
    let paths = document["paths"].as_object().unwrap();
    let documented: usize = paths
        .values()
        .map(|methods| methods.as_object().unwrap().len())
        .sum();
    assert_eq!(documented, routes.len(), "documented operations vs routes");
    for (path, method) in routes {
        let operation = &document["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is not documented");
        assert!(
            operation["responses"]
                .as_object()
                .is_some_and(|r| !r.is_empty()),
            "{method} {path}: no responses"
        );
    }
    let create = &document["paths"]["/api/admin/projects/{projectId}/features"]["post"];
    assert_eq!(
        create["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/CreateFeature"
    );
    assert_eq!(
        create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/FeatureSummary"
    );
    assert_eq!(
        create["responses"]["409"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
    for schema in [
        "Strategy",
        "Constraint",
        "Event",
        "FeatureEventList",
        "ArchivedFeatureList",
        "ErrorBody",
        "Project",
        "Segment",
        "StrategyDefinition",
        "ContextField",
        "FlagVariant",
        "PlaygroundResponse",
    ] {
        assert!(
            document["components"]["schemas"][schema].is_object(),
            "schema {schema} missing"
        );
    }
}

#[tokio::test]
async fn every_route_lives_under_the_base_path() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--base-path", "/flags/"]).await;
    server
        .send("GET", "/flags/health", None, None)
        .await
        .expect(200);
    server.get("/flags/api/admin/projects").await.expect(200);
    // The permission rule sees the path without the base path: an admin token has no own account, and
    // the session cookie is scoped to the base path.
    server
        .get("/flags/api/admin/user")
        .await
        .expect_error(403, "NoAccessError");
    server
        .post(
            "/flags/api/admin/user-admin",
            json!({"username": "dora", "password": "correct horse battery", "rootRole": 3}),
        )
        .await
        .expect(201);
    let response = server
        .client
        .post(format!("{}/flags/auth/simple/login", server.base))
        .json(&json!({"username": "dora", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(cookie.contains("Path=/flags"), "{cookie}");
    let session = cookie.split(';').next().unwrap();
    server
        .send_with_headers("GET", "/flags/api/admin/user", None, &[("Cookie", session)])
        .await
        .expect(200);
    server
        .send_with_headers(
            "POST",
            "/flags/api/admin/projects",
            Some(json!({"id": "p", "name": "p"})),
            &[("Cookie", session)],
        )
        .await
        .expect_error(403, "NoAccessError");
    server
        .send("GET", "/health", None, None)
        .await
        .expect_error(404, "NotFoundError");
    server
        .get("/api/admin/projects")
        .await
        .expect_error(404, "NotFoundError");
    let document = server
        .send("GET", "/flags/docs/openapi.json", None, None)
        .await
        .expect(200)
        .clone();
    assert_eq!(document["servers"][0]["url"], "/flags");
}

#[tokio::test]
async fn the_first_admin_token_is_printed_once_and_works() {
    let db = TestDb::sqlite().await;
    let args = ["--listen", "127.0.0.1:0", "--database-url", &db.url];
    let mut server = Server::start_with_args(&args).await;
    let line = server
        .printed
        .iter()
        .find(|line| line.contains("admin token"))
        .expect("the token line")
        .clone();
    let secret = line.rsplit(' ').next().unwrap().to_owned();
    assert!(secret.starts_with("*:*.") && secret.len() == 60, "{secret}");
    server
        .send("GET", "/api/admin/projects", None, Some(&secret))
        .await
        .expect(200);
    server
        .send(
            "GET",
            "/api/admin/projects",
            None,
            Some(&format!("Bearer {secret}")),
        )
        .await
        .expect(200);
    assert!(server.terminate().success());

    let server = Server::start_with_args(&args).await;
    assert!(
        server
            .printed
            .iter()
            .all(|line| !line.contains("admin token")),
        "{:?}",
        server.printed
    );
    server
        .send("GET", "/api/admin/projects", None, Some(&secret))
        .await
        .expect(200);
    let created = server
        .send(
            "GET",
            "/api/admin/events?type=api-token-created",
            None,
            Some(&secret),
        )
        .await;
    let event = &created.expect(200)["events"][0];
    let data = &event["data"];
    assert_eq!(data["tokenName"], "first-admin-token");
    assert_eq!(data["type"], "admin");
    assert_eq!(data["projects"], json!(["*"]));
    assert_eq!(data["environment"], "*");
    assert!(data["secret"].is_null(), "{data}");
    assert_eq!(event["createdBy"], "system");
    assert!(
        !event.to_string().contains(&secret[4..]),
        "events never carry secrets"
    );
}

#[tokio::test]
async fn auth_type_none_needs_no_token() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &["--auth-type", "none"]).await;
    assert!(
        server.printed.is_empty(),
        "no token is generated: {:?}",
        server.printed
    );
    let created = server
        .send(
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": "open"})),
            None,
        )
        .await
        .expect(201)
        .clone();
    assert_eq!(created["name"], "open");
    let events = server
        .send("GET", "/api/admin/events/open", None, None)
        .await
        .expect(200)
        .clone();
    assert_eq!(events["events"][0]["createdBy"], "admin");

    // SDK calls without a header read every project in `development` (API.md §2); a wrong token is
    // still refused.
    server
        .send(
            "POST",
            "/api/admin/projects/default/features/open/environments/development/on",
            None,
            None,
        )
        .await
        .expect(200);
    let flag_served = || async {
        let toggles = server
            .send("GET", "/api/frontend", None, None)
            .await
            .expect(200)
            .clone();
        toggles["toggles"][0]["name"] == "open"
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !flag_served().await {
        assert!(
            std::time::Instant::now() < deadline,
            "the flag was never served"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let client = server
        .send("GET", "/api/client/features", None, None)
        .await
        .expect(200)
        .clone();
    assert_eq!(client["features"][0]["name"], "open");
    server
        .send(
            "GET",
            "/api/frontend",
            None,
            Some("default:development.unknown"),
        )
        .await
        .expect_error(401, "AuthenticationRequired");
}

#[tokio::test]
async fn sigterm_stops_cleanly_and_keeps_the_data() {
    let db = TestDb::sqlite().await;
    let mut server = Server::start(&db, &[]).await;
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "kept"}),
        )
        .await
        .expect(201);
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
    let server = Server::start(&db, &[]).await;
    let kept = server
        .get("/api/admin/projects/default/features/kept")
        .await
        .expect(200)
        .clone();
    assert_eq!(kept["name"], "kept");
    assert_eq!(
        server
            .send(
                "GET",
                "/api/admin/events/unknown-flag",
                None,
                Some(ADMIN_TOKEN)
            )
            .await
            .expect(200),
        &json!({"version": 1, "toggleName": "unknown-flag", "events": [], "totalEvents": 0})
    );
    let _: &Value = kept.get("environments").unwrap();
}

#[tokio::test]
async fn a_lost_store_answers_503_on_ready_and_500_elsewhere() {
    let db = TestDb::postgres().await;
    let server = Server::start(&db, &[]).await;
    server.get("/api/admin/projects").await.expect(200);
    db.drop_database().await;
    server
        .send("GET", "/ready", None, None)
        .await
        .expect_error(503, "ServiceUnavailableError");
    let message = server
        .get("/api/admin/projects")
        .await
        .expect_error(500, "InternalError");
    assert!(
        !message.contains("vexil_t_"),
        "no internals in the message: {message}"
    );
    let text = server
        .client
        .get(format!("{}/internal-backstage/prometheus", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let errors: f64 = text
        .lines()
        .find_map(|line| line.strip_prefix("store_errors_total "))
        .expect("store_errors_total")
        .parse()
        .unwrap();
    assert!(errors >= 2.0, "store errors counted: {errors}");
}

#[tokio::test]
async fn json_logs_are_one_object_per_line_without_secrets() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let db = TestDb::sqlite().await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--log-format",
            "json",
        ])
        .args(["--init-admin-tokens", ADMIN_TOKEN])
        .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let address = String::from_utf8(line)
        .unwrap()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    let answer = reqwest::Client::new()
        .get(format!("http://{address}/api/admin/projects"))
        .header("Authorization", ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success());
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(
        !logs.contains("test-admin-secret"),
        "a secret reached the logs"
    );
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON log line"))
        .collect();
    assert!(lines
        .iter()
        .any(|l| l["fields"]["route"] == "/api/admin/projects" && l["fields"]["status"] == 200));
    assert!(lines
        .iter()
        .all(|l| l["level"].is_string() && l["timestamp"].is_string()));
}

#[tokio::test]
async fn a_malformed_start_up_token_stops_the_start_without_echoing_it() {
    let db = TestDb::sqlite().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
        .args(["--listen", "127.0.0.1:0", "--database-url", &db.url])
        .args(["--init-client-tokens", "no-scope-hunter2"])
        .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("init-client-token-1"), "{stderr}");
    assert!(
        !stderr.contains("hunter2"),
        "the secret was echoed: {stderr}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).is_empty());
}

/// A gRPC listener in plain text off the loopback is warned about at start; on the loopback it is not. TLS
/// files that cannot be read stop the start. A malformed start-up edge token too, without echoing it.
#[tokio::test]
async fn the_grpc_listener_warns_in_plain_text_off_loopback_and_needs_readable_tls_files() {
    let db = TestDb::sqlite().await;
    let warning = "has no TLS";
    let exposed = Server::start_logged(&db, &["--grpc-listen", "0.0.0.0:0"]).await;
    assert!(exposed.logs().contains(warning), "{}", exposed.logs());
    drop(exposed);
    let local = Server::start_logged(&db, &[]).await;
    assert!(!local.logs().contains(warning), "{}", local.logs());
    drop(local);

    let start = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
            .args(["--listen", "127.0.0.1:0", "--database-url", &db.url])
            .args(extra)
            .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
            .env("RUST_LOG", "off")
            .output()
            .unwrap()
    };
    let missing = db.url.replace("sqlite://", "") + ".missing.pem";
    let output = start(&["--grpc-tls-cert", &missing, "--grpc-tls-key", &missing]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("TLS") && stderr.contains(&missing),
        "{stderr}"
    );
    let output = start(&["--init-edge-tokens", "default:production.hunter2"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("init-edge-token-1"), "{stderr}");
    assert!(
        !stderr.contains("hunter2"),
        "the secret was echoed: {stderr}"
    );
}

/// The document's operations are exactly those of `openapi_operations.txt` (the set recorded before the routers
/// were reorganised), and each of them is routed: no `No route` 404 and no 405 for any of them.
#[tokio::test]
async fn the_openapi_operations_are_the_recorded_set_and_all_routed() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let document = server
        .send("GET", "/docs/openapi.json", None, None)
        .await
        .expect(200)
        .clone();
    let mut served: Vec<String> = Vec::new();
    for (path, methods) in document["paths"].as_object().unwrap() {
        for method in methods.as_object().unwrap().keys() {
            served.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    served.sort();
    let recorded: Vec<String> = include_str!("openapi_operations.txt")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(served, recorded, "the OpenAPI operations changed");
    for operation in &recorded {
        let (method, path) = operation.split_once(' ').unwrap();
        // Any value will do for a path parameter: the router must match before the handler looks.
        let concrete: String = path
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    "x"
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        let answer = server
            .send(method, &concrete, None, Some(ADMIN_TOKEN))
            .await;
        assert_ne!(answer.status, 405, "{operation}: {:?}", answer.body);
        let unrouted = answer.status == 404
            && answer.body["message"]
                .as_str()
                .is_some_and(|message| message.starts_with("No route"));
        assert!(!unrouted, "{operation} is documented but not routed");
    }
}

/// Read your writes on the control plane's own SDK routes: after a 2xx from the admin API, the same control
/// plane's `/api/frontend` and client API answer with that change, every time.
#[tokio::test]
async fn the_sdk_routes_of_the_same_control_plane_read_its_writes() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    for round in 0..30 {
        let created = server
            .post(
                "/api/admin/api-tokens",
                json!({"tokenName": format!("fresh-{round}"), "type": "frontend", "environment": "development"}),
            )
            .await;
        let secret = created.expect(201)["secret"].as_str().unwrap().to_owned();
        server
            .send("GET", "/api/frontend", None, Some(&secret))
            .await
            .expect(200);
    }
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "fresh-flag"}),
        )
        .await
        .expect(201);
    for round in 0..10 {
        let switch = if round % 2 == 0 { "on" } else { "off" };
        server
            .post(
                &format!("/api/admin/projects/default/features/fresh-flag/environments/development/{switch}"),
                json!({}),
            )
            .await
            .expect(200);
        let document = server
            .send(
                "GET",
                "/api/client/features/fresh-flag",
                None,
                Some(CLIENT_TOKEN),
            )
            .await;
        assert_eq!(
            document.expect(200)["enabled"],
            json!(round % 2 == 0),
            "round {round}"
        );
    }
}
