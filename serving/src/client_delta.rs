//! Changes pushed to server SDKs (Unleash's delta format, client specification 19 and 20): delta polling
//! (`GET /api/client/delta`, `If-None-Match: "<revision>"`) and streaming (`GET /api/client/streaming`,
//! server-sent events). Both send what changed in the token's scope since the client's revision, as
//! `feature-updated`, `feature-removed`, `segment-updated` and `segment-removed` events carrying the current
//! state from the snapshot, or one `hydration` event when the client has no revision or one the change feed
//! no longer keeps ([`crate::change_feed`]). Strategies reference segments by id (the SDKs ask for spec 5.2.0).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::header::IF_NONE_MATCH;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;
use vexil_shared::model::{Feature, Segment};
use vexil_shared::ApiError;

use crate::change_stream::{sse_event, ChangeWatch, OpenStream};
use crate::client_api::{
    client_feature, filter_of, name_visible, project_visible, query_key, visible, Filter,
    SegmentMode,
};
use crate::extract::{AcceptEncoding, ClientScope, Scope};
use crate::response::{encoded_json_response, insert_etag, not_modified};
use crate::state::ServingState;
use crate::stream_response::{event_response, stream_response};

/// One event of the delta format.
#[derive(Debug, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum DeltaEvent<'s> {
    Hydration {
        event_id: u64,
        features: Vec<Feature>,
        segments: Vec<&'s Segment>,
    },
    FeatureUpdated {
        event_id: u64,
        feature: Feature,
    },
    FeatureRemoved {
        event_id: u64,
        feature_name: String,
        project: String,
    },
    SegmentUpdated {
        event_id: u64,
        segment: &'s Segment,
    },
    SegmentRemoved {
        event_id: u64,
        segment_id: i64,
    },
}

/// `{"events":[…]}`.
#[derive(Debug, Serialize)]
pub struct DeltaBody<'s> {
    pub events: Vec<DeltaEvent<'s>>,
}

/// The events that bring a client at `since` (none: a new client) to `scope`'s snapshot. Every event carries
/// the snapshot's revision as its `eventId`.
pub(crate) fn delta_events<'s>(
    scope: &'s Scope,
    filter: &Filter,
    since: Option<u64>,
) -> Vec<DeltaEvent<'s>> {
    let revision = scope.snapshot.revision;
    let view = &scope.environment;
    let touched = since.and_then(|since| scope.snapshot.changes.touched_since(since, &view.name));
    let Some(touched) = touched else {
        return vec![DeltaEvent::Hydration {
            event_id: revision,
            features: view
                .features
                .values()
                .filter(|f| visible(scope, filter, f))
                .map(|f| client_feature(f, &view.segments, SegmentMode::ById))
                .collect(),
            segments: view.segments.values().collect(),
        }];
    };
    let mut events = Vec::new();
    // Segments first, so that the flags that reference them find them; removals last.
    for id in &touched.segments {
        if let Some(segment) = view.segments.get(id) {
            events.push(DeltaEvent::SegmentUpdated {
                event_id: revision,
                segment,
            });
        }
    }
    for (name, projects_before) in &touched.features {
        match view
            .features
            .get(name)
            .filter(|f| visible(scope, filter, f))
        {
            Some(feature) => events.push(DeltaEvent::FeatureUpdated {
                event_id: revision,
                feature: client_feature(feature, &view.segments, SegmentMode::ById),
            }),
            None => {
                // Removed, or no longer in the client's scope: sent to a client that could see it before.
                let seen_in = projects_before
                    .iter()
                    .find(|project| project_visible(scope, filter, project));
                if let (Some(project), true) = (seen_in, name_visible(filter, name)) {
                    events.push(DeltaEvent::FeatureRemoved {
                        event_id: revision,
                        feature_name: name.to_string(),
                        project: project.clone(),
                    });
                }
            }
        }
    }
    for id in &touched.segments {
        if !view.segments.contains_key(id) {
            events.push(DeltaEvent::SegmentRemoved {
                event_id: revision,
                segment_id: *id,
            });
        }
    }
    events
}

/// The revision in an `If-None-Match` or `Last-Event-ID` value: `"12"`, `W/"12"` or `12`.
pub fn revision_of(value: &str) -> Option<u64> {
    let value = value.trim();
    let value = value.strip_prefix("W/").unwrap_or(value);
    value.trim_matches('"').parse().ok()
}

