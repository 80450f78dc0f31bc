//! `vexil-edge offline` through the real binary: it answers what `vexil-edge eval` answers for the same file
//! and contexts, and follows the frontend and client API rules (tokens, CORS, ETags, segments, reloads).

#[allow(dead_code)] // shared with the e2e tests
#[path = "e2e/processes.rs"]
mod processes;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use processes::*;
use serde_json::{json, Value};

const FRONTEND: &str = "default:development.offline-frontend";
const CLIENT: &str = "default:development.offline-client";

fn features_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/features.json")
}

fn offline(features: &Path) -> Process {
    Process::offline(&[
        "--features",
        features.to_str().unwrap(),
        "--frontend-tokens",
        FRONTEND,
        "--client-tokens",
        CLIENT,
        "--hostname",
        "web-1",
    ])
}

/// Contexts that exercise every flag of the example file (each with a remoteAddress, so that the caller's
/// IP does not fill it in).
const CONTEXTS: &[&str] = &[
    r#"{"userId":"alice","appName":"web","remoteAddress":"192.0.2.1","properties":{"email":"a@Example.COM","age":"17","appVersion":"1.2.4"}}"#,
    r#"{"userId":"bob","appName":"blocked-app","remoteAddress":"10.1.2.3","properties":{"age":"40"}}"#,
    r#"{"userId":"carol","remoteAddress":"127.0.0.1","properties":{"appVersion":"1.2.3"}}"#,
    r#"{"userId":"dave","remoteAddress":"192.168.0.1","properties":{"email":"d@other.org"}}"#,
    r#"{"userId":"42","sessionId":"s-1","remoteAddress":"192.0.2.9","currentTime":"2023-06-01T00:00:00Z"}"#,
];

fn eval(context: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_vexil-edge"))
        .args([
            "eval",
            "--features",
            features_file().to_str().unwrap(),
            "--hostname",
            "web-1",
            "--context",
            context,
        ])
        .output()
        .expect("vexil-edge eval");
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[tokio::test]
async fn offline_answers_what_eval_answers() {
    let edge = offline(&features_file());
    for context in CONTEXTS {
        let expected = eval(context);
        let context: Value = serde_json::from_str(context).unwrap();
        let answer = request(
            "POST",
            &format!("{}/api/frontend", edge.base),
            Some(FRONTEND),
            &[],
            Some(json!({ "context": context })),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.body["toggles"], expected, "context {context}");
        assert!(!expected.as_array().unwrap().is_empty());
    }
    // The same context as a query string.
    let answer = get(
        &format!(
            "{}/api/frontend?userId=carol&remoteAddress=127.0.0.1&appVersion=1.2.3",
            edge.base
        ),
        Some(FRONTEND),
    )
    .await;
    assert_eq!(answer.body["toggles"], eval(CONTEXTS[2]));
}

#[tokio::test]
async fn frontend_api_rules() {
    let edge = offline(&features_file());
    let url = format!("{}/api/frontend?userId=alice", edge.base);

    let none = get(&url, None).await;
    assert_eq!(
        (none.status, none.body["name"].as_str()),
        (401, Some("AuthenticationRequired"))
    );
    let unknown = get(&url, Some("default:development.nope")).await;
    assert_eq!(unknown.status, 401);
    let client = get(&url, Some(CLIENT)).await;
    assert_eq!(
        (client.status, client.body["name"].as_str()),
        (403, Some("NoAccessError"))
    );
    assert_eq!(client.body.as_object().unwrap().len(), 3, "{}", client.body);

    let first = request(
        "GET",
        &url,
        Some(&format!("Bearer {FRONTEND}")),
        &[("Origin", "https://app.example")],
        None,
    )
    .await;
    assert_eq!(first.status, 200);
    assert_eq!(first.header("x-vexil-revision"), Some("1"));
    assert_eq!(first.header("cache-control"), Some("no-cache"));
    assert_eq!(first.header("access-control-allow-origin"), Some("*"));
    assert_eq!(first.header("access-control-expose-headers"), Some("ETag"));
    let vary: Vec<_> = first.headers.get_all("vary").iter().collect();
    assert_eq!(vary, ["accept-encoding", "Origin"]);
    let etag = first.header("etag").expect("etag").to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    let again = request(
        "GET",
        &url,
        Some(FRONTEND),
        &[("If-None-Match", &etag)],
        None,
    )
    .await;
    assert_eq!(again.status, 304);
    assert_eq!(again.body, Value::Null);
    let other_user = request(
        "GET",
        &format!("{}/api/frontend?userId=dave", edge.base),
        Some(FRONTEND),
        &[("If-None-Match", &etag)],
        None,
    )
    .await;
    assert_eq!(other_user.status, 200, "another answer, another ETag");

    // Errors carry CORS headers too; preflights need no token.
    assert_eq!(
        none.header("access-control-allow-credentials"),
        Some("true")
    );
    let preflight = request(
        "OPTIONS",
        &url,
        None,
        &[
            ("Origin", "https://app.example"),
            ("Access-Control-Request-Method", "GET"),
            ("Access-Control-Request-Headers", "authorization"),
        ],
        None,
    )
    .await;
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("access-control-allow-headers"),
        Some("authorization")
    );
    assert_eq!(preflight.header("access-control-max-age"), Some("86400"));
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));

    // One flag, enabled or not.
    let one = get(
        &format!(
            "{}/api/frontend/features/disabled-in-dev?userId=alice",
            edge.base
        ),
        Some(FRONTEND),
    )
    .await;
    assert_eq!(one.status, 200);
    assert_eq!(one.body["name"], "disabled-in-dev");
    assert_eq!(one.body["enabled"], false);
    let missing = get(
        &format!("{}/api/frontend/features/nope", edge.base),
        Some(FRONTEND),
    )
    .await;
    assert_eq!(
        (missing.status, missing.body["name"].as_str()),
        (404, Some("NotFoundError"))
    );

    // A body that is not a context.
    let bad = request(
        "POST",
        &format!("{}/api/frontend", edge.base),
        Some(FRONTEND),
        &[],
        Some(json!({"context": [1]})),
    )
    .await;
    assert_eq!(
        (bad.status, bad.body["name"].as_str()),
        (400, Some("ValidationError"))
    );
}

