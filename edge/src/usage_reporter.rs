//! The edge's usage reporting: the SDKs' posts (parsed by `vexil-serving`) reach one aggregator task over a
//! bounded channel (no lock on the request path, nothing allocated beyond the parsed post); every
//! `--metrics-interval` the aggregate, plus the evaluations this edge served (harvested from the snapshots'
//! per-flag counters), the tokens the SDKs used (taken from the serving state's token sightings, by hash)
//! and the reports Unleash Edge instances posted about themselves (`POST /api/client/metrics/edge`, the
//! latest of each), is cut into ONE batch sent over gRPC `Usage/Report` with `(edge_id, batch_id)`.
//!
//! A cut larger than [`MAX_USAGE_BATCH_BYTES`] encoded is sent as several batches, each with its own id. A batch
//! that was not acknowledged is retried with the same id and content (the control plane counts it once)
//! before the next one is cut; one the control plane refuses as invalid (`INVALID_ARGUMENT`, or too large) is
//! dropped and counted in `usage_rejected_total`, since sending it again cannot succeed. Meanwhile new usage
//! keeps merging into the aggregate (counts saturate at `u64::MAX`, at most
//! [`MAX_VARIANTS_PER_FLAG`] variant names per entry), whose size is bounded: past `--metrics-buffer` entries
//! the oldest minutes are dropped and counted in `usage_dropped_total`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use tokio::sync::mpsc;
use vexil_proto::v1;
use vexil_proto::v1::usage_client::UsageClient;
use vexil_proto::MAX_USAGE_BATCH_BYTES;
use vexil_serving::usage::{minute_of, Usage, UsageSink, MAX_VARIANTS_PER_FLAG};
use vexil_serving::{ServingSnapshot, ServingState};
use vexil_shared::time::now_ms;
use vexil_shared::token::SecretHash;
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

/// Usage merged by key: one entry per application, instance, (flag, app, environment, minute),
/// (environment, flag, minute) of this edge's own evaluations, token hash (its latest use), and Unleash Edge
/// instance (its latest report, by environment and identifier).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Aggregate {
    applications: BTreeMap<String, v1::ApplicationSeen>,
    instances: BTreeMap<(String, String), v1::InstanceSeen>,
    counts: BTreeMap<(i64, String, String, String), v1::FlagCount>,
    evaluations: BTreeMap<(i64, String, String), v1::EvaluationCount>,
    tokens_seen: BTreeMap<SecretHash, i64>,
    unleash_edges: BTreeMap<(String, String), v1::UnleashEdgeReport>,
}

impl Aggregate {
    pub fn len(&self) -> usize {
        self.applications.len()
            + self.instances.len()
            + self.counts.len()
            + self.evaluations.len()
            + self.tokens_seen.len()
            + self.unleash_edges.len()
    }

    /// Notes that the token of `hash` was used at `at_ms` (the latest use is kept).
    pub fn add_token_seen(&mut self, hash: SecretHash, at_ms: i64) {
        let latest = self.tokens_seen.entry(hash).or_insert(at_ms);
        *latest = (*latest).max(at_ms);
    }

    /// Merges one post; returns how many variant names were not kept (past [`MAX_VARIANTS_PER_FLAG`] in
    /// an entry).
    pub fn add(&mut self, usage: Usage) -> u64 {
        let mut variants_dropped = 0;
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
        for report in usage.unleash_edges {
            let identifier = report
                .instance
                .as_ref()
                .map(|i| i.identifier.clone())
                .unwrap_or_default();
            match self
                .unleash_edges
                .entry((report.environment.clone(), identifier))
            {
                std::collections::btree_map::Entry::Occupied(mut known) => {
                    if report.received_at_ms >= known.get().received_at_ms {
                        known.insert(report);
                    }
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(report);
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
                    known.yes = known.yes.saturating_add(count.yes);
                    known.no = known.no.saturating_add(count.no);
                    for (variant, n) in count.variants {
                        let room = known.variants.len() < MAX_VARIANTS_PER_FLAG;
                        match known.variants.get_mut(&variant) {
                            Some(sum) => *sum = sum.saturating_add(n),
                            None if room => {
                                known.variants.insert(variant, n);
                            }
                            None => variants_dropped += 1,
                        }
                    }
                }
                None => {
                    self.counts.insert(key, count);
                }
            }
        }
        variants_dropped
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
        entry.enabled = entry.enabled.saturating_add(enabled);
        entry.disabled = entry.disabled.saturating_add(disabled);
    }

