//! Single sign-on settings through Unleash's routes, through the real binary: `/api/admin/auth/oidc/settings`
//! (validated, the client secret never answered nor recorded, a save without it keeping it) and
//! `/api/admin/auth/simple/settings` with the rule that password sign-in goes off only while an OpenID Connect
//! sign-in is enabled; Admins only. (The sign-in itself, against a real provider: `edge/tests/e2e/ui_oidc.rs`.)

use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;

crate::on_sqlite_and_postgres!(oidc_and_password_settings);

const OIDC: &str = "/api/admin/auth/oidc/settings";
const SIMPLE: &str = "/api/admin/auth/simple/settings";

async fn oidc_and_password_settings(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let fresh = server.get(OIDC).await.expect(200).clone();
    assert_eq!(fresh["enabled"], false);
    assert_eq!(fresh["secretSet"], false);
    assert!(fresh.get("secret").is_none());

    // An Editor, signed in while passwords work, may neither read nor change them.
    server
        .post(
            "/api/admin/user-admin",
            json!({"username": "eddie", "password": "correct horse battery", "rootRole": "Editor"}),
        )
        .await
        .expect(201);
    let login = server
        .client
        .post(format!("{}/auth/simple/login", server.base))
        .json(&json!({"username": "eddie", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let cookie = login.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let editor = [("Cookie", cookie.as_str())];
    for (method, path, body) in [
        ("GET", OIDC, None),
        ("POST", OIDC, Some(json!({"enabled": false}))),
        ("GET", SIMPLE, None),
        ("POST", SIMPLE, Some(json!({"disabled": true}))),
    ] {
        server
            .send_with_headers(method, path, body, &editor)
            .await
            .expect_error(403, "NoAccessError");
    }

    // Refusals change nothing.
    for (body, field) in [
        (
            json!({"enabled": true, "clientId": "vexil", "secret": "s"}),
            "discoverUrl",
        ),
        (
            json!({"enabled": true, "discoverUrl": "https://idp.example.com", "secret": "s"}),
            "clientId",
        ),
        (
            json!({"enabled": true, "discoverUrl": "https://idp.example.com", "clientId": "vexil"}),
            "secret",
        ),
        (
            json!({"discoverUrl": "ftp://idp.example.com"}),
            "discoverUrl",
        ),
        (json!({"defaultRootRole": "Owner"}), "defaultRootRole"),
        (
            json!({"idTokenSigningAlgorithm": "none"}),
            "idTokenSigningAlgorithm",
        ),
    ] {
        let message = server
            .post(OIDC, body)
            .await
            .expect_error(400, "ValidationError");
        assert!(message.contains(field), "{message}");
    }
    server
        .post(OIDC, json!({"enabled": "yes"}))
        .await
        .expect_error(400, "ValidationError");
    assert_eq!(server.get(OIDC).await.expect(200), &fresh);

    // Without single sign-on, passwords cannot be switched off.
    let kept = server.post(SIMPLE, json!({"disabled": true})).await;
    assert_eq!(kept.expect(200), &json!({"disabled": false}));
    assert_eq!(
        server.get(SIMPLE).await.expect(200),
        &json!({"disabled": false})
    );

    let saved = server
        .post(
            OIDC,
            json!({
                "enabled": true,
                "discoverUrl": "https://idp.example.com/.well-known/openid-configuration",
                "clientId": "vexil",
                "secret": "the-client-secret",
                "autoCreate": true,
                "defaultRootRole": "Viewer",
                "enableGroupSyncing": true,
                "groupJsonPath": "realm_access.roles",
            }),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(saved["secretSet"], true);
    assert_eq!(saved["enablePkce"], true, "PKCE is always used");
    assert!(saved.get("secret").is_none());
    assert_eq!(server.get(OIDC).await.expect(200), &saved);
    // A save without the secret keeps it.
    let again = server
        .post(
            OIDC,
            json!({"enabled": true, "discoverUrl": "https://idp.example.com", "clientId": "vexil"}),
        )
        .await
        .expect(200)
        .clone();
    assert_eq!(again["secretSet"], true);
    assert_eq!(again["autoCreate"], false);

    // Now the password switch holds.
    assert_eq!(
        server.get(SIMPLE).await.expect(200),
        &json!({"disabled": true})
    );
    let config = server.get("/api/admin/ui-config").await.expect(200).clone();
    assert_eq!(config["disablePasswordAuth"], true);
    assert_eq!(config["oidcConfiguredThroughEnv"], false);
    let refused = server
        .client
        .post(format!("{}/auth/simple/login", server.base))
        .json(&json!({"username": "eddie", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404);
    let page = server
        .client
        .get(format!("{}/login", server.base))
        .send()
        .await
        .unwrap();
    let page = page.text().await.unwrap();
    assert!(page.contains("Sign in with OpenID Connect"), "{page}");
    assert!(
        !page.contains("autocomplete=\"current-password\""),
        "{page}"
    );

    // Switching OpenID Connect off brings passwords back.
    server
        .post(OIDC, json!({"enabled": false}))
        .await
        .expect(200);
    assert_eq!(
        server.get(SIMPLE).await.expect(200),
        &json!({"disabled": false})
    );

    let events = server
        .get("/api/admin/events")
        .await
        .expect(200)
        .to_string();
    assert!(events.contains("setting-updated"), "{events}");
    assert!(
        !events.contains("the-client-secret"),
        "an event holds the secret"
    );
}