#[tokio::test]
async fn client_api_rules() {
    let edge = offline(&features_file());
    let url = format!("{}/api/client/features", edge.base);
    assert_eq!(get(&url, Some(FRONTEND)).await.status, 403);
    assert_eq!(get(&url, None).await.status, 401);

    let legacy = get(&url, Some(CLIENT)).await;
    assert_eq!(legacy.status, 200);
    assert_eq!(legacy.body["version"], 2);
    assert!(
        legacy.body.get("segments").is_none(),
        "no segments below spec 4.2.0"
    );
    let features = legacy.body["features"].as_array().unwrap();
    assert_eq!(features.len(), 13);
    let segment_flag = features
        .iter()
        .find(|f| f["name"] == "segment-flag")
        .unwrap();
    let strategy = &segment_flag["strategies"][0];
    assert!(strategy.get("segments").is_none());
    assert!(
        strategy["constraints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["contextName"] == "userId"),
        "segment constraints inlined: {strategy}"
    );
    for feature in features {
        for strategy in feature["strategies"].as_array().unwrap() {
            for field in ["id", "title", "sortOrder", "disabled"] {
                assert!(strategy.get(field).is_none(), "{field} in {strategy}");
            }
        }
    }

    let modern = request(
        "GET",
        &url,
        Some(CLIENT),
        &[("Unleash-Client-Spec", "5.2.0")],
        None,
    )
    .await;
    assert_eq!(modern.body["segments"][0]["id"], 1);
    let etag = modern.header("etag").expect("etag").to_owned();
    assert_eq!(modern.body["meta"]["etag"], etag.as_str());
    assert!(etag.ends_with(":1:v1\""), "{etag}");
    let again = request(
        "GET",
        &url,
        Some(CLIENT),
        &[("Unleash-Client-Spec", "5.2.0"), ("If-None-Match", &etag)],
        None,
    )
    .await;
    assert_eq!(again.status, 304);
    let bad_spec = request(
        "GET",
        &url,
        Some(CLIENT),
        &[("Unleash-Client-Spec", "4.2")],
        None,
    )
    .await;
    assert_eq!(bad_spec.status, 400);

    let prefixed = get(&format!("{url}?namePrefix=flex"), Some(CLIENT)).await;
    assert_eq!(prefixed.body["features"].as_array().unwrap().len(), 2);
    let one = get(&format!("{url}/prod-only"), Some(CLIENT)).await;
    assert_eq!(
        (one.status, one.body["name"].as_str()),
        (200, Some("prod-only"))
    );
    assert_eq!(get(&format!("{url}/nope"), Some(CLIENT)).await.status, 404);
}

#[tokio::test]
async fn offline_reloads_the_file_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("features.json");
    let write = |names: &[&str]| {
        let features: Vec<Value> = names
            .iter()
            .map(|name| json!({"name": name, "enabled": true, "strategies": []}))
            .collect();
        std::fs::write(
            &file,
            json!({"version": 2, "features": features}).to_string(),
        )
        .unwrap();
    };
    write(&["a"]);
    let edge = offline(&file);
    let flags = || async { get(&format!("{}/api/frontend", edge.base), Some(FRONTEND)).await };
    assert_eq!(flags().await.toggle_names(), ["a"]);
    write(&["a", "b"]);
    eventually(
        Duration::from_secs(5),
        "the edge reloads the file",
        || async { flags().await.toggle_names() == ["a", "b"] },
    )
    .await;
    std::fs::write(&file, "{not json").unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        flags().await.toggle_names(),
        ["a", "b"],
        "the last good file stays"
    );
    assert_eq!(get(&format!("{}/ready", edge.base), None).await.status, 200);
}

