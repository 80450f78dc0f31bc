//! A real SMTP server for the tests of e-mail: aiosmtpd (PyPI, pinned, in the project's Python tool environment
//! `.test-deps/python`, installed by `scripts/python-tool`, which `scripts/test` runs), started on a free port,
//! keeping every message it receives in a Maildir the test reads.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The pinned aiosmtpd (`scripts/test` installs it with `scripts/python-tool`).
pub const AIOSMTPD: &str = "aiosmtpd==1.4.6";

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
        // In the order they arrived (Maildir names do not sort so: their microseconds are not zero-padded).
        files.sort_by_key(|file| {
            std::fs::metadata(file)
                .and_then(|meta| meta.modified())
                .ok()
        });
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
