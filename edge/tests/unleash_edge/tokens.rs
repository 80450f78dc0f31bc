//! Tokens on the edge: one created in Unleash after the edge started works (validated upstream), one that
//! Unleash stops vouching for stops after revalidation (an expired one: Unleash 8.2's `/edge/validate`
//! keeps vouching for a deleted token from its cache for minutes — measured: still after 2 minutes —, so a
//! deletion reaches an edge only when Unleash itself forgets it), a bogus one is refused, one no startup token covers is refused with 403,
//! a pretrusted one works without Unleash knowing it, and each kind only on its own routes.

use crate::answers::wait_in_step;
use crate::unleash::{get, unleash, wait_for, Edge, SERIAL};

#[tokio::test(flavor = "multi_thread")]
async fn tokens_are_validated_upstream_revalidated_and_scoped() {
    let _serial = SERIAL.lock().await;
    let unleash = unleash();
    let client = unleash.token("client", "development", &["*"]).await;
    unleash.wait_known(&client).await;
    let edge = Edge::start(&[
        ("UPSTREAM_URL", &unleash.base),
        ("TOKENS", &client),
        ("FEATURES_REFRESH_INTERVAL_SECONDS", "1"),
        ("TOKEN_REVALIDATION_INTERVAL_SECONDS", "2"),
        ("PRETRUSTED_TOKENS", "vexil-pretrusted-secret@development"),
    ]);
    wait_in_step(unleash, &edge, &client).await;

    let expires = chrono::Utc::now() + chrono::Duration::seconds(20);
    let later = unleash
        .token_expiring(
            "frontend",
            "development",
            &["default"],
            Some(&expires.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        )
        .await;
    wait_for(
        "a token created after the edge started to work",
        30,
        || async { (get(&edge.base, "/api/frontend", &later).await.0 == 200).then_some(()) },
    )
    .await;
    assert_eq!(
        get(&edge.base, "/api/client/features", &later).await.0,
        403,
        "a frontend token on the client API"
    );
    // Edges chain: another edge validates through this one.
    let validated: serde_json::Value = crate::unleash::http()
        .post(format!("{}/edge/validate", edge.base))
        .json(&serde_json::json!({"tokens": [later, "default:development.bogus-secret"]}))
        .send()
        .await
        .expect("answers")
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        validated,
        serde_json::json!({"tokens": [{"token": later, "type": "frontend", "environment": "development", "projects": ["default"]}]})
    );
    assert_eq!(
        get(&edge.base, "/api/frontend", &client).await.0,
        403,
        "a client token on the frontend API"
    );

    let (status, body) = get(
        &edge.base,
        "/api/frontend",
        "default:development.bogus-secret",
    )
    .await;
    assert_eq!(status, 401, "{body}");

    let production = unleash.token("client", "production", &["*"]).await;
    unleash.wait_known(&production).await;
    let (status, body) = get(&edge.base, "/api/client/features", &production).await;
    assert_eq!(status, 403, "no startup token covers production: {body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("production"),
        "{body}"
    );

    assert_eq!(
        get(&edge.base, "/api/frontend", "vexil-pretrusted-secret")
            .await
            .0,
        200,
        "a pretrusted token works without Unleash knowing it"
    );

    // After the expiry, Unleash no longer vouches for it: within a revalidation (2 s) and the refusal
    // memory (2 s), neither does the edge.
    let left = expires - chrono::Utc::now();
    tokio::time::sleep(left.to_std().unwrap_or_default()).await;
    unleash.wait_unknown(&later).await;
    wait_for(
        "an expired token to stop working after revalidation",
        5,
        || async { (get(&edge.base, "/api/frontend", &later).await.0 == 401).then_some(()) },
    )
    .await;
}
