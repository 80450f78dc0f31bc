//! How much of Unleash 8.2 OSS's API Vexil serves: the operations of Unleash's OpenAPI document
//! (`unleash_8_2_operations.txt`) that Vexil's `/docs/openapi.json` has with the same method and path, path
//! parameters compared by position only (`{featureName}` = `{feature}`). The number is stated here, so a
//! route added or lost changes it on purpose.

use crate::database::TestDb;
use crate::server::Server;
use std::collections::BTreeSet;

/// Unleash 8.2 operations Vexil serves with the same method and path.
const SERVED_UNLEASH_OPERATIONS: usize = 211;

/// `METHOD /a/{x}/b` → `METHOD /a/{}/b`.
fn normalised(operation: &str) -> String {
    operation
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') && segment.ends_with('}') {
                "{}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn unleash_8_2_operations_served_with_the_same_method_and_path() {
    let db = TestDb::sqlite().await;
    let server = Server::start(&db, &[]).await;
    let document = server
        .send("GET", "/docs/openapi.json", None, None)
        .await
        .expect(200)
        .clone();
    let mut vexil = BTreeSet::new();
    for (path, methods) in document["paths"].as_object().expect("paths") {
        for method in methods.as_object().expect("methods").keys() {
            vexil.insert(normalised(&format!("{} {path}", method.to_uppercase())));
        }
    }
    let unleash: Vec<&str> = include_str!("unleash_8_2_operations.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .collect();
    assert_eq!(
        unleash.len(),
        211,
        "Unleash 8.2's document has 211 operations"
    );
    let served: Vec<&str> = unleash
        .iter()
        .copied()
        .filter(|operation| vexil.contains(&normalised(operation)))
        .collect();
    assert_eq!(
        served.len(),
        SERVED_UNLEASH_OPERATIONS,
        "Vexil serves {} of Unleash 8.2's operations:\n{}",
        served.len(),
        served.join("\n")
    );
}
