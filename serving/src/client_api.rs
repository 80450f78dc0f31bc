//! The client API for server-side SDKs (API.md §4): the environment's document filtered to the token's
//! projects (and `?project=`, `?namePrefix=`, `?tag=type:value`: a flag with any of the tags), tags and
//! disabled strategies omitted, segments per `Unleash-Client-Spec`, a strong ETag
//! `"<queryHash>:<revision>:v1"` with 304 on a match; and the server SDKs' register and metrics posts.

use std::hash::Hasher;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::header::IF_NONE_MATCH;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;
use vexil_shared::model::{Feature, FeatureTag, Segment};
use vexil_shared::{ApiError, Projects};

use crate::client_documents::QueryKey;
use crate::extract::{AcceptEncoding, ClientIp, ClientScope, Scope};
use crate::response::{encoded_json_response, insert_etag, json_response, not_modified};
use crate::state::ServingState;
use crate::unleash_edge_report::{self, EdgeInstanceData};
use crate::usage::{bulk_usage, metrics_usage, parse, register_usage, Usage};

/// How segments reach the SDK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SegmentMode {
    /// `Unleash-Client-Spec` ≥ 4.2.0: top-level `segments`, strategies reference ids.
    ById,
    /// Older or absent: segment constraints appended to each strategy's.
    Inline,
}

/// What narrows the document.
#[derive(Debug)]
pub(crate) struct Filter {
    projects: Option<Vec<String>>,
    name_prefix: Option<String>,
    /// `?tag=type:value` (repeatable); empty: no tag filter.
    tags: Vec<FeatureTag>,
    pub(crate) segments: SegmentMode,
}

/// `GET /api/client/features`.
#[utoipa::path(
    get, path = "/api/client/features", tag = "Client API",
    responses((status = 200, description = "The features document", content_type = "application/json"),
        (status = 304, description = "Equal `If-None-Match`"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn features(
    ClientScope(scope): ClientScope,
    AcceptEncoding(encoding): AcceptEncoding,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let filter = filter_of(&scope, query.as_deref().unwrap_or(""), &headers)?;
    let query_hash = query_hash(&scope, &filter);
    let etag = format!("\"{query_hash}:{}:v1\"", scope.snapshot.revision);
    if headers
        .get(IF_NONE_MATCH)
        .is_some_and(|value| value.as_bytes() == etag.as_bytes())
    {
        let mut response = not_modified(scope.snapshot.revision);
        insert_etag(&mut response, etag);
        return Ok(response);
    }
    let answer = scope
        .snapshot
        .client_documents
        .answer(query_key(&scope, &filter).as_bytes(), encoding, || {
            client_document(&scope, &filter, &etag, &query_hash)
        })
        .ok_or_else(ApiError::internal)?;
    let mut response = encoded_json_response(
        StatusCode::OK,
        answer.body,
        answer.encoding,
        scope.snapshot.revision,
    );
    insert_etag(&mut response, etag);
    Ok(response)
}

/// The features document `scope` and `filter` see, serialized (the body of `/api/client/features`).
fn client_document(
    scope: &Scope,
    filter: &Filter,
    etag: &str,
    query_hash: &str,
) -> Option<Vec<u8>> {
    let view = &scope.environment;
    let features: Vec<Feature> = view
        .features
        .values()
        .filter(|f| visible(scope, filter, f))
        .map(|f| client_feature(f, &view.segments, filter.segments))
        .collect();
    let document = ClientDocument {
        version: 2,
        features,
        segments: (filter.segments == SegmentMode::ById).then(|| view.segments.values().collect()),
        query: Query {
            tag: (!filter.tags.is_empty()).then(|| {
                filter
                    .tags
                    .iter()
                    .map(|tag| [tag.tag_type.as_str(), tag.value.as_str()])
                    .collect()
            }),
            project: filter.projects.clone(),
            name_prefix: filter.name_prefix.clone(),
            environment: &view.name,
        },
        meta: Meta {
            revision_id: scope.snapshot.revision,
            etag,
            query_hash,
        },
    };
    serde_json::to_vec(&document).ok()
}

/// `GET /api/client/features/:name`: one feature; unknown or out of scope → 404.
#[utoipa::path(
    get, path = "/api/client/features/{name}", tag = "Client API",
    params(("name" = String, Path, description = "Flag name")),
    responses((status = 200, description = "One feature", content_type = "application/json"),
        (status = 400, body = vexil_shared::ErrorBody), (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody), (status = 404, body = vexil_shared::ErrorBody))
)]
pub async fn feature(
    ClientScope(scope): ClientScope,
    AcceptEncoding(encoding): AcceptEncoding,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let filter = filter_of(&scope, query.as_deref().unwrap_or(""), &headers)?;
    let view = &scope.environment;
    let feature = view
        .features
        .get(name.as_str())
        .filter(|f| visible(&scope, &filter, f))
        .ok_or_else(|| ApiError::not_found(format!("No flag named {name}")))?;
    let body = serde_json::to_vec(&client_feature(feature, &view.segments, filter.segments))
        .map_err(|_| ApiError::internal())?;
    Ok(json_response(
        StatusCode::OK,
        body,
        scope.snapshot.revision,
        encoding,
    ))
}

