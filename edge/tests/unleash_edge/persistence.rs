//! With its upstream gone the edge keeps answering; restarted with `BACKUP_FOLDER` (or `REDIS_URL`) while
//! the upstream is still gone, it serves the same answers.

use crate::answers::{create_flags_once, wait_in_step};
use crate::unleash::{get, unleash, Edge, Relay, SERIAL};

const PATHS: &[&str] = &[
    "/api/frontend?userId=user-1&country=se&age=30&email=a%40example.com&plan=pro&version=1.3.0",
    "/api/frontend?userId=user-2&country=dk&age=10&plan=free",
    "/api/frontend?userId=user-7&sessionId=s7",
];

async fn answers(edge: &Edge, frontend: &str) -> Vec<(u16, serde_json::Value)> {
    let mut out = Vec::new();
    for path in PATHS {
        out.push(get(&edge.base, path, frontend).await);
    }
    out
}

async fn survives_its_upstream(store: (&str, &str)) {
    let _serial = SERIAL.lock().await;
    let unleash = unleash();
    create_flags_once(unleash).await;
    let client = unleash.token("client", "development", &["*"]).await;
    let frontend = unleash.token("frontend", "development", &["default"]).await;
    unleash.wait_known(&client).await;
    unleash.wait_known(&frontend).await;
    let relay = Relay::to(&unleash.base);
    let variables = [
        ("UPSTREAM_URL", relay.base.as_str()),
        ("TOKENS", client.as_str()),
        ("FEATURES_REFRESH_INTERVAL_SECONDS", "1"),
        store,
    ];
    let edge = Edge::start(&variables);
    wait_in_step(unleash, &edge, &client).await;
    let before = answers(&edge, &frontend).await;
    assert!(
        before.iter().all(|(status, _)| *status == 200),
        "{before:?}"
    );

    relay.cut();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        answers(&edge, &frontend).await,
        before,
        "the upstream gone, the edge keeps answering"
    );
    edge.stop();

    let restarted = Edge::start(&variables);
    assert_eq!(
        answers(&restarted, &frontend).await,
        before,
        "restarted while the upstream is gone, the edge serves its backup"
    );
    let (status, _) = get(&restarted.base, "/api/client/features", &client).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backup_folder_keeps_the_answers_across_a_restart_without_upstream() {
    let folder = tempfile::tempdir().expect("a folder");
    survives_its_upstream(("BACKUP_FOLDER", folder.path().to_str().unwrap())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_keeps_the_answers_across_a_restart_without_upstream() {
    let url =
        std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    // A database of its own (the key is fixed, as Unleash Edge's are).
    let url = format!(
        "{}{}",
        url.trim_end_matches('/'),
        format_args!("/{}", 5 + fastrand::u8(..8))
    );
    survives_its_upstream(("REDIS_URL", &url)).await;
}
