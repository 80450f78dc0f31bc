//! OpenFeature's remote evaluation protocol (OFREP, open-feature/protocol `service/openapi.yaml`, with the
//! event streams of its ADR-0008): `POST /ofrep/v1/evaluate/flags/{key}` (a client or frontend token),
//! `POST /ofrep/v1/evaluate/flags` (bulk, a frontend token; a weak `ETag`, 304 on `If-None-Match`, and
//! `eventStreams` naming `GET /ofrep/v1/events`, which sends `refetchEvaluation` on every change in the
//! token's scope). The token comes in `Authorization: Bearer` or `X-API-Key`; the same engine and snapshot
//! as the Unleash APIs answer, and evaluations are counted like the frontend API's.
//!
//! The context is `ofrep_context`'s (`targetingKey` → `userId`, the Unleash fields by name, any other
//! scalar into properties). The answers themselves (value, variant, reason, metadata) are the engine's
//! (`Snapshot::write_ofrep_flag_json`, `write_ofrep_flags_json`: copied from pieces serialized once).
//! Errors as the protocol says: 401 and 403 without a body, 404 `FLAG_NOT_FOUND`, 400 `PARSE_ERROR`,
//! `INVALID_CONTEXT` and `TARGETING_KEY_MISSING` (a flag whose strategies need a user id: `userWithId`,
//! `gradualRolloutUserId`, a rollout sticky on `userId`) with `errorDetails`.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, OriginalUri, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use vexil_shared::engine::OfrepFlag;
use vexil_shared::time::now_ms;
use vexil_shared::token::TokenKind;
use vexil_shared::{ApiError, Context, ErrorKind};

use crate::change_stream::{sse_event, ChangeWatch, OpenStream};
use crate::evaluation_counters::{EvaluationCounters, Shard};
use crate::extract::{
    grant_expired, scope_of_grant, token_scope, AcceptEncoding, ClientIp, IfNoneMatch, Scope,
};
use crate::ofrep_context::{context_of, ContextError};
use crate::response::{json_response, not_modified, revalidated, weak_etag};
use crate::state::ServingState;
use crate::stream_response::stream_response;

/// The path of the event stream the bulk answer names.
pub const EVENTS_PATH: &str = "/ofrep/v1/events";

/// A token's scope for OFREP; refusals as the protocol has them (401, 403 without a body).
pub struct OfrepScope(pub Scope);

/// The same for the bulk call: a frontend token (browsers make it).
pub struct OfrepBulkScope(pub Scope);

/// An OFREP error answer.
#[derive(Debug)]
pub enum OfrepError {
    /// 401 or 403, no body.
    Refused(StatusCode),
    /// A status with a JSON body (`{key?, errorCode, errorDetails}` or `{errorDetails}`).
    Body(StatusCode, Value),
}

impl IntoResponse for OfrepError {
    fn into_response(self) -> Response {
        match self {
            OfrepError::Refused(status) => status.into_response(),
            OfrepError::Body(status, body) => {
                let body = serde_json::to_vec(&body).unwrap_or_default();
                let mut response = Response::new(Body::from(body));
                *response.status_mut() = status;
                response.headers_mut().insert(
                    axum::http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            }
        }
    }
}

impl From<ApiError> for OfrepError {
    fn from(error: ApiError) -> OfrepError {
        match error.kind {
            ErrorKind::AuthenticationRequired => OfrepError::Refused(StatusCode::UNAUTHORIZED),
            ErrorKind::NoAccess => OfrepError::Refused(StatusCode::FORBIDDEN),
            kind => OfrepError::Body(
                StatusCode::from_u16(kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                serde_json::json!({ "errorDetails": error.message }),
            ),
        }
    }
}

/// A failure of one flag (400 or 404): `{key, errorCode, errorDetails}`.
fn flag_error(status: StatusCode, key: &str, code: &str, details: impl Into<String>) -> OfrepError {
    OfrepError::Body(
        status,
        serde_json::json!({ "key": key, "errorCode": code, "errorDetails": details.into() }),
    )
}

/// A failure of the bulk request (400): `{errorCode, errorDetails}`.
fn bulk_error(code: &str, details: impl Into<String>) -> OfrepError {
    OfrepError::Body(
        StatusCode::BAD_REQUEST,
        serde_json::json!({ "errorCode": code, "errorDetails": details.into() }),
    )
}

impl FromRequestParts<Arc<ServingState>> for OfrepScope {
    type Rejection = OfrepError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ServingState>,
    ) -> Result<Self, OfrepError> {
        Ok(OfrepScope(
            token_scope(parts, state, &[TokenKind::Client, TokenKind::Frontend]).await?,
        ))
    }
}

impl FromRequestParts<Arc<ServingState>> for OfrepBulkScope {
    type Rejection = OfrepError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ServingState>,
    ) -> Result<Self, OfrepError> {
        if let Some(snapshot) = state.current.load().as_deref() {
            if !snapshot.settings.frontend_api_enabled {
                return Err(ApiError::not_found("The frontend API is disabled").into());
            }
        }
        Ok(OfrepBulkScope(
            token_scope(parts, state, &[TokenKind::Frontend]).await?,
        ))
    }
}

