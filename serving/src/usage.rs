//! Usage from the SDKs (API.md §4, §5): the bodies of `POST /api/client/register`, `/api/client/metrics`,
//! `/api/client/metrics/bulk` (client tokens), `/api/frontend/client/metrics` and `/api/frontend/client/register`
//! (frontend tokens), whose handlers are in `client_api` and `frontend`. A body is parsed and
//! checked here, turned into [`Usage`] (the `vexil.v1` messages the edges batch), and handed to the binary's
//! [`UsageSink`]: the edge aggregates it into its next batch, the control plane stores it. A bad body is 400
//! and reaches no sink.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use vexil_proto::v1;
use vexil_shared::ApiError;

use crate::unleash_edge_report;

/// What one SDK post adds: the application and instance seen, and the flags' counts; or an Unleash Edge's
/// checked report on itself (`POST /api/client/metrics/edge`, [`crate::unleash_edge_report`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub applications: Vec<v1::ApplicationSeen>,
    pub instances: Vec<v1::InstanceSeen>,
    pub counts: Vec<v1::FlagCount>,
    pub unleash_edges: Vec<v1::UnleashEdgeReport>,
}

/// Where a binary puts the SDKs' usage.
pub trait UsageSink: Send + Sync {
    fn record(
        &self,
        usage: Usage,
    ) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send + '_>>;
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

/// Longest name accepted, in characters: an application name, instance id, flag name, variant name, strategy
/// name, SDK version or client IP (and an edge's id, batch id and version). Unleash keeps each of these in a
/// `varchar(255)` column, so an SDK that works with Unleash never needs more.
pub const MAX_NAME_CHARS: usize = 255;

/// Longest environment name accepted, in characters: environments are named by the names rule (1 to 100
/// characters, API.md §1), and Unleash keeps them in a `varchar(100)`.
pub const MAX_ENVIRONMENT_CHARS: usize = 100;

/// Most flags in one metrics post (`bucket.toggles`, or a bulk post's `metrics`): twice the default flag
/// limit (`--limit-feature-flags`, 5000), so an SDK that evaluated every flag of a large installation fits,
/// while what one post writes stays bounded.
pub const MAX_FLAGS_PER_POST: usize = 10_000;

/// Most variants counted for one flag in one post; also what the edge's aggregate and the store keep per flag,
/// application, environment and minute (further names are dropped). A flag's variants share a weight of
/// 1000 and real flags have a handful, so a hundred leaves room while one flag's counts stay a few rows.
pub const MAX_VARIANTS_PER_FLAG: usize = 100;

/// Most strategies in one registration: Unleash has eight built-in strategies and an application adds a few
/// custom ones; a hundred leaves room while the stored list stays small.
pub const MAX_STRATEGIES_PER_APPLICATION: usize = 100;

/// Most applications in one bulk post (one per SDK instance a forwarding Unleash Edge saw in its interval):
/// a thousand instances behind one forwarder is more than a real one reports at once.
pub const MAX_APPLICATIONS_PER_POST: usize = 1_000;

pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|error| ApiError::validation(format!("body: {error}")))
}

/// A required name: not blank, at most `max_chars` characters, no control character (NUL included: Postgres
/// refuses it in text). `path` is where it sits in the body (`appName`, `bucket.toggles["a"]`).
fn check_name(path: impl Display, value: &str, max_chars: usize) -> Result<(), ApiError> {
    if value.trim().is_empty() {
        return Err(ApiError::validation(format!(
            "{path} must be 1 to {max_chars} characters"
        )));
    }
    check_text(path, value, max_chars)
}

/// A text that may be empty: at most `max_chars` characters, no control character.
fn check_text(path: impl Display, value: &str, max_chars: usize) -> Result<(), ApiError> {
    if value.chars().count() > max_chars {
        return Err(ApiError::validation(format!(
            "{path} must be at most {max_chars} characters"
        )));
    }
    if let Some(control) = value.chars().find(|c| c.is_control()) {
        return Err(ApiError::validation(format!(
            "{path} must not contain control characters (found U+{:04X})",
            u32::from(control)
        )));
    }
    Ok(())
}

