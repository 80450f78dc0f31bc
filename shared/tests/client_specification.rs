//! The Unleash client specification (npm `@unleash/client-specification`), case for case.
//!
//! `scripts/test` installs the package into `.test-deps/`; `VEXIL_CLIENT_SPEC_DIR` may point at another copy
//! of its `specifications/` folder.

use std::io::Write;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use vexil_shared::{Context, DeltaDocument, FeaturesDocument, Snapshot};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecFile {
    name: String,
    state: Value,
    #[serde(default)]
    tests: Vec<EnabledCase>,
    #[serde(default)]
    variant_tests: Vec<VariantCase>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EnabledCase {
    description: String,
    context: Context,
    toggle_name: String,
    expected_result: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VariantCase {
    description: String,
    context: Context,
    toggle_name: String,
    expected_result: Value,
}

fn spec_dir() -> PathBuf {
    let dir = std::env::var_os("VEXIL_CLIENT_SPEC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../.test-deps/node_modules/@unleash/client-specification/specifications")
        });
    assert!(
        dir.join("index.json").is_file(),
        "the client specification is missing at {}: run `scripts/test` (it installs \
         @unleash/client-specification@6.1.0), or set VEXIL_CLIENT_SPEC_DIR",
        dir.display()
    );
    dir
}

/// A spec file's state is a features document, or (files 19 and 20) delta events applied to an empty one.
fn snapshot_of(state: &Value) -> Snapshot {
    let doc = if state.get("events").is_some() {
        let delta: DeltaDocument = serde_json::from_value(state.clone()).expect("delta document");
        let mut doc = FeaturesDocument::default();
        for event in delta.events {
            doc.apply(event);
        }
        doc
    } else {
        FeaturesDocument::from_json(&state.to_string()).expect("features document")
    };
    Snapshot::compile(&doc)
}

#[test]
fn client_specification() {
    let dir = spec_dir();
    let index: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let (mut passed, mut failed) = (0usize, Vec::new());
    for file in &index {
        let spec: SpecFile =
            serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        let snapshot = snapshot_of(&spec.state);
        for case in &spec.tests {
            let got = snapshot.is_enabled(&case.toggle_name, &case.context);
            if got == case.expected_result {
                passed += 1;
            } else {
                failed.push(format!(
                    "{} / {}: expected {}, got {got}",
                    spec.name, case.description, case.expected_result
                ));
            }
        }
        for case in &spec.variant_tests {
            let got =
                serde_json::to_value(snapshot.variant(&case.toggle_name, &case.context)).unwrap();
            if variant_agrees(&got, &case.expected_result) {
                passed += 1;
            } else {
                failed.push(format!(
                    "{} / {}: expected {}, got {got}",
                    spec.name, case.description, case.expected_result
                ));
            }
        }
    }
    for f in &failed {
        eprintln!("FAILED {f}");
    }
    // Written to the process's stdout directly, past the test harness's capture, so that every run shows it.
    let summary = format!(
        "client-specification: {passed} passed, {} failed\n",
        failed.len()
    );
    std::io::stdout().write_all(summary.as_bytes()).unwrap();
    assert!(
        failed.is_empty(),
        "{} client-specification cases failed",
        failed.len()
    );
    assert_eq!(passed, 279, "the suite has 279 cases");
}

/// Every field the case expects must match; `featureEnabled` (a deprecated alias) is ours to add.
fn variant_agrees(got: &Value, expected: &Value) -> bool {
    let (Some(got), Some(expected)) = (got.as_object(), expected.as_object()) else {
        return false;
    };
    expected.iter().all(|(k, v)| got.get(k) == Some(v))
        && got
            .keys()
            .all(|k| expected.contains_key(k) || k == "featureEnabled")
}
