//! `vexil-edge eval` through the real binary: it must answer what the engine answers, and refuse bad input
//! with exit status 2.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use vexil_shared::{CompileOptions, Context, FeaturesDocument, Projects, Snapshot};

fn features_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/features.json")
}

fn eval(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vexil-edge"))
        .arg("eval")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vexil-edge");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or("").as_bytes())
        .expect("write stdin");
    drop(input);
    child.wait_with_output().expect("vexil-edge output")
}

/// Contexts that exercise every flag of the example file; each has a userId so no answer is random.
const CONTEXTS: &[&str] = &[
    r#"{"userId":"alice","appName":"web","properties":{"email":"a@Example.COM","age":"17","appVersion":"1.2.4"}}"#,
    r#"{"userId":"bob","appName":"blocked-app","remoteAddress":"10.1.2.3","properties":{"age":"40"}}"#,
    r#"{"userId":"carol","remoteAddress":"127.0.0.1","properties":{"appVersion":"1.2.3"}}"#,
    r#"{"userId":"dave","remoteAddress":"192.168.0.1","properties":{"email":"d@other.org"}}"#,
    r#"{"userId":"42","sessionId":"s-1","currentTime":"2023-06-01T00:00:00Z"}"#,
];

fn names(line: &Value) -> Vec<&str> {
    line.as_array()
        .expect("an array per context")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect()
}

#[test]
fn agrees_with_the_engine_for_every_context() {
    let jsonl = CONTEXTS.join("\n");
    let out = eval(
        &[
            "--features",
            features_file().to_str().unwrap(),
            "--contexts",
            "-",
            "--hostname",
            "web-1",
        ],
        Some(&jsonl),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), CONTEXTS.len());

    let doc =
        FeaturesDocument::from_json(&std::fs::read_to_string(features_file()).unwrap()).unwrap();
    let snapshot = Snapshot::compile_with(
        &doc,
        &CompileOptions {
            hostname: Some("web-1".into()),
        },
    );
    for (line, ctx) in lines.iter().zip(CONTEXTS) {
        let ctx: Context = serde_json::from_str(ctx).unwrap();
        let expected = serde_json::to_value(snapshot.evaluate_all(&ctx, &Projects::All)).unwrap();
        assert_eq!(line, &expected, "context {ctx:?}");
        let sorted = {
            let mut n = names(line);
            n.sort_unstable();
            n
        };
        assert_eq!(names(line), sorted, "sorted by name");
    }

    // What the example file's descriptions promise, checked by hand.
    let alice = names(&lines[0]);
    for flag in [
        "user-with-id",
        "constraints-in-not-in",
        "str-contains-ci",
        "num-gt-inverted",
        "semver-gt",
        "segment-flag",
        "date-after",
    ] {
        assert!(alice.contains(&flag), "alice should get {flag}: {alice:?}");
    }
    let bob = names(&lines[1]);
    assert!(bob.contains(&"remote-address"), "10.0.0.0/8: {bob:?}");
    assert!(
        !bob.contains(&"constraints-in-not-in"),
        "blocked-app: {bob:?}"
    );
    assert!(
        !bob.contains(&"num-gt-inverted"),
        "age 40 > 18, inverted: {bob:?}"
    );
    assert!(
        !bob.contains(&"segment-flag"),
        "bob is not a beta user: {bob:?}"
    );
    let carol = names(&lines[2]);
    assert!(carol.contains(&"segment-flag") && carol.contains(&"remote-address"));
    assert!(!carol.contains(&"semver-gt"), "1.2.3 is not > 1.2.3");
    let dave = names(&lines[3]);
    assert!(!dave.contains(&"remote-address") && !dave.contains(&"str-contains-ci"));
    let before_2024 = names(&lines[4]);
    assert!(!before_2024.contains(&"date-after"));
    for line in &lines {
        for off in ["disabled-in-dev", "prod-only"] {
            assert!(!names(line).contains(&off), "{off} is switched off");
        }
    }
    let variant = &lines[0]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "flex-rollout-variants")
        .unwrap()["variant"];
    assert_eq!(variant["enabled"], json!(true));
    assert_eq!(variant["feature_enabled"], json!(true));
}

#[test]
fn projects_limit_the_flags() {
    let out = eval(
        &[
            "--features",
            features_file().to_str().unwrap(),
            "--context",
            r#"{"userId":"alice"}"#,
            "--projects",
            "other",
        ],
        None,
    );
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), "[]");
}

#[test]
fn bad_input_exits_with_status_2_and_names_the_problem() {
    let features = features_file();
    let features = features.to_str().unwrap();
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (
            &["--features", features, "--context", r#"{"userId":{}}"#],
            None,
            "`userId`",
        ),
        (
            &["--features", features, "--context", "[1]"],
            None,
            "context object",
        ),
        (
            &["--features", features, "--contexts", "-"],
            Some("{\"userId\":\"a\"}\n\n{bad\n"),
            "line 3",
        ),
        (
            &[
                "--features",
                "/nonexistent/features.json",
                "--context",
                "{}",
            ],
            None,
            "cannot read",
        ),
        (
            &[
                "--features",
                concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
                "--context",
                "{}",
            ],
            None,
            "not valid JSON",
        ),
        (&["--features", features], None, "--context"),
    ];
    for (args, stdin, needle) in cases {
        let out = eval(args, *stdin);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}: expected {needle:?} in {stderr}"
        );
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn a_bad_document_names_the_json_path() {
    let dir = std::env::temp_dir().join(format!("vexil-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.json");
    std::fs::write(&file, r#"{"features":[{"name":"a","enabled":"yes"}]}"#).unwrap();
    let out = eval(
        &["--features", file.to_str().unwrap(), "--context", "{}"],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("features[0].enabled"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
