//! OFREP (`/ofrep/v1/evaluate/flags[/{key}]`, `/ofrep/v1/events`) over real HTTP against a `ServingState`:
//! answers, the protocol's error shapes, ETag/304, the event stream, and the evaluations counted.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use vexil_serving::ServingState;

const SECOND: Duration = Duration::from_secs(1);

async fn evaluate(
    server: &Server,
    key: &str,
    token: Option<&str>,
    body: &str,
) -> reqwest::Response {
    let mut request = server
        .http
        .post(server.url(&format!("/ofrep/v1/evaluate/flags/{key}")))
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.send().await.unwrap()
}

async fn bulk(server: &Server, token: &str, body: &str, etag: Option<&str>) -> reqwest::Response {
    let mut request = server
        .http
        .post(server.url("/ofrep/v1/evaluate/flags"))
        .header("x-api-key", token)
        .body(body.to_owned());
    if let Some(etag) = etag {
        request = request.header("if-none-match", etag);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn single_flags_answer_value_variant_reason_and_metadata() {
    let server = Server::start(ServingState::new(false)).await;
    let answer = evaluate(&server, "on-for-all", Some(CLIENT), "{}").await;
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.json::<Value>().await.unwrap(),
        json!({"key": "on-for-all", "value": true, "reason": "STATIC",
            "metadata": {"project": "default"}})
    );
    let context = r#"{"context": {"targetingKey": "user-7", "plan": "beta"}}"#;
    let beta: Value = evaluate(&server, "beta-users", Some(FRONTEND), context)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (beta["value"].clone(), beta["reason"].clone()),
        (json!(true), json!("TARGETING_MATCH"))
    );
    let not_beta: Value = evaluate(
        &server,
        "beta-users",
        Some(CLIENT),
        r#"{"context":{"plan":"free"}}"#,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        (not_beta["value"].clone(), not_beta["reason"].clone()),
        (json!(false), json!("DEFAULT"))
    );
    let off: Value = evaluate(&server, "off", Some(CLIENT), "")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (off["value"].clone(), off["reason"].clone()),
        (json!(false), json!("DISABLED"))
    );
    let colour: Value = evaluate(&server, "colour", Some(CLIENT), context)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(colour["reason"], "SPLIT");
    let expected = if colour["variant"] == "blue" {
        "#00f"
    } else {
        "#f00"
    };
    assert_eq!(colour["value"], expected, "{colour}");
    let limits: Value = evaluate(&server, "limits", Some(CLIENT), "{}")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (limits["value"].clone(), limits["variant"].clone()),
        (json!({"max": 10}), json!("big"))
    );
    // The same answer as the frontend API's engine: `colour` for this user.
    let frontend: Value = server
        .http
        .get(server.url("/api/frontend/features/colour?userId=user-7"))
        .header("authorization", FRONTEND)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(frontend["variant"]["name"], colour["variant"]);
}

