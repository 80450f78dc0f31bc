//! The edge answers as Unleash's own `/api/frontend` and `/api/client/features` for 120 contexts; a
//! streaming `unleash-client` on the edge sees a change made in Unleash within the refresh interval plus 1 s.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::unleash::{get, unleash, wait_for, Edge, NodeSdk, Unleash, SERIAL};

/// The flags the comparison runs over: rollouts by userId, constraints of several operators, strategy
/// variants with payloads, a segment, a dependency, a switched-off flag. None is random for a context with
/// a userId and a sessionId.
pub const FLAGS: &[&str] = &[
    "ue-rollout",
    "ue-constraints",
    "ue-variants",
    "ue-segment",
    "ue-child",
    "ue-off",
    "ue-dates",
];

/// The flags of [`FLAGS`], created once per test binary.
pub async fn create_flags_once(unleash: &Unleash) {
    static CREATED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    CREATED.get_or_init(|| create_flags(unleash)).await;
}

async fn create_flags(unleash: &Unleash) {
    let post = |path: String, body: Value| async move {
        unleash.admin(Method::POST, &path, Some(body)).await
    };
    let segment = post(
        "/api/admin/segments".into(),
        json!({"name": format!("pro-{}", fastrand::u32(..)), "constraints": [
            {"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
    )
    .await;
    let segment_id = segment["id"].as_i64().expect("a segment id");
    let strategies: Vec<(&str, Value)> = vec![
        (
            "ue-rollout",
            json!({"name": "flexibleRollout",
            "parameters": {"rollout": "40", "stickiness": "userId", "groupId": "ue-rollout"}}),
        ),
        (
            "ue-constraints",
            json!({"name": "default", "constraints": [
            {"contextName": "country", "operator": "IN", "values": ["se", "no"]},
            {"contextName": "age", "operator": "NUM_GT", "value": "20"},
            {"contextName": "email", "operator": "STR_ENDS_WITH", "values": ["@EXAMPLE.com"], "caseInsensitive": true}]}),
        ),
        (
            "ue-variants",
            json!({"name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "userId", "groupId": "ue-variants"},
            "variants": [
                {"name": "red", "weight": 300, "weightType": "variable", "stickiness": "userId",
                 "payload": {"type": "json", "value": "{\"color\":\"red\"}"}},
                {"name": "blue", "weight": 700, "weightType": "variable", "stickiness": "userId",
                 "payload": {"type": "string", "value": "blue"}}]}),
        ),
        (
            "ue-segment",
            json!({"name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "ue-segment"},
            "segments": [segment_id]}),
        ),
        ("ue-child", json!({"name": "default"})),
        ("ue-off", json!({"name": "default"})),
        (
            "ue-dates",
            json!({"name": "default", "constraints": [
            {"contextName": "version", "operator": "SEMVER_GT", "value": "1.2.0"},
            {"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2020-01-01T00:00:00.000Z"}]}),
        ),
    ];
    for (name, strategy) in strategies {
        post(
            "/api/admin/projects/default/features".into(),
            json!({"name": name, "type": "release"}),
        )
        .await;
        post(
            format!(
                "/api/admin/projects/default/features/{name}/environments/development/strategies"
            ),
            strategy,
        )
        .await;
        if name != "ue-off" {
            post(
                format!("/api/admin/projects/default/features/{name}/environments/development/on"),
                json!({}),
            )
            .await;
        }
    }
    post(
        "/api/admin/projects/default/features/ue-child/dependencies".into(),
        json!({"feature": "ue-constraints", "enabled": true}),
    )
    .await;
}

/// 120 contexts, each with a userId and a sessionId, spread over the flags' rules.
pub fn contexts() -> Vec<Vec<(String, String)>> {
    (0..120)
        .map(|i| {
            vec![
                ("userId".to_owned(), format!("user-{i}")),
                ("sessionId".to_owned(), format!("session-{i}")),
                ("country".to_owned(), ["se", "no", "dk"][i % 3].to_owned()),
                ("age".to_owned(), (i % 40).to_string()),
                ("plan".to_owned(), ["pro", "free", "team"][i % 3].to_owned()),
                (
                    "email".to_owned(),
                    format!("u{i}@{}", ["example.com", "other.org"][i % 2]),
                ),
                ("version".to_owned(), format!("1.{}.0", i % 5)),
            ]
        })
        .collect()
}

fn query(context: &[(String, String)]) -> String {
    form_query(context.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

fn form_query<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    pairs
        .map(|(k, v)| format!("{k}={}", v.replace('@', "%40")))
        .collect::<Vec<_>>()
        .join("&")
}

/// A client-API document reduced to what SDKs read: features by name, no `query` or `meta`, and without
/// the fields whose value is the default either side may leave out (`null`, `caseInsensitive`/`inverted`
/// false, a dependency's empty `variants`).
pub fn normalized(document: &Value) -> Value {
    fn default_value(key: &str, value: &Value, dependency: bool) -> bool {
        value.is_null()
            || (matches!(key, "caseInsensitive" | "inverted") && *value == false)
            || (dependency && key == "variants" && *value == json!([]))
    }
    fn strip(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, v)| !default_value(k, v, map.contains_key("feature")))
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(list) => Value::Array(list.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let mut features: Vec<Value> = document["features"]
        .as_array()
        .map(|list| list.iter().map(strip).collect())
        .unwrap_or_default();
    features.sort_by_key(|f| f["name"].as_str().unwrap_or_default().to_owned());
    json!({"features": features})
}

/// The toggles of a frontend answer, sorted by name.
fn toggles(answer: &Value) -> Value {
    let mut list = answer["toggles"].as_array().cloned().unwrap_or_default();
    list.sort_by_key(|t| t["name"].as_str().unwrap_or_default().to_owned());
    Value::Array(list)
}

/// Waits until the edge's client-API document is Unleash's (both with `client`).
pub async fn wait_in_step(unleash: &Unleash, edge: &Edge, client: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let theirs = normalized(&unleash.get("/api/client/features", client).await);
        let (status, ours) = get(&edge.base, "/api/client/features", client).await;
        let ours = normalized(&ours);
        if status == 200 && ours == theirs {
            return theirs;
        }
        assert!(
            Instant::now() < deadline,
            "the edge did not serve Unleash's document within 30 s:\nUnleash: {theirs}\nedge ({status}): {ours}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_edge_answers_as_unleash_for_120_contexts() {
    let _serial = SERIAL.lock().await;
    let unleash = unleash();
    create_flags_once(unleash).await;
    let client = unleash.token("client", "development", &["*"]).await;
    let frontend = unleash.token("frontend", "development", &["default"]).await;
    unleash.wait_known(&client).await;
    unleash.wait_known(&frontend).await;
    // Unleash's own client API lags its writes by a few seconds: wait until it lists every flag created.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let theirs = unleash.get("/api/client/features", &client).await;
        let listed = |flag: &str| {
            theirs["features"]
                .as_array()
                .is_some_and(|features| features.iter().any(|f| f["name"] == flag))
        };
        if FLAGS.iter().all(|flag| listed(flag)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Unleash's client API did not list every flag within 30 s: {theirs}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let edge = Edge::start(&[
        ("UPSTREAM_URL", &unleash.base),
        ("TOKENS", &client),
        ("FEATURES_REFRESH_INTERVAL_SECONDS", "1"),
    ]);
    let document = wait_in_step(unleash, &edge, &client).await;
    for flag in FLAGS {
        assert!(
            document["features"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["name"] == *flag),
            "{flag} is in Unleash's document"
        );
    }
    // Unleash's frontend API lags its writes: wait until it shows the flags and the dependency (the last
    // write) too.
    wait_for("Unleash's frontend API to show the flags", 30, || async {
        let matching = toggles(&unleash.get("/api/frontend?userId=u&country=se&age=30&email=a%40example.com&plan=pro&version=1.3.0", &frontend).await);
        let parent_off = toggles(&unleash.get("/api/frontend?userId=u&country=dk", &frontend).await);
        let names = |list: &Value| -> Vec<String> {
            list.as_array().map(|l| l.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()).unwrap_or_default()
        };
        let shown = names(&matching).contains(&"ue-child".to_owned())
            && !names(&parent_off).contains(&"ue-child".to_owned());
        shown.then_some(())
    })
    .await;
    let mut enabled = 0;
    for context in contexts() {
        let path = format!("/api/frontend?{}", query(&context));
        let theirs = toggles(&unleash.get(&path, &frontend).await);
        let (status, ours) = get(&edge.base, &path, &frontend).await;
        assert_eq!(status, 200);
        assert_eq!(toggles(&ours), theirs, "GET {path}");
        let via_proxy = get(
            &edge.base,
            &path.replace("/api/frontend", "/api/proxy"),
            &frontend,
        )
        .await;
        assert_eq!(toggles(&via_proxy.1), theirs, "the /api/proxy alias");
        enabled += theirs.as_array().map_or(0, Vec::len);
    }
    assert!(
        enabled > 120,
        "the contexts enable flags ({enabled} in all)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streaming_sdk_on_the_edge_sees_a_change_made_in_unleash_within_the_interval_and_a_second(
) {
    let _serial = SERIAL.lock().await;
    let unleash = unleash();
    let flag = format!("ue-stream-{}", fastrand::u32(..));
    unleash
        .admin(
            Method::POST,
            "/api/admin/projects/default/features",
            Some(json!({"name": flag})),
        )
        .await;
    unleash
        .admin(
            Method::POST,
            &format!(
                "/api/admin/projects/default/features/{flag}/environments/development/strategies"
            ),
            Some(json!({"name": "default"})),
        )
        .await;
    let client = unleash.token("client", "development", &["*"]).await;
    unleash.wait_known(&client).await;
    let edge = Edge::start(&[
        ("UPSTREAM_URL", &unleash.base),
        ("TOKENS", &client),
        ("FEATURES_REFRESH_INTERVAL_SECONDS", "1"),
    ]);
    wait_in_step(unleash, &edge, &client).await;
    let mut sdk = NodeSdk::start(
        "server-sdk.cjs",
        &[
            &format!("{}/api", edge.base),
            &client,
            "60000",
            "0",
            "streaming",
        ],
    );
    assert_eq!(sdk.ask(None, &[&flag])["results"][0]["enabled"], false);
    unleash
        .admin(
            Method::POST,
            &format!("/api/admin/projects/default/features/{flag}/environments/development/on"),
            Some(json!({})),
        )
        .await;
    // From when Unleash's own client API shows the change (it lags its writes).
    wait_for("Unleash's client API to show the change", 30, || async {
        let document = unleash.get("/api/client/features", &client).await;
        document["features"]
            .as_array()?
            .iter()
            .any(|f| f["name"] == *flag.as_str() && f["enabled"] == true)
            .then_some(())
    })
    .await;
    let shown = Instant::now();
    loop {
        if sdk.ask(None, &[&flag])["results"][0]["enabled"] == true {
            break;
        }
        assert!(
            shown.elapsed() < Duration::from_secs(2),
            "the streaming SDK saw the change within the refresh interval (1 s) plus 1 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
