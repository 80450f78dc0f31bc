//! Usage metrics (API.md §6): ingest of the SDKs' usage (posted here, or batched by the edges over gRPC,
//! a retried batch counted once) and the views #1–#5, one flag's hourly usage, and the edges.
//!
//! The clock is a parameter: every function that depends on the time takes `now_ms` (Unix milliseconds).
//!
//! Windows: counts sit in minute buckets (the minute they were received in, `[m, m + 60 s)`). A window
//! (N − W, N] takes every bucket that overlaps it: `m > N − W − 60 s` and `m ≤ N`. Nothing reported in the
//! window is left out; up to a minute before it may be included. Applications are "seen in the last day" when
//! `lastSeen ∈ (N − 24 h, N]`, exactly.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sqlx::Connection;
use utoipa::ToSchema;
use vexil_proto::v1;
use vexil_serving::usage::{check_batch, Usage, MAX_VARIANTS_PER_FLAG};
use vexil_shared::token::SecretHash;
use vexil_shared::ApiError;

use crate::domain::events::EventType;
use crate::store::applications::{self as application_sql, ApplicationRow};
use crate::store::lifecycle::{self, SeenPairs};
pub use crate::store::metrics::RolledUp;
use crate::store::metrics::{self as sql, ApplicationMetadata};
use crate::store::{Actor, Store, StoreError};

pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;
/// Minute buckets older than this are rolled up into hours.
pub const MINUTE_BUCKETS_KEPT_MS: i64 = 48 * HOUR_MS;
/// Most distinct strategy lists kept per application (#4's `strategies`): an application registers one list
/// per version of its code, a handful over its life; past this a new list is not remembered until an old
/// one leaves the client retention.
pub const MAX_REGISTRATIONS_PER_APPLICATION: usize = 20;

/// The first bucket start (inclusive) and the last of the minute buckets that overlap (N − W, N].
fn window(now_ms: i64, width_ms: i64) -> (i64, i64) {
    (now_ms - width_ms - MINUTE_MS + 1, now_ms)
}

/// Sorted, so that concurrent transactions take row locks in the same order (no deadlock on Postgres).
fn sorted(mut usage: Usage) -> Usage {
    usage
        .applications
        .sort_by(|a, b| a.app_name.cmp(&b.app_name));
    usage
        .instances
        .sort_by(|a, b| (&a.app_name, &a.instance_id).cmp(&(&b.app_name, &b.instance_id)));
    usage.counts.sort_by(|a, b| {
        (&a.feature_name, &a.app_name, &a.environment, a.minute_ms).cmp(&(
            &b.feature_name,
            &b.app_name,
            &b.environment,
            b.minute_ms,
        ))
    });
    usage
}

/// Writes the usage and the lifecycle stages it shows (`lifecycle::record_seen`) for the (flag,
/// environment) pairs `seen` does not remember; returns those pairs, for `seen` once committed.
async fn write_usage(
    conn: &mut sqlx::AnyConnection,
    usage: &Usage,
    seen: &SeenPairs,
) -> Result<Vec<(String, String)>, StoreError> {
    for app in &usage.applications {
        sql::upsert_application(&mut *conn, app, MAX_REGISTRATIONS_PER_APPLICATION).await?;
    }
    for instance in &usage.instances {
        sql::upsert_instance(&mut *conn, instance).await?;
    }
    let mut recorded = Vec::new();
    for count in &usage.counts {
        sql::add_count(&mut *conn, count, MAX_VARIANTS_PER_FLAG).await?;
        if !seen.contains(&count.feature_name, &count.environment)
            && !recorded.iter().any(|(flag, environment)| {
                flag == &count.feature_name && environment == &count.environment
            })
        {
            let now = crate::time::Timestamp::now();
            lifecycle::record_seen(&mut *conn, &count.feature_name, &count.environment, now)
                .await?;
            recorded.push((count.feature_name.clone(), count.environment.clone()));
        }
    }
    Ok(recorded)
}

