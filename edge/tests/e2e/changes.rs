//! Changes pushed to real SDKs by the real binaries: `unleash-client` streaming (`/api/client/streaming`) and
//! delta polling (`/api/client/delta`) from an edge and from the control plane, OpenFeature's server SDK
//! with the OFREP provider (`/ofrep/v1/evaluate/flags/{key}`) and its web SDK with the OFREP web provider
//! (`/ofrep/v1/evaluate/flags`, refreshed through `/ofrep/v1/events`) on an edge. Each agrees with `vexil-edge eval`
//! for the twelve contexts of `sdk.rs`; a switch made on the admin API reaches a streaming SDK, whose own
//! refresh is ten minutes away, within a second of the admin API's 2xx.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::processes::*;
use crate::sdk::*;

/// unleash-client's own polling, far away: only the stream can bring a change in time.
const TEN_MINUTES_MS: &str = "600000";

/// The pinned OpenFeature packages, as `scripts/test` lists them.
const OPENFEATURE_SERVER_SDK: (&str, &str) = ("@openfeature/server-sdk", "1.23.0");
const OFREP_PROVIDER: (&str, &str) = ("@openfeature/ofrep-provider", "0.1.3");
const OPENFEATURE_WEB_SDK: (&str, &str) = ("@openfeature/web-sdk", "1.10.0");
const OFREP_WEB_PROVIDER: (&str, &str) = ("@openfeature/ofrep-web-provider", "0.4.3");

/// Switches `SWITCHED` on or off on the admin API; returns when the admin API answered 2xx.
async fn switch(control_plane: &Process, on: bool) -> Instant {
    let answer = admin(
        control_plane,
        "POST",
        &format!(
            "/api/admin/projects/default/features/{SWITCHED}/environments/development/{}",
            if on { "on" } else { "off" }
        ),
        None,
    )
    .await;
    assert!(answer.status < 300, "{}", answer.body);
    Instant::now()
}