fn check_optional(path: &str, value: Option<&str>, max_chars: usize) -> Result<(), ApiError> {
    value.map_or(Ok(()), |value| check_text(path, value, max_chars))
}

/// At most `max` entries in the list or map at `path`.
fn check_count(path: impl Display, count: usize, max: usize) -> Result<(), ApiError> {
    if count > max {
        return Err(ApiError::validation(format!(
            "{path} must have at most {max} entries, not {count}"
        )));
    }
    Ok(())
}

/// The path of a map's entry: `parent["key"]`, the key JSON-escaped and cut at 40 characters, so that a
/// message names a bad key without repeating it whole.
fn key_path(parent: &str, key: &str) -> String {
    const SHOWN_CHARS: usize = 40;
    let mut shown: String = key.chars().take(SHOWN_CHARS).collect();
    if key.chars().nth(SHOWN_CHARS).is_some() {
        shown.push('…');
    }
    let quoted = serde_json::to_string(&shown).unwrap_or_else(|_| "\"…\"".to_owned());
    format!("{parent}[{quoted}]")
}

fn check_strategies(path: &str, strategies: &[String]) -> Result<(), ApiError> {
    check_count(path, strategies.len(), MAX_STRATEGIES_PER_APPLICATION)?;
    for (index, strategy) in strategies.iter().enumerate() {
        check_text(format_args!("{path}[{index}]"), strategy, MAX_NAME_CHARS)?;
    }
    Ok(())
}

/// A flag's variant counts: at most [`MAX_VARIANTS_PER_FLAG`], each name at most [`MAX_NAME_CHARS`].
fn check_variants<'a>(
    path: &str,
    variants: impl ExactSizeIterator<Item = &'a String>,
) -> Result<(), ApiError> {
    check_count(path, variants.len(), MAX_VARIANTS_PER_FLAG)?;
    for variant in variants {
        check_text(key_path(path, variant), variant, MAX_NAME_CHARS)?;
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
            // The first `X-Forwarded-For` hop is the caller's to choose: one that is no address is not kept.
            client_ip: self
                .client_ip
                .clone()
                .filter(|ip| check_text("clientIp", ip, MAX_NAME_CHARS).is_ok()),
            sdk_version,
            environment: Some(environment),
        }
    }
}

/// A registration body (`/api/client/register`, `/api/frontend/client/register`).
pub fn register_usage(body: &[u8], poster: &Poster) -> Result<Usage, ApiError> {
    let body: RegisterBody = parse(body)?;
    check_name("appName", &body.app_name, MAX_NAME_CHARS)?;
    check_optional("instanceId", body.instance_id.as_deref(), MAX_NAME_CHARS)?;
    check_optional("sdkVersion", body.sdk_version.as_deref(), MAX_NAME_CHARS)?;
    check_optional(
        "environment",
        body.environment.as_deref(),
        MAX_ENVIRONMENT_CHARS,
    )?;
    check_strategies("strategies", &body.strategies)?;
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
        unleash_edges: Vec::new(),
    })
}

/// A metrics body (`/api/client/metrics`, `/api/frontend/client/metrics`): `yes`/`no` as sent, variants
/// alongside (never added to yes/no), under the minute received.
pub fn metrics_usage(body: &[u8], poster: &Poster) -> Result<Usage, ApiError> {
    let body: MetricsBody = parse(body)?;
    check_name("appName", &body.app_name, MAX_NAME_CHARS)?;
    check_optional("instanceId", body.instance_id.as_deref(), MAX_NAME_CHARS)?;
    check_optional("sdkVersion", body.sdk_version.as_deref(), MAX_NAME_CHARS)?;
    check_optional(
        "environment",
        body.environment.as_deref(),
        MAX_ENVIRONMENT_CHARS,
    )?;
    check_time("bucket.start", &body.bucket.start)?;
    check_time("bucket.stop", &body.bucket.stop)?;
    check_count(
        "bucket.toggles",
        body.bucket.toggles.len(),
        MAX_FLAGS_PER_POST,
    )?;
    for (name, counts) in &body.bucket.toggles {
        let path = key_path("bucket.toggles", name);
        check_name(&path, name, MAX_NAME_CHARS)?;
        check_variants(&format!("{path}.variants"), counts.variants.keys())?;
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
        unleash_edges: Vec::new(),
    })
}