/// Creates the applications this process has not seen, each in a write of its own with `application-created`
/// (API.md §3.7 audits no SDK call; this is the exception, once: whichever process inserts the row first).
async fn create_new_applications(
    store: &Store,
    apps: &[v1::ApplicationSeen],
) -> Result<(), ApiError> {
    for app in apps {
        if store.known_applications().contains(&app.app_name) {
            continue;
        }
        let mut tx = store.begin_write(&Actor::system()).await?;
        if sql::create_application(tx.conn(), &app.app_name, app.seen_at_ms).await? {
            let data = serde_json::json!({"appName": app.app_name});
            tx.record(EventType::ApplicationCreated.instance_wide(Some(data), None))
                .await?;
        }
        tx.commit().await?;
        store.known_applications().insert(&app.app_name);
    }
    Ok(())
}

/// Stores one SDK post's usage (or Unleash Edge report, [`super::unleash_edges::write`]) in one transaction,
/// received by this process (so at a time of its own clock). No audit event but a new application's.
pub async fn ingest(store: &Store, mut usage: Usage) -> Result<(), ApiError> {
    create_new_applications(store, &usage.applications).await?;
    let unleash_edges = std::mem::take(&mut usage.unleash_edges);
    let usage = sorted(usage);
    let mut conn = store.bookkeeping().await?;
    let mut tx = conn.begin().await.map_err(StoreError::from)?;
    let recorded = write_usage(&mut tx, &usage, store.seen_pairs()).await?;
    if !unleash_edges.is_empty() {
        super::unleash_edges::write(&mut tx, unleash_edges, i64::MAX).await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
    store.seen_pairs().insert(recorded);
    Ok(())
}

/// Stores an edge's batch in one transaction with its `(edge_id, batch_id)`, the tokens it saw used
/// included (their `seenAt`) and the Unleash Edge reports it relays; returns true (and changes nothing) when that batch was counted before. A
/// batch outside the SDK posts' bounds ([`check_batch`]) is a validation error and changes nothing.
pub async fn ingest_batch(
    store: &Store,
    batch: v1::UsageBatch,
    now_ms: i64,
) -> Result<bool, ApiError> {
    check_batch(&batch)?;
    create_new_applications(store, &batch.applications).await?;
    let usage = sorted(Usage {
        applications: batch.applications,
        instances: batch.instances,
        counts: batch.counts,
        unleash_edges: Vec::new(),
    });
    let mut evaluations = batch.evaluations;
    evaluations.sort_by(|a, b| {
        (&a.environment, &a.feature_name, a.minute_ms).cmp(&(
            &b.environment,
            &b.feature_name,
            b.minute_ms,
        ))
    });
    let mut conn = store.bookkeeping().await?;
    let mut tx = conn.begin().await.map_err(StoreError::from)?;
    if !sql::claim_batch(&mut tx, &batch.edge_id, &batch.batch_id, now_ms).await? {
        tx.rollback().await.map_err(StoreError::from)?;
        return Ok(true);
    }
    let revision = i64::try_from(batch.applied_revision).unwrap_or(i64::MAX);
    sql::upsert_edge(
        &mut tx,
        &batch.edge_id,
        &batch.edge_version,
        revision,
        now_ms,
    )
    .await?;
    let recorded = write_usage(&mut tx, &usage, store.seen_pairs()).await?;
    for evaluation in &evaluations {
        sql::add_evaluations(&mut tx, &batch.edge_id, evaluation).await?;
    }
    let tokens_seen = batch
        .tokens_seen
        .into_iter()
        .filter_map(|seen| Some((SecretHash::try_from(seen.sha256).ok()?, seen.seen_at_ms)))
        .collect();
    super::tokens::note_seen(&mut tx, tokens_seen, now_ms).await?;
    if !batch.unleash_edges.is_empty() {
        super::unleash_edges::write(&mut tx, batch.unleash_edges, now_ms).await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
    store.seen_pairs().insert(recorded);
    Ok(false)
}

/// Counts received edge batches in `usage_batches_total{duplicate}`.
pub fn count_batch(duplicate: bool) {
    let label = if duplicate { "true" } else { "false" };
    ::metrics::counter!("usage_batches_total", "duplicate" => label).increment(1);
}

/// #1: an application's flags and count over the last hour.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SeenToggles {
    pub app_name: String,
    pub seen_toggles: Vec<String>,
    pub metrics_count: i64,
}

pub async fn seen_toggles(store: &Store, now_ms: i64) -> Result<Vec<SeenToggles>, ApiError> {
    let mut conn = store.read().await?;
    let (from, to) = window(now_ms, HOUR_MS);
    let mut apps: BTreeMap<String, SeenToggles> = BTreeMap::new();
    for sum in sql::usage_between(&mut conn, from, to).await? {
        let entry = apps
            .entry(sum.app_name.clone())
            .or_insert_with(|| SeenToggles {
                app_name: sum.app_name.clone(),
                seen_toggles: Vec::new(),
                metrics_count: 0,
            });
        entry.seen_toggles.push(sum.feature_name);
        entry.metrics_count = entry
            .metrics_count
            .saturating_add(sum.yes_count)
            .saturating_add(sum.no_count);
    }
    Ok(apps
        .into_values()
        .map(|mut app| {
            app.seen_toggles.sort();
            app.seen_toggles.dedup();
            app
        })
        .collect())
}

/// A yes/no pair.
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema, PartialEq, Eq)]
pub struct YesNo {
    pub yes: i64,
    pub no: i64,
}

