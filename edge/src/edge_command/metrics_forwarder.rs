//! The SDKs' metrics and registrations received by this edge, aggregated and forwarded every
//! `METRICS_INTERVAL_SECONDS` to the upstream's `POST /api/client/metrics/bulk` (Unleash Edge's body:
//! `{applications, metrics}`), per environment with a startup token of that environment, in batches of at
//! most [`BATCH_BYTES`], this edge listed in each application's `connectVia`. A batch the upstream did not
//! take (5xx, 429, no answer) is kept and sent again with the next; one it refused as bad (400, 413) or
//! unauthorized is dropped, counted in `edge_metrics_dropped_total` and logged. `flush` sends what is left
//! (at shutdown).
//!
//! The reports Unleash Edge instances behind this edge post about themselves (`POST /api/client/metrics/edge`,
//! checked by `vexil-serving`) are forwarded as they came, the latest of each instance, at the same interval
//! to the upstream's `POST /api/client/metrics/edge` with a startup token of the environment they were posted
//! for (Unleash Edge nests them in its own report instead; this edge sends no report of its own). Kept and
//! dropped as the metrics are; an upstream without that route (open-source Unleash answers 404) drops them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::StatusCode;
use vexil_proto::v1;
use vexil_serving::unleash_edge_report::data_of;
use vexil_serving::usage::{Usage, UsageSink};
use vexil_shared::ApiError;

use super::poller::StartupToken;
use super::upstream_http::{CallError, Identity, UnleashHttp};

/// Unleash Edge's batch size: under the 100 KiB Unleash accepts.
pub const BATCH_BYTES: usize = 95 * 1024;

type AppKey = (String, String, String);
type MetricKey = (String, String, String, i64);
/// The entries one batch carries.
type BatchKeys = (Vec<AppKey>, Vec<MetricKey>);

/// Usage by environment: applications by (environment, app, instance), counts by (environment, app, flag,
/// minute).
#[derive(Debug, Default)]
struct Pending {
    applications: BTreeMap<AppKey, serde_json::Value>,
    metrics: BTreeMap<MetricKey, (u64, u64, BTreeMap<String, u64>)>,
    /// Unleash Edge reports by (environment, identifier): the latest received.
    unleash_edges: BTreeMap<(String, String), v1::UnleashEdgeReport>,
}

pub struct Forwarder {
    http: Arc<UnleashHttp>,
    tokens: Vec<StartupToken>,
    pending: Mutex<Pending>,
}

