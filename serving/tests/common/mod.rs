//! A `vexil-serving` router over a real `ServingState`, served on 127.0.0.1:0 by `serve::serve`, and the
//! snapshot changes the tests push into it.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use vexil_proto::v1;
use vexil_serving::{ServingState, SnapshotChange};
use vexil_shared::model::{Feature, FeaturesDocument, Segment};
use vexil_shared::token::sha256;
use vexil_shared::CompileOptions;

pub const CLIENT: &str = "*:development.client-secret";
pub const CLIENT_OTHER: &str = "other:development.client-other";
pub const FRONTEND: &str = "*:development.frontend-secret";
pub const ADMIN: &str = "*:*.admin-secret";

pub fn feature(value: Value) -> Feature {
    serde_json::from_value(value).expect("a feature")
}

/// Flags of projects `default` and `other` in `development`, one segment.
pub fn document() -> FeaturesDocument {
    FeaturesDocument {
        version: 2,
        features: vec![
            feature(
                json!({"name": "on-for-all", "project": "default", "enabled": true,
                "strategies": [{"name": "default"}]}),
            ),
            feature(
                json!({"name": "beta-users", "project": "default", "enabled": true,
                "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "default", "groupId": "b"},
                    "constraints": [{"contextName": "plan", "operator": "IN", "values": ["beta"]}]}]}),
            ),
            feature(
                json!({"name": "colour", "project": "default", "enabled": true,
                "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "userId", "groupId": "colour"}}],
                "variants": [
                    {"name": "blue", "weight": 500, "stickiness": "userId", "payload": {"type": "string", "value": "#00f"}},
                    {"name": "red", "weight": 500, "stickiness": "userId", "payload": {"type": "string", "value": "#f00"}}]}),
            ),
            feature(
                json!({"name": "limits", "project": "default", "enabled": true,
                "strategies": [{"name": "default", "variants": [
                    {"name": "big", "weight": 1000, "stickiness": "default", "payload": {"type": "json", "value": "{\"max\":10}"}}]}]}),
            ),
            feature(
                json!({"name": "off", "project": "default", "enabled": false,
                "strategies": [{"name": "default"}]}),
            ),
            feature(
                json!({"name": "other-flag", "project": "other", "enabled": true,
                "strategies": [{"name": "default", "segments": [1]}]}),
            ),
        ],
        segments: vec![
            serde_json::from_value::<Segment>(json!({"id": 1, "name": "sweden",
            "constraints": [{"contextName": "country", "operator": "IN", "values": ["se"]}]}))
            .unwrap(),
        ],
    }
}

pub fn grant(
    secret: &str,
    kind: v1::TokenKind,
    projects: &[&str],
    environment: &str,
) -> v1::TokenGrant {
    v1::TokenGrant {
        sha256: sha256(secret).to_vec(),
        kind: kind as i32,
        projects: projects.iter().map(|p| (*p).to_owned()).collect(),
        environment: environment.to_owned(),
        expires_at_ms: None,
    }
}

pub fn tokens() -> Vec<v1::TokenGrant> {
    vec![
        grant(CLIENT, v1::TokenKind::Client, &["*"], "development"),
        grant(
            CLIENT_OTHER,
            v1::TokenKind::Client,
            &["other"],
            "development",
        ),
        grant(FRONTEND, v1::TokenKind::Frontend, &["*"], "development"),
        grant(ADMIN, v1::TokenKind::Admin, &["*"], "*"),
    ]
}

/// The first snapshot, at revision 3.
pub fn full() -> v1::Full {
    v1::Full {
        revision: 3,
        environments: vec![vexil_proto::environment_state("development", document())],
        tokens: tokens(),
        settings: None,
    }
}

pub struct Server {
    pub state: Arc<ServingState>,
    pub address: SocketAddr,
    pub http: reqwest::Client,
}

impl Server {
    pub async fn start(state: ServingState) -> Server {
        Server::start_with(state, full()).await
    }

    /// The same, from another first snapshot.
    pub async fn start_with(state: ServingState, first: v1::Full) -> Server {
        let state = Arc::new(state);
        state
            .advance(SnapshotChange::Full(first), &CompileOptions::default())
            .expect("the first snapshot");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = vexil_serving::routes(state.clone());
        tokio::spawn(vexil_serving::serve::serve(
            listener,
            app,
            Duration::from_secs(5),
            std::future::pending(),
        ));
        Server {
            state,
            address,
            http: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Applies a delta from the served revision to the next one.
    pub fn advance(&self, delta: impl FnOnce(&mut v1::Delta)) -> u64 {
        let from = self.state.current.load().as_ref().unwrap().revision;
        let mut change = v1::Delta {
            from_revision: from,
            to_revision: from + 1,
            ..Default::default()
        };
        delta(&mut change);
        self.state
            .advance(SnapshotChange::Delta(change), &CompileOptions::default())
            .expect("the delta applies");
        from + 1
    }
}

/// A change of flags in `development`.
pub fn flags_changed(delta: &mut v1::Delta, upserted: Vec<Feature>, removed: &[&str]) {
    delta.environments.push(v1::EnvironmentDelta {
        environment: "development".to_owned(),
        upserted_features: upserted.into_iter().map(Into::into).collect(),
        removed_features: removed.iter().map(|n| (*n).to_owned()).collect(),
        ..Default::default()
    });
}

/// One server-sent event.
#[derive(Debug, Default, Clone)]
pub struct SseEvent {
    pub event: String,
    pub id: Option<String>,
    pub data: String,
}

impl SseEvent {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).expect("JSON data")
    }
}

/// Reads a `text/event-stream` body event by event (comments skipped).
pub struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> SseReader {
        SseReader {
            response,
            buffer: String::new(),
        }
    }

    /// The next event within `limit`; `None` when the stream ended.
    pub async fn next(&mut self, limit: Duration) -> Option<SseEvent> {
        tokio::time::timeout(limit, self.next_event())
            .await
            .expect("an event in time")
    }

    async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    event: "message".to_owned(),
                    ..Default::default()
                };
                let mut data = Vec::new();
                let mut any = false;
                for line in block.lines() {
                    if line.starts_with(':') || line.is_empty() {
                        continue;
                    }
                    any = true;
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "event" => event.event = value.to_owned(),
                        "id" => event.id = Some(value.to_owned()),
                        "data" => data.push(value.to_owned()),
                        _ => {}
                    }
                }
                if any {
                    event.data = data.join("\n");
                    return Some(event);
                }
                continue;
            }
            let chunk = self.response.chunk().await.ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