/// #2.
#[derive(Debug, Clone, Default, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FeatureToggles {
    pub last_hour: BTreeMap<String, YesNo>,
    pub last_minute: BTreeMap<String, YesNo>,
}

async fn per_flag(
    conn: &mut sqlx::AnyConnection,
    now_ms: i64,
    width_ms: i64,
) -> Result<BTreeMap<String, YesNo>, StoreError> {
    let (from, to) = window(now_ms, width_ms);
    let mut flags: BTreeMap<String, YesNo> = BTreeMap::new();
    for sum in sql::usage_between(conn, from, to).await? {
        let pair = flags.entry(sum.feature_name).or_default();
        pair.yes = pair.yes.saturating_add(sum.yes_count);
        pair.no = pair.no.saturating_add(sum.no_count);
    }
    Ok(flags)
}

/// #2: every flag with usage in the last hour, with its last hour's and last minute's counts.
pub async fn feature_toggles(store: &Store, now_ms: i64) -> Result<FeatureToggles, ApiError> {
    let mut conn = store.read().await?;
    let last_hour = per_flag(&mut conn, now_ms, HOUR_MS).await?;
    let minute = per_flag(&mut conn, now_ms, MINUTE_MS).await?;
    let last_minute = last_hour
        .keys()
        .map(|name| (name.clone(), minute.get(name).copied().unwrap_or_default()))
        .collect();
    Ok(FeatureToggles {
        last_hour,
        last_minute,
    })
}

/// #2 for one flag (compat: `/api/admin/metrics/feature-toggles/:name`).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FeatureToggle {
    pub last_hour: YesNo,
    pub last_minute: YesNo,
}

pub async fn feature_toggle(
    store: &Store,
    name: &str,
    now_ms: i64,
) -> Result<FeatureToggle, ApiError> {
    let all = feature_toggles(store, now_ms).await?;
    Ok(FeatureToggle {
        last_hour: all.last_hour.get(name).copied().unwrap_or_default(),
        last_minute: all.last_minute.get(name).copied().unwrap_or_default(),
    })
}

/// #3's entry.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSummary {
    pub app_name: String,
    pub strategies: Vec<String>,
    pub created_at: String,
    pub description: Option<String>,
    pub url: Option<String>,
    pub color: Option<String>,
    pub icon: Option<String>,
    pub links: ApplicationLinks,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationLinks {
    pub app_details: String,
}

/// #3.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct Applications {
    pub applications: Vec<ApplicationSummary>,
    pub total: usize,
}

/// The ASCII characters a path segment cannot hold as they are (RFC 3986 `pchar`: everything but unreserved
/// characters, sub-delimiters, `:` and `@`); non-ASCII characters are always escaped.
const NOT_IN_A_PATH_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `name` as one path segment: only what must be escaped is (`bar-app` stays as it is); a name that is all
/// dots (`.`, `..`) has them escaped too, as a URL would otherwise read it as a step up or none.
pub fn path_segment(name: &str) -> String {
    if !name.is_empty() && name.bytes().all(|byte| byte == b'.') {
        return name.replace('.', "%2E");
    }
    percent_encoding::utf8_percent_encode(name, NOT_IN_A_PATH_SEGMENT).to_string()
}