/// `POST /ofrep/v1/evaluate/flags/{key}`.
#[utoipa::path(
    post, path = "/ofrep/v1/evaluate/flags/{key}", tag = "OFREP",
    params(("key" = String, Path, description = "Flag name")),
    request_body(content = serde_json::Value, description = "`{context:{targetingKey, …}}`"),
    responses((status = 200, description = "`{key, value, variant, reason, metadata:{project, impressionData}}`", content_type = "application/json"),
        (status = 400, description = "`{key, errorCode: PARSE_ERROR | INVALID_CONTEXT | TARGETING_KEY_MISSING, errorDetails}`", content_type = "application/json"),
        (status = 401, description = "No, an unknown or an expired token (no body)"), (status = 403, description = "A token of another kind (no body)"),
        (status = 404, description = "`{key, errorCode: FLAG_NOT_FOUND, errorDetails}`", content_type = "application/json"),
        (status = 503, description = "`{errorDetails}`: no snapshot loaded yet", content_type = "application/json"))
)]
pub async fn evaluate_flag(
    State(state): State<Arc<ServingState>>,
    OfrepScope(scope): OfrepScope,
    ClientIp(ip): ClientIp,
    AcceptEncoding(encoding): AcceptEncoding,
    Path(key): Path<String>,
    body: Bytes,
) -> Result<Response, OfrepError> {
    let ctx = context_of(&body, ip).map_err(|error| match error {
        ContextError::Parse(details) => {
            flag_error(StatusCode::BAD_REQUEST, &key, "PARSE_ERROR", details)
        }
        ContextError::Invalid(details) => {
            flag_error(StatusCode::BAD_REQUEST, &key, "INVALID_CONTEXT", details)
        }
    })?;
    let view = &scope.environment;
    let mut body = Vec::with_capacity(256);
    match view
        .engine
        .write_ofrep_flag_json(&key, &ctx, &scope.projects, &mut body)
    {
        OfrepFlag::NotFound => Err(flag_error(
            StatusCode::NOT_FOUND,
            &key,
            "FLAG_NOT_FOUND",
            format!("No flag named {key}"),
        )),
        OfrepFlag::TargetingKeyMissing => Err(flag_error(
            StatusCode::BAD_REQUEST,
            &key,
            "TARGETING_KEY_MISSING",
            "this flag's strategies need a targetingKey (or userId)",
        )),
        OfrepFlag::Written { index, enabled } => {
            if state.count_evaluations {
                view.evaluations.one_flag(index, enabled);
            }
            Ok(json_response(
                StatusCode::OK,
                body,
                scope.snapshot.revision,
                encoding,
            ))
        }
    }
}