/// A client's raw answer: status, `Content-Encoding`, `Vary`, `ETag` and the bytes as sent.
struct RawAnswer {
    status: u16,
    encoding: Option<String>,
    vary: Vec<String>,
    etag: Option<String>,
    bytes: Vec<u8>,
}

async fn raw(
    method: &str,
    url: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> RawAnswer {
    // reqwest as built here neither asks for nor decodes a compressed answer: the bytes are the edge's.
    let mut request = reqwest::Client::new()
        .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url)
        .header("Authorization", token);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_owned());
    }
    let response = request.send().await.expect("request");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    RawAnswer {
        status: response.status().as_u16(),
        encoding: header("content-encoding"),
        etag: header("etag"),
        vary: response
            .headers()
            .get_all("vary")
            .iter()
            .flat_map(|v| v.to_str().unwrap().split(','))
            .map(|v| v.trim().to_ascii_lowercase())
            .collect(),
        bytes: response.bytes().await.expect("body").to_vec(),
    }
}

#[tokio::test]
async fn answers_are_compressed_as_the_client_accepts() {
    // 120 flags: every answer below is several kilobytes, worth compressing.
    let features: Vec<Value> = (0..120)
        .map(|i| {
            json!({"name": format!("compressed-flag-{i:03}"), "type": "release", "enabled": true,
                "project": "default", "stale": false, "impressionData": false,
                "strategies": [{"name": "flexibleRollout", "constraints": [],
                    "parameters": {"groupId": format!("compressed-flag-{i:03}"), "rollout": "50",
                        "stickiness": "userId"}}],
                "variants": []})
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("features.json");
    std::fs::write(
        &file,
        json!({"version": 2, "features": features}).to_string(),
    )
    .unwrap();
    let edge = offline(&file);
    let ofrep_body = r#"{"context":{"targetingKey":"user-7"}}"#;
    let answers = [
        ("GET", "/api/frontend?userId=user-7", FRONTEND, None),
        (
            "POST",
            "/ofrep/v1/evaluate/flags",
            FRONTEND,
            Some(ofrep_body),
        ),
        ("GET", "/api/client/features", CLIENT, None),
    ];
    for (method, path, token, body) in answers {
        let url = format!("{}{path}", edge.base);
        let plain = raw(method, &url, token, &[], body).await;
        assert_eq!((plain.status, &plain.encoding), (200, &None), "{path}");
        assert!(
            plain.bytes.len() > 4096,
            "{path}: {} bytes",
            plain.bytes.len()
        );
        assert!(plain.vary.contains(&"accept-encoding".to_owned()), "{path}");
        serde_json::from_slice::<Value>(&plain.bytes).expect("JSON");

        // What browsers send: zstd from Chromium and Firefox, gzip from Safari; br alone is not offered.
        for (accept, coding) in [
            ("gzip, deflate, br, zstd", Some("zstd")),
            ("gzip, deflate, br", Some("gzip")),
            ("zstd;q=0.5, gzip", Some("gzip")),
            ("br", None),
            ("gzip;q=0, zstd;q=0", None),
        ] {
            let sent = raw(method, &url, token, &[("Accept-Encoding", accept)], body).await;
            assert_eq!(sent.status, 200);
            assert_eq!(sent.encoding.as_deref(), coding, "{path} for {accept}");
            assert!(sent.vary.contains(&"accept-encoding".to_owned()), "{path}");
            assert_eq!(
                sent.etag, plain.etag,
                "{path}: one ETag whatever the coding"
            );
            let decoded = match coding {
                Some("zstd") => zstd::decode_all(&sent.bytes[..]).expect("zstd"),
                Some(_) => {
                    let mut decoded = Vec::new();
                    std::io::Read::read_to_end(
                        &mut flate2::read::GzDecoder::new(&sent.bytes[..]),
                        &mut decoded,
                    )
                    .expect("gzip");
                    decoded
                }
                None => sent.bytes.clone(),
            };
            assert_eq!(decoded, plain.bytes, "{path} for {accept}");
            if coding.is_some() {
                assert!(
                    sent.bytes.len() * 4 < plain.bytes.len(),
                    "{path} for {accept}"
                );
            }
        }
        // A client that has the answer gets its 304, compressed or not.
        if let Some(etag) = &plain.etag {
            let again = raw(
                method,
                &url,
                token,
                &[("Accept-Encoding", "zstd"), ("If-None-Match", etag)],
                body,
            )
            .await;
            assert_eq!((again.status, again.bytes.len()), (304, 0), "{path}");
        }
    }
    // One flag's answer is too short to gain from it.
    let one = raw(
        "GET",
        &format!(
            "{}/api/frontend/features/compressed-flag-001?userId=user-7",
            edge.base
        ),
        FRONTEND,
        &[("Accept-Encoding", "zstd, gzip")],
        None,
    )
    .await;
    assert_eq!((one.status, one.encoding), (200, None));
}

/// Client tokens of project `alpha`, of project `beta`, and of every project.
const SCOPES: (&str, &str, &str) = (
    "alpha:development.kept-alpha",
    "beta:development.kept-beta",
    "*:development.kept-all",
);

/// Writes a features file of enabled flags named `<project>-…`, each long enough to be compressed.
fn write_scoped_features(file: &Path, names: &[&str]) {
    let features: Vec<Value> = names
        .iter()
        .map(|name| {
            let project = name.split('-').next().unwrap();
            json!({"name": name, "project": project, "enabled": true, "strategies": [],
                "description": "long enough to be compressed ".repeat(20)})
        })
        .collect();
    std::fs::write(
        file,
        json!({"version": 2, "features": features}).to_string(),
    )
    .unwrap();
}

/// An offline edge on `file` with the client tokens of [`SCOPES`].
fn scoped_edge(file: &Path) -> Process {
    let (alpha, beta, all) = SCOPES;
    Process::offline(&[
        "--features",
        file.to_str().unwrap(),
        "--client-tokens",
        &format!("{alpha},{beta},{all}"),
    ])
}

/// `/api/client/features` is built once per snapshot and query and then kept (`client_documents`): each
/// scope and query still gets its own document, in every coding, and a new file its new documents.
#[tokio::test]
async fn kept_client_documents_follow_scope_query_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("features.json");
    let write = |names: &[&str]| write_scoped_features(&file, names);
    write(&["alpha-1", "alpha-2", "beta-1"]);
    let edge = scoped_edge(&file);
    let (alpha, beta, all) = SCOPES;
    let expected: [(&str, &str, &[&str]); 6] = [
        (alpha, "", &["alpha-1", "alpha-2"]),
        (beta, "", &["beta-1"]),
        (all, "", &["alpha-1", "alpha-2", "beta-1"]),
        (all, "?project=beta", &["beta-1"]),
        (alpha, "?project=beta", &["alpha-1", "alpha-2"]),
        (all, "?namePrefix=alpha-2", &["alpha-2"]),
    ];
    let mut etags = Vec::new();
    // Twice over, in both codings: the second round is answered from what the first kept.
    for _ in 0..2 {
        for accept in ["identity", "zstd"] {
            for (token, query, flags) in expected {
                let (names, etag) = feature_names(&edge, token, query, accept).await;
                assert_eq!(names, flags, "{token} {query} {accept}");
                etags.push(etag.expect("etag"));
            }
        }
    }
    write(&["alpha-1", "alpha-2", "alpha-3", "beta-1"]);
    eventually(
        Duration::from_secs(5),
        "the edge reloads the file",
        || async { feature_names(&edge, all, "", "zstd").await.0.len() == 4 },
    )
    .await;
    for accept in ["identity", "zstd"] {
        let (names, etag) = feature_names(&edge, alpha, "", accept).await;
        assert_eq!(names, ["alpha-1", "alpha-2", "alpha-3"], "{accept}");
        assert!(!etags.contains(&etag.expect("etag")), "a new ETag");
        let (names, _) = feature_names(&edge, beta, "", accept).await;
        assert_eq!(names, ["beta-1"], "{accept}");
    }
}

/// `/api/client/delta` answers are kept with the snapshot like the features documents: each scope, query
/// and client revision still gets its own, in every coding, and a new file new ones.
#[tokio::test]
async fn kept_delta_answers_follow_scope_query_revision_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("features.json");
    let write = |names: &[&str]| write_scoped_features(&file, names);
    write(&["alpha-1", "alpha-2", "beta-1"]);
    let edge = scoped_edge(&file);
    let (alpha, beta, all) = SCOPES;
    let expected: [(&str, &str, &[&str]); 4] = [
        (alpha, "", &["alpha-1", "alpha-2"]),
        (beta, "", &["beta-1"]),
        (all, "", &["alpha-1", "alpha-2", "beta-1"]),
        (all, "?namePrefix=alpha-2", &["alpha-2"]),
    ];
    let mut first = None;
    // Twice over, in both codings: the second round is answered from what the first kept.
    for _ in 0..2 {
        for accept in ["identity", "zstd"] {
            for (token, query, flags) in expected {
                let (events, etag) = delta_events(&edge, token, query, accept, None).await;
                assert_eq!(
                    events,
                    [("hydration".to_owned(), names(flags))],
                    "{token} {query} {accept}"
                );
                first.get_or_insert(etag);
            }
        }
    }
    let first = first.unwrap();
    write(&["alpha-1", "alpha-2", "alpha-3", "beta-1"]);
    eventually(
        Duration::from_secs(5),
        "the edge reloads the file",
        || async { delta_events(&edge, all, "", "zstd", None).await.1 != first },
    )
    .await;
    for accept in ["identity", "zstd"] {
        let (events, etag) = delta_events(&edge, alpha, "", accept, None).await;
        assert_eq!(
            events,
            [(
                "hydration".to_owned(),
                names(&["alpha-1", "alpha-2", "alpha-3"])
            )],
            "{accept}"
        );
        assert_ne!(etag, first, "a new revision");
        // Since the first revision: only what changed in the token's scope.
        let (events, _) = delta_events(&edge, alpha, "", accept, Some(&first)).await;
        let changed: Vec<String> = events.iter().flat_map(|(_, n)| n.clone()).collect();
        assert_eq!(changed, ["alpha-3"], "{accept}: {events:?}");
        let (events, _) = delta_events(&edge, beta, "", accept, Some(&first)).await;
        assert!(
            events.iter().all(|(_, n)| n.iter().all(|n| n == "beta-1")),
            "{accept}: {events:?}"
        );
    }
}