/// #3: applications seen in the last day, implementing `strategy_name` if given.
pub async fn applications(
    store: &Store,
    strategy_name: Option<&str>,
    base_path: &str,
    now_ms: i64,
) -> Result<Applications, ApiError> {
    let mut conn = store.read().await?;
    let rows =
        application_sql::applications_seen_between(&mut conn, now_ms - DAY_MS + 1, now_ms).await?;
    let mut applications = Vec::with_capacity(rows.len());
    for row in rows {
        if strategy_name.is_some_and(|wanted| !row.strategies.iter().any(|s| s == wanted)) {
            continue;
        }
        let app_details = format!(
            "{base_path}/api/admin/metrics/applications/{}",
            path_segment(&row.app_name)
        );
        applications.push(ApplicationSummary {
            created_at: row.created_at.to_string(),
            app_name: row.app_name,
            strategies: row.strategies,
            description: row.description,
            url: row.url,
            color: row.color,
            icon: row.icon,
            links: ApplicationLinks { app_details },
        });
    }
    Ok(Applications {
        total: applications.len(),
        applications,
    })
}

/// One application of the web UI's list: every application the client retention keeps, not only those seen in
/// the last day (#3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplicationListing {
    pub app_name: String,
    pub description: Option<String>,
    pub instance_count: i64,
    /// Unix ms.
    pub last_seen_ms: i64,
}

/// A page of applications by name, and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplicationPage {
    pub applications: Vec<ApplicationListing>,
    pub total: i64,
}

/// The applications from `offset`, at most `limit` of them, by name.
pub async fn application_page(
    store: &Store,
    offset: usize,
    limit: usize,
) -> Result<ApplicationPage, ApiError> {
    let offset = i64::try_from(offset)
        .map_err(|_| ApiError::invalid_field("offset", "offset is past the last application"))?;
    let limit =
        i64::try_from(limit).map_err(|_| ApiError::invalid_field("limit", "limit is too large"))?;
    let mut conn = store.read().await?;
    let (rows, total) = application_sql::application_page(&mut conn, offset, limit).await?;
    Ok(ApplicationPage {
        applications: rows
            .into_iter()
            .map(|row| ApplicationListing {
                app_name: row.app_name,
                description: row.description,
                instance_count: row.instance_count,
                last_seen_ms: row.last_seen.millis(),
            })
            .collect(),
        total,
    })
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    pub instance_id: String,
    pub client_ip: Option<String>,
    pub last_seen: String,
    pub created_at: String,
    pub sdk_version: Option<String>,
    pub environment: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredStrategies {
    pub app_name: String,
    pub strategies: Vec<String>,
}

/// #4.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationDetails {
    pub app_name: String,
    pub description: Option<String>,
    pub url: Option<String>,
    pub color: Option<String>,
    pub icon: Option<String>,
    pub created_at: String,
    pub instances: Vec<Instance>,
    pub strategies: Vec<RegisteredStrategies>,
    pub seen_toggles: Vec<String>,
}

/// #4: unknown → 404.
pub async fn application(store: &Store, app_name: &str) -> Result<ApplicationDetails, ApiError> {
    let mut conn = store.read().await?;
    let row = application_sql::application(&mut conn, app_name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("No application named {app_name}")))?;
    let instances = application_sql::instances(&mut conn, app_name)
        .await?
        .into_iter()
        .map(|i| Instance {
            instance_id: i.instance_id,
            client_ip: i.client_ip,
            last_seen: i.last_seen.to_string(),
            created_at: i.created_at.to_string(),
            sdk_version: i.sdk_version,
            environment: i.environment,
        })
        .collect();
    let strategies = application_sql::registrations(&mut conn, app_name)
        .await?
        .into_iter()
        .map(|strategies| RegisteredStrategies {
            app_name: app_name.to_owned(),
            strategies,
        })
        .collect();
    let seen_toggles = application_sql::seen_toggles(&mut conn, app_name).await?;
    Ok(ApplicationDetails {
        app_name: row.app_name,
        description: row.description,
        url: row.url,
        color: row.color,
        icon: row.icon,
        created_at: row.created_at.to_string(),
        instances,
        strategies,
        seen_toggles,
    })
}

/// #5's application record.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationRecord {
    pub app_name: String,
    pub created_at: String,
    pub updated_at: String,
    pub description: Option<String>,
    pub strategies: Vec<String>,
    pub url: Option<String>,
    pub color: Option<String>,
    pub icon: Option<String>,
}

fn record(row: ApplicationRow) -> ApplicationRecord {
    ApplicationRecord {
        strategies: row.strategies,
        app_name: row.app_name,
        created_at: row.created_at.to_string(),
        updated_at: row.updated_at.to_string(),
        description: row.description,
        url: row.url,
        color: row.color,
        icon: row.icon,
    }
}

