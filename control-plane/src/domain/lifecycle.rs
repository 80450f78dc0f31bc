//! A flag's lifecycle (Unleash's feature lifecycle): initial (created) → pre-live (an SDK reported it in a
//! non-production environment) → live (in a production-type one) → completed (someone marked it, kept or
//! discarded) → archived. `initial` is the flag's creation and `archived` its archiving; the stages between
//! are rows entered once each (`store::lifecycle`): pre-live and live by the usage ingest
//! (`domain::metrics`), completed by `complete` / `uncomplete` (`feature-completed`, `feature-uncompleted`).
//! A flag's current stage is the last of the ones it is in, in that order. Also the potentially-stale mark:
//! flags older than their type's lifetime, each marked once (`feature-potentially-stale-on`).

use super::events::EventType;
use super::feature_lookup::require_in_project;
use super::feature_types;
use crate::store::lifecycle as store;
use crate::store::{NewEvent, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::AnyConnection;
use std::collections::HashMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A lifecycle stage, in the order a flag goes through them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LifecycleStage {
    Initial,
    PreLive,
    Live,
    Completed,
    Archived,
}

impl LifecycleStage {
    pub const ALL: [LifecycleStage; 5] = [
        LifecycleStage::Initial,
        LifecycleStage::PreLive,
        LifecycleStage::Live,
        LifecycleStage::Completed,
        LifecycleStage::Archived,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleStage::Initial => "initial",
            LifecycleStage::PreLive => "pre-live",
            LifecycleStage::Live => "live",
            LifecycleStage::Completed => "completed",
            LifecycleStage::Archived => "archived",
        }
    }

    pub fn named(name: &str) -> Option<LifecycleStage> {
        LifecycleStage::ALL
            .into_iter()
            .find(|stage| stage.as_str() == name)
    }
}

/// One stage a flag entered (Unleash's featureLifecycleSchema item).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureLifecycleStage {
    pub stage: LifecycleStage,
    /// The completed stage's status: kept or discarded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub entered_stage_at: Timestamp,
}

/// `GET /api/admin/lifecycle/count` (Unleash's featureLifecycleCountSchema): flags per current stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureLifecycleCount {
    pub initial: i64,
    pub pre_live: i64,
    pub live: i64,
    pub completed: i64,
    pub archived: i64,
}

/// How a completed flag ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompletedStatus {
    Kept,
    Discarded,
}

impl CompletedStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CompletedStatus::Kept => "kept",
            CompletedStatus::Discarded => "discarded",
        }
    }
}

/// `POST …/lifecycle/complete` (Unleash's featureLifecycleCompletedSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureLifecycleCompleted {
    pub status: CompletedStatus,
    /// What was kept (a variant, say), as the one completing it puts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_value: Option<String>,
}

/// Longest `statusValue` kept.
const MAX_STATUS_VALUE: usize = 200;

/// A flag's stages, in the order it entered them; 404 for an unknown project or flag.
pub async fn get(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
) -> Result<Vec<FeatureLifecycleStage>, ApiError> {
    let flag = require_in_project(conn, project, feature).await?;
    let mut stages = vec![FeatureLifecycleStage {
        stage: LifecycleStage::Initial,
        status: None,
        entered_stage_at: flag.created_at,
    }];
    for row in store::stages(conn, feature).await? {
        if let Some(stage) = LifecycleStage::named(&row.stage) {
            stages.push(FeatureLifecycleStage {
                stage,
                status: row.status,
                entered_stage_at: row.entered_at,
            });
        }
    }
    if let Some(archived_at) = flag.archived_at {
        stages.push(FeatureLifecycleStage {
            stage: LifecycleStage::Archived,
            status: None,
            entered_stage_at: archived_at,
        });
    }
    stages.sort_by_key(|entry| entry.stage);
    Ok(stages)
}

/// How many flags are in each stage now.
pub async fn count(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<FeatureLifecycleCount, ApiError> {
    let mut counts = FeatureLifecycleCount::default();
    for (stage, n) in store::stage_counts(conn, project).await? {
        match LifecycleStage::named(&stage) {
            Some(LifecycleStage::Initial) => counts.initial = n,
            Some(LifecycleStage::PreLive) => counts.pre_live = n,
            Some(LifecycleStage::Live) => counts.live = n,
            Some(LifecycleStage::Completed) => counts.completed = n,
            Some(LifecycleStage::Archived) => counts.archived = n,
            None => {}
        }
    }
    Ok(counts)
}

/// The current stage of each of the flags named, by name.
pub async fn current_stages_of(
    conn: &mut AnyConnection,
    names: &[String],
) -> Result<HashMap<String, LifecycleStage>, ApiError> {
    Ok(store::current_stages_of(conn, names)
        .await?
        .into_iter()
        .filter_map(|(name, stage)| Some((name, LifecycleStage::named(&stage)?)))
        .collect())
}

/// Marks a flag completed (`feature-completed`); completing it again with the same status changes nothing,
/// with another one updates it (and records the event again). 404 for an unknown project or flag.
pub async fn complete(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    input: &FeatureLifecycleCompleted,
) -> Result<(), ApiError> {
    let value = input
        .status_value
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty());
    if value.is_some_and(|value| value.chars().count() > MAX_STATUS_VALUE) {
        return Err(ApiError::invalid_field(
            "statusValue",
            format!("statusValue is longer than {MAX_STATUS_VALUE} characters"),
        ));
    }
    require_in_project(tx.conn(), project, feature).await?;
    let now = tx.now();
    let status = input.status.as_str();
    if store::complete(tx.conn(), feature, status, value, now).await? {
        tx.record(lifecycle_event(
            EventType::FeatureCompleted,
            project,
            feature,
            json!({"kept": input.status == CompletedStatus::Kept, "status": status, "statusValue": value}),
        ))
        .await?;
    }
    Ok(())
}

/// Takes a flag out of the completed stage (`feature-uncompleted`); nothing when it was not completed.
pub async fn uncomplete(tx: &mut WriteTx, project: &str, feature: &str) -> Result<(), ApiError> {
    require_in_project(tx.conn(), project, feature).await?;
    if store::uncomplete(tx.conn(), feature).await? {
        tx.record(lifecycle_event(
            EventType::FeatureUncompleted,
            project,
            feature,
            json!({"featureName": feature}),
        ))
        .await?;
    }
    Ok(())
}

fn lifecycle_event(
    event_type: EventType,
    project: &str,
    feature: &str,
    data: serde_json::Value,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(project.to_owned()),
        feature_name: Some(feature.to_owned()),
        data: Some(data),
        ..NewEvent::default()
    }
}

/// Marks potentially stale the live flags older than their type's lifetime at `now` that are not yet, with
/// one `feature-potentially-stale-on` each; returns how many. The claim is one UPDATE of the unmarked rows,
/// so replicas running this at once mark (and record) each flag once.
pub async fn mark_potentially_stale(tx: &mut WriteTx) -> Result<usize, ApiError> {
    let now_ms = tx.now().millis();
    let cutoffs = feature_types::stale_cutoffs(tx.conn(), now_ms).await?;
    let claimed = store::claim_potentially_stale(tx.conn(), &cutoffs).await?;
    for (feature, project) in &claimed {
        tx.record(lifecycle_event(
            EventType::FeaturePotentiallyStaleOn,
            project,
            feature,
            json!({"name": feature, "potentiallyStale": true}),
        ))
        .await?;
    }
    Ok(claimed.len())
}