fn names(flags: &[&str]) -> Vec<String> {
    flags.iter().map(|f| f.to_string()).collect()
}

/// The events of `/api/client/delta{query}` for `token` (each its type and the flag names it carries),
/// asked with `Accept-Encoding: accept` and `If-None-Match: since`, and the answer's ETag.
async fn delta_events(
    edge: &Process,
    token: &str,
    query: &str,
    accept: &str,
    since: Option<&str>,
) -> (Vec<(String, Vec<String>)>, String) {
    let url = format!("{}/api/client/delta{query}", edge.base);
    let mut headers = vec![("Accept-Encoding", accept)];
    headers.extend(since.map(|since| ("If-None-Match", since)));
    let answer = raw("GET", &url, token, &headers, None).await;
    assert_eq!(answer.status, 200, "{token} {query}");
    let etag = answer.etag.clone();
    let body = json_of(answer);
    let events = body["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|event| {
            let flags = match &event["features"] {
                Value::Array(features) => features.iter().map(|f| &f["name"]).collect(),
                _ => vec![&event["feature"]["name"]],
            };
            let flags = flags.iter().filter_map(|n| n.as_str()).map(str::to_owned);
            (
                event["type"].as_str().expect("type").to_owned(),
                flags.collect(),
            )
        })
        .collect();
    (events, etag.expect("etag"))
}

/// The JSON of an answer asked plain or in zstd (the only coding these tests ask for).
fn json_of(answer: RawAnswer) -> Value {
    let bytes = match answer.encoding.as_deref() {
        Some("zstd") => zstd::decode_all(&answer.bytes[..]).expect("zstd"),
        None => answer.bytes,
        Some(other) => panic!("{other}: not asked for"),
    };
    serde_json::from_slice(&bytes).expect("JSON")
}

/// The flag names of `/api/client/features{query}` for `token`, asked with `Accept-Encoding: accept`, and
/// its ETag.
async fn feature_names(
    edge: &Process,
    token: &str,
    query: &str,
    accept: &str,
) -> (Vec<String>, Option<String>) {
    let url = format!("{}/api/client/features{query}", edge.base);
    let answer = raw("GET", &url, token, &[("Accept-Encoding", accept)], None).await;
    assert_eq!(answer.status, 200, "{token} {query}");
    let etag = answer.etag.clone();
    let body = json_of(answer);
    let names = body["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|f| f["name"].as_str().expect("name").to_owned())
        .collect();
    (names, etag)
}
