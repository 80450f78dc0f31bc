//! SAML 2.0 sign-in through a real identity provider built with `samlify` (npm, pinned in scripts/test),
//! started by `js/saml-idp.mjs` on a free port with a fresh key and certificate, and `js/saml-walk.cjs` in
//! Chromium. The first sign-in creates the user with the mapped group's role, a second user without a mapped
//! group gets the default root role, removing the group at the provider removes the membership at the next
//! sign-in; a response signed with another key, an expired one, one changed after signing, a replayed one and
//! one finished in another browser are refused with no session and no user. A second control plane
//! configured by `SAML_*` variables reports `samlConfiguredThroughEnv`, shows its settings read-only through
//! the API and offers SAML on its sign-in page. Single logout: signing out of Vexil sends a signed
//! LogoutRequest to the provider, whose session ends (the next sign-in asks for the e-mail again, where before
//! it answered at once), and its signed LogoutResponse (HTTP-Redirect, then HTTP-POST binding) brings the
//! browser back to "You are signed out"; a replayed or altered LogoutResponse is refused. Screenshots: `target/ui-screenshots/saml-*.png`.

use crate::processes::{admin, get, request, Process, ADMIN_TOKEN};
use crate::ui::{assert_installed, chromium, node_modules, screenshots, Walk};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Pinned, as `scripts/test` installs it.
const SAMLIFY: (&str, &str) = ("samlify", "2.13.1");

/// The identity provider, stopped when dropped (its standard input closes).
struct IdentityProvider {
    child: Child,
    _stdin: ChildStdin,
    base: String,
    entity_id: String,
    sign_on_url: String,
    sign_out_url: String,
    certificate: String,
    /// The service provider's key that signs sign-out requests (the provider holds its certificate).
    sp_key: String,
}

impl Drop for IdentityProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_identity_provider(sp_entity_id: &str, acs_url: &str) -> IdentityProvider {
    assert_installed(SAMLIFY);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/js/saml-idp.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .arg(sp_entity_id)
        .arg(acs_url)
        .env(
            "SAMLIFY_MODULE",
            node_modules().join("samlify/build/index.js"),
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
            if let Some(ready) = line.strip_prefix("saml idp ready ") {
                let _ = sender.send(ready.to_owned());
            }
        }
    });
    let ready: Value = serde_json::from_str(
        &receiver
            .recv_timeout(Duration::from_secs(30))
            .expect("the identity provider started"),
    )
    .unwrap();
    let sign_on_url = ready["signOnUrl"].as_str().unwrap().to_owned();
    IdentityProvider {
        child,
        _stdin: stdin,
        base: sign_on_url.trim_end_matches("/sso").to_owned(),
        entity_id: ready["entityId"].as_str().unwrap().to_owned(),
        sign_on_url,
        sign_out_url: ready["signOutUrl"].as_str().unwrap().to_owned(),
        certificate: ready["certificate"].as_str().unwrap().to_owned(),
        sp_key: ready["spKey"].as_str().unwrap().to_owned(),
    }
}