/// Waits until the SDK reports `SWITCHED` as `on`; how long that took from `since`.
async fn seen_within(sdk: &mut NodeSdk, on: bool, since: Instant, limit: Duration) -> Duration {
    loop {
        if sdk.is_enabled(SWITCHED).await == on {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < limit,
            "the SDK did not see {SWITCHED} {} within {limit:?}",
            if on { "on" } else { "off" }
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn streaming_sdk(base: &str) -> NodeSdk {
    let url = format!("{base}/api");
    NodeSdk::start(
        "server-sdk.cjs",
        &[&url, CLIENT_TOKEN, TEN_MINUTES_MS, "0", "streaming"],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_unleash_client_on_an_edge_sees_a_switch_within_a_second_and_catches_up_after_a_restart(
) {
    require_package(NODE_CLIENT);
    let (_db, control_plane, mut edge) = stack().await;
    let mut sdk = streaming_sdk(&edge.base).await;
    assert_agrees_with_eval(&mut sdk, &control_plane, None).await;
    assert!(sdk.is_enabled(SWITCHED).await);
    let switched = switch(&control_plane, false).await;
    let took = seen_within(&mut sdk, false, switched, Duration::from_secs(1)).await;
    eprintln!("admin 2xx → streaming SDK through an edge: {took:?}");

    // The edge goes away; a change is made meanwhile; an edge comes back at the same address. The SDK
    // reconnects (its EventSource retries after about 2 s) with Last-Event-ID and catches up.
    let address = edge.base.trim_start_matches("http://").to_owned();
    edge.kill();
    let switched = switch(&control_plane, true).await;
    let _edge = Process::edge_at(&[control_plane.grpc()], Some(EDGE_TOKEN), &address, &[]);
    seen_within(&mut sdk, true, switched, Duration::from_secs(20)).await;
    // And it still streams from the new edge.
    let switched = switch(&control_plane, false).await;
    seen_within(&mut sdk, false, switched, Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_unleash_client_on_the_control_plane_sees_a_switch_within_a_second() {
    require_package(NODE_CLIENT);
    let (_db, control_plane, _edge) = stack().await;
    let mut sdk = streaming_sdk(&control_plane.base).await;
    assert_agrees_with_eval(&mut sdk, &control_plane, None).await;
    let switched = switch(&control_plane, false).await;
    let took = seen_within(&mut sdk, false, switched, Duration::from_secs(1)).await;
    eprintln!("admin 2xx → streaming SDK on the control plane: {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delta_polling_unleash_client_gets_304_while_nothing_changes_then_the_change() {
    require_package(NODE_CLIENT);
    let (_db, control_plane, edge) = stack().await;
    for base in [&edge.base, &control_plane.base] {
        let url = format!("{base}/api");
        let mut sdk =
            NodeSdk::start("server-sdk.cjs", &[&url, CLIENT_TOKEN, "200", "0", "delta"]).await;
        assert_agrees_with_eval(&mut sdk, &control_plane, None).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let answer = sdk.ask(None, &[SWITCHED]).await;
        assert!(
            answer["unchanged"].as_u64().unwrap_or(0) >= 1,
            "unchanged polls are answered 304: {answer}"
        );
        let on = sdk.is_enabled(SWITCHED).await;
        let switched = switch(&control_plane, !on).await;
        seen_within(&mut sdk, !on, switched, Duration::from_secs(2)).await;
    }
}

/// What `vexil-edge eval`'s toggle for a flag means as an OFREP answer: the type the flag answers in and its
/// value (a variant's payload by type, else whether it is on).
fn expected_ofrep(toggle: Option<&Value>) -> (&'static str, Value) {
    let Some(toggle) = toggle else {
        return ("boolean", json!(false));
    };
    let variant = &toggle["variant"];
    if variant["enabled"] != true {
        return ("boolean", json!(true));
    }
    let payload = &variant["payload"];
    match payload["type"].as_str() {
        Some("json") => (
            "object",
            serde_json::from_str(payload["value"].as_str().unwrap_or("null"))
                .unwrap_or(Value::Null),
        ),
        Some("number") => (
            "number",
            payload["value"]
                .as_str()
                .unwrap_or("")
                .parse::<f64>()
                .map_or(Value::Null, |n| json!(n)),
        ),
        Some(_) => ("string", payload["value"].clone()),
        None => ("string", variant["name"].clone()),
    }
}

/// Asks an OpenFeature driver (`ofrep-sdk.cjs`, `ofrep-web-sdk.cjs`) about every flag for the twelve contexts
/// and compares each typed answer with `vexil-edge eval`'s on the same context (the caller's address added,
/// as the server does when the context has none).
async fn assert_openfeature_agrees_with_eval(sdk: &mut NodeSdk, control_plane: &Process) {
    let mut used = Vec::new();
    let mut reported = Vec::new();
    for context in contexts() {
        // OpenFeature's context: the targeting key, and every other field at the top level.
        let mut evaluation =
            json!({"targetingKey": context["userId"], "sessionId": context["sessionId"]});
        if let Some(address) = context.get("remoteAddress") {
            evaluation["remoteAddress"] = address.clone();
        }
        for (key, value) in context["properties"].as_object().into_iter().flatten() {
            evaluation[key] = value.clone();
        }
        let answer = sdk.ask(Some(&evaluation), FLAGS).await;
        let mut effective = context.clone();
        if effective.get("remoteAddress").is_none() {
            effective["remoteAddress"] = json!("127.0.0.1");
        }
        used.push(effective);
        reported.push(answer["results"].clone());
    }
    let expected = eval_expected(control_plane, &used).await;
    let mut kinds = Vec::new();
    for ((context, results), toggles) in used.iter().zip(&reported).zip(&expected) {
        for (flag, result) in FLAGS.iter().zip(results.as_array().expect("results")) {
            let toggle = toggles
                .as_array()
                .expect("eval line")
                .iter()
                .find(|toggle| toggle["name"] == *flag);
            let (kind, value) = expected_ofrep(toggle);
            let answer = &result[kind];
            assert!(
                answer["errorCode"].is_null(),
                "flag {flag}, context {context}: {answer}"
            );
            assert_eq!(
                answer["value"], value,
                "flag {flag}, context {context}: OpenFeature (left) and vexil-edge eval (right) disagree"
            );
            // The SDK's variant: the chosen one's name, none (null) without one.
            let chosen = toggle.filter(|toggle| toggle["variant"]["enabled"] == true);
            assert_eq!(
                answer["variant"],
                chosen.map_or(Value::Null, |toggle| toggle["variant"]["name"].clone()),
                "flag {flag}, context {context}: {answer}"
            );
            kinds.push(kind);
        }
    }
    for kind in ["boolean", "string", "object"] {
        assert!(
            kinds.contains(&kind),
            "no flag answered a {kind}: {kinds:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openfeature_with_the_ofrep_provider_on_an_edge_agrees_with_eval() {
    require_package(OPENFEATURE_SERVER_SDK);
    require_package(OFREP_PROVIDER);
    let (_db, control_plane, edge) = stack().await;
    let mut sdk = NodeSdk::start("ofrep-sdk.cjs", &[&edge.base, CLIENT_TOKEN]).await;
    assert_openfeature_agrees_with_eval(&mut sdk, &control_plane).await;
    // An unknown flag: OpenFeature's FLAG_NOT_FOUND, the default value.
    let answer = sdk
        .ask(Some(&json!({"targetingKey": "alice"})), &["no-such-flag"])
        .await;
    assert_eq!(
        answer["results"][0]["boolean"]["errorCode"],
        "FLAG_NOT_FOUND"
    );
    assert_eq!(answer["results"][0]["boolean"]["value"], false);
}

/// The web provider evaluates from its bulk cache; with polling off, only the event stream the bulk answer
/// names can refresh it: a switch on the admin API must reach it within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openfeature_web_provider_agrees_with_eval_and_its_event_stream_refreshes_it() {
    require_package(OPENFEATURE_WEB_SDK);
    require_package(OFREP_WEB_PROVIDER);
    require_package(NODE_CLIENT);
    let (_db, control_plane, edge) = stack().await;
    let mut sdk = NodeSdk::start("ofrep-web-sdk.cjs", &[&edge.base, FRONTEND_TOKEN]).await;
    assert_openfeature_agrees_with_eval(&mut sdk, &control_plane).await;
    let web_on = |answer: &Value| answer["results"][0]["boolean"]["value"] == true;
    assert!(web_on(&sdk.ask(None, &[SWITCHED]).await));
    let switched = switch(&control_plane, false).await;
    loop {
        if !web_on(&sdk.ask(None, &[SWITCHED]).await) {
            break;
        }
        assert!(
            switched.elapsed() < Duration::from_secs(1),
            "the web provider's cache still has {SWITCHED} on a second after the switch"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eprintln!(
        "admin 2xx → OFREP web provider's cache refreshed through its event stream: {:?}",
        switched.elapsed()
    );
}