/// #5: each flag with usage in the last hour → the applications that reported it, by name.
pub async fn seen_apps(
    store: &Store,
    now_ms: i64,
) -> Result<BTreeMap<String, Vec<ApplicationRecord>>, ApiError> {
    let mut conn = store.read().await?;
    let (from, to) = window(now_ms, HOUR_MS);
    let mut by_flag: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for sum in sql::usage_between(&mut conn, from, to).await? {
        by_flag
            .entry(sum.feature_name)
            .or_default()
            .insert(sum.app_name);
    }
    let names: BTreeSet<String> = by_flag.values().flatten().cloned().collect();
    let names: Vec<String> = names.into_iter().collect();
    let mut records = BTreeMap::new();
    for row in application_sql::applications_named(&mut conn, &names).await? {
        records.insert(row.app_name.clone(), record(row));
    }
    Ok(by_flag
        .into_iter()
        .map(|(flag, apps)| {
            let apps = apps
                .iter()
                .filter_map(|name| records.get(name).cloned())
                .collect();
            (flag, apps)
        })
        .collect())
}

/// `POST /api/admin/metrics/applications/:appName`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationMetadataInput {
    pub app_name: Option<String>,
    pub description: Option<String>,
    pub url: Option<String>,
    pub color: Option<String>,
    pub icon: Option<String>,
}

pub async fn set_metadata(
    store: &Store,
    app_name: &str,
    input: ApplicationMetadataInput,
    now_ms: i64,
) -> Result<(), ApiError> {
    if app_name.trim().is_empty() || app_name.len() > 255 {
        return Err(ApiError::invalid_field(
            "appName",
            "appName must be 1 to 255 characters",
        ));
    }
    if input
        .app_name
        .as_deref()
        .is_some_and(|name| name != app_name)
    {
        return Err(ApiError::invalid_field(
            "appName",
            "appName in the body differs from the path",
        ));
    }
    let metadata = ApplicationMetadata {
        description: input.description,
        url: input.url,
        color: input.color,
        icon: input.icon,
    };
    let mut conn = store.bookkeeping().await?;
    sql::upsert_metadata(&mut conn, app_name, &metadata, now_ms).await?;
    Ok(())
}

/// One hour of one flag's usage.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FeatureHour {
    pub feature_name: String,
    pub app_name: String,
    pub environment: String,
    /// The start of the hour.
    pub timestamp: String,
    pub yes: i64,
    pub no: i64,
}

/// `GET /api/admin/client-metrics/features/:name`.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct FeatureMetrics {
    pub version: i64,
    pub maturity: &'static str,
    pub data: Vec<FeatureHour>,
}

/// One flag's usage per hour, application and environment, over the hours that overlap the last 48 h.
pub async fn feature_usage(
    store: &Store,
    name: &str,
    now_ms: i64,
) -> Result<FeatureMetrics, ApiError> {
    let mut conn = store.read().await?;
    let from = now_ms - MINUTE_BUCKETS_KEPT_MS;
    let from = from - from.rem_euclid(HOUR_MS);
    let data = sql::hourly_usage(&mut conn, name, from, now_ms)
        .await?
        .into_iter()
        .map(|h| FeatureHour {
            feature_name: name.to_owned(),
            app_name: h.app_name,
            environment: h.environment,
            timestamp: h.hour.to_string(),
            yes: h.yes_count,
            no: h.no_count,
        })
        .collect();
    Ok(FeatureMetrics {
        version: 1,
        maturity: "stable",
        data,
    })
}

/// One hour of a flag's evaluations by edges (the frontend API and OFREP) in one environment, summed over edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedHour {
    /// The start of the hour, Unix ms.
    pub hour_ms: i64,
    pub environment: String,
    pub enabled: i64,
    pub disabled: i64,
}

