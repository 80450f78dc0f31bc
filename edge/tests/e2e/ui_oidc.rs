//! OpenID Connect sign-in through a real identity provider: panva's `oidc-provider` (npm, pinned in
//! scripts/test), started by `js/oidc-provider.mjs` on a free port with a client registered for the control
//! plane's redirect URI and a groups claim, and `js/oidc-walk.cjs` in Chromium. The first sign-in creates the
//! user with the mapped group's role, a second user without a mapped group gets the default root role,
//! removing the group at the provider removes the membership at the next sign-in, a forged callback (unknown
//! state) and another nonce are refused with no session; a second control plane configured by `OIDC_*`
//! variables for a provider that cannot be reached starts, serves, says why single sign-on fails and takes the
//! admin token. Single sign-out: without it, signing out of Vexil leaves the provider's session (the next
//! sign-in asks nothing at the provider); with it switched on, signing out goes through the provider's
//! end_session_endpoint (id_token_hint, client_id, post_logout_redirect_uri) and the next sign-in asks for
//! the login again. Screenshots: `target/ui-screenshots/oidc-*.png`.

use crate::processes::{admin, get, request, Process, ADMIN_TOKEN};
use crate::ui::{assert_installed, chromium, node_modules, screenshots, Walk};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Pinned, as `scripts/test` installs it.
const OIDC_PROVIDER: (&str, &str) = ("oidc-provider", "9.13.3");

