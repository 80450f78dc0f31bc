//! Usage from the SDKs (API.md §4, §5): `POST /api/client/register`, `/api/client/metrics`,
//! `/api/client/metrics/bulk` (client tokens), `/api/frontend/client/metrics` and `/api/frontend/client/register`
//! (frontend tokens). A body is parsed and checked here, turned into [`Usage`] (the `vexil.v1` messages the
//! edges batch), and handed to the binary's [`UsageSink`]: the edge aggregates it into its next batch, the
//! control plane stores it. A bad body is 400 and reaches no sink.
//!
//! Also [`EvaluationCounters`]: the evaluations a server answered per flag, counted without locks.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use vexil_proto::v1;
use vexil_shared::{ApiError, Projects, Snapshot};

use crate::extract::{ClientIp, ClientScope, FrontendScope, Scope};
use crate::ServingState;

/// What one SDK post adds: the application and instance seen, and the flags' counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub applications: Vec<v1::ApplicationSeen>,
    pub instances: Vec<v1::InstanceSeen>,
    pub counts: Vec<v1::FlagCount>,
}

/// Where a binary puts the SDKs' usage.
pub trait UsageSink: Send + Sync {
    fn record(
        &self,
        usage: Usage,
    ) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send + '_>>;
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The start of the minute `ms` falls in.
pub fn minute_of(ms: i64) -> i64 {
    ms - ms.rem_euclid(60_000)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RegisterBody {
    app_name: String,
    instance_id: Option<String>,
    sdk_version: Option<String>,
    strategies: Vec<String>,
    started: serde_json::Value,
    interval: serde_json::Value,
    environment: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetricsBody {
    app_name: String,
    instance_id: Option<String>,
    sdk_version: Option<String>,
    environment: Option<String>,
    bucket: Bucket,
}

#[derive(Deserialize)]
struct Bucket {
    start: serde_json::Value,
    stop: serde_json::Value,
    toggles: BTreeMap<String, ToggleCounts>,
}

#[derive(Deserialize)]
struct ToggleCounts {
    #[serde(default)]
    yes: u64,
    #[serde(default)]
    no: u64,
    #[serde(default)]
    variants: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BulkBody {
    #[serde(default)]
    applications: Vec<BulkApplication>,
    #[serde(default)]
    metrics: Vec<BulkMetric>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BulkApplication {
    app_name: String,
    instance_id: String,
    environment: String,
    sdk_version: Option<String>,
    strategies: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BulkMetric {
    feature_name: String,
    app_name: String,
    environment: String,
    #[serde(default)]
    yes: u64,
    #[serde(default)]
    no: u64,
    #[serde(default)]
    variants: BTreeMap<String, u64>,
}

/// The longest application, instance, flag or environment name accepted.
const MAX_NAME: usize = 255;

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|error| ApiError::validation(format!("body: {error}")))
}

fn check_name(what: &str, value: &str) -> Result<(), ApiError> {
    if value.trim().is_empty() || value.len() > MAX_NAME {
        return Err(ApiError::validation(format!(
            "{what} must be 1 to {MAX_NAME} characters"
        )));
    }
    Ok(())
}

fn check_time(what: &str, value: &serde_json::Value) -> Result<(), ApiError> {
    match value {
        serde_json::Value::String(text) if chrono::DateTime::parse_from_rfc3339(text).is_ok() => {
            Ok(())
        }
        serde_json::Value::Number(_) => Ok(()),
        _ => Err(ApiError::validation(format!(
            "{what} must be a date-time or a number"
        ))),
    }
}

/// Who posted: the environment counts go under and the caller's address.
pub struct Poster {
    /// The token's environment; `None` for a `*` token (the body's environment is used, else `development`).
    pub environment: Option<String>,
    pub client_ip: Option<String>,
    pub now_ms: i64,
}

impl Poster {
    fn environment(&self, from_body: Option<&str>) -> String {
        self.environment
            .clone()
            .or_else(|| from_body.filter(|e| !e.is_empty()).map(str::to_owned))
            .unwrap_or_else(|| "development".to_owned())
    }

    fn instance(
        &self,
        app_name: &str,
        instance_id: Option<String>,
        sdk_version: Option<String>,
        environment: String,
    ) -> v1::InstanceSeen {
        v1::InstanceSeen {
            app_name: app_name.to_owned(),
            instance_id: instance_id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| "default".to_owned()),
            seen_at_ms: self.now_ms,
            client_ip: self.client_ip.clone(),
            sdk_version,
            environment: Some(environment),
        }
    }
}

/// A registration body (`/api/client/register`, `/api/frontend/client/register`).
pub fn register_usage(body: &[u8], poster: &Poster) -> Result<Usage, ApiError> {
    let body: RegisterBody = parse(body)?;
    check_name("appName", &body.app_name)?;
    check_time("started", &body.started)?;
    if !body.interval.is_number() {
        return Err(ApiError::validation("interval must be a number"));
    }
    let environment = poster.environment(body.environment.as_deref());
    Ok(Usage {
        applications: vec![v1::ApplicationSeen {
            app_name: body.app_name.clone(),
            seen_at_ms: poster.now_ms,
            registered: true,
            strategies: body.strategies,
        }],
        instances: vec![poster.instance(
            &body.app_name,
            body.instance_id,
            body.sdk_version,
            environment,
        )],
        counts: Vec::new(),
    })
}

/// A metrics body (`/api/client/metrics`, `/api/frontend/client/metrics`): `yes`/`no` as sent, variants
/// alongside (never added to yes/no), under the minute received.
pub fn metrics_usage(body: &[u8], poster: &Poster) -> Result<Usage, ApiError> {
    let body: MetricsBody = parse(body)?;
    check_name("appName", &body.app_name)?;
    check_time("bucket.start", &body.bucket.start)?;
    check_time("bucket.stop", &body.bucket.stop)?;
    for name in body.bucket.toggles.keys() {
        check_name("a flag name in bucket.toggles", name)?;
    }
    let environment = poster.environment(body.environment.as_deref());
    let minute_ms = minute_of(poster.now_ms);
    let counts = body
        .bucket
        .toggles
        .into_iter()
        .map(|(feature_name, counts)| v1::FlagCount {
            feature_name,
            app_name: body.app_name.clone(),
            environment: environment.clone(),
            minute_ms,
            yes: counts.yes,
            no: counts.no,
            variants: counts.variants.into_iter().collect(),
        })
        .collect();
    Ok(Usage {
        applications: vec![v1::ApplicationSeen {
            app_name: body.app_name.clone(),
            seen_at_ms: poster.now_ms,
            registered: false,
            strategies: Vec::new(),
        }],
        instances: vec![poster.instance(
            &body.app_name,
            body.instance_id,
            body.sdk_version,
            environment,
        )],
        counts,
    })
}

/// An Edge-style bulk body (`/api/client/metrics/bulk`).
pub fn bulk_usage(body: &[u8], poster: &Poster) -> Result<Usage, ApiError> {
    let body: BulkBody = parse(body)?;
    let mut usage = Usage::default();
    for app in body.applications {
        check_name("applications[].appName", &app.app_name)?;
        check_name("applications[].environment", &app.environment)?;
        let environment = poster.environment(Some(&app.environment));
        usage.applications.push(v1::ApplicationSeen {
            app_name: app.app_name.clone(),
            seen_at_ms: poster.now_ms,
            registered: app.strategies.is_some(),
            strategies: app.strategies.unwrap_or_default(),
        });
        usage.instances.push(poster.instance(
            &app.app_name,
            Some(app.instance_id),
            app.sdk_version,
            environment,
        ));
    }
    let minute_ms = minute_of(poster.now_ms);
    for metric in body.metrics {
        check_name("metrics[].featureName", &metric.feature_name)?;
        check_name("metrics[].appName", &metric.app_name)?;
        check_name("metrics[].environment", &metric.environment)?;
        usage.counts.push(v1::FlagCount {
            environment: poster.environment(Some(&metric.environment)),
            feature_name: metric.feature_name,
            app_name: metric.app_name,
            minute_ms,
            yes: metric.yes,
            no: metric.no,
            variants: metric.variants.into_iter().collect(),
        });
    }
    Ok(usage)
}

fn poster(scope: &Scope, ip: Option<String>) -> Poster {
    Poster {
        environment: (!scope.wildcard_environment).then(|| scope.environment.name.clone()),
        client_ip: ip,
        now_ms: now_ms(),
    }
}

async fn deliver(state: &ServingState, usage: Usage) -> Result<(), ApiError> {
    match &state.usage {
        Some(sink) => sink.record(usage).await,
        None => Ok(()),
    }
}

/// `POST /api/client/register`.
#[cfg_attr(feature = "openapi", utoipa::path(
    post, path = "/api/client/register", tag = "Client API",
    request_body(content = serde_json::Value, description = "`{appName*, instanceId, sdkVersion, strategies*[], started*, interval*}`"),
    responses((status = 202, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
))]
pub async fn client_register(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = register_usage(&body, &poster(&scope, ip))?;
    deliver(&state, usage).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/client/metrics`.
#[cfg_attr(feature = "openapi", utoipa::path(
    post, path = "/api/client/metrics", tag = "Client API",
    request_body(content = serde_json::Value, description = "`{appName*, instanceId, bucket:{start*, stop*, toggles*:{flag:{yes, no, variants}}}}`"),
    responses((status = 202, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
))]
pub async fn client_metrics(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = metrics_usage(&body, &poster(&scope, ip))?;
    deliver(&state, usage).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/client/metrics/bulk` (as Unleash Edge forwards).
#[cfg_attr(feature = "openapi", utoipa::path(
    post, path = "/api/client/metrics/bulk", tag = "Client API",
    request_body(content = serde_json::Value, description = "`{applications:[{appName*, instanceId*, environment*}], metrics:[{featureName*, appName*, environment*, yes, no, variants}]}`"),
    responses((status = 202, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
))]
pub async fn client_metrics_bulk(
    State(state): State<Arc<ServingState>>,
    ClientScope(scope): ClientScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = bulk_usage(&body, &poster(&scope, ip))?;
    deliver(&state, usage).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/frontend/client/metrics`: counted under the token's environment.
#[cfg_attr(feature = "openapi", utoipa::path(
    post, path = "/api/frontend/client/metrics", tag = "Frontend API",
    request_body(content = serde_json::Value, description = "The client metrics body"),
    responses((status = 200, description = "Accepted"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody),
        (status = 404, description = "The frontend API is disabled", body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
))]
pub async fn frontend_metrics(
    State(state): State<Arc<ServingState>>,
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let usage = metrics_usage(&body, &poster(&scope, ip))?;
    deliver(&state, usage).await?;
    Ok(StatusCode::OK)
}

/// `POST /api/frontend/client/register`: checked, then a no-op (API.md §5).
#[cfg_attr(feature = "openapi", utoipa::path(
    post, path = "/api/frontend/client/register", tag = "Frontend API",
    request_body(content = serde_json::Value, description = "The register body"),
    responses((status = 200, description = "Accepted (nothing is stored)"), (status = 400, body = vexil_shared::ErrorBody),
        (status = 401, body = vexil_shared::ErrorBody), (status = 403, body = vexil_shared::ErrorBody),
        (status = 404, description = "The frontend API is disabled", body = vexil_shared::ErrorBody), (status = 503, body = vexil_shared::ErrorBody))
))]
pub async fn frontend_register(
    FrontendScope(scope): FrontendScope,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    register_usage(&body, &poster(&scope, ip))?;
    Ok(StatusCode::OK)
}

/// How many threads get a shard of their own: about one per core (the runtime's workers).
fn exclusive_shards() -> usize {
    static COUNT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(4, |n| n.get())
            .clamp(1, 16)
    })
}

/// This thread's number, assigned in order on first use and never reused.
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    NUMBER.with(|cell| {
        if cell.get() == usize::MAX {
            cell.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        cell.get()
    })
}

/// One environment's evaluations per flag, without locks or allocation. Per shard: `enabled[flag]`,
/// `single[flag]` (one-flag evaluations), `requests[project]` (all-flag evaluations of project-scoped tokens)
/// and `requests_all` (of `*` tokens); a flag was evaluated `requests_all + requests[its project] +
/// single[flag]` times, `enabled[flag]` of them enabled.
///
/// The first threads (one per core) each own a shard and add with a plain relaxed load and store (no atomic
/// read-modify-write: only the owner writes it); any further thread adds to a shared last shard with
/// `fetch_add`. Counters only grow; a harvest takes the difference from the previous harvest.
#[derive(Debug)]
pub struct EvaluationCounters {
    flags: usize,
    projects: usize,
    shards: Box<[Box<[AtomicU64]>]>,
    harvested: Box<[AtomicU64]>,
}

/// Counter cells a shard is padded with, so that two shards never share a cache line.
const PAD: usize = 16;

/// The shard an evaluation adds to.
#[derive(Clone, Copy)]
pub struct Shard<'c> {
    cells: &'c [AtomicU64],
    owned: bool,
}

impl Shard<'_> {
    #[inline]
    fn bump(self, cell: usize) {
        let counter = &self.cells[cell];
        if self.owned {
            counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl EvaluationCounters {
    pub fn new(engine: &Snapshot) -> EvaluationCounters {
        let flags = engine.len();
        let projects = engine.project_names().len();
        let cells = 2 * flags + projects + 1;
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect();
        let shards = (0..=exclusive_shards())
            .map(|_| zeros(cells + PAD))
            .collect();
        EvaluationCounters {
            flags,
            projects,
            shards,
            harvested: zeros(cells),
        }
    }

    fn shard(&self) -> Shard<'_> {
        let owned = self.shards.len() - 1;
        let number = thread_number();
        let index = number.min(owned);
        Shard {
            cells: &self.shards[index],
            owned: number < owned,
        }
    }

    /// An all-flags evaluation for `projects` began; call [`Self::enabled`] for each flag it found enabled.
    pub fn all_flags(&self, engine: &Snapshot, projects: &Projects) -> Shard<'_> {
        let shard = self.shard();
        match projects {
            Projects::All => shard.bump(2 * self.flags + self.projects),
            Projects::Only(list) => {
                for (index, name) in engine.project_names().iter().enumerate() {
                    if list.iter().any(|p| **p == **name) {
                        shard.bump(2 * self.flags + index);
                    }
                }
            }
        }
        shard
    }

    /// Flag `index` was enabled in the evaluation whose shard `all_flags` returned.
    #[inline]
    pub fn enabled(shard: Shard<'_>, index: usize) {
        shard.bump(index);
    }

    /// One flag evaluated on its own.
    pub fn one_flag(&self, index: usize, enabled: bool) {
        let shard = self.shard();
        shard.bump(self.flags + index);
        if enabled {
            shard.bump(index);
        }
    }

    /// The counts since the previous harvest: `(flag, enabled, not enabled)` for each flag evaluated. An
    /// evaluation running meanwhile lands in this harvest or the next, off by at most itself.
    pub fn harvest(&self, engine: &Snapshot, mut each: impl FnMut(&str, u64, u64)) {
        let take = |cell: usize| -> u64 {
            let total = self
                .shards
                .iter()
                .map(|shard| shard[cell].load(Ordering::Relaxed))
                .fold(0u64, u64::wrapping_add);
            total.wrapping_sub(self.harvested[cell].swap(total, Ordering::Relaxed))
        };
        let all = take(2 * self.flags + self.projects);
        let requests: Vec<u64> = (0..self.projects)
            .map(|p| take(2 * self.flags + p))
            .collect();
        for index in 0..self.flags.min(engine.len()) {
            let evaluated = all + requests[engine.flag_project(index)] + take(self.flags + index);
            let enabled = take(index);
            if evaluated > 0 || enabled > 0 {
                each(
                    engine.flag_name(index),
                    enabled,
                    evaluated.saturating_sub(enabled),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poster() -> Poster {
        Poster {
            environment: Some("production".to_owned()),
            client_ip: Some("10.0.0.1".to_owned()),
            now_ms: 1_800_000_030_500,
        }
    }

    #[test]
    fn a_metrics_body_counts_yes_and_no_under_the_minute_received() {
        let usage = metrics_usage(
            br#"{"appName":"web","instanceId":"i1","environment":"ignored","bucket":{"start":"2026-01-01T00:00:00Z","stop":"2026-01-01T00:01:00Z","toggles":{"a":{"yes":3,"no":1,"variants":{"red":2}}}}}"#,
            &poster(),
        )
        .unwrap();
        assert_eq!(usage.counts.len(), 1);
        let count = &usage.counts[0];
        assert_eq!((count.yes, count.no), (3, 1));
        assert_eq!(count.variants["red"], 2);
        assert_eq!(count.environment, "production");
        assert_eq!(count.minute_ms, 1_800_000_000_000);
        assert_eq!(usage.instances[0].client_ip.as_deref(), Some("10.0.0.1"));
    }

    #[test]
    fn bad_bodies_are_refused() {
        for body in [
            &br#"{"bucket":{"start":"2026-01-01T00:00:00Z","stop":"2026-01-01T00:00:00Z","toggles":{}}}"#[..],
            br#"{"appName":"web","bucket":{"start":"x","stop":"2026-01-01T00:00:00Z","toggles":{}}}"#,
            br#"{"appName":"web","bucket":{"start":1,"stop":2,"toggles":{"a":{"yes":-1}}}}"#,
            br#"{"appName":"","bucket":{"start":1,"stop":2,"toggles":{}}}"#,
            b"not json",
        ] {
            assert!(metrics_usage(body, &poster()).is_err());
        }
        assert!(register_usage(
            br#"{"appName":"web","strategies":[],"started":1}"#,
            &poster()
        )
        .is_err());
        assert!(register_usage(
            br#"{"appName":"web","strategies":["default"],"started":"2026-01-01T00:00:00Z","interval":10000}"#,
            &poster()
        )
        .is_ok());
    }

    #[test]
    fn evaluation_counters_add_up_per_flag() {
        let doc: vexil_shared::FeaturesDocument = serde_json::from_value(serde_json::json!({
            "version": 2,
            "features": [
                {"name": "a", "enabled": true, "project": "p1", "strategies": [{"name": "default"}]},
                {"name": "b", "enabled": false, "project": "p2", "strategies": []}
            ]
        }))
        .unwrap();
        let engine = Snapshot::compile(&doc);
        let counters = EvaluationCounters::new(&engine);
        let ctx = vexil_shared::Context::default();
        for projects in [Projects::All, Projects::Only(vec!["p1".to_owned()])] {
            let shard = counters.all_flags(&engine, &projects);
            let mut out = Vec::new();
            engine.write_toggles_json_counted(&ctx, &projects, &mut out, |i| {
                EvaluationCounters::enabled(shard, i)
            });
        }
        counters.one_flag(engine.flag_index("b").unwrap(), false);
        let mut seen = Vec::new();
        counters.harvest(&engine, |name, yes, no| {
            seen.push((name.to_owned(), yes, no))
        });
        assert_eq!(
            seen,
            [("a".to_owned(), 2, 0), ("b".to_owned(), 0, 2)],
            "b: once in the `*` evaluation, once on its own"
        );
        let mut again = 0;
        counters.harvest(&engine, |_, _, _| again += 1);
        assert_eq!(again, 0, "a harvest zeroes the counts");
    }
}