/// What edges served of one flag to frontend and OFREP clients per hour and environment over the hours that
/// overlap the last 48 h. Kept apart from the SDKs' reports ([`feature_usage`]): a browser SDK that reports its
/// own counts is in both, so the two are shown side by side, never added up.
pub async fn feature_served(
    store: &Store,
    name: &str,
    now_ms: i64,
) -> Result<Vec<ServedHour>, ApiError> {
    let mut conn = store.read().await?;
    let from = now_ms - MINUTE_BUCKETS_KEPT_MS;
    let from = from - from.rem_euclid(HOUR_MS);
    Ok(sql::hourly_evaluations(&mut conn, name, from, now_ms)
        .await?
        .into_iter()
        .map(|h| ServedHour {
            hour_ms: h.hour.millis(),
            environment: h.environment,
            enabled: h.enabled_count,
            disabled: h.disabled_count,
        })
        .collect())
}

/// An edge as its reports describe it.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    pub edge_id: String,
    pub version: String,
    pub applied_revision: i64,
    pub last_report: String,
    /// Frontend-API evaluations it served over the last hour (same window rule as #2).
    pub evaluations_last_hour: Evaluations,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Evaluations {
    pub enabled: i64,
    pub not_enabled: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Edges {
    pub edges: Vec<Edge>,
    /// The Unleash Edge instances that report to this control plane (`POST /api/client/metrics/edge`).
    pub unleash_edges: Vec<super::unleash_edges::UnleashEdge>,
}

/// `GET /api/admin/metrics/edges`.
pub async fn edges(store: &Store, now_ms: i64) -> Result<Edges, ApiError> {
    let mut conn = store.read().await?;
    let (from, to) = window(now_ms, HOUR_MS);
    let edges = sql::edges(&mut conn, from, to)
        .await?
        .into_iter()
        .map(|e| Edge {
            edge_id: e.edge_id,
            version: e.version,
            applied_revision: e.applied_revision,
            last_report: e.last_report.to_string(),
            evaluations_last_hour: Evaluations {
                enabled: e.enabled_count,
                not_enabled: e.disabled_count,
            },
        })
        .collect();
    let unleash_edges = super::unleash_edges::list(&mut conn).await?;
    Ok(Edges {
        edges,
        unleash_edges,
    })
}

/// How long the roll-up keeps what it drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Hourly usage buckets older than this go (`--metrics-retention-days`).
    pub hours_kept_ms: i64,
    /// Applications, instances, seen flag names and registered strategy lists not seen for this long go
    /// (`--client-retention-days`).
    pub clients_kept_ms: i64,
}

/// Rolls minute buckets older than 48 h into hours, drops hours and client rows older than their
/// [`Retention`], in one transaction.
pub async fn roll_up(
    store: &Store,
    now_ms: i64,
    retention: Retention,
) -> Result<RolledUp, ApiError> {
    let minutes_before = now_ms - MINUTE_BUCKETS_KEPT_MS;
    // Whole hours only, so that an hour is never split between the two tables' retention.
    let minutes_before = minutes_before - minutes_before.rem_euclid(HOUR_MS);
    let mut conn = store.bookkeeping().await?;
    let mut tx = conn.begin().await.map_err(StoreError::from)?;
    let rolled = sql::roll_up(
        &mut tx,
        minutes_before,
        now_ms.saturating_sub(retention.hours_kept_ms),
        now_ms.saturating_sub(retention.clients_kept_ms),
        MAX_VARIANTS_PER_FLAG,
    )
    .await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(rolled)
}

/// When an SDK last reported each of `names` or an edge last served it to a frontend or OFREP client (any
/// application, any environment), Unix ms; flags never seen are absent. The flag list's "last seen".
pub async fn last_seen(
    conn: &mut sqlx::AnyConnection,
    names: &[String],
) -> Result<std::collections::HashMap<String, i64>, ApiError> {
    Ok(sql::last_seen_of(conn, names).await?.into_iter().collect())
}

#[cfg(test)]
mod path_segment_tests {
    use super::path_segment;

    #[test]
    fn only_what_a_path_segment_cannot_hold_is_escaped() {
        assert_eq!(path_segment("bar-app"), "bar-app");
        assert_eq!(path_segment("a_b.c~d"), "a_b.c~d");
        assert_eq!(path_segment("x:y@z!$&'()*+,;="), "x:y@z!$&'()*+,;=");
        assert_eq!(path_segment("a b/c?d#e%f"), "a%20b%2Fc%3Fd%23e%25f");
        assert_eq!(path_segment("ünï"), "%C3%BCn%C3%AF");
        assert_eq!(path_segment(".."), "%2E%2E");
        assert_eq!(path_segment("."), "%2E");
        assert_eq!(path_segment("..a"), "..a");
    }
}