    /// Drops the oldest minutes' counts (then evaluations, then sightings, then Unleash Edge reports, then
    /// tokens seen) until at most `max` entries are left; returns how many entries were dropped.
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
                    if self.instances.pop_first().is_none()
                        && self.applications.pop_first().is_none()
                        && self.unleash_edges.pop_first().is_none()
                    {
                        self.tokens_seen.pop_first();
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

    /// Cuts the aggregate into batches of at most `max_bytes` encoded, each with its own id; at least one (an
    /// empty aggregate is one empty batch, which still reports the edge's revision).
    fn into_batches(
        self,
        edge_id: &str,
        applied_revision: u64,
        max_bytes: usize,
    ) -> Vec<v1::UsageBatch> {
        let empty = || v1::UsageBatch {
            edge_id: edge_id.to_owned(),
            batch_id: uuid::Uuid::new_v4().to_string(),
            applied_revision,
            edge_version: env!("CARGO_PKG_VERSION").to_owned(),
            ..v1::UsageBatch::default()
        };
        let mut cutter = Cutter {
            batches: Vec::new(),
            current: empty(),
            size: 0,
            entries: 0,
            max_bytes,
            empty: &empty,
        };
        cutter.size = cutter.current.encoded_len();
        for app in self.applications.into_values() {
            cutter.add(app, |batch, app| batch.applications.push(app));
        }
        for instance in self.instances.into_values() {
            cutter.add(instance, |batch, instance| batch.instances.push(instance));
        }
        for count in self.counts.into_values() {
            cutter.add(count, |batch, count| batch.counts.push(count));
        }
        for evaluation in self.evaluations.into_values() {
            cutter.add(evaluation, |batch, evaluation| {
                batch.evaluations.push(evaluation)
            });
        }
        for report in self.unleash_edges.into_values() {
            cutter.add(report, |batch, report| batch.unleash_edges.push(report));
        }
        for (hash, seen_at_ms) in self.tokens_seen {
            let seen = v1::TokenSeen {
                sha256: hash.to_vec(),
                seen_at_ms,
            };
            cutter.add(seen, |batch, seen| batch.tokens_seen.push(seen));
        }
        cutter.batches.push(cutter.current);
        cutter.batches
    }
}

/// Fills batches in turn, starting a new one when the next entry would take the current one past `max_bytes`.
struct Cutter<'a> {
    batches: Vec<v1::UsageBatch>,
    current: v1::UsageBatch,
    /// The encoded size of `current`.
    size: usize,
    /// The entries in `current`.
    entries: usize,
    max_bytes: usize,
    empty: &'a dyn Fn() -> v1::UsageBatch,
}

