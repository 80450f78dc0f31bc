//! Resource limits set with `--limit-*` flags (and an environment variable), enforced on create with 400
//! `ExceedsLimitError` naming the limit, on SQLite and on Postgres. A refused write changes nothing.

use crate::database::TestDb;
use crate::server::Server;
use serde_json::json;

crate::on_sqlite_and_postgres!(every_limit_is_enforced_on_create);

const DEV: &str = "/api/admin/projects/default/features/f2/environments/development";

async fn every_limit_is_enforced_on_create(db: TestDb) {
    let server = Server::start(
        &db,
        &[
            "--limit-projects",
            "2",
            "--limit-environments",
            "3",
            "--limit-feature-flags",
            "2",
            "--limit-feature-environment-strategies",
            "2",
            "--limit-constraints",
            "1",
            "--limit-constraint-values",
            "2",
            "--limit-segments",
            "1",
            "--limit-segment-values",
            "2",
            "--limit-strategy-segments",
            "1",
            "--limit-release-templates",
            "1",
        ],
    )
    .await;
    let revision_events = || async {
        server.get("/api/admin/events?limit=1").await.expect(200)["totalEvents"]
            .as_i64()
            .unwrap()
    };
    let exceeds = |answer: &crate::server::Answer, limit: &str| {
        let message = answer.expect_error(400, "ExceedsLimitError");
        assert!(
            message.contains(&format!("The {limit} limit")),
            "{limit}: {message}"
        );
    };

    // projects: `default` + one.
    server
        .post("/api/admin/projects", json!({"id": "p2", "name": "P2"}))
        .await
        .expect(201);
    let before = revision_events().await;
    exceeds(
        &server
            .post("/api/admin/projects", json!({"id": "p3", "name": "P3"}))
            .await,
        "projects",
    );
    assert_eq!(
        revision_events().await,
        before,
        "a refused write changes nothing"
    );
    server
        .get("/api/admin/projects/p3")
        .await
        .expect_error(404, "NotFoundError");

    // environments: development, production + one.
    server
        .post(
            "/api/admin/environments",
            json!({"name": "staging", "type": "test"}),
        )
        .await
        .expect(201);
    exceeds(
        &server
            .post(
                "/api/admin/environments",
                json!({"name": "qa", "type": "test"}),
            )
            .await,
        "environments",
    );

    // featureFlags: archived flags do not count; reviving one counts again.
    for name in ["f1", "f2"] {
        server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": name}),
            )
            .await
            .expect(201);
    }
    exceeds(
        &server
            .post(
                "/api/admin/projects/default/features",
                json!({"name": "f3"}),
            )
            .await,
        "featureFlags",
    );
    server
        .delete("/api/admin/projects/default/features/f1")
        .await
        .expect(202);
    server
        .post(
            "/api/admin/projects/default/features",
            json!({"name": "f3"}),
        )
        .await
        .expect(201);
    exceeds(
        &server.post_empty("/api/admin/archive/revive/f1").await,
        "featureFlags",
    );

    // constraints and constraintValues per strategy.
    let in_list =
        |values: &[&str]| json!({"contextName": "userId", "operator": "IN", "values": values});
    exceeds(
        &server
            .post(
                &format!("{DEV}/strategies"),
                json!({"name": "default", "constraints": [in_list(&["a"]), in_list(&["b"])]}),
            )
            .await,
        "constraints",
    );
    exceeds(
        &server
            .post(
                &format!("{DEV}/strategies"),
                json!({"name": "default", "constraints": [in_list(&["a", "b", "c"])]}),
            )
            .await,
        "constraintValues",
    );

    // segments, segmentValues, strategySegments.
    exceeds(
        &server
            .post(
                "/api/admin/segments",
                json!({"name": "big", "constraints": [in_list(&["a", "b"]), in_list(&["c"])]}),
            )
            .await,
        "segmentValues",
    );
    let segment = server
        .post(
            "/api/admin/segments",
            json!({"name": "s1", "constraints": [in_list(&["a", "b"])]}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    exceeds(
        &server
            .post(
                "/api/admin/segments",
                json!({"name": "s2", "constraints": []}),
            )
            .await,
        "segments",
    );
    exceeds(
        &server
            .put(
                &format!("/api/admin/segments/{segment}"),
                json!({"name": "s1", "constraints": [in_list(&["a", "b", "c"])]}),
            )
            .await,
        "segmentValues",
    );
    exceeds(
        &server
            .post(
                &format!("{DEV}/strategies"),
                json!({"name": "default", "segments": [segment, segment]}),
            )
            .await,
        "strategySegments",
    );

    // featureEnvironmentStrategies: two, then no third.
    server
        .post(
            &format!("{DEV}/strategies"),
            json!({"name": "default", "constraints": [in_list(&["a", "b"])], "segments": [segment]}),
        )
        .await
        .expect(200);
    server
        .post(&format!("{DEV}/strategies"), json!({"name": "default"}))
        .await
        .expect(200);
    let before = revision_events().await;
    exceeds(
        &server
            .post(&format!("{DEV}/strategies"), json!({"name": "default"}))
            .await,
        "featureEnvironmentStrategies",
    );
    assert_eq!(revision_events().await, before);
    assert_eq!(
        server
            .get(&format!("{DEV}/strategies"))
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Release templates: one (an archived one does not count); a template's milestones are bounded too.
    let templates = "/api/admin/release-plan-templates";
    let first = server.post(templates, json!({"name": "first"})).await;
    let first = first.expect(200)["id"].as_str().unwrap().to_owned();
    let before = revision_events().await;
    exceeds(
        &server.post(templates, json!({"name": "second"})).await,
        "releaseTemplates",
    );
    assert_eq!(revision_events().await, before);
    let limits = server.get("/api/admin/ui-config").await.expect(200)["resourceLimits"].clone();
    assert_eq!(limits["releaseTemplates"], 1);
    server
        .post_empty(&format!("{templates}/archive/{first}"))
        .await
        .expect(200);
    let many: Vec<_> = (0..21)
        .map(|index| json!({"name": format!("step {index}"), "sortOrder": index}))
        .collect();
    let message = server
        .post(templates, json!({"name": "second", "milestones": many}))
        .await
        .expect_error(400, "ValidationError");
    assert!(message.contains("at most 20 milestones"), "{message}");
    server
        .post(templates, json!({"name": "second"}))
        .await
        .expect(200);
}

/// The start-up tokens count against `apiTokens`, here set through its environment variable: three tokens
/// over a limit of two stop the start with a message naming the limit.
#[tokio::test]
async fn the_api_token_limit_applies_to_start_up_tokens() {
    let db = TestDb::sqlite().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vexil-control-plane"))
        .args(["--listen", "127.0.0.1:0", "--database-url", &db.url])
        .args(["--init-admin-tokens", "*:*.one,*:*.two,*:*.three"])
        .env("VEXIL_LIMIT_API_TOKENS", "2")
        .env("VEXIL_GRPC_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("apiTokens limit is 2"), "{stderr}");
}