/// `POST /ofrep/v1/evaluate/flags`: every flag of the token's projects.
#[utoipa::path(
    post, path = "/ofrep/v1/evaluate/flags", tag = "OFREP",
    params(("If-None-Match" = Option<String>, Header, description = "The `ETag` of the last answer")),
    request_body(content = serde_json::Value, description = "`{context:{targetingKey, …}}`"),
    responses((status = 200, description = "`{flags:[…], eventStreams:[{type: sse, endpoint:{requestUri}}]}` with a weak `ETag`; a flag whose strategies need a targeting key the context lacks is `{key, errorCode: TARGETING_KEY_MISSING}`", content_type = "application/json"),
        (status = 304, description = "Equal `If-None-Match`"),
        (status = 400, description = "`{errorCode: PARSE_ERROR | INVALID_CONTEXT, errorDetails}`", content_type = "application/json"),
        (status = 401, description = "No, an unknown or an expired token (no body)"), (status = 403, description = "Not a frontend token (no body)"),
        (status = 404, description = "`{errorDetails}`: the frontend API is disabled", content_type = "application/json"),
        (status = 503, description = "`{errorDetails}`: no snapshot loaded yet", content_type = "application/json"))
)]
pub async fn evaluate_flags(
    State(state): State<Arc<ServingState>>,
    OfrepBulkScope(scope): OfrepBulkScope,
    ClientIp(ip): ClientIp,
    OriginalUri(uri): OriginalUri,
    if_none_match: IfNoneMatch,
    AcceptEncoding(encoding): AcceptEncoding,
    body: Bytes,
) -> Result<Response, OfrepError> {
    let ctx = context_of(&body, ip).map_err(|error| match error {
        ContextError::Parse(details) => bulk_error("PARSE_ERROR", details),
        ContextError::Invalid(details) => bulk_error("INVALID_CONTEXT", details),
    })?;
    // One evaluation of the context for every flag, each answer copied from pieces serialized once per
    // snapshot; counted like the frontend API's. With `If-None-Match`, the ETag (the answer's length and
    // fingerprint) is worked out first without writing the answer, which is written only when it differs.
    let counting = Counting::of(&state, &scope, &ctx);
    let revision = scope.snapshot.revision;
    let (etag, body) =
        if if_none_match.0.is_some() {
            let (length, fingerprint) = scope.environment.engine.ofrep_flags_etag(
                &ctx,
                &scope.projects,
                |index, enabled| counting.note(index, enabled),
            );
            let etag = weak_etag(length, fingerprint);
            if if_none_match.matches(&etag) {
                return Ok(revalidated(not_modified(revision), etag));
            }
            answer(&scope, &ctx, uri.path(), |_, _| {})
        } else {
            answer(&scope, &ctx, uri.path(), |index, enabled| {
                counting.note(index, enabled)
            })
        };
    Ok(revalidated(
        json_response(StatusCode::OK, body, revision, encoding),
        etag,
    ))
}

/// The bulk answer for `ctx` (to the request at `path`) and its weak ETag.
fn answer(
    scope: &Scope,
    ctx: &Context,
    path: &str,
    evaluated: impl FnMut(usize, bool),
) -> (String, Vec<u8>) {
    const FLAGS: &[u8] = b"{\"flags\":";
    const EVENT_STREAMS: &[u8] =
        b",\"eventStreams\":[{\"type\":\"sse\",\"endpoint\":{\"requestUri\":";
    const END: &[u8] = b"}}]}";
    // Beside this route, under the same base path (the control plane's `--base-path`, a proxy's).
    let base = path.strip_suffix("/ofrep/v1/evaluate/flags").unwrap_or("");
    let channel = scope
        .token
        .as_ref()
        .map_or(&crate::extract::ANONYMOUS.ofrep_channel, |(_, grant)| {
            &grant.ofrep_channel
        });
    let engine = &scope.environment.engine;
    let mut body = Vec::with_capacity(
        FLAGS.len()
            + engine.ofrep_json_bound()
            + EVENT_STREAMS.len()
            + events_uri_bound(base, channel)
            + END.len(),
    );
    body.extend_from_slice(FLAGS);
    let fingerprint = engine.write_ofrep_flags_json(ctx, &scope.projects, &mut body, evaluated);
    let etag = weak_etag(body.len() - FLAGS.len(), fingerprint);
    body.extend_from_slice(EVENT_STREAMS);
    write_events_uri(&mut body, base, channel);
    body.extend_from_slice(END);
    (etag, body)
}

const CHANNEL_QUERY: &str = "?channel=";

/// At least the bytes [`write_events_uri`] writes.
fn events_uri_bound(base: &str, channel: &str) -> usize {
    2 + base.len() * 6 + EVENTS_PATH.len() + CHANNEL_QUERY.len() + channel.len()
}

/// Writes the URI of the event stream on `channel` under the base path `base`, as a JSON string.
fn write_events_uri(out: &mut Vec<u8>, base: &str, channel: &str) {
    out.push(b'"');
    if !base.is_empty() {
        // A proxy's path may hold what JSON escapes; a channel is hex.
        let quoted = serde_json::Value::from(base).to_string();
        out.extend_from_slice(&quoted.as_bytes()[1..quoted.len() - 1]);
    }
    out.extend_from_slice(EVENTS_PATH.as_bytes());
    out.extend_from_slice(CHANNEL_QUERY.as_bytes());
    out.extend_from_slice(channel.as_bytes());
    out.push(b'"');
}