impl Cutter<'_> {
    fn add<T: Message>(&mut self, entry: T, push: impl Fn(&mut v1::UsageBatch, T)) {
        // An entry of a repeated field: a one-byte key, its length as a varint, then the entry.
        let length = entry.encoded_len();
        let entry_size = 1 + prost::encoding::encoded_len_varint(length as u64) + length;
        if self.entries > 0 && self.size + entry_size > self.max_bytes {
            let full = std::mem::replace(&mut self.current, (self.empty)());
            self.batches.push(full);
            self.size = self.current.encoded_len();
            self.entries = 0;
        }
        push(&mut self.current, entry);
        self.size += entry_size;
        self.entries += 1;
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
        // The batches of the last cut not acknowledged yet, in order.
        let mut unacknowledged: VecDeque<v1::UsageBatch> = VecDeque::new();
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
                    let variants_dropped = pending.add(post);
                    if variants_dropped > 0 {
                        metrics::counter!("usage_dropped_total", "reason" => "variant_limit")
                            .increment(variants_dropped);
                    }
                    self.bound(&mut pending);
                }
                _ = ticker.tick() => {
                    // Present from the first scrape (the recorder is installed after this task starts).
                    metrics::counter!("usage_dropped_total", "reason" => "queue_full").increment(0);
                    metrics::counter!("usage_dropped_total", "reason" => "buffer_full").increment(0);
                    metrics::counter!("usage_dropped_total", "reason" => "variant_limit").increment(0);
                    metrics::counter!("usage_rejected_total").increment(0);
                    let minute = minute_of(now_ms());
                    let mut retired_now = Vec::new();
                    while let Ok(snapshot) = self.retired.try_recv() {
                        retired_now.push(snapshot);
                    }
                    let current = serving.current.load_full();
                    for snapshot in retiring.iter().chain(&retired_now).chain(current.as_ref()) {
                        harvest(snapshot, minute, &mut pending);
                    }
                    for (hash, at_ms) in serving.token_sightings.take() {
                        pending.add_token_seen(hash, at_ms);
                    }
                    retiring = retired_now;
                    self.bound(&mut pending);
                    let revision = current.as_ref().map_or(0, |s| s.revision);
                    if unacknowledged.is_empty() {
                        unacknowledged = std::mem::take(&mut pending)
                            .into_batches(&self.edge_id, revision, MAX_USAGE_BATCH_BYTES)
                            .into();
                    }
                    while let Some(batch) = unacknowledged.front() {
                        match link.report(batch.clone()).await {
                            Ok(duplicate) => {
                                metrics::counter!("usage_batches_sent_total").increment(1);
                                tracing::debug!(batch = %batch.batch_id, duplicate, "usage batch acknowledged");
                            }
                            Err(ReportError::Refused(reason)) => {
                                metrics::counter!("usage_rejected_total").increment(1);
                                tracing::warn!(%reason, batch = %batch.batch_id, entries = batch_len(batch),
                                    "the control plane refused the usage batch; dropping it");
                            }
                            Err(ReportError::Unavailable(error)) => {
                                tracing::warn!(%error, batch = %batch.batch_id, "cannot report usage; keeping the batch");
                                break;
                            }
                        }
                        unacknowledged.pop_front();
                    }
                    metrics::gauge!("usage_pending_entries").set(
                        (pending.len() + unacknowledged.iter().map(batch_len).sum::<usize>()) as f64,
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
    batch.applications.len()
        + batch.instances.len()
        + batch.counts.len()
        + batch.evaluations.len()
        + batch.tokens_seen.len()
        + batch.unleash_edges.len()
}

fn harvest(snapshot: &ServingSnapshot, minute_ms: i64, into: &mut Aggregate) {
    for (name, view) in &snapshot.environments {
        view.evaluations
            .harvest(&view.engine, |flag, enabled, disabled| {
                into.add_evaluations(name, flag, minute_ms, enabled, disabled)
            });
    }
}

/// Why a batch was not acknowledged.
#[derive(Debug)]
enum ReportError {
    /// The control plane refused the batch itself (`INVALID_ARGUMENT`, or `OUT_OF_RANGE`: larger than a
    /// message may be): the same batch would be refused again.
    Refused(String),
    /// No answer, or an answer that may change (unreachable, unavailable, timed out): worth a retry.
    Unavailable(String),
}

/// The gRPC client of `Usage/Report`, moving to the next upstream after a failure to reach one.
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

    async fn report(&mut self, batch: v1::UsageBatch) -> Result<bool, ReportError> {
        let result = self.try_report(batch).await;
        if let Err(ReportError::Unavailable(_)) = result {
            self.client = None;
            self.next += 1;
        }
        result
    }

    async fn try_report(&mut self, batch: v1::UsageBatch) -> Result<bool, ReportError> {
        let client = match &mut self.client {
            Some(client) => client,
            None => {
                let upstream = self
                    .upstreams
                    .get(self.next % self.upstreams.len().max(1))
                    .ok_or_else(|| ReportError::Unavailable("no upstream".to_owned()))?;
                let channel = self
                    .access
                    .connect(upstream, |endpoint| {
                        endpoint
                            .connect_timeout(CONNECT_TIMEOUT)
                            .timeout(REPORT_TIMEOUT)
                    })
                    .await
                    .map_err(ReportError::Unavailable)?;
                self.client.insert(
                    UsageClient::new(channel).max_encoding_message_size(MAX_USAGE_BATCH_BYTES),
                )
            }
        };
        let ack = client
            .report(batch)
            .await
            .map_err(|status| match status.code() {
                tonic::Code::InvalidArgument | tonic::Code::OutOfRange => {
                    ReportError::Refused(status.message().to_owned())
                }
                _ => ReportError::Unavailable(status.to_string()),
            })?;
        Ok(ack.into_inner().duplicate)
    }
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
    fn counts_saturate_and_variant_names_are_bounded() {
        let mut aggregate = Aggregate::default();
        let mut first = count(0, "a", u64::MAX - 1);
        first.variants = (0..MAX_VARIANTS_PER_FLAG)
            .map(|i| (format!("v{i}"), u64::MAX))
            .collect();
        assert_eq!(
            aggregate.add(Usage {
                counts: vec![first],
                ..Usage::default()
            }),
            0
        );
        let mut second = count(0, "a", 5);
        second.variants.insert("v0".to_owned(), 1);
        second.variants.insert("one-too-many".to_owned(), 1);
        assert_eq!(
            aggregate.add(Usage {
                counts: vec![second],
                ..Usage::default()
            }),
            2,
            "red and one-too-many"
        );
        let merged = &aggregate.counts[&(0, "a".into(), "web".into(), "development".into())];
        assert_eq!((merged.yes, merged.no), (u64::MAX, 2));
        assert_eq!(merged.variants.len(), MAX_VARIANTS_PER_FLAG);
        assert_eq!(merged.variants["v0"], u64::MAX);
        aggregate.add_evaluations("development", "a", 0, u64::MAX, 1);
        aggregate.add_evaluations("development", "a", 0, 1, u64::MAX);
        let evaluation = &aggregate.evaluations[&(0, "development".into(), "a".into())];
        assert_eq!(
            (evaluation.enabled, evaluation.disabled),
            (u64::MAX, u64::MAX)
        );
    }

    #[test]
    fn the_latest_report_of_each_unleash_edge_is_kept_and_sent() {
        let report =
            |identifier: &str, environment: &str, received_at_ms: i64| v1::UnleashEdgeReport {
                environment: environment.to_owned(),
                received_at_ms,
                instance: Some(v1::UnleashEdgeInstance {
                    identifier: identifier.to_owned(),
                    ..v1::UnleashEdgeInstance::default()
                }),
            };
        let mut aggregate = Aggregate::default();
        for (identifier, environment, at) in [
            ("a", "development", 5),
            ("a", "development", 9),
            ("a", "development", 7),
            ("a", "production", 1),
            ("b", "development", 2),
        ] {
            aggregate.add(Usage {
                unleash_edges: vec![report(identifier, environment, at)],
                ..Usage::default()
            });
        }
        assert_eq!(aggregate.len(), 3);
        let batches = aggregate.into_batches("edge", 1, MAX_USAGE_BATCH_BYTES);
        assert_eq!(batches.len(), 1);
        let sent: Vec<(&str, &str, i64)> = batches[0]
            .unleash_edges
            .iter()
            .map(|r| {
                let identifier = r.instance.as_ref().map_or("", |i| i.identifier.as_str());
                (identifier, r.environment.as_str(), r.received_at_ms)
            })
            .collect();
        assert_eq!(
            sent,
            [
                ("a", "development", 9),
                ("b", "development", 2),
                ("a", "production", 1)
            ]
        );
    }

    #[test]
    fn a_large_cut_becomes_batches_within_the_limit_with_their_own_ids() {
        let mut aggregate = Aggregate::default();
        let name = "f".repeat(200);
        for i in 0..1_000 {
            aggregate.add(Usage {
                counts: vec![count(60_000 * (i % 3), &format!("{name}{i}"), i as u64)],
                ..Usage::default()
            });
        }
        aggregate.add_evaluations("development", "a", 0, 1, 2);
        aggregate.add_token_seen([7; 32], 5);
        aggregate.add_token_seen([7; 32], 9);
        aggregate.add_token_seen([7; 32], 3);
        let whole = aggregate.clone().into_batches("edge", 7, usize::MAX);
        assert_eq!(whole.len(), 1);
        let limit = whole[0].encoded_len() / 4;
        let batches = aggregate.into_batches("edge", 7, limit);
        assert!((4..=5).contains(&batches.len()), "{}", batches.len());
        for batch in &batches {
            assert!(
                batch.encoded_len() <= limit,
                "{} > {limit}",
                batch.encoded_len()
            );
            assert_eq!(
                (batch.edge_id.as_str(), batch.applied_revision),
                ("edge", 7)
            );
        }
        let ids: std::collections::BTreeSet<&str> =
            batches.iter().map(|b| b.batch_id.as_str()).collect();
        assert_eq!(ids.len(), batches.len(), "each batch has its own id");
        let counts: Vec<&v1::FlagCount> = batches.iter().flat_map(|b| &b.counts).collect();
        assert_eq!(counts.len(), 1_000);
        assert_eq!(
            counts.iter().map(|c| c.yes).sum::<u64>(),
            (0..1_000u64).sum::<u64>()
        );
        assert_eq!(
            batches.iter().map(|b| b.evaluations.len()).sum::<usize>(),
            1
        );
        let tokens: Vec<&v1::TokenSeen> = batches.iter().flat_map(|b| &b.tokens_seen).collect();
        assert_eq!(tokens.len(), 1);
        assert_eq!(
            (tokens[0].sha256.as_slice(), tokens[0].seen_at_ms),
            (&[7u8; 32][..], 9),
            "one entry per token, its latest use"
        );
        // Nothing to send is still one (empty) batch.
        assert_eq!(Aggregate::default().into_batches("edge", 7, limit).len(), 1);
    }
}