#[tokio::test]
async fn errors_follow_the_protocol() {
    let server = Server::start(ServingState::new(false)).await;
    let missing = evaluate(&server, "no-such-flag", Some(CLIENT), "{}").await;
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(
        (body["key"].clone(), body["errorCode"].clone()),
        (json!("no-such-flag"), json!("FLAG_NOT_FOUND"))
    );
    assert!(body["errorDetails"].is_string());
    // Out of the token's projects: not found either.
    let hidden = evaluate(&server, "on-for-all", Some(CLIENT_OTHER), "{}").await;
    assert_eq!(hidden.status(), 404);

    for (body, code) in [
        ("{not json", "PARSE_ERROR"),
        (r#"{"context": 3}"#, "INVALID_CONTEXT"),
        (r#"{"context": {"plan": {"nested": 1}}}"#, "INVALID_CONTEXT"),
        ("{}", "TARGETING_KEY_MISSING"),
    ] {
        let answer = evaluate(&server, "colour", Some(CLIENT), body).await;
        assert_eq!(answer.status(), 400, "{body}");
        let answer: Value = answer.json().await.unwrap();
        assert_eq!(answer["errorCode"], code, "{body}");
        assert_eq!(answer["key"], "colour");
        assert!(answer["errorDetails"].is_string());
    }

    for (token, status) in [(None, 401), (Some("unknown"), 401), (Some(ADMIN), 403)] {
        let answer = evaluate(&server, "on-for-all", token, "{}").await;
        assert_eq!(answer.status(), status);
        assert!(answer.bytes().await.unwrap().is_empty(), "no body");
    }
    let client_on_bulk = bulk(&server, CLIENT, "{}", None).await;
    assert_eq!(
        client_on_bulk.status(),
        403,
        "the bulk call takes frontend tokens"
    );
    assert!(client_on_bulk.bytes().await.unwrap().is_empty());
    let bad_bulk = bulk(&server, FRONTEND, "[1", None).await;
    assert_eq!(bad_bulk.status(), 400);
    let bad_bulk: Value = bad_bulk.json().await.unwrap();
    assert_eq!(bad_bulk["errorCode"], "PARSE_ERROR");
    assert!(bad_bulk.get("key").is_none());
}

#[tokio::test]
async fn bulk_answers_every_flag_with_an_etag_and_an_event_stream_that_announces_changes() {
    let server = Server::start(ServingState::new(false).counting_evaluations(true)).await;
    let context = r#"{"context": {"targetingKey": "user-7", "country": "se"}}"#;
    let first = bulk(&server, FRONTEND, context, None).await;
    assert_eq!(first.status(), 200);
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    let body: Value = first.json().await.unwrap();
    let keys: Vec<&str> = body["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "beta-users",
            "colour",
            "limits",
            "off",
            "on-for-all",
            "other-flag"
        ]
    );
    assert_eq!(
        body["flags"][5]["value"], true,
        "the segment matches country=se"
    );
    let stream = &body["eventStreams"][0];
    assert_eq!(stream["type"], "sse");
    let uri = stream["endpoint"]["requestUri"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(uri.starts_with("/ofrep/v1/events?channel="), "{uri}");
    assert!(
        !uri.contains("frontend-secret"),
        "the URL carries no secret"
    );

    // Without a targeting key, the flag that needs one fails alone.
    let anonymous: Value = bulk(&server, FRONTEND, "{}", None)
        .await
        .json()
        .await
        .unwrap();
    let colour = anonymous["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "colour")
        .unwrap();
    assert_eq!(colour["errorCode"], "TARGETING_KEY_MISSING");

    let same = bulk(&server, FRONTEND, context, Some(&etag)).await;
    assert_eq!(same.status(), 304);
    assert_eq!(same.headers()["etag"], etag.as_str());

    let events = server.http.get(server.url(&uri)).send().await.unwrap();
    assert_eq!(events.status(), 200);
    let mut events = SseReader::new(events);
    server.advance(|d| {
        flags_changed(
            d,
            vec![feature(
                json!({"name": "off", "project": "default", "enabled": true}),
            )],
            &[],
        )
    });
    let refetch = events.next(SECOND).await.unwrap();
    assert_eq!(refetch.event, "message");
    assert_eq!(refetch.id.as_deref(), Some("4"));
    let data = refetch.json();
    assert_eq!(data["type"], "refetchEvaluation");
    assert_eq!(data["etag"], "\"4\"");
    assert!(data["lastModified"].is_u64());
    let changed = bulk(&server, FRONTEND, context, Some(&etag)).await;
    assert_eq!(changed.status(), 200, "the answer changed");

    let unknown = server
        .http
        .get(server.url("/ofrep/v1/events?channel=0000"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 401);
}

#[tokio::test]
async fn evaluations_are_counted_like_the_frontend_apis() {
    let server = Server::start(ServingState::new(false).counting_evaluations(true)).await;
    let context = r#"{"context": {"targetingKey": "user-7"}}"#;
    for _ in 0..2 {
        assert_eq!(bulk(&server, FRONTEND, context, None).await.status(), 200);
    }
    assert_eq!(
        evaluate(&server, "off", Some(CLIENT), context)
            .await
            .status(),
        200
    );
    assert_eq!(
        evaluate(&server, "on-for-all", Some(CLIENT), context)
            .await
            .status(),
        200
    );
    let view = server.state.current.load_full().unwrap().environments["development"].clone();
    let mut counted = std::collections::BTreeMap::new();
    view.evaluations.harvest(&view.engine, |flag, yes, no| {
        counted.insert(flag.to_owned(), (yes, no));
    });
    assert_eq!(counted["on-for-all"], (3, 0), "{counted:?}");
    assert_eq!(counted["off"], (0, 3), "{counted:?}");
}

/// Browsers call the bulk route from other origins with `X-API-Key`: the preflight is answered without a
/// token, and answers carry CORS headers as `/api/frontend`'s do.
#[tokio::test]
async fn the_bulk_route_answers_cors_preflights() {
    let server = Server::start(ServingState::new(false)).await;
    let preflight = server
        .http
        .request(
            reqwest::Method::OPTIONS,
            server.url("/ofrep/v1/evaluate/flags"),
        )
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "x-api-key,content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    assert_eq!(
        preflight.headers()["access-control-allow-headers"],
        "x-api-key,content-type"
    );
    let answer = server
        .http
        .post(server.url("/ofrep/v1/evaluate/flags"))
        .header("origin", "https://app.example")
        .header("x-api-key", FRONTEND)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["access-control-allow-origin"], "*");
    assert_eq!(answer.headers()["access-control-expose-headers"], "ETag");
}
