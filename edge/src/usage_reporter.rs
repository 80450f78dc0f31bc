//! The edge's usage reporting: the SDKs' posts (parsed by `vexil-serving`) reach one aggregator task over a
//! bounded channel (no lock on the request path, nothing allocated beyond the parsed post); every
//! `--metrics-interval` the aggregate, plus the evaluations this edge served (harvested from the snapshots'
//! per-flag counters), is cut into ONE batch sent over gRPC `Usage/Report` with `(edge_id, batch_id)`.
//!
//! A batch that was not acknowledged is retried with the same id and content (the control plane counts it
//! once) before the next one is cut; meanwhile new usage keeps merging into the aggregate, whose size is
//! bounded: past `--metrics-buffer` entries the oldest minutes are dropped and counted in
//! `usage_dropped_total`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use vexil_proto::v1;
use vexil_proto::v1::usage_client::UsageClient;
use vexil_serving::usage::{minute_of, Usage, UsageSink};
use vexil_serving::{ServingSnapshot, ServingState};
use vexil_shared::time::now_ms;
use vexil_shared::ApiError;

use crate::upstream::{AuthorizedChannel, UpstreamAccess};

/// Posts waiting for the aggregator; past this, posts are dropped (and counted).
const QUEUE: usize = 65_536;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const REPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the SDK routes post into.
pub struct EdgeSink {
    sender: mpsc::Sender<Usage>,
}

