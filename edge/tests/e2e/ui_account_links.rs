//! Invite links and password reset in a real browser against the real control plane and a real SMTP server
//! (aiosmtpd, `control-plane/tests/support/smtp.rs`): `js/account-links-walk.cjs` (playwright-core driving
//! Debian's chromium, with the axe audit) makes an invite link as an Admin (after a refused expiry), signs up
//! at it as a new person, asks "Forgot password?" for that person, follows the link this test finds in the
//! e-mail and sets a new password (after a refused confirmation), signs in with it, and has an Admin e-mail a
//! reset link from the user's page. Screenshots: `target/ui-screenshots/account-links-*.png`.

use crate::processes::{admin, request, Process};
use crate::smtp::{free_port, link_in, SmtpServer};
use crate::ui::{chromium, screenshots, Walk};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invite_and_reset_in_chromium() {
    let chromium = chromium();
    let smtp = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let public = format!("http://127.0.0.1:{port}");
    let smtp_url = smtp.url();
    let control_plane = Process::control_plane_listening(
        &url,
        &listen,
        &[
            "--smtp-url",
            &smtp_url,
            "--smtp-from",
            "Vexil <flags@example.com>",
            "--public-url",
            &public,
        ],
    );
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(
            json!({"username": "alice", "password": "correct horse battery", "rootRole": "Admin"}),
        ),
    )
    .await;
    let link_file = dir.path().join("link.txt");
    let screenshots = screenshots();
    let mut walk = Walk::start(
        "account-links-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("LINK_FILE", link_file.to_str().unwrap()),
        ],
    );
    loop {
        let (checkpoint, message) = walk.next().await;
        match checkpoint.as_str() {
            "invite-created" => {
                let link = message["link"].as_str().unwrap();
                assert!(
                    link.starts_with(&format!("{public}/new-user?invite=")),
                    "{link}"
                );
                let tokens =
                    admin(&control_plane, "GET", "/api/admin/invite-link/tokens", None).await;
                assert_eq!(tokens.body["tokens"][0]["name"], "Design team");
                assert_eq!(tokens.body["tokens"][0]["role"]["name"], "Editor");
            }
            "signed-up" => {
                let users = admin(&control_plane, "GET", "/api/admin/user-admin", None).await;
                let mia = users.body["users"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|user| user["email"] == "mia@example.com")
                    .expect("the new user")
                    .clone();
                assert_eq!(mia["rootRole"], 2);
                assert_eq!(mia["name"], "Mia");
            }
            "reset-asked" => {
                // The mail arrives; the walk follows its link.
                let mail = smtp.wait_for(1).await;
                assert!(mail.contains("To: mia@example.com"), "{mail}");
                let link = link_in(&mail, &format!("{public}/reset-password?token="));
                std::fs::write(&link_file, &link).unwrap();
            }
            "reset-done" => {
                // The link worked once.
                let link = std::fs::read_to_string(&link_file).unwrap();
                let token = link.split_once("token=").unwrap().1;
                let again = request(
                    "GET",
                    &format!("{}/auth/reset/validate?token={token}", control_plane.base),
                    None,
                    &[],
                    None,
                )
                .await;
                assert_eq!(again.status, 401, "{}", again.body);
            }
            "admin-reset" => {
                let mail = smtp.wait_for(2).await;
                assert!(mail.contains("To: mia@example.com"), "{mail}");
                link_in(&mail, &format!("{public}/reset-password?token="));
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "01-empty",
        "02-refused",
        "03-created",
        "04-sign-up",
        "05-signed-up",
        "06-forgot",
        "07-reset-refused",
        "08-admin-reset",
    ] {
        for variant in ["1280", "390", "1280-dark", "390-dark"] {
            let path = screenshots.join(format!("account-links-{page}-{variant}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