impl Forwarder {
    pub fn new(http: Arc<UnleashHttp>, tokens: Vec<StartupToken>) -> Forwarder {
        Forwarder {
            http,
            tokens,
            pending: Mutex::default(),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, usage: Usage, via: &Identity, interval_ms: u64) {
        let mut pending = self.pending();
        let strategies: BTreeMap<&str, &Vec<String>> = usage
            .applications
            .iter()
            .map(|a| (a.app_name.as_str(), &a.strategies))
            .collect();
        for instance in &usage.instances {
            let environment = instance
                .environment
                .clone()
                .unwrap_or_else(|| "development".to_owned());
            let mut application = serde_json::json!({
                "appName": instance.app_name,
                "instanceId": instance.instance_id,
                "environment": environment,
                "started": iso(instance.seen_at_ms),
                "interval": interval_ms,
                "strategies": strategies.get(instance.app_name.as_str()).map_or(&Vec::new(), |s| *s),
                "connectVia": [{"appName": via.app_name, "instanceId": via.instance_id}],
            });
            if let Some(version) = &instance.sdk_version {
                application["sdkVersion"] = version.clone().into();
            }
            pending.applications.insert(
                (
                    environment,
                    instance.app_name.clone(),
                    instance.instance_id.clone(),
                ),
                application,
            );
        }
        for report in usage.unleash_edges {
            keep_latest(&mut pending.unleash_edges, report);
        }
        for count in usage.counts {
            let entry = pending
                .metrics
                .entry((
                    count.environment,
                    count.app_name,
                    count.feature_name,
                    count.minute_ms,
                ))
                .or_default();
            entry.0 = entry.0.saturating_add(count.yes);
            entry.1 = entry.1.saturating_add(count.no);
            for (variant, n) in count.variants {
                let slot = entry.2.entry(variant).or_default();
                *slot = slot.saturating_add(n);
            }
        }
    }

    /// Sends what is pending, environment by environment.
    pub async fn flush(&self) {
        let taken = std::mem::take(&mut *self.pending());
        self.forward_reports(taken.unleash_edges).await;
        let mut by_environment: BTreeMap<String, Pending> = BTreeMap::new();
        for (key, application) in taken.applications {
            by_environment
                .entry(key.0.clone())
                .or_default()
                .applications
                .insert(key, application);
        }
        for (key, counts) in taken.metrics {
            by_environment
                .entry(key.0.clone())
                .or_default()
                .metrics
                .insert(key, counts);
        }
        for (environment, pending) in by_environment {
            let Some(token) = self
                .tokens
                .iter()
                .find(|t| t.scope.environment == environment)
            else {
                metrics::counter!("edge_metrics_dropped_total", "reason" => "no_token")
                    .increment(1);
                tracing::warn!(%environment, "dropping metrics of an environment this edge has no token for");
                continue;
            };
            for (batch, keys) in batches(&pending) {
                match self.http.bulk_metrics(&token.secret, batch).await {
                    Ok(()) => {}
                    Err(CallError::Status(status))
                        if !(status.is_server_error()
                            || status == StatusCode::TOO_MANY_REQUESTS) =>
                    {
                        metrics::counter!("edge_metrics_dropped_total", "reason" => status.as_str().to_owned()).increment(1);
                        tracing::warn!(%environment, %status, "the upstream refused a metrics batch: dropped");
                    }
                    Err(error) => {
                        tracing::info!(%environment, %error, "metrics not delivered; kept for the next interval");
                        self.keep(&pending, keys);
                    }
                }
            }
        }
    }

    /// Posts each Unleash Edge report upstream; keeps those the upstream may take later.
    async fn forward_reports(&self, reports: BTreeMap<(String, String), v1::UnleashEdgeReport>) {
        for (_, report) in reports {
            let environment = report.environment.clone();
            let Some(token) = self
                .tokens
                .iter()
                .find(|t| t.scope.environment == environment)
                .or_else(|| self.tokens.first().filter(|_| environment == "*"))
            else {
                metrics::counter!("edge_metrics_dropped_total", "reason" => "no_token")
                    .increment(1);
                tracing::warn!(%environment, "dropping an Unleash Edge report of an environment this edge has no token for");
                continue;
            };
            let Some(instance) = report.instance.clone() else {
                continue;
            };
            let body = match serde_json::to_vec(&data_of(instance)) {
                Ok(body) => body,
                Err(_) => continue,
            };
            match self.http.edge_instance_data(&token.secret, body).await {
                Ok(()) => {}
                Err(CallError::Status(status))
                    if !(status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS) =>
                {
                    metrics::counter!("edge_metrics_dropped_total", "reason" => status.as_str().to_owned()).increment(1);
                    if status == StatusCode::NOT_FOUND {
                        tracing::debug!(%environment, "the upstream takes no Unleash Edge reports: dropped");
                    } else {
                        tracing::warn!(%environment, %status, "the upstream refused an Unleash Edge report: dropped");
                    }
                }
                Err(error) => {
                    tracing::info!(%environment, %error, "Unleash Edge report not delivered; kept for the next interval");
                    keep_latest(&mut self.pending().unleash_edges, report);
                }
            }
        }
    }

    /// Puts the entries of an undelivered batch back (merged with what arrived meanwhile).
    fn keep(&self, sent: &Pending, keys: BatchKeys) {
        let mut pending = self.pending();
        for key in keys.0 {
            if let Some(application) = sent.applications.get(&key) {
                pending
                    .applications
                    .entry(key)
                    .or_insert_with(|| application.clone());
            }
        }
        for key in keys.1 {
            if let Some((yes, no, variants)) = sent.metrics.get(&key) {
                let entry = pending.metrics.entry(key).or_default();
                entry.0 = entry.0.saturating_add(*yes);
                entry.1 = entry.1.saturating_add(*no);
                for (variant, n) in variants {
                    let slot = entry.2.entry(variant.clone()).or_default();
                    *slot = slot.saturating_add(*n);
                }
            }
        }
    }

    /// Flushes every `interval`, forever.
    pub async fn forward_every(self: Arc<Self>, interval: std::time::Duration) {
        loop {
            tokio::time::sleep(interval).await;
            self.flush().await;
        }
    }
}

/// The bodies of `pending`, each at most [`BATCH_BYTES`] (an entry larger than that alone in its own), with
/// the keys each carries.
fn batches(pending: &Pending) -> Vec<(Vec<u8>, BatchKeys)> {
    let mut out = Vec::new();
    let mut applications: Vec<String> = Vec::new();
    let mut metrics: Vec<String> = Vec::new();
    let mut keys: BatchKeys = (Vec::new(), Vec::new());
    let mut size = EMPTY_BODY_BYTES;
    let cut = |applications: &mut Vec<String>,
               metrics: &mut Vec<String>,
               keys: &mut BatchKeys,
               out: &mut Vec<_>| {
        if applications.is_empty() && metrics.is_empty() {
            return;
        }
        let body = format!(
            "{{\"applications\":[{}],\"metrics\":[{}]}}",
            applications.join(","),
            metrics.join(",")
        );
        out.push((body.into_bytes(), std::mem::take(keys)));
        applications.clear();
        metrics.clear();
    };
    for (key, application) in &pending.applications {
        let text = application.to_string();
        if size + text.len() + 1 > BATCH_BYTES {
            cut(&mut applications, &mut metrics, &mut keys, &mut out);
            size = EMPTY_BODY_BYTES;
        }
        size += text.len() + 1;
        applications.push(text);
        keys.0.push(key.clone());
    }
    for (key, (yes, no, variants)) in &pending.metrics {
        let text = serde_json::json!({
            "environment": key.0, "appName": key.1, "featureName": key.2, "timestamp": iso(key.3),
            "yes": yes, "no": no, "variants": variants,
        })
        .to_string();
        if size + text.len() + 1 > BATCH_BYTES {
            cut(&mut applications, &mut metrics, &mut keys, &mut out);
            size = EMPTY_BODY_BYTES;
        }
        size += text.len() + 1;
        metrics.push(text);
        keys.1.push(key.clone());
    }
    cut(&mut applications, &mut metrics, &mut keys, &mut out);
    out
}

/// Keeps `report` unless a later one of the same instance (and environment) is there.
fn keep_latest(
    reports: &mut BTreeMap<(String, String), v1::UnleashEdgeReport>,
    report: v1::UnleashEdgeReport,
) {
    let identifier = report
        .instance
        .as_ref()
        .map(|i| i.identifier.clone())
        .unwrap_or_default();
    let key = (report.environment.clone(), identifier);
    if reports
        .get(&key)
        .is_none_or(|known| known.received_at_ms <= report.received_at_ms)
    {
        reports.insert(key, report);
    }
}

const EMPTY_BODY_BYTES: usize = r#"{"applications":[],"metrics":[]}"#.len();

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What the SDK routes post into.
pub struct ForwarderSink {
    pub forwarder: Arc<Forwarder>,
}

impl UsageSink for ForwarderSink {
    fn record(
        &self,
        usage: Usage,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + '_>>
    {
        let http = &self.forwarder.http;
        self.forwarder
            .add(usage, &http.identity, http.interval_ms());
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_stay_under_the_limit_and_carry_every_entry() {
        let mut pending = Pending::default();
        for i in 0..3000 {
            pending.metrics.insert(
                (
                    "development".into(),
                    "app".into(),
                    format!("flag-{i:05}"),
                    0,
                ),
                (1, 2, BTreeMap::new()),
            );
        }
        pending.applications.insert(
            ("development".into(), "app".into(), "i1".into()),
            serde_json::json!({"appName": "app"}),
        );
        let cut = batches(&pending);
        assert!(cut.len() > 1);
        let mut flags = 0;
        for (body, keys) in &cut {
            assert!(body.len() <= BATCH_BYTES, "{}", body.len());
            let value: serde_json::Value = serde_json::from_slice(body).unwrap();
            assert_eq!(value["metrics"].as_array().unwrap().len(), keys.1.len());
            flags += keys.1.len();
        }
        assert_eq!(flags, 3000);
    }
}