/// An Edge-style bulk body (`/api/client/metrics/bulk`).
pub fn bulk_usage(body: &[u8], poster: &Poster) -> Result<Usage, ApiError> {
    let body: BulkBody = parse(body)?;
    check_count(
        "applications",
        body.applications.len(),
        MAX_APPLICATIONS_PER_POST,
    )?;
    check_count("metrics", body.metrics.len(), MAX_FLAGS_PER_POST)?;
    for (index, app) in body.applications.iter().enumerate() {
        let path = format!("applications[{index}]");
        check_name(
            format_args!("{path}.appName"),
            &app.app_name,
            MAX_NAME_CHARS,
        )?;
        check_text(
            format_args!("{path}.instanceId"),
            &app.instance_id,
            MAX_NAME_CHARS,
        )?;
        check_name(
            format_args!("{path}.environment"),
            &app.environment,
            MAX_ENVIRONMENT_CHARS,
        )?;
        if let Some(version) = &app.sdk_version {
            check_text(format_args!("{path}.sdkVersion"), version, MAX_NAME_CHARS)?;
        }
        if let Some(strategies) = &app.strategies {
            check_strategies(&format!("{path}.strategies"), strategies)?;
        }
    }
    for (index, metric) in body.metrics.iter().enumerate() {
        let path = format!("metrics[{index}]");
        check_name(
            format_args!("{path}.featureName"),
            &metric.feature_name,
            MAX_NAME_CHARS,
        )?;
        check_name(
            format_args!("{path}.appName"),
            &metric.app_name,
            MAX_NAME_CHARS,
        )?;
        check_name(
            format_args!("{path}.environment"),
            &metric.environment,
            MAX_ENVIRONMENT_CHARS,
        )?;
        check_variants(&format!("{path}.variants"), metric.variants.keys())?;
    }
    let mut usage = Usage::default();
    for app in body.applications {
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

/// Checks an edge's batch (gRPC `Usage/Report`) with the bounds of the SDK posts, so that the gRPC path is no
/// way around them: what an edge of this version builds from checked posts always passes. Paths use the
/// message's field names (`counts[3].feature_name`).
pub fn check_batch(batch: &v1::UsageBatch) -> Result<(), ApiError> {
    check_required("edge_id", &batch.edge_id, MAX_NAME_CHARS)?;
    check_required("batch_id", &batch.batch_id, MAX_NAME_CHARS)?;
    check_text("edge_version", &batch.edge_version, MAX_NAME_CHARS)?;
    for (index, app) in batch.applications.iter().enumerate() {
        let path = format!("applications[{index}]");
        check_required(
            format_args!("{path}.app_name"),
            &app.app_name,
            MAX_NAME_CHARS,
        )?;
        check_strategies(&format!("{path}.strategies"), &app.strategies)?;
    }
    for (index, instance) in batch.instances.iter().enumerate() {
        let path = format!("instances[{index}]");
        check_required(
            format_args!("{path}.app_name"),
            &instance.app_name,
            MAX_NAME_CHARS,
        )?;
        check_required(
            format_args!("{path}.instance_id"),
            &instance.instance_id,
            MAX_NAME_CHARS,
        )?;
        for (field, value, max_chars) in [
            ("client_ip", &instance.client_ip, MAX_NAME_CHARS),
            ("sdk_version", &instance.sdk_version, MAX_NAME_CHARS),
            ("environment", &instance.environment, MAX_ENVIRONMENT_CHARS),
        ] {
            if let Some(value) = value {
                check_text(format_args!("{path}.{field}"), value, max_chars)?;
            }
        }
    }
    for (index, count) in batch.counts.iter().enumerate() {
        let path = format!("counts[{index}]");
        check_required(
            format_args!("{path}.feature_name"),
            &count.feature_name,
            MAX_NAME_CHARS,
        )?;
        check_required(
            format_args!("{path}.app_name"),
            &count.app_name,
            MAX_NAME_CHARS,
        )?;
        check_required(
            format_args!("{path}.environment"),
            &count.environment,
            MAX_ENVIRONMENT_CHARS,
        )?;
        check_variants(&format!("{path}.variants"), count.variants.keys())?;
    }
    for (index, evaluation) in batch.evaluations.iter().enumerate() {
        let path = format!("evaluations[{index}]");
        check_required(
            format_args!("{path}.environment"),
            &evaluation.environment,
            MAX_ENVIRONMENT_CHARS,
        )?;
        check_required(
            format_args!("{path}.feature_name"),
            &evaluation.feature_name,
            MAX_NAME_CHARS,
        )?;
    }
    for (index, seen) in batch.tokens_seen.iter().enumerate() {
        if seen.sha256.len() != 32 {
            return Err(ApiError::validation(format!(
                "tokens_seen[{index}].sha256 must be 32 bytes"
            )));
        }
    }
    for (index, report) in batch.unleash_edges.iter().enumerate() {
        unleash_edge_report::check_report(report).map_err(|error| {
            ApiError::validation(format!("unleash_edges[{index}]: {}", error.message))
        })?;
    }
    Ok(())
}

/// A batch's required text: not empty (a post's names are not blank, which is stricter), at most
/// `max_chars` characters, no control character.
fn check_required(path: impl Display, value: &str, max_chars: usize) -> Result<(), ApiError> {
    if value.is_empty() {
        return Err(ApiError::validation(format!(
            "{path} must be 1 to {max_chars} characters"
        )));
    }
    check_text(path, value, max_chars)
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

    fn refusal(result: Result<Usage, ApiError>) -> String {
        match result {
            Ok(usage) => panic!("accepted: {usage:?}"),
            Err(error) => {
                assert_eq!(error.kind, vexil_shared::ErrorKind::Validation);
                error.message
            }
        }
    }

    fn metrics_with(field: &str, value: serde_json::Value) -> Vec<u8> {
        let mut body = serde_json::json!({"appName": "web", "instanceId": "i1",
            "bucket": {"start": 1, "stop": 2, "toggles": {"a": {"yes": 1, "no": 0, "variants": {"red": 1}}}}});
        body[field] = value;
        serde_json::to_vec(&body).unwrap()
    }

    #[test]
    fn names_are_bounded_and_free_of_control_characters() {
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        for (field, value, path) in [
            ("appName", long.as_str(), "appName"),
            ("appName", "web\0", "appName"),
            ("instanceId", long.as_str(), "instanceId"),
            ("instanceId", "i\u{1}", "instanceId"),
            ("sdkVersion", "v\u{7f}", "sdkVersion"),
            (
                "environment",
                &"e".repeat(MAX_ENVIRONMENT_CHARS + 1),
                "environment",
            ),
        ] {
            let message = refusal(metrics_usage(&metrics_with(field, value.into()), &poster()));
            assert!(message.starts_with(path), "{field}: {message}");
        }
        // Characters, not bytes: 255 two-byte characters are a name.
        let wide = "é".repeat(MAX_NAME_CHARS);
        assert!(metrics_usage(&metrics_with("appName", wide.into()), &poster()).is_ok());

        let toggles = serde_json::json!({"ok": {"yes": 1}, "bad\u{0}name": {"yes": 1}});
        let message = refusal(metrics_usage(
            &metrics_with(
                "bucket",
                serde_json::json!({"start": 1, "stop": 2, "toggles": toggles}),
            ),
            &poster(),
        ));
        assert_eq!(
            message,
            "bucket.toggles[\"bad\\u0000name\"] must not contain control characters (found U+0000)"
        );
        let toggles = serde_json::json!({"a": {"yes": 1, "variants": {"x".repeat(300): 1}}});
        let message = refusal(metrics_usage(
            &metrics_with(
                "bucket",
                serde_json::json!({"start": 1, "stop": 2, "toggles": toggles}),
            ),
            &poster(),
        ));
        assert!(
            message.starts_with("bucket.toggles[\"a\"].variants[\"xxxx")
                && message.contains("…\"] must be at most 255 characters"),
            "{message}"
        );
    }

    #[test]
    fn entries_per_post_are_bounded() {
        let toggles: serde_json::Map<String, serde_json::Value> = (0..=MAX_FLAGS_PER_POST)
            .map(|i| (format!("f{i}"), serde_json::json!({"yes": 1})))
            .collect();
        let message = refusal(metrics_usage(
            &metrics_with(
                "bucket",
                serde_json::json!({"start": 1, "stop": 2, "toggles": toggles}),
            ),
            &poster(),
        ));
        assert_eq!(
            message,
            "bucket.toggles must have at most 10000 entries, not 10001"
        );
        let variants: serde_json::Map<String, serde_json::Value> = (0..=MAX_VARIANTS_PER_FLAG)
            .map(|i| (format!("v{i}"), 1.into()))
            .collect();
        let body = serde_json::json!({"metrics": [{"featureName": "a", "appName": "web",
            "environment": "development", "variants": variants}]});
        let message = refusal(bulk_usage(&serde_json::to_vec(&body).unwrap(), &poster()));
        assert_eq!(
            message,
            "metrics[0].variants must have at most 100 entries, not 101"
        );
        let strategies: Vec<String> = (0..=MAX_STRATEGIES_PER_APPLICATION)
            .map(|i| format!("s{i}"))
            .collect();
        let body = serde_json::json!({"appName": "web", "strategies": strategies, "started": 1, "interval": 1});
        let message = refusal(register_usage(
            &serde_json::to_vec(&body).unwrap(),
            &poster(),
        ));
        assert_eq!(message, "strategies must have at most 100 entries, not 101");
        let applications: Vec<serde_json::Value> = (0..=MAX_APPLICATIONS_PER_POST)
            .map(|i| serde_json::json!({"appName": "web", "instanceId": format!("i{i}"), "environment": "development"}))
            .collect();
        let body = serde_json::json!({"applications": applications});
        let message = refusal(bulk_usage(&serde_json::to_vec(&body).unwrap(), &poster()));
        assert_eq!(
            message,
            "applications must have at most 1000 entries, not 1001"
        );
        let body = serde_json::json!({"applications": [{"appName": "web", "instanceId": "i",
            "environment": "development", "strategies": ["default", "a\tb"]}]});
        let message = refusal(bulk_usage(&serde_json::to_vec(&body).unwrap(), &poster()));
        assert_eq!(
            message,
            "applications[0].strategies[1] must not contain control characters (found U+0009)"
        );
    }

    #[test]
    fn what_a_checked_post_yields_passes_the_batch_check() {
        let name = "n".repeat(MAX_NAME_CHARS);
        let variants: serde_json::Map<String, serde_json::Value> = (0..MAX_VARIANTS_PER_FLAG)
            .map(|i| (format!("{i:0>255}"), u64::MAX.into()))
            .collect();
        let body = serde_json::json!({"appName": name, "instanceId": " ", "sdkVersion": "",
            "environment": " ", "bucket": {"start": 1, "stop": 2,
            "toggles": {name.clone(): {"yes": u64::MAX, "no": 0, "variants": variants}}}});
        let wildcard = Poster {
            environment: None,
            client_ip: Some("x".repeat(MAX_NAME_CHARS + 1)),
            now_ms: 0,
        };
        let usage = metrics_usage(&serde_json::to_vec(&body).unwrap(), &wildcard).unwrap();
        assert_eq!(
            usage.instances[0].client_ip, None,
            "an over-long client IP is not kept"
        );
        let mut batch = v1::UsageBatch {
            edge_id: "edge".to_owned(),
            batch_id: "1".to_owned(),
            applications: usage.applications,
            instances: usage.instances,
            counts: usage.counts,
            ..v1::UsageBatch::default()
        };
        check_batch(&batch).unwrap();
        batch.counts[0].feature_name.push('\0');
        let message = check_batch(&batch).unwrap_err().message;
        assert_eq!(
            message,
            "counts[0].feature_name must be at most 255 characters"
        );
        batch.counts[0].feature_name = "a\0".to_owned();
        let message = check_batch(&batch).unwrap_err().message;
        assert_eq!(
            message,
            "counts[0].feature_name must not contain control characters (found U+0000)"
        );
        batch.counts.clear();
        batch.edge_id.clear();
        assert_eq!(
            check_batch(&batch).unwrap_err().message,
            "edge_id must be 1 to 255 characters"
        );
    }
}