/// The provider, stopped when dropped (its standard input closes).
struct Provider {
    child: Child,
    _stdin: ChildStdin,
    base: String,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_provider(redirect_uri: &str, post_logout_redirect_uri: &str) -> Provider {
    assert_installed(OIDC_PROVIDER);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/js/oidc-provider.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .arg(redirect_uri)
        .arg(post_logout_redirect_uri)
        .env(
            "OIDC_PROVIDER_MODULE",
            node_modules().join("oidc-provider/lib/index.js"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start node");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(port) = line.strip_prefix("oidc provider listening on ") {
                let _ = sender.send(port.to_owned());
            }
        }
    });
    let port = receiver
        .recv_timeout(Duration::from_secs(30))
        .expect("the provider printed its port");
    Provider {
        child,
        _stdin: stdin,
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// `login`'s groups at the provider, from the next sign-in on.
async fn set_groups(provider: &Provider, login: &str, groups: &[&str]) {
    let answer = request(
        "PUT",
        &format!("{}/_test/accounts/{login}", provider.base),
        None,
        &[],
        Some(json!({ "groups": groups })),
    )
    .await;
    assert_eq!(answer.status, 204, "{}", answer.body);
}

async fn users(control_plane: &Process) -> Vec<Value> {
    let answer = admin(control_plane, "GET", "/api/admin/user-admin", None).await;
    answer.body["users"].as_array().cloned().unwrap_or_default()
}

async fn user(control_plane: &Process, email: &str) -> Value {
    users(control_plane)
        .await
        .into_iter()
        .find(|user| user["email"] == email)
        .unwrap_or_else(|| panic!("no user {email}"))
}

/// The ids of the members of group "vexil admins".
async fn admins_group_members(control_plane: &Process) -> Vec<i64> {
    let groups = admin(control_plane, "GET", "/api/admin/groups", None).await;
    groups.body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["name"] == "vexil admins")
        .expect("the group")["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|member| member["user"]["id"].as_i64().unwrap())
        .collect()
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_sign_in_through_a_real_provider() {
    let chromium = chromium();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
    let control_plane = Process::control_plane(&url, &[]);
    admin(
        &control_plane,
        "POST",
        "/api/admin/user-admin",
        Some(json!({"username": "root", "password": "correct horse battery", "rootRole": "Admin"})),
    )
    .await;
    admin(
        &control_plane,
        "POST",
        "/api/admin/groups",
        Some(json!({"name": "vexil admins", "mappingsSSO": ["vexil-admins"], "rootRole": 1})),
    )
    .await;
    // Without single sign-on, password sign-in cannot be switched off: nobody is locked out.
    let kept = admin(
        &control_plane,
        "POST",
        "/api/admin/auth/simple/settings",
        Some(json!({"disabled": true})),
    )
    .await;
    assert_eq!(kept.body, json!({"disabled": false}));
    admin(
        &control_plane,
        "POST",
        "/api/admin/auth/simple/settings",
        Some(json!({"disabled": false})),
    )
    .await;

    let provider = start_provider(
        &format!("{}/auth/oidc/callback", control_plane.base),
        &format!("{}/login", control_plane.base),
    );
    set_groups(&provider, "ann", &["vexil-admins", "readers"]).await;

    // A second control plane, configured by Unleash's variables for a provider that cannot be reached.
    let unreachable_dir = tempfile::tempdir().unwrap();
    let unreachable_url = format!(
        "sqlite://{}",
        unreachable_dir.path().join("vexil.db").display()
    );
    let nowhere = format!(
        "http://127.0.0.1:{}/.well-known/openid-configuration",
        closed_port()
    );
    let unreachable = Process::control_plane_env(
        &unreachable_url,
        &[],
        &[
            ("OIDC_ENABLED", "true"),
            ("OIDC_DISCOVER_URL", &nowhere),
            ("OIDC_CLIENT_ID", "vexil"),
            ("OIDC_CLIENT_SECRET", "never-shown"),
            ("OIDC_AUTO_CREATE", "true"),
        ],
    );
    let config = admin(&unreachable, "GET", "/api/admin/ui-config", None).await;
    assert_eq!(config.body["oidcConfiguredThroughEnv"], true);
    assert_eq!(config.body["disablePasswordAuth"], false);
    let settings = admin(&unreachable, "GET", "/api/admin/auth/oidc/settings", None).await;
    assert_eq!(settings.body["enabled"], true);
    assert_eq!(settings.body["clientId"], "vexil");
    assert_eq!(settings.body["secretSet"], true);
    assert!(settings.body.get("secret").is_none(), "{}", settings.body);
    let refused = request(
        "POST",
        &format!("{}/api/admin/auth/oidc/settings", unreachable.base),
        Some(ADMIN_TOKEN),
        &[],
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("OIDC_* environment variables"));

    let screenshots = screenshots();
    let mut walk = Walk::start(
        "oidc-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("PROVIDER_URL", &provider.base),
            ("UNREACHABLE_URL", &unreachable.base),
            ("ADMIN_TOKEN", ADMIN_TOKEN),
        ],
    );
    loop {
        let (checkpoint, message) = walk.next().await;
        match checkpoint.as_str() {
            "configured" => {
                let settings =
                    admin(&control_plane, "GET", "/api/admin/auth/oidc/settings", None).await;
                assert_eq!(settings.body["enabled"], true);
                assert_eq!(settings.body["clientId"], "vexil");
                assert_eq!(settings.body["defaultRootRole"], "Viewer");
                assert_eq!(settings.body["secretSet"], true);
                assert!(settings.body.get("secret").is_none(), "{}", settings.body);
                let simple = admin(
                    &control_plane,
                    "GET",
                    "/api/admin/auth/simple/settings",
                    None,
                )
                .await;
                assert_eq!(simple.body, json!({"disabled": true}));
                let config = admin(&control_plane, "GET", "/api/admin/ui-config", None).await;
                assert_eq!(config.body["disablePasswordAuth"], true);
                assert_eq!(config.body["oidcConfiguredThroughEnv"], false);
                let login = request(
                    "POST",
                    &format!("{}/auth/simple/login", control_plane.base),
                    None,
                    &[],
                    Some(json!({"username": "root", "password": "correct horse battery"})),
                )
                .await;
                assert_eq!(login.status, 404, "{}", login.body);
                let events = admin(&control_plane, "GET", "/api/admin/events", None).await;
                let text = events.body.to_string();
                assert!(text.contains("setting-updated"), "{text}");
                assert!(!text.contains("vexil-secret"), "an event holds the secret");
            }
            "ann-signed-in" => {
                let ann = user(&control_plane, "ann@example.com").await;
                assert_eq!(ann["rootRole"], 3, "created with the default root role");
                assert_eq!(ann["name"], "Ann");
                let id = ann["id"].as_i64().unwrap();
                assert_eq!(admins_group_members(&control_plane).await, vec![id]);
            }
            "bob-signed-in" => {
                let bob = user(&control_plane, "bob@example.com").await;
                assert_eq!(bob["rootRole"], 3);
                assert!(!admins_group_members(&control_plane)
                    .await
                    .contains(&bob["id"].as_i64().unwrap()));
                // ann leaves the group at the provider.
                set_groups(&provider, "ann", &["readers"]).await;
            }
            "ann-again" => {
                assert!(admins_group_members(&control_plane).await.is_empty());
            }
            "single-sign-out-on" => {
                let settings =
                    admin(&control_plane, "GET", "/api/admin/auth/oidc/settings", None).await;
                assert_eq!(settings.body["enableSingleSignOut"], true);
            }
            "signed-out" => {}
            "forgeries-refused" => {
                eprintln!("a wrong nonce was refused as: {}", message["refusal"]);
                let emails: Vec<Value> = users(&control_plane)
                    .await
                    .iter()
                    .map(|user| user["email"].clone())
                    .collect();
                assert!(
                    !emails.contains(&json!("mallory@example.com")),
                    "the refused sign-in created its user"
                );
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    // The control plane whose provider is down still serves.
    let health = get(&format!("{}/health", unreachable.base), None).await;
    assert_eq!(health.status, 200);
    for page in [
        "01-settings",
        "02-sign-in",
        "03-ann-users",
        "04-forged",
        "05-provider-down",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("oidc-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}
