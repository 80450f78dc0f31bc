//! The admin web UI's service accounts page in a real browser against the real control plane:
//! `js/service-accounts-walk.cjs` (playwright-core driving Debian's chromium, with the axe audit) creates a
//! service account (after a refused username) and a token for it in the UI, and this test uses the token's
//! secret against the admin API: as an Editor account it creates a flag, the event names the account, the
//! access area refuses it; the walk deletes the token (refused at once), then the account with a second
//! token (refused at once). Screenshots: `target/ui-screenshots/service-accounts-*.png`.

use crate::processes::{admin, request, Process};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;

async fn as_account(
    control_plane: &Process,
    secret: &str,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> crate::processes::Answer {
    request(
        method,
        &format!("{}{path}", control_plane.base),
        Some(secret),
        &[],
        body,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_accounts_page_in_chromium() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "service-accounts-walk.cjs",
        &control_plane.base,
        &[("CHROMIUM", &chromium)],
    );
    loop {
        let (checkpoint, message) = walk.next().await;
        let secret = message["secret"].as_str().unwrap_or_default().to_owned();
        match checkpoint.as_str() {
            "token-created" => {
                let accounts =
                    admin(&control_plane, "GET", "/api/admin/service-account", None).await;
                let account = &accounts.body["serviceAccounts"][0];
                assert_eq!(account["username"], "ci-bot");
                assert_eq!(account["rootRole"], 2);
                assert!(secret.starts_with("user:"), "{secret}");
                let created = as_account(
                    &control_plane,
                    &secret,
                    "POST",
                    "/api/admin/projects/default/features",
                    Some(json!({"name": "made-by-ci-bot"})),
                )
                .await;
                assert_eq!(created.status, 201, "{}", created.body);
                let events = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/events?type=feature-created",
                    None,
                )
                .await;
                assert_eq!(events.body["events"][0]["createdBy"], "ci-bot");
                let refused = as_account(
                    &control_plane,
                    &secret,
                    "GET",
                    "/api/admin/user-admin",
                    None,
                )
                .await;
                assert_eq!(refused.status, 403, "{}", refused.body);
            }
            "token-deleted" | "account-deleted" => {
                let refused =
                    as_account(&control_plane, &secret, "GET", "/api/admin/projects", None).await;
                assert_eq!(refused.status, 401, "{checkpoint}: {}", refused.body);
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    let accounts = admin(&control_plane, "GET", "/api/admin/service-account", None).await;
    assert_eq!(accounts.body["serviceAccounts"], json!([]));
    for page in ["01-empty", "02-refused", "03-token-created", "04-list"] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("service-accounts-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