impl UsageSink for EdgeSink {
    fn record(
        &self,
        usage: Usage,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + '_>>
    {
        if self.sender.try_send(usage).is_err() {
            metrics::counter!("usage_dropped_total", "reason" => "queue_full").increment(1);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Usage merged by key: one entry per application, instance, (flag, app, environment, minute) and
/// (environment, flag, minute) of this edge's own evaluations.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Aggregate {
    applications: BTreeMap<String, v1::ApplicationSeen>,
    instances: BTreeMap<(String, String), v1::InstanceSeen>,
    counts: BTreeMap<(i64, String, String, String), v1::FlagCount>,
    evaluations: BTreeMap<(i64, String, String), v1::EvaluationCount>,
}

impl Aggregate {
    pub fn len(&self) -> usize {
        self.applications.len() + self.instances.len() + self.counts.len() + self.evaluations.len()
    }

    pub fn add(&mut self, usage: Usage) {
        for app in usage.applications {
            match self.applications.get_mut(&app.app_name) {
                Some(known) => {
                    known.seen_at_ms = known.seen_at_ms.max(app.seen_at_ms);
                    if app.registered {
                        known.registered = true;
                        known.strategies = app.strategies;
                    }
                }
                None => {
                    self.applications.insert(app.app_name.clone(), app);
                }
            }
        }
        for instance in usage.instances {
            let key = (instance.app_name.clone(), instance.instance_id.clone());
            match self.instances.get_mut(&key) {
                Some(known) => {
                    known.seen_at_ms = known.seen_at_ms.max(instance.seen_at_ms);
                    if instance.client_ip.is_some() {
                        known.client_ip = instance.client_ip;
                    }
                    if instance.sdk_version.is_some() {
                        known.sdk_version = instance.sdk_version;
                    }
                    if instance.environment.is_some() {
                        known.environment = instance.environment;
                    }
                }
                None => {
                    self.instances.insert(key, instance);
                }
            }
        }
        for count in usage.counts {
            let key = (
                count.minute_ms,
                count.feature_name.clone(),
                count.app_name.clone(),
                count.environment.clone(),
            );
            match self.counts.get_mut(&key) {
                Some(known) => {
                    known.yes += count.yes;
                    known.no += count.no;
                    for (variant, n) in count.variants {
                        *known.variants.entry(variant).or_default() += n;
                    }
                }
                None => {
                    self.counts.insert(key, count);
                }
            }
        }
    }

    pub fn add_evaluations(
        &mut self,
        environment: &str,
        flag: &str,
        minute_ms: i64,
        enabled: u64,
        disabled: u64,
    ) {
        let entry = self
            .evaluations
            .entry((minute_ms, environment.to_owned(), flag.to_owned()))
            .or_insert_with(|| v1::EvaluationCount {
                environment: environment.to_owned(),
                feature_name: flag.to_owned(),
                minute_ms,
                enabled: 0,
                disabled: 0,
            });
        entry.enabled += enabled;
        entry.disabled += disabled;
    }

    /// Drops the oldest minutes' counts (then evaluations, then sightings) until at most `max` entries are
    /// left; returns how many entries were dropped.
    pub fn trim(&mut self, max: usize) -> usize {
        let mut dropped = 0;
        while self.len() > max {
            let oldest_count = self.counts.keys().next().map(|k| k.0);
            let oldest_evaluation = self.evaluations.keys().next().map(|k| k.0);
            let take_count = match (oldest_count, oldest_evaluation) {
                (Some(c), Some(e)) => c <= e,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => {
                    if self.instances.pop_first().is_none() {
                        self.applications.pop_first();
                    }
                    dropped += 1;
                    continue;
                }
            };
            if take_count {
                self.counts.pop_first();
            } else {
                self.evaluations.pop_first();
            }
            dropped += 1;
        }
        dropped
    }

    fn into_batch(self, edge_id: &str, applied_revision: u64) -> v1::UsageBatch {
        v1::UsageBatch {
            edge_id: edge_id.to_owned(),
            batch_id: uuid::Uuid::new_v4().to_string(),
            applied_revision,
            edge_version: env!("CARGO_PKG_VERSION").to_owned(),
            applications: self.applications.into_values().collect(),
            instances: self.instances.into_values().collect(),
            counts: self.counts.into_values().collect(),
            evaluations: self.evaluations.into_values().collect(),
        }
    }
}

/// The aggregator and sender task, and what feeds it.
pub struct Reporter {
    /// The edge token and TLS roots the upstreams are reached with.
    pub access: Arc<UpstreamAccess>,
    pub upstreams: Vec<String>,
    pub edge_id: String,
    pub interval: Duration,
    /// Most entries kept while the upstream is unreachable.
    pub max_entries: usize,
    posts: mpsc::Receiver<Usage>,
    retired: mpsc::UnboundedReceiver<Arc<ServingSnapshot>>,
}

/// The channels' sending ends: the sink for the SDK routes, and where the subscriber puts replaced snapshots
/// (so that evaluations counted on them are harvested too).
pub struct Feeds {
    pub sink: Arc<EdgeSink>,
    pub retired: mpsc::UnboundedSender<Arc<ServingSnapshot>>,
}

impl Reporter {
    pub fn new(
        access: Arc<UpstreamAccess>,
        upstreams: Vec<String>,
        edge_id: String,
        interval: Duration,
        max_entries: usize,
    ) -> (Reporter, Feeds) {
        let (sender, posts) = mpsc::channel(QUEUE);
        let (retired_sender, retired) = mpsc::unbounded_channel();
        (
            Reporter {
                access,
                upstreams,
                edge_id,
                interval,
                max_entries,
                posts,
                retired,
            },
            Feeds {
                sink: Arc::new(EdgeSink { sender }),
                retired: retired_sender,
            },
        )
    }

    /// Runs forever.
    pub async fn run(mut self, serving: Arc<ServingState>) {
        let mut pending = Aggregate::default();
        let mut in_flight: Option<v1::UsageBatch> = None;
        let mut link = Link::new(self.access.clone(), self.upstreams.clone());
        // Replaced snapshots are harvested at two ticks, for evaluations that were still running on them.
        let mut retiring: Vec<Arc<ServingSnapshot>> = Vec::new();
        let mut ticker = tokio::time::interval(self.interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            tokio::select! {
                post = self.posts.recv() => {
                    let Some(post) = post else { return };
                    pending.add(post);
                    self.bound(&mut pending);
                }
                _ = ticker.tick() => {
                    // Present from the first scrape (the recorder is installed after this task starts).
                    metrics::counter!("usage_dropped_total", "reason" => "queue_full").increment(0);
                    metrics::counter!("usage_dropped_total", "reason" => "buffer_full").increment(0);
                    let minute = minute_of(now_ms());
                    let mut retired_now = Vec::new();
                    while let Ok(snapshot) = self.retired.try_recv() {
                        retired_now.push(snapshot);
                    }
                    let current = serving.current.load_full();
                    for snapshot in retiring.iter().chain(&retired_now).chain(current.as_ref()) {
                        harvest(snapshot, minute, &mut pending);
                    }
                    retiring = retired_now;
                    self.bound(&mut pending);
                    let revision = current.as_ref().map_or(0, |s| s.revision);
                    let batch = match in_flight.take() {
                        Some(batch) => batch,
                        None => std::mem::take(&mut pending).into_batch(&self.edge_id, revision),
                    };
                    match link.report(batch.clone()).await {
                        Ok(duplicate) => {
                            metrics::counter!("usage_batches_sent_total").increment(1);
                            tracing::debug!(batch = %batch.batch_id, duplicate, "usage batch acknowledged");
                        }
                        Err(error) => {
                            tracing::warn!(%error, batch = %batch.batch_id, "cannot report usage; keeping the batch");
                            in_flight = Some(batch);
                        }
                    }
                    metrics::gauge!("usage_pending_entries").set(
                        (pending.len() + in_flight.as_ref().map_or(0, batch_len)) as f64,
                    );
                }
            }
        }
    }

    fn bound(&self, pending: &mut Aggregate) {
        let dropped = pending.trim(self.max_entries);
        if dropped > 0 {
            metrics::counter!("usage_dropped_total", "reason" => "buffer_full")
                .increment(dropped as u64);
        }
    }
}

fn batch_len(batch: &v1::UsageBatch) -> usize {
    batch.applications.len() + batch.instances.len() + batch.counts.len() + batch.evaluations.len()
}

fn harvest(snapshot: &ServingSnapshot, minute_ms: i64, into: &mut Aggregate) {
    for (name, view) in &snapshot.environments {
        view.evaluations
            .harvest(&view.engine, |flag, enabled, disabled| {
                into.add_evaluations(name, flag, minute_ms, enabled, disabled)
            });
    }
}

/// The gRPC client of `Usage/Report`, moving to the next upstream after a failure.
struct Link {
    access: Arc<UpstreamAccess>,
    upstreams: Vec<String>,
    next: usize,
    client: Option<UsageClient<AuthorizedChannel>>,
}

impl Link {
    fn new(access: Arc<UpstreamAccess>, upstreams: Vec<String>) -> Link {
        Link {
            access,
            upstreams,
            next: 0,
            client: None,
        }
    }

    async fn report(&mut self, batch: v1::UsageBatch) -> Result<bool, String> {
        let result = self.try_report(batch).await;
        if result.is_err() {
            self.client = None;
            self.next += 1;
        }
        result
    }

    async fn try_report(&mut self, batch: v1::UsageBatch) -> Result<bool, String> {
        let client = match &mut self.client {
            Some(client) => client,
            None => {
                let upstream = self
                    .upstreams
                    .get(self.next % self.upstreams.len().max(1))
                    .ok_or("no upstream")?;
                let channel = self
                    .access
                    .connect(upstream, |endpoint| {
                        endpoint
                            .connect_timeout(CONNECT_TIMEOUT)
                            .timeout(REPORT_TIMEOUT)
                    })
                    .await?;
                self.client.insert(UsageClient::new(channel))
            }
        };
        let ack = client
            .report(batch)
            .await
            .map_err(|status| status.to_string())?;
        Ok(ack.into_inner().duplicate)
    }
}

/// `1s`, `500ms`, `2m`, or a plain number of seconds.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 10s, 500ms or 1m"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(value),
        "s" => Duration::from_secs(value),
        "m" => Duration::from_secs(value * 60),
        _ => return Err(format!("{text:?}: the unit must be ms, s or m")),
    };
    if duration.is_zero() {
        return Err("the interval must be more than zero".to_owned());
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(minute_ms: i64, flag: &str, yes: u64) -> v1::FlagCount {
        v1::FlagCount {
            feature_name: flag.to_owned(),
            app_name: "web".to_owned(),
            environment: "development".to_owned(),
            minute_ms,
            yes,
            no: 1,
            variants: [("red".to_owned(), yes)].into_iter().collect(),
        }
    }

    #[test]
    fn counts_merge_by_key_and_the_oldest_minutes_go_first() {
        let mut aggregate = Aggregate::default();
        for minute in [0, 60_000, 120_000] {
            aggregate.add(Usage {
                counts: vec![count(minute, "a", 2), count(minute, "b", 1)],
                ..Usage::default()
            });
        }
        aggregate.add(Usage {
            counts: vec![count(120_000, "a", 3)],
            ..Usage::default()
        });
        assert_eq!(aggregate.len(), 6);
        let latest_a =
            &aggregate.counts[&(120_000, "a".into(), "web".into(), "development".into())];
        assert_eq!(
            (latest_a.yes, latest_a.no, latest_a.variants["red"]),
            (5, 2, 5)
        );
        assert_eq!(aggregate.trim(4), 2);
        assert!(
            aggregate.counts.keys().all(|k| k.0 >= 60_000),
            "minute 0 dropped first"
        );
    }

    #[test]
    fn intervals_parse() {
        assert_eq!(parse_interval("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_interval("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_interval("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_interval("10").unwrap(), Duration::from_secs(10));
        assert!(parse_interval("0s").is_err());
        assert!(parse_interval("1h").is_err());
        assert!(parse_interval("x").is_err());
    }
}