/// How a bulk evaluation is counted, like the frontend API's: per flag when some flag may go unevaluated
/// for want of a targeting key, else as one evaluation of all flags.
enum Counting<'a> {
    Off,
    AllFlags(Shard<'a>),
    PerFlag(&'a EvaluationCounters),
}

impl<'a> Counting<'a> {
    fn of(state: &ServingState, scope: &'a Scope, ctx: &Context) -> Counting<'a> {
        let view = &scope.environment;
        if !state.count_evaluations {
            Counting::Off
        } else if ctx.user_id.is_some() {
            Counting::AllFlags(view.evaluations.all_flags(&view.engine, &scope.projects))
        } else {
            Counting::PerFlag(&view.evaluations)
        }
    }

    #[inline(always)]
    fn note(&self, index: usize, enabled: bool) {
        match self {
            Counting::Off => {}
            Counting::AllFlags(shard) => {
                if enabled {
                    EvaluationCounters::enabled(*shard, index);
                }
            }
            Counting::PerFlag(counters) => counters.one_flag(index, enabled),
        }
    }
}

/// `GET /ofrep/v1/events?channel=…`: server-sent events, a `refetchEvaluation` message (`{type, etag,
/// lastModified}`, the SSE `id` the revision) on every change in the token's scope; it ends when the token
/// is revoked or expires. Past `--max-streams` the answer is 429.
#[utoipa::path(
    get, path = "/ofrep/v1/events", tag = "OFREP",
    params(("channel" = String, Query, description = "As the bulk answer's `eventStreams` names it")),
    responses((status = 200, description = "`text/event-stream` of `{\"type\":\"refetchEvaluation\",\"etag\",\"lastModified\"}` messages", content_type = "text/event-stream"),
        (status = 401, description = "An unknown channel, or its token expired (no body)"),
        (status = 429, description = "The server holds `--max-streams` streams; `Retry-After`"),
        (status = 503, description = "`{errorDetails}`: no snapshot loaded yet", content_type = "application/json"))
)]
pub async fn events(
    State(state): State<Arc<ServingState>>,
    RawQuery(query): RawQuery,
    parts: Parts,
) -> Result<Response, OfrepError> {
    let snapshot = state.loaded()?;
    let channel = form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes())
        .find(|(key, _)| key == "channel")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    let scope = if state.anonymous && channel == "anonymous" {
        scope_of_grant(&parts, snapshot.clone(), None, &crate::extract::ANONYMOUS)
    } else {
        let now = now_ms();
        let (hash, grant) = snapshot
            .tokens
            .iter()
            .find(|(_, grant)| {
                grant.kind == TokenKind::Frontend
                    && !grant_expired(grant, now)
                    && *grant.ofrep_channel == *channel
            })
            .ok_or(OfrepError::Refused(StatusCode::UNAUTHORIZED))?;
        scope_of_grant(&parts, snapshot.clone(), Some(*hash), grant)
    };
    let Some(slot) = state.streams.take() else {
        let mut response = StatusCode::TOO_MANY_REQUESTS.into_response();
        response
            .headers_mut()
            .insert("retry-after", HeaderValue::from_static("60"));
        return Ok(response);
    };
    // The exact scope, as the key of the events streams share (`SharedEvents`).
    let key = format!("ofrep\0{:?}\0{:?}", scope.environment.name, scope.projects);
    let watch = ChangeWatch::new(state.clone(), &scope, slot);
    let shared = state.clone();
    let event_of = Box::new(move |scope: &Scope, since: u64| {
        let revision = scope.snapshot.revision;
        shared
            .stream_events
            .get_or_make(revision, since, &key, || {
                let changed = scope
                    .snapshot
                    .changes
                    .touched_since(since, &scope.environment.name)
                    .is_none_or(|touched| {
                        !touched.segments.is_empty()
                            || touched.features.iter().any(|(name, before)| {
                                let now = scope.environment.project_of(name);
                                now.into_iter()
                                    .chain(before.iter().map(String::as_str))
                                    .any(|project| scope.projects.includes(project))
                            })
                    });
                changed.then(|| {
                    let data = format!(
                        "{{\"type\":\"refetchEvaluation\",\"etag\":\"\\\"{revision}\\\"\",\"lastModified\":{}}}",
                        now_ms() / 1000
                    );
                    sse_event(None, Some(revision), &data)
                })
            })
    });
    Ok(stream_response(OpenStream::new(
        &state, None, watch, event_of,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_uri(base: &str) -> String {
        let mut out = Vec::new();
        write_events_uri(&mut out, base, "c0ffee");
        assert!(out.len() <= events_uri_bound(base, "c0ffee"));
        serde_json::from_slice(&out).expect("a JSON string")
    }

    #[test]
    fn the_event_stream_is_named_under_the_requests_base_path() {
        assert_eq!(events_uri(""), "/ofrep/v1/events?channel=c0ffee");
        assert_eq!(
            events_uri("/flags"),
            "/flags/ofrep/v1/events?channel=c0ffee"
        );
        assert_eq!(
            events_uri("/a\"b\\c"),
            "/a\"b\\c/ofrep/v1/events?channel=c0ffee"
        );
    }
}
