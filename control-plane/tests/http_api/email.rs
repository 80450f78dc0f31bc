//! Issue 32 §6 with a real SMTP server: aiosmtpd (PyPI, pinned, in the project's Python tool environment,
//! `scripts/python-tool`) started on a free port, keeping every message it receives in a Maildir this test
//! reads. With `--smtp-url` the control plane says `emailEnabled`, e-mails a new password-less user their
//! welcome link and anyone who asks their reset link (and nothing to an address without an account); each
//! link in a mail works once.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use crate::smtp::{free_port, link_in, SmtpServer};
use serde_json::{json, Value};
use std::time::Duration;

crate::on_sqlite_and_postgres!(mailed_links_work_once);

/// The control plane on a port chosen here, so that `--public-url` is its own address.
pub async fn start_with_mail(db: &TestDb, smtp: &SmtpServer) -> Server {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let public = format!("http://127.0.0.1:{port}");
    let smtp_url = smtp.url();
    Server::start_with_args(&[
        "--listen",
        &listen,
        "--database-url",
        &db.url,
        "--init-admin-tokens",
        ADMIN_TOKEN,
        "--smtp-url",
        &smtp_url,
        "--smtp-from",
        "Vexil <flags@example.com>",
        "--public-url",
        &public,
    ])
    .await
}

async fn set_password(server: &Server, token: &str, password: &str) -> u16 {
    server
        .send(
            "POST",
            "/auth/reset/password",
            Some(json!({"token": token, "password": password})),
            None,
        )
        .await
        .status
}

async fn sign_in(server: &Server, login: &str, password: &str) -> u16 {
    server
        .send(
            "POST",
            "/auth/simple/login",
            Some(json!({"username": login, "password": password})),
            None,
        )
        .await
        .status
}

fn token_of(link: &str) -> String {
    link.split_once("token=").unwrap().1.to_owned()
}

async fn mailed_links_work_once(db: TestDb) {
    let smtp = SmtpServer::start();
    let server = start_with_mail(&db, &smtp).await;
    assert_eq!(
        server.get("/api/admin/ui-config").await.expect(200)["emailEnabled"],
        true
    );

    // A user created without a password: the welcome mail carries the link that sets it.
    let created: Value = server
        .post(
            "/api/admin/user-admin",
            json!({"email": "lin@example.com", "name": "Lin", "rootRole": "Editor"}),
        )
        .await
        .expect(201)
        .clone();
    assert_eq!(created["emailSent"], true);
    let welcome = smtp.wait_for(1).await;
    assert!(welcome.contains("To: lin@example.com"), "{welcome}");
    assert!(
        welcome.contains("From: Vexil <flags@example.com>"),
        "{welcome}"
    );
    assert!(welcome.contains("Subject: Your Vexil account"), "{welcome}");
    let link = link_in(&welcome, &format!("{}/new-user?token=", server.base));
    assert_eq!(Some(link.as_str()), created["inviteLink"].as_str());
    assert_eq!(
        set_password(&server, &token_of(&link), "welcome password").await,
        200
    );
    assert_eq!(
        set_password(&server, &token_of(&link), "another password").await,
        401
    );
    assert_eq!(
        sign_in(&server, "lin@example.com", "welcome password").await,
        200
    );

    // "Forgot password": a mail for an account, none for an unknown address, the same answer to both.
    for email in ["nobody@example.com", "LIN@example.com"] {
        let answer = server
            .send(
                "POST",
                "/auth/reset/password-email",
                Some(json!({"email": email})),
                None,
            )
            .await;
        assert_eq!((answer.status, answer.body.clone()), (200, Value::Null));
    }
    let reset = smtp.wait_for(2).await;
    assert!(reset.contains("To: lin@example.com"), "{reset}");
    assert!(
        reset.contains("Subject: Reset your Vexil password"),
        "{reset}"
    );
    let link = link_in(&reset, &format!("{}/reset-password?token=", server.base));
    let token = token_of(&link);
    server
        .send(
            "GET",
            &format!("/auth/reset/validate?token={token}"),
            None,
            None,
        )
        .await
        .expect(200);
    assert_eq!(set_password(&server, &token, "reset password").await, 200);
    assert_eq!(set_password(&server, &token, "again password").await, 401);
    assert_eq!(
        sign_in(&server, "lin@example.com", "reset password").await,
        200
    );

    // The Admin's reset: the link is answered and mailed.
    let answer = server
        .post(
            "/api/admin/user-admin/reset-password",
            json!({"id": "lin@example.com"}),
        )
        .await
        .expect(200)
        .clone();
    let mailed = smtp.wait_for(3).await;
    let link = link_in(&mailed, &format!("{}/reset-password?token=", server.base));
    assert_eq!(answer["resetPasswordUrl"], link);
    // Nothing went to the unknown address.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let messages = smtp.messages();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages
        .iter()
        .all(|message| !message.contains("nobody@example.com")));
}
