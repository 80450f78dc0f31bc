//! Usage from the SDKs (API.md §4, §5): the bodies of `POST /api/client/register`, `/api/client/metrics`,
//! `/api/client/metrics/bulk` (client tokens), `/api/frontend/client/metrics` and `/api/frontend/client/register`
//! (frontend tokens), whose handlers are in `client_api` and `frontend`. A body is parsed and
//! checked here, turned into [`Usage`] (the `vexil.v1` messages the edges batch), and handed to the binary's
//! [`UsageSink`]: the edge aggregates it into its next batch, the control plane stores it. A bad body is 400
//! and reaches no sink.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use vexil_proto::v1;
use vexil_shared::ApiError;

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
}