/// `email`'s groups at the provider, from the next sign-in on.
async fn set_groups(provider: &IdentityProvider, email: &str, groups: &[&str]) {
    let answer = request(
        "PUT",
        &format!("{}/_test/accounts/{email}", provider.base),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saml_sign_in_through_a_real_identity_provider() {
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
    let provider = start_identity_provider(
        &control_plane.base,
        &format!("{}/auth/saml/callback", control_plane.base),
    );
    set_groups(&provider, "ann@example.com", &["vexil-admins", "readers"]).await;

    // A second control plane, configured by Unleash's variables.
    let env_dir = tempfile::tempdir().unwrap();
    let env_url = format!("sqlite://{}", env_dir.path().join("vexil.db").display());
    let from_env = Process::control_plane_env(
        &env_url,
        &[],
        &[
            ("SAML_ENABLED", "true"),
            ("SAML_ENTITY_ID", &provider.entity_id),
            ("SAML_SIGNON_URL", &provider.sign_on_url),
            ("SAML_CERTIFICATE", &provider.certificate),
            ("SAML_AUTO_CREATE", "true"),
            ("SAML_SIGNOUT_CERTIFICATE", "never-shown-private-key"),
        ],
    );
    let config = admin(&from_env, "GET", "/api/admin/ui-config", None).await;
    assert_eq!(config.body["samlConfiguredThroughEnv"], true);
    assert_eq!(config.body["oidcConfiguredThroughEnv"], false);
    let settings = admin(&from_env, "GET", "/api/admin/auth/saml/settings", None).await;
    assert_eq!(settings.body["enabled"], true);
    assert_eq!(settings.body["entityId"], provider.entity_id.as_str());
    assert_eq!(settings.body["spCertificateSet"], true);
    assert!(
        settings.body.get("spCertificate").is_none(),
        "{}",
        settings.body
    );
    let refused = request(
        "POST",
        &format!("{}/api/admin/auth/saml/settings", from_env.base),
        Some(ADMIN_TOKEN),
        &[],
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("SAML_* environment variables"));
    let sign_in = get(&format!("{}/login", from_env.base), None).await;
    assert!(
        sign_in
            .body
            .as_str()
            .unwrap()
            .contains("Sign in with SAML 2.0"),
        "the sign-in page offers no SAML"
    );
    let metadata = get(&format!("{}/auth/saml/metadata", control_plane.base), None).await;
    assert_eq!(metadata.status, 200);
    let metadata = metadata.body.as_str().unwrap().to_owned();
    assert!(
        metadata.contains(&format!("entityID=\"{}\"", control_plane.base)),
        "{metadata}"
    );
    assert!(
        metadata.contains(&format!("{}/auth/saml/callback", control_plane.base)),
        "{metadata}"
    );

    let screenshots = screenshots();
    let mut walk = Walk::start(
        "saml-walk.cjs",
        &control_plane.base,
        &[
            ("CHROMIUM", &chromium),
            ("IDP_URL", &provider.base),
            ("IDP_ENTITY_ID", &provider.entity_id),
            ("IDP_SIGN_ON_URL", &provider.sign_on_url),
            ("IDP_CERTIFICATE", &provider.certificate),
            ("IDP_SIGN_OUT_URL", &provider.sign_out_url),
            ("SP_KEY", &provider.sp_key),
        ],
    );
    loop {
        let (checkpoint, _) = walk.next().await;
        match checkpoint.as_str() {
            "configured" => {
                let settings =
                    admin(&control_plane, "GET", "/api/admin/auth/saml/settings", None).await;
                assert_eq!(settings.body["enabled"], true);
                assert_eq!(settings.body["entityId"], provider.entity_id.as_str());
                assert_eq!(settings.body["signOnUrl"], provider.sign_on_url.as_str());
                assert_eq!(settings.body["defaultRootRole"], "Viewer");
                assert_eq!(settings.body["enableGroupSyncing"], true);
                assert_eq!(settings.body["signOutUrl"], provider.sign_out_url.as_str());
                assert_eq!(settings.body["spCertificateSet"], true);
                assert!(settings.body.get("spCertificate").is_none());
                let events = admin(&control_plane, "GET", "/api/admin/events", None).await;
                assert!(events.body.to_string().contains("setting-updated"));
            }
            "ann-signed-in" => {
                let ann = user(&control_plane, "ann@example.com").await;
                assert_eq!(ann["rootRole"], 3, "created with the default root role");
                assert_eq!(ann["name"], "Ann Tester");
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
                set_groups(&provider, "ann@example.com", &["readers"]).await;
            }
            "ann-again" => {
                assert!(admins_group_members(&control_plane).await.is_empty());
            }
            "signed-out" => {}
            "forgeries-refused" => {
                let emails: Vec<Value> = users(&control_plane)
                    .await
                    .iter()
                    .map(|user| user["email"].clone())
                    .collect();
                assert!(
                    !emails.contains(&json!("mallory@example.com")),
                    "a refused sign-in created its user: {emails:?}"
                );
            }
            "done" => break,
            other => panic!("unknown checkpoint {other}"),
        }
        walk.resume().await;
    }
    walk.finish().await;
    for page in [
        "01-refused",
        "02-settings",
        "03-sign-in",
        "04-refused",
        "05-signed-out",
        "06-sign-out-replayed",
    ] {
        for width in [1280, 390] {
            let path = screenshots.join(format!("saml-{page}-{width}.png"));
            assert!(path.exists(), "{} was not saved", path.display());
        }
    }
}

/// Two control-plane replicas on one Postgres behind one address: a SAML sign-in started at one is answered
/// and finished at the other (the sign-ins in flight are in the database), once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saml_sign_in_started_at_one_replica_finishes_at_the_other() {
    let db = crate::database::TestDb::postgres().await;
    // Both are reached as one address, as behind one load balancer.
    let host = "vexil.example:8080";
    let provider = start_identity_provider(
        &format!("http://{host}"),
        &format!("http://{host}/auth/saml/callback"),
    );
    let env = [
        ("SAML_ENABLED", "true"),
        ("SAML_ENTITY_ID", provider.entity_id.as_str()),
        ("SAML_SIGNON_URL", provider.sign_on_url.as_str()),
        ("SAML_CERTIFICATE", provider.certificate.as_str()),
        ("SAML_AUTO_CREATE", "true"),
    ];
    let first = Process::control_plane_env(&db.url, &[], &env);
    let second = Process::control_plane_env(&db.url, &[], &env);
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let start = browser
        .get(format!("{}/auth/saml/login", first.base))
        .header("Host", host)
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), 303);
    let location = start.headers()["location"].to_str().unwrap().to_owned();
    let cookie = start.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let made = request(
        "POST",
        &format!("{}/_test/response", provider.base),
        None,
        &[],
        Some(json!({"email": "rita@example.com", "location": location})),
    )
    .await;
    assert_eq!(made.status, 200, "{}", made.body);
    let form = [
        ("SAMLResponse", made.body["SAMLResponse"].as_str().unwrap()),
        ("RelayState", made.body["RelayState"].as_str().unwrap()),
    ];
    let posted = browser
        .post(format!("{}/auth/saml/callback", second.base))
        .header("Host", host)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 303, "{}", posted.text().await.unwrap());
    let finish = posted.headers()["location"].to_str().unwrap().to_owned();
    let finished = browser
        .get(format!("{}{finish}", second.base))
        .header("Host", host)
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(finished.status(), 303);
    assert!(
        finished
            .headers()
            .get_all("set-cookie")
            .iter()
            .any(|cookie| cookie.to_str().unwrap().starts_with("vexil-session=")),
        "no session"
    );
    user(&first, "rita@example.com").await;
    // Taken once: the same response on the first replica is refused.
    let replayed = browser
        .post(format!("{}/auth/saml/callback", first.base))
        .header("Host", host)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), 401);
}