/// `GET /api/client/delta`: what changed since the `If-None-Match` revision; 304 when nothing did.
#[utoipa::path(
    get, path = "/api/client/delta", tag = "Client API",
    params(("If-None-Match" = Option<String>, Header, description = "The `ETag` of the last answer: `\"<revision>\"`")),
    responses((status = 200, description = "`{events:[…]}` in the client specification's delta format: a `hydration`, or the changes since the revision; `ETag: \"<revision>\"`", content_type = "application/json"),
        (status = 304, description = "Nothing changed since the revision"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn delta(
    ClientScope(scope): ClientScope,
    AcceptEncoding(encoding): AcceptEncoding,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut filter = filter_of(&scope, query.as_deref().unwrap_or(""), &headers)?;
    filter.segments = SegmentMode::ById;
    let revision = scope.snapshot.revision;
    let etag = format!("\"{revision}\"");
    let since = headers
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .and_then(revision_of);
    if since == Some(revision) {
        let mut response = not_modified(revision);
        insert_etag(&mut response, etag);
        return Ok(response);
    }
    // Kept with the snapshot like the features documents: a fleet of SDKs asks for the same hydration when
    // it starts, and for the same changes after each one. The key is the features document's with the
    // client's revision after it (more parts: never equal to a features document's).
    let mut key = query_key(&scope, &filter);
    key.push(b"delta since");
    key.push(&[u8::from(since.is_some())]);
    key.push(&since.unwrap_or(0).to_le_bytes());
    let answer = scope
        .snapshot
        .client_documents
        .answer(key.as_bytes(), encoding, || {
            serde_json::to_vec(&DeltaBody {
                events: delta_events(&scope, &filter, since),
            })
            .ok()
        })
        .ok_or_else(ApiError::internal)?;
    let mut response =
        encoded_json_response(StatusCode::OK, answer.body, answer.encoding, revision);
    insert_etag(&mut response, etag);
    Ok(response)
}

/// `GET /api/client/streaming`: server-sent events. `unleash-connected` first (a hydration, or with
/// `Last-Event-ID` what the client missed), then `unleash-updated` for each change in scope, the SSE `id`
/// being the revision; a keep-alive comment every 30 s; the stream ends when its token is revoked or
/// expires, or the server stops. Past `--max-streams`: one `fetch-mode` event, `polling`.
#[utoipa::path(
    get, path = "/api/client/streaming", tag = "Client API",
    params(("Last-Event-ID" = Option<String>, Header, description = "The revision the client has")),
    responses((status = 200, description = "`text/event-stream`: `unleash-connected`, then `unleash-updated` events (`{events:[…]}`, delta format); `fetch-mode` `polling` when the server holds `--max-streams`", content_type = "text/event-stream"),
        (status = 400, body = vexil_shared::ErrorBody), (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn streaming(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut filter = filter_of(&scope, query.as_deref().unwrap_or(""), &headers)?;
    filter.segments = SegmentMode::ById;
    let Some(slot) = state.streams.take() else {
        return Ok(event_response(sse_event(
            Some("fetch-mode"),
            None,
            "polling",
        )));
    };
    let since = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(revision_of);
    // The exact scope, as the key of the events streams share (`SharedEvents`).
    let key = format!(
        "{:?}\0{:?}\0{filter:?}",
        scope.environment.name, scope.projects
    );
    // Shared too: the clients of a fleet connect at the same revision with the same (or no) Last-Event-ID.
    let connected = state
        .stream_events
        .get_or_make(
            scope.snapshot.revision,
            0,
            &format!("unleash-connected\0{since:?}\0{key}"),
            || updated_event("unleash-connected", &scope, &filter, since).ok(),
        )
        .ok_or_else(ApiError::internal)?;
    let watch = ChangeWatch::new(state.clone(), &scope, slot);
    let shared = state.clone();
    let event_of = Box::new(move |scope: &Scope, since: u64| {
        let revision = scope.snapshot.revision;
        shared.stream_events.get_or_make(revision, since, &key, || {
            let events = delta_events(scope, &filter, Some(since));
            if events.is_empty() {
                return None;
            }
            let data = serde_json::to_string(&DeltaBody { events }).ok()?;
            Some(sse_event(Some("unleash-updated"), Some(revision), &data))
        })
    });
    let open = OpenStream::new(&state, Some(connected), watch, event_of);
    Ok(stream_response(open))
}

fn updated_event(
    name: &str,
    scope: &Scope,
    filter: &Filter,
    since: Option<u64>,
) -> Result<Bytes, ApiError> {
    let body = DeltaBody {
        events: delta_events(scope, filter, since),
    };
    let data = serde_json::to_string(&body).map_err(|_| ApiError::internal())?;
    Ok(sse_event(Some(name), Some(scope.snapshot.revision), &data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_of_etags_and_event_ids() {
        assert_eq!(revision_of("\"12\""), Some(12));
        assert_eq!(revision_of("W/\"12\""), Some(12));
        assert_eq!(revision_of(" 7 "), Some(7));
        assert_eq!(revision_of("\"abc:12:v1\""), None);
    }
}
