//! Delta polling (`/api/client/delta`) and streaming (`/api/client/streaming`) over real HTTP against a
//! `ServingState` advanced by deltas, as the edge's subscriber and the control plane's publisher do.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use vexil_serving::ServingState;
use vexil_shared::token::sha256;

const SECOND: Duration = Duration::from_secs(1);

fn types(body: &Value) -> Vec<String> {
    body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

fn hydrated_names(body: &Value) -> Vec<String> {
    let events = body["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{body}");
    assert_eq!(events[0]["type"], "hydration");
    events[0]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn delta(server: &Server, token: &str, etag: Option<&str>) -> reqwest::Response {
    let mut request = server
        .http
        .get(server.url("/api/client/delta"))
        .header("authorization", token);
    if let Some(etag) = etag {
        request = request.header("if-none-match", etag);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn delta_polling_hydrates_then_answers_304_then_only_the_changes() {
    let server = Server::start(ServingState::new(false)).await;
    let first = delta(&server, CLIENT, None).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["etag"], "\"3\"");
    let body: Value = first.json().await.unwrap();
    assert_eq!(
        hydrated_names(&body),
        [
            "beta-users",
            "colour",
            "limits",
            "off",
            "on-for-all",
            "other-flag"
        ]
    );
    let hydration = &body["events"][0];
    assert_eq!(hydration["eventId"], 3);
    assert_eq!(hydration["segments"][0]["id"], 1);
    let other = hydration["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "other-flag")
        .unwrap();
    assert_eq!(
        other["strategies"][0]["segments"],
        json!([1]),
        "segments by id"
    );

    let unchanged = delta(&server, CLIENT, Some("\"3\"")).await;
    assert_eq!(unchanged.status(), 304);
    assert_eq!(unchanged.headers()["etag"], "\"3\"");

    let revision = server.advance(|d| {
        flags_changed(
            d,
            vec![feature(
                json!({"name": "on-for-all", "project": "default", "enabled": false}),
            )],
            &["beta-users"],
        );
        d.environments[0].upserted_segments = vec![vexil_proto::v1::Segment {
            id: 2,
            name: Some("new".to_owned()),
            constraints: vec![],
        }];
    });
    assert_eq!(revision, 4);
    let changed = delta(&server, CLIENT, Some("\"3\"")).await;
    assert_eq!(changed.status(), 200);
    assert_eq!(changed.headers()["etag"], "\"4\"");
    let body: Value = changed.json().await.unwrap();
    assert_eq!(
        types(&body),
        ["segment-updated", "feature-removed", "feature-updated"],
        "{body}"
    );
    let events = body["events"].as_array().unwrap();
    assert_eq!(events[0]["segment"]["id"], 2);
    assert_eq!(events[1]["featureName"], "beta-users");
    assert_eq!(events[1]["project"], "default");
    assert_eq!(events[2]["feature"]["name"], "on-for-all");
    assert_eq!(events[2]["feature"]["enabled"], false);
    assert!(events.iter().all(|e| e["eventId"] == 4));

    // A revision the server never served, or none: a hydration.
    let unknown: Value = delta(&server, CLIENT, Some("\"99\""))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(hydrated_names(&unknown).len(), 5);
    // A token of another project sees nothing of project default's changes.
    let scoped: Value = delta(&server, CLIENT_OTHER, Some("\"3\""))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(types(&scoped), ["segment-updated"], "{scoped}");
    // Frontend and admin tokens are refused as on /api/client/features.
    assert_eq!(delta(&server, FRONTEND, None).await.status(), 403);
    assert_eq!(delta(&server, "nope", None).await.status(), 401);
}

async fn stream(server: &Server, token: &str, last_event_id: Option<&str>) -> reqwest::Response {
    let mut request = server
        .http
        .get(server.url("/api/client/streaming"))
        .header("authorization", token);
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    response
}

#[tokio::test]
async fn a_stream_hydrates_then_sends_each_change_and_ends_when_its_token_is_revoked() {
    let server = Server::start(ServingState::new(false)).await;
    let mut events = SseReader::new(stream(&server, CLIENT, None).await);
    let connected = events.next(SECOND).await.unwrap();
    assert_eq!(connected.event, "unleash-connected");
    assert_eq!(connected.id.as_deref(), Some("3"));
    assert_eq!(hydrated_names(&connected.json()).len(), 6);

    let switched = Instant::now();
    server.advance(|d| {
        flags_changed(
            d,
            vec![feature(
                json!({"name": "off", "project": "default", "enabled": true}),
            )],
            &[],
        )
    });
    let updated = events.next(SECOND).await.unwrap();
    assert!(switched.elapsed() < SECOND);
    assert_eq!(updated.event, "unleash-updated");
    assert_eq!(updated.id.as_deref(), Some("4"));
    let body = updated.json();
    assert_eq!(types(&body), ["feature-updated"]);
    assert_eq!(body["events"][0]["feature"]["name"], "off");
    assert_eq!(body["events"][0]["feature"]["enabled"], true);

    // A change out of the token's environment sends nothing; the next one in scope does.
    server.advance(|d| {
        d.environments.push(vexil_proto::v1::EnvironmentDelta {
            environment: "production".to_owned(),
            upserted_features: vec![feature(json!({"name": "prod-only", "enabled": true})).into()],
            ..Default::default()
        })
    });
    server.advance(|d| flags_changed(d, vec![], &["colour"]));
    let removed = events.next(SECOND).await.unwrap();
    assert_eq!(removed.id.as_deref(), Some("6"));
    assert_eq!(types(&removed.json()), ["feature-removed"]);

    // A reconnection with Last-Event-ID receives only what it missed.
    let mut resumed = SseReader::new(stream(&server, CLIENT, Some("4")).await);
    let caught_up = resumed.next(SECOND).await.unwrap();
    assert_eq!(caught_up.event, "unleash-connected");
    assert_eq!(caught_up.id.as_deref(), Some("6"));
    assert_eq!(types(&caught_up.json()), ["feature-removed"]);

    // Revoking the token ends both streams.
    server.advance(|d| d.removed_tokens = vec![sha256(CLIENT).to_vec()]);
    assert!(events.next(SECOND).await.is_none(), "the stream ended");
    assert!(resumed.next(SECOND).await.is_none(), "the stream ended");
    assert_eq!(server.state.streams.open(), 0, "their slots are free");
}

#[tokio::test]
async fn past_max_streams_a_client_is_told_to_poll_and_closing_ends_the_streams() {
    let server = Server::start(ServingState::new(false).with_max_streams(1)).await;
    let mut first = SseReader::new(stream(&server, CLIENT, None).await);
    assert_eq!(first.next(SECOND).await.unwrap().event, "unleash-connected");
    let mut second = SseReader::new(stream(&server, CLIENT, None).await);
    let told = second.next(SECOND).await.unwrap();
    assert_eq!(
        (told.event.as_str(), told.data.as_str()),
        ("fetch-mode", "polling")
    );
    assert!(second.next(SECOND).await.is_none());

    server.state.close_streams();
    assert!(first.next(SECOND).await.is_none(), "the stream ended");
    assert_eq!(server.state.streams.open(), 0);
}

#[tokio::test]
async fn a_stream_ends_when_its_token_expires() {
    let server = Server::start(ServingState::new(false)).await;
    let secret = "*:development.short-lived";
    let expires = vexil_shared::time::now_ms() + 600;
    server.advance(|d| {
        d.upserted_tokens = vec![vexil_proto::v1::TokenGrant {
            sha256: sha256(secret).to_vec(),
            kind: vexil_proto::v1::TokenKind::Client as i32,
            projects: vec!["*".to_owned()],
            environment: "development".to_owned(),
            expires_at_ms: Some(expires),
        }]
    });
    let mut events = SseReader::new(stream(&server, secret, None).await);
    assert_eq!(
        events.next(SECOND).await.unwrap().event,
        "unleash-connected"
    );
    assert!(events.next(2 * SECOND).await.is_none(), "ended at expiry");
}

/// Streams of different scopes woken by one revision each get their own scope's events (the streams share
/// serialized events only within one exact scope).
#[tokio::test]
async fn streams_of_different_scopes_get_their_own_events() {
    let server = Server::start(ServingState::new(false)).await;
    let mut all = SseReader::new(stream(&server, CLIENT, None).await);
    let mut other = SseReader::new(stream(&server, CLIENT_OTHER, None).await);
    let mut all_again = SseReader::new(stream(&server, CLIENT, None).await);
    for events in [&mut all, &mut other, &mut all_again] {
        assert_eq!(
            events.next(SECOND).await.unwrap().event,
            "unleash-connected"
        );
    }
    server.advance(|d| {
        flags_changed(
            d,
            vec![feature(
                json!({"name": "on-for-all", "project": "default", "enabled": false}),
            )],
            &[],
        );
        d.environments[0].upserted_segments = vec![vexil_proto::v1::Segment {
            id: 2,
            name: Some("new".to_owned()),
            constraints: vec![],
        }];
    });
    let seen_all = all.next(SECOND).await.unwrap().json();
    let seen_other = other.next(SECOND).await.unwrap().json();
    let seen_again = all_again.next(SECOND).await.unwrap().json();
    assert_eq!(types(&seen_all), ["segment-updated", "feature-updated"]);
    assert_eq!(seen_again, seen_all);
    assert_eq!(types(&seen_other), ["segment-updated"], "{seen_other}");
}

/// Streams connecting at one revision share their first event only within one exact scope and
/// Last-Event-ID: a new client gets a hydration, a resuming one what it missed, another scope its own.
#[tokio::test]
async fn streams_connecting_at_one_revision_get_their_own_first_event() {
    let server = Server::start(ServingState::new(false)).await;
    server.advance(|d| {
        flags_changed(
            d,
            vec![feature(
                json!({"name": "off", "project": "default", "enabled": true}),
            )],
            &[],
        )
    });
    let mut fresh = SseReader::new(stream(&server, CLIENT, None).await);
    let mut resumed = SseReader::new(stream(&server, CLIENT, Some("3")).await);
    let mut other = SseReader::new(stream(&server, CLIENT_OTHER, None).await);
    let mut fresh_again = SseReader::new(stream(&server, CLIENT, None).await);
    let fresh = fresh.next(SECOND).await.unwrap().json();
    let resumed = resumed.next(SECOND).await.unwrap().json();
    let other = other.next(SECOND).await.unwrap().json();
    let fresh_again = fresh_again.next(SECOND).await.unwrap().json();
    assert_eq!(hydrated_names(&fresh).len(), 6, "{fresh}");
    assert_eq!(types(&resumed), ["feature-updated"], "{resumed}");
    assert_ne!(hydrated_names(&other), hydrated_names(&fresh), "{other}");
    assert_eq!(fresh_again, fresh);
}
