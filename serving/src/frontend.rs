//! The frontend API (API.md §5): enabled flags for a context, one output buffer per response (CORS by
//! `cors`), a weak ETag from the body's length and the engine's fingerprint of it;
//! and the frontend SDKs' metrics and register posts.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use vexil_shared::{ApiError, Context};

use crate::answer_encoding::Encoding;
use crate::evaluation_counters::EvaluationCounters;
use crate::extract::{
    context_of_body, AcceptEncoding, ClientIp, FrontendScope, IfNoneMatch, QueryContext, Scope,
};
use crate::response::{json_response, not_modified, revalidated, weak_etag};
use crate::state::ServingState;
use crate::usage::{metrics_usage, register_usage};

/// `GET /api/frontend`: the enabled flags of the token's projects for the query's context.
#[utoipa::path(
    get, path = "/api/frontend", tag = "Frontend API",
    responses((status = 200, description = "`{toggles}`: the enabled flags", content_type = "application/json"),
        (status = 304, description = "Equal `If-None-Match`"), (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody),
        (status = 404, description = "The frontend API is disabled", body = vexil_shared::ErrorBody))
)]
pub async fn evaluate_query(
    State(state): State<Arc<ServingState>>,
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    QueryContext(ctx): QueryContext,
    if_none_match: IfNoneMatch,
    AcceptEncoding(encoding): AcceptEncoding,
) -> Response {
    toggles(&state, &scope, with_ip(ctx, ip), &if_none_match, encoding)
}

/// `POST /api/frontend`: the same for the body's `{context}`; the query is ignored.
#[utoipa::path(
    post, path = "/api/frontend", tag = "Frontend API",
    responses((status = 200, description = "`{toggles}`: the enabled flags", content_type = "application/json"),
        (status = 400, body = vexil_shared::ErrorBody), (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody),
        (status = 404, description = "The frontend API is disabled", body = vexil_shared::ErrorBody))
)]
pub async fn evaluate_body(
    State(state): State<Arc<ServingState>>,
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    if_none_match: IfNoneMatch,
    AcceptEncoding(encoding): AcceptEncoding,
    body: Bytes,
) -> Result<Response, ApiError> {
    let value: serde_json::Value = if body.is_empty() {
        serde_json::Value::Object(Default::default())
    } else {
        serde_json::from_slice(&body)
            .map_err(|error| ApiError::validation(format!("body: {error}")))?
    };
    let ctx = context_of_body(&value)?;
    Ok(toggles(
        &state,
        &scope,
        with_ip(ctx, ip),
        &if_none_match,
        encoding,
    ))
}

/// `GET /api/frontend/features/:name`: one flag, enabled or not; unknown or out of scope → 404.
#[utoipa::path(
    get, path = "/api/frontend/features/{name}", tag = "Frontend API",
    params(("name" = String, Path, description = "Flag name")),
    responses((status = 200, description = "`{name, enabled, variant, impressionData}`", content_type = "application/json"),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody), (status = 404, body = vexil_shared::ErrorBody))
)]
pub async fn evaluate_one(
    State(state): State<Arc<ServingState>>,
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    QueryContext(ctx): QueryContext,
    AcceptEncoding(encoding): AcceptEncoding,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let ctx = with_ip(ctx, ip);
    let view = &scope.environment;
    let in_scope = view
        .project_of(&name)
        .is_some_and(|project| scope.projects.includes(project));
    let toggle = in_scope
        .then(|| view.engine.evaluate(&name, &ctx))
        .flatten()
        .ok_or_else(|| ApiError::not_found(format!("No flag named {name}")))?;
    if state.count_evaluations {
        if let Some(index) = view.engine.flag_index(&name) {
            view.evaluations.one_flag(index, toggle.enabled);
        }
    }
    let body = serde_json::to_vec(&toggle).map_err(|_| ApiError::internal())?;
    Ok(json_response(
        StatusCode::OK,
        body,
        scope.snapshot.revision,
        encoding,
    ))
}

/// `POST /api/frontend/client/metrics`: counted under the token's environment.
#[utoipa::path(
    post, path = "/api/frontend/client/metrics", tag = "Frontend API",
    request_body(content = serde_json::Value, description = "The client metrics body"),
    responses((status = 200, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody),
        (status = 404, description = "The frontend API is disabled", body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn frontend_metrics(
    State(state): State<Arc<ServingState>>,
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = metrics_usage(&body, &scope.poster(ip))?;
    state.deliver_usage(usage).await?;
    Ok(StatusCode::OK)
}

/// `POST /api/frontend/client/register`: checked, then a no-op (API.md §5).
#[utoipa::path(
    post, path = "/api/frontend/client/register", tag = "Frontend API",
    request_body(content = serde_json::Value, description = "The register body"),
    responses((status = 200, description = "Accepted (nothing is stored)"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody),
        (status = 404, description = "The frontend API is disabled", body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn frontend_register(
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    register_usage(&body, &scope.poster(ip))?;
    Ok(StatusCode::OK)
}

fn with_ip(mut ctx: Context, ip: Option<String>) -> Context {
    if ctx.remote_address.is_none() {
        ctx.remote_address = ip;
    }
    ctx
}

fn toggles(
    state: &ServingState,
    scope: &Scope,
    ctx: Context,
    if_none_match: &IfNoneMatch,
    encoding: Option<Encoding>,
) -> Response {
    const WRAPPER: &[u8] = b"{\"toggles\":}";
    let mut body =
        Vec::with_capacity(scope.environment.engine.toggles_json_bound() + WRAPPER.len());
    body.extend_from_slice(b"{\"toggles\":");
    let view = &scope.environment;
    let fingerprint = if state.count_evaluations {
        let shard = view.evaluations.all_flags(&view.engine, &scope.projects);
        view.engine
            .write_toggles_json_counted(&ctx, &scope.projects, &mut body, |index| {
                EvaluationCounters::enabled(shard, index)
            })
    } else {
        view.engine
            .write_toggles_json(&ctx, &scope.projects, &mut body)
    };
    body.push(b'}');
    let etag = weak_etag(body.len(), fingerprint);
    let response = if if_none_match.matches(&etag) {
        not_modified(scope.snapshot.revision)
    } else {
        json_response(StatusCode::OK, body, scope.snapshot.revision, encoding)
    };
    revalidated(response, etag)
}
