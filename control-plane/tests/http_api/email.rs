//! Issue 32 §6 with a real SMTP server: aiosmtpd (PyPI, pinned, in the project's Python tool environment,
//! `scripts/python-tool`) started on a free port, keeping every message it receives in a Maildir this test
//! reads. With `--smtp-url` the control plane says `emailEnabled`, e-mails a new password-less user their
//! welcome link and anyone who asks their reset link (and nothing to an address without an account); each
//! link in a mail works once.

use crate::database::TestDb;
use crate::server::{Server, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The pinned aiosmtpd (`scripts/test` installs it with `scripts/python-tool`).
pub const AIOSMTPD: &str = "aiosmtpd==1.4.6";

crate::on_sqlite_and_postgres!(mailed_links_work_once);

/// A running aiosmtpd and the Maildir it writes.
pub struct SmtpServer {
    child: Child,
    pub port: u16,
    maildir: tempfile::TempDir,
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

impl SmtpServer {
    /// Starts aiosmtpd on a free port; fails (never skips) when it is not installed.
    pub fn start() -> SmtpServer {
        let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.test-deps/python/bin/python");
        let version = AIOSMTPD.split_once("==").unwrap().1;
        let installed = Command::new(&python)
            .args(["-c", "import aiosmtpd; print(aiosmtpd.__version__)"])
            .output()
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
            .unwrap_or_default();
        assert_eq!(
            installed, version,
            "aiosmtpd {version} is missing from .test-deps/python: run scripts/python-tool '{AIOSMTPD}' (scripts/test does)"
        );
        let maildir = tempfile::tempdir().expect("a Maildir");
        let port = free_port();
        let child = Command::new(&python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            // A folder that does not exist yet: aiosmtpd's Maildir makes its tmp/new/cur only then.
            .arg(maildir.path().join("mail"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start aiosmtpd");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "aiosmtpd did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        SmtpServer {
            child,
            port,
            maildir,
        }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.maildir.path().join("mail/new"))
            .map(|entries| {
                entries
                    .filter_map(|entry| Some(entry.ok()?.path()))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// Every message received so far, decoded (quoted-printable soft breaks and escapes undone).
    pub fn messages(&self) -> Vec<String> {
        self.files()
            .iter()
            .map(|file| decode(&std::fs::read_to_string(file).expect("a message")))
            .collect()
    }

    /// Waits for the `count`th message, and returns it.
    pub async fn wait_for(&self, count: usize) -> String {
        let started = Instant::now();
        loop {
            let messages = self.messages();
            if messages.len() >= count {
                return messages[count - 1].clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "message {count} did not arrive; got {messages:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A message's text with quoted-printable undone (what a mail reader shows).
fn decode(raw: &str) -> String {
    if !raw.contains("quoted-printable") {
        return raw.to_owned();
    }
    let joined = raw.replace("=\r\n", "").replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'=' && index + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&joined[index + 1..index + 3], 16) {
                out.push(byte);
                index += 3;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first address in `message` that starts with `prefix`, up to the end of its line.
pub fn link_in(message: &str, prefix: &str) -> String {
    let start = message
        .find(prefix)
        .unwrap_or_else(|| panic!("no link {prefix} in:\n{message}"));
    message[start..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

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
