//! What Unleash's own web UI posts (feedback, splash screens, its errors) through the real binary on SQLite
//! and Postgres: each user's own, kept across requests, validated, refused to API tokens (no user).

use crate::access::user_with_pat;
use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;

crate::on_sqlite_and_postgres!(feedback_splash_and_ui_errors_are_each_users_own);

async fn feedback_splash_and_ui_errors_are_each_users_own(db: TestDb) {
    let server = Server::start(&db, &[]).await;
    let (user_id, pat) = user_with_pat(&server, "viewer", "Viewer").await;
    let send = |method: &'static str, path: &'static str, body| {
        let server = &server;
        let pat = pat.clone();
        async move { server.send(method, path, Some(body), Some(&pat)).await }
    };
    let created = send("POST", "/api/admin/feedback", json!({"feedbackId": "pnps"})).await;
    let created = created.expect(200).clone();
    assert_eq!(created["userId"], user_id);
    assert_eq!(created["feedbackId"], "pnps");
    assert_eq!(created["neverShow"], false);
    assert!(created["given"].is_string(), "{created}");
    // An update keeps what it does not name.
    let updated = send(
        "PUT",
        "/api/admin/feedback/pnps",
        json!({"neverShow": true}),
    )
    .await;
    let updated = updated.expect(200).clone();
    assert_eq!(updated["neverShow"], true);
    assert_eq!(updated["given"], created["given"]);
    // Bad input changes nothing.
    for body in [
        json!({}),
        json!({"feedbackId": ""}),
        json!({"feedbackId": 7}),
    ] {
        send("POST", "/api/admin/feedback", body)
            .await
            .expect_error(400, "ValidationError");
    }
    send(
        "PUT",
        "/api/admin/feedback/pnps",
        json!({"given": "yesterday"}),
    )
    .await
    .expect_error(400, "ValidationError");
    let again = send("PUT", "/api/admin/feedback/pnps", json!({})).await;
    assert_eq!(again.expect(200)["neverShow"], true);

    let splash = send("POST", "/api/admin/splash/new-ui", json!({})).await;
    assert_eq!(
        splash.expect(200),
        &json!({"userId": user_id, "splashId": "new-ui", "seen": true})
    );
    send(
        "POST",
        "/api/admin/record-ui-error",
        json!({"errorMessage": "TypeError: x is undefined", "errorStack": "at y"}),
    )
    .await
    .expect(204);
    send(
        "POST",
        "/api/admin/record-ui-error",
        json!({"errorStack": "at y"}),
    )
    .await
    .expect_error(400, "ValidationError");
    // An admin API token is no user.
    server
        .post("/api/admin/feedback", json!({"feedbackId": "pnps"}))
        .await
        .expect_error(403, "NoAccessError");
}