/// `POST /api/client/register`.
#[utoipa::path(
    post, path = "/api/client/register", tag = "Client API",
    request_body(content = serde_json::Value, description = "`{appName*, instanceId, sdkVersion, strategies*[], started*, interval*}`"),
    responses((status = 202, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn client_register(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = register_usage(&body, &scope.poster(ip))?;
    state.deliver_usage(usage).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/client/metrics`.
#[utoipa::path(
    post, path = "/api/client/metrics", tag = "Client API",
    request_body(content = serde_json::Value, description = "`{appName*, instanceId, bucket:{start*, stop*, toggles*:{flag:{yes, no, variants}}}}`"),
    responses((status = 202, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn client_metrics(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = metrics_usage(&body, &scope.poster(ip))?;
    state.deliver_usage(usage).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/client/metrics/bulk` (as Unleash Edge forwards).
#[utoipa::path(
    post, path = "/api/client/metrics/bulk", tag = "Client API",
    request_body(content = serde_json::Value, description = "`{applications:[{appName*, instanceId*, environment*}], metrics:[{featureName*, appName*, environment*, yes, no, variants}]}`"),
    responses((status = 202, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn client_metrics_bulk(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = bulk_usage(&body, &scope.poster(ip))?;
    state.deliver_usage(usage).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/client/metrics/edge`: an Unleash Edge instance's report on itself and the Edges behind it,
/// checked, then handed to the binary's usage sink as the report of the token's environment: the control
/// plane keeps each instance's latest (the Edges page, `GET /api/admin/metrics/edges`), `vexil-edge serve`
/// relays it there in its next usage batch, `vexil-edge edge` forwards it to its upstream. 202 as Unleash
/// answers.
#[utoipa::path(
    post, path = "/api/client/metrics/edge", tag = "Unleash Edge", security(("apiToken" = [])),
    request_body(content = serde_json::Value, content_type = "application/json",
        description = "Unleash's `edgeInstanceDataSchema`: `{identifier*, appName*, edgeVersion*, started*, \
            traffic*: {get, post, accessDenied, cachedResponses}, latencyUpstream*: {features, metrics, edge}, \
            connectedStreamingClients*, connectedEdges*: [same], region, hosting, processMetrics, \
            requestsSinceLastReport, edgeApiKeyRevisionIds}`"),
    responses((status = 202, description = "Kept"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
)]
pub async fn unleash_edge_instance_data(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let data: EdgeInstanceData = parse(&body)?;
    unleash_edge_report::check(&data)?;
    let environment = if scope.wildcard_environment {
        "*"
    } else {
        scope.environment.name.as_str()
    };
    let report = unleash_edge_report::report(data, environment, vexil_shared::time::now_ms());
    state
        .deliver_usage(Usage {
            unleash_edges: vec![report],
            ..Usage::default()
        })
        .await?;
    Ok(StatusCode::ACCEPTED)
}

pub(crate) fn filter_of(
    scope: &Scope,
    query: &str,
    headers: &HeaderMap,
) -> Result<Filter, ApiError> {
    let mut projects = Vec::new();
    let mut name_prefix = None;
    let mut tags = Vec::new();
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match &*key {
            "project" if !value.is_empty() => projects.push(value.into_owned()),
            "namePrefix" if !value.is_empty() => name_prefix = Some(value.into_owned()),
            "tag" if !value.is_empty() => tags.push(tag_of(&value)?),
            _ => {}
        }
    }
    tags.sort_unstable();
    tags.dedup();
    // A project-scoped token ignores `?project=`.
    let projects = match &scope.projects {
        Projects::All if !projects.is_empty() => Some(projects),
        _ => None,
    };
    let segments = match headers.get("unleash-client-spec") {
        None => SegmentMode::Inline,
        Some(value) => {
            let text = value.to_str().unwrap_or("");
            let version = semver::Version::parse(text).map_err(|_| {
                ApiError::validation(format!(
                    "Unleash-Client-Spec must be a semantic version, not {text:?}"
                ))
            })?;
            if version >= semver::Version::new(4, 2, 0) {
                SegmentMode::ById
            } else {
                SegmentMode::Inline
            }
        }
    };
    Ok(Filter {
        projects,
        name_prefix,
        tags,
        segments,
    })
}

/// `type:value` (the value may hold more colons).
fn tag_of(text: &str) -> Result<FeatureTag, ApiError> {
    match text.split_once(':') {
        Some((tag_type, value)) if !tag_type.is_empty() && !value.is_empty() => Ok(FeatureTag {
            tag_type: tag_type.to_owned(),
            value: value.to_owned(),
        }),
        _ => Err(ApiError::validation(format!(
            "tag must be type:value (as in simple:foo), not {text:?}"
        ))),
    }
}

pub(crate) fn visible(scope: &Scope, filter: &Filter, feature: &Feature) -> bool {
    project_visible(scope, filter, &feature.project)
        && name_visible(filter, &feature.name)
        && (filter.tags.is_empty() || feature.tags.iter().any(|tag| filter.tags.contains(tag)))
}

/// Whether the token and the query let the client see flags of `project`.
pub(crate) fn project_visible(scope: &Scope, filter: &Filter, project: &str) -> bool {
    scope.projects.includes(project)
        && filter
            .projects
            .as_ref()
            .is_none_or(|list| list.iter().any(|p| p == project))
}

/// Whether `?namePrefix=` lets the client see the flag `name`.
pub(crate) fn name_visible(filter: &Filter, name: &str) -> bool {
    filter
        .name_prefix
        .as_ref()
        .is_none_or(|prefix| name.starts_with(prefix.as_str()))
}

/// The feature as SDKs receive it: no tags, strategies without `id/title/sortOrder/disabled`, disabled
/// ones omitted.
pub(crate) fn client_feature(
    feature: &Feature,
    segments: &std::collections::BTreeMap<i64, Segment>,
    mode: SegmentMode,
) -> Feature {
    let mut feature = feature.clone();
    feature.tags = Vec::new();
    feature.strategies.retain(|s| !s.disabled);
    for strategy in &mut feature.strategies {
        strategy.id = None;
        strategy.title = None;
        strategy.sort_order = None;
        match mode {
            SegmentMode::ById => strategy.segments.sort_unstable(),
            SegmentMode::Inline => {
                for id in std::mem::take(&mut strategy.segments) {
                    if let Some(segment) = segments.get(&id) {
                        strategy
                            .constraints
                            .extend(segment.constraints.iter().cloned());
                    }
                }
            }
        }
    }
    feature
}

fn query_hash(scope: &Scope, filter: &Filter) -> String {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(scope.environment.name.as_bytes());
    hasher.write_u8(0);
    match &scope.projects {
        Projects::All => hasher.write_u8(1),
        Projects::Only(list) => list.iter().for_each(|p| {
            hasher.write(p.as_bytes());
            hasher.write_u8(0);
        }),
    }
    for project in filter.projects.iter().flatten() {
        hasher.write(project.as_bytes());
        hasher.write_u8(0);
    }
    hasher.write(filter.name_prefix.as_deref().unwrap_or("").as_bytes());
    hasher.write_u8(0);
    for tag in &filter.tags {
        hasher.write(tag.tag_type.as_bytes());
        hasher.write_u8(0);
        hasher.write(tag.value.as_bytes());
        hasher.write_u8(0);
    }
    hasher.write_u8(filter.segments as u8);
    format!("{:016x}", hasher.finish())
}

/// Everything that decides `/api/client/features`' answer at one snapshot, written unambiguously: the key of
/// [`crate::client_documents`] (the query hash can collide; this cannot).
pub(crate) fn query_key(scope: &Scope, filter: &Filter) -> QueryKey {
    let mut key = QueryKey::default();
    key.push(scope.environment.name.as_bytes());
    match &scope.projects {
        Projects::All => key.push(b"*"),
        Projects::Only(list) => {
            key.push(b"only");
            key.push(&list.len().to_le_bytes());
            list.iter().for_each(|p| key.push(p.as_bytes()));
        }
    }
    let projects = filter.projects.as_deref().unwrap_or_default();
    key.push(&[u8::from(filter.projects.is_some())]);
    key.push(&projects.len().to_le_bytes());
    projects.iter().for_each(|p| key.push(p.as_bytes()));
    key.push(&[u8::from(filter.name_prefix.is_some())]);
    key.push(filter.name_prefix.as_deref().unwrap_or("").as_bytes());
    key.push(&filter.tags.len().to_le_bytes());
    for tag in &filter.tags {
        key.push(tag.tag_type.as_bytes());
        key.push(tag.value.as_bytes());
    }
    key.push(&[filter.segments as u8]);
    key
}

#[derive(Serialize)]
struct ClientDocument<'a> {
    version: u32,
    features: Vec<Feature>,
    #[serde(skip_serializing_if = "Option::is_none")]
    segments: Option<Vec<&'a Segment>>,
    query: Query<'a>,
    meta: Meta<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Query<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<Vec<[&'a str; 2]>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name_prefix: Option<String>,
    environment: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    revision_id: u64,
    etag: &'a str,
    query_hash: &'a str,
}
