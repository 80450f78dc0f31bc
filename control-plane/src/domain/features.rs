//! Feature flags: metadata, per-environment switches, archive, revive and delete.

use super::change_request_gate;
use super::dependencies::{self, Dependency};
use super::events::{payload, EventType};
use super::feature_lookup::{
    ensure_not_archived, require_in_project, require_live, require_project_environment,
};
use super::feature_switch::switch;
use super::limits::{self, Limits};
use super::projects::{self, to_count};
use super::strategies::{self, Strategy};
use super::tags::{self, Tag};
use super::variants;
use crate::model::name;
use crate::model::variant::FlagVariant;
use crate::store::features::{self as feature_store, FeatureRow};
use crate::store::strategies as strategy_store;
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::HashMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureType {
    Release,
    Experiment,
    Operational,
    KillSwitch,
    Permission,
    Sunset,
}

impl FeatureType {
    /// The type of a stored flag (`None` for a name Vexil does not know: `create`'s default).
    pub fn from_stored(text: &str) -> Option<FeatureType> {
        FEATURE_TYPES
            .iter()
            .copied()
            .find(|feature_type| feature_type.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FeatureType::Release => "release",
            FeatureType::Experiment => "experiment",
            FeatureType::Operational => "operational",
            FeatureType::KillSwitch => "kill-switch",
            FeatureType::Permission => "permission",
            FeatureType::Sunset => "sunset",
        }
    }
}

/// Every flag type, in Unleash's order.
pub const FEATURE_TYPES: [FeatureType; 6] = [
    FeatureType::Release,
    FeatureType::Experiment,
    FeatureType::Operational,
    FeatureType::KillSwitch,
    FeatureType::Permission,
    FeatureType::Sunset,
];

/// A flag's metadata (the answer of `POST …/features`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureSummary {
    pub name: String,
    #[serde(rename = "type")]
    pub feature_type: String,
    pub description: Option<String>,
    pub project: String,
    pub stale: bool,
    pub impression_data: bool,
    pub created_at: String,
    pub archived: bool,
    pub archived_at: Option<String>,
}

/// A flag's switch in one environment, as flag lists show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironmentSummary {
    pub name: String,
    pub enabled: bool,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub sort_order: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureListItem {
    #[serde(flatten)]
    pub summary: FeatureSummary,
    pub environments: Vec<FeatureEnvironmentSummary>,
}

/// `GET /api/admin/projects/:projectId/features`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FeatureList {
    pub version: u32,
    pub features: Vec<FeatureListItem>,
}

/// A flag's configuration in one environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironment {
    pub name: String,
    pub enabled: bool,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub sort_order: i64,
    pub strategies: Vec<Strategy>,
    /// Flag-level variants of the environment.
    pub variants: Vec<FlagVariant>,
}

/// `GET …/features/:featureName/environments/:environment`: a flag's configuration in one environment
/// (`lastSeenAt` is not tracked per environment: null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironmentDetails {
    /// The environment's name.
    pub name: String,
    pub feature_name: String,
    pub environment: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub enabled: bool,
    pub sort_order: i64,
    pub variant_count: usize,
    pub strategies: Vec<Strategy>,
    pub variants: Vec<FlagVariant>,
    pub last_seen_at: Option<String>,
    pub has_strategies: bool,
    pub has_enabled_strategies: bool,
}

/// A flag with its configuration in every environment of its project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Feature {
    #[serde(flatten)]
    pub summary: FeatureSummary,
    pub environments: Vec<FeatureEnvironment>,
    pub variants: Vec<serde_json::Value>,
    /// The parent flags this flag depends on.
    pub dependencies: Vec<Dependency>,
    /// The flags that depend on this one.
    pub children: Vec<String>,
    /// Links to what belongs with the flag (`domain::feature_links`).
    #[serde(default)]
    pub links: Vec<super::feature_links::FeatureLink>,
    /// Older than its type's expected lifetime (set once by the potentially-stale job; Unleash's project
    /// schemas count such flags).
    #[serde(default)]
    pub potentially_stale: bool,
}

/// `POST /api/admin/projects/:projectId/features`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateFeature {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    /// Default `release`.
    #[serde(rename = "type")]
    pub feature_type: Option<FeatureType>,
    pub description: Option<String>,
    pub impression_data: Option<bool>,
    /// Tags to put on the new flag (created if new).
    pub tags: Option<Vec<Tag>>,
}

/// `PUT …/features/:featureName` (and the document `PATCH` edits): absent fields keep their value.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateFeature {
    /// If present, must be the flag's name.
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub feature_type: Option<FeatureType>,
    pub description: Option<String>,
    pub stale: Option<bool>,
    pub impression_data: Option<bool>,
}

/// `POST /api/admin/projects/:projectId/archive`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ArchiveFeatures {
    #[schema(min_items = 1)]
    pub features: Vec<String>,
}

/// `POST /api/admin/features/validate`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidateFeatureName {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    pub project_id: Option<String>,
}

/// An archived flag (the spec's archived feature).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedFeature {
    pub name: String,
    #[serde(rename = "type")]
    pub feature_type: String,
    pub description: Option<String>,
    pub project: String,
    pub stale: bool,
    pub impression_data: bool,
    pub created_at: String,
    pub archived_at: Option<String>,
    /// Deprecated; always null.
    pub last_seen_at: Option<String>,
    /// Deprecated.
    pub environments: Vec<ArchivedFeatureEnvironment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedFeatureEnvironment {
    pub name: String,
    pub last_seen_at: Option<String>,
    pub enabled: bool,
}

/// `GET /api/admin/archive/features[/:projectId]`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ArchivedFeatureList {
    pub version: u32,
    pub features: Vec<ArchivedFeature>,
}

pub fn summary(row: &FeatureRow) -> FeatureSummary {
    FeatureSummary {
        name: row.name.clone(),
        feature_type: row.feature_type.clone(),
        description: row.description.clone(),
        project: row.project_id.clone(),
        stale: row.stale,
        impression_data: row.impression_data,
        created_at: row.created_at.to_string(),
        archived: row.archived_at.is_some(),
        archived_at: row.archived_at.map(|at| at.to_string()),
    }
}

/// The project's live flags with their switches: two statements, whatever the number of flags.
pub async fn list(conn: &mut AnyConnection, project: &str) -> Result<FeatureList, ApiError> {
    projects::require(conn, project).await?;
    let mut by_flag: std::collections::HashMap<String, Vec<FeatureEnvironmentSummary>> =
        std::collections::HashMap::new();
    for (flag, environment) in feature_store::live_environments(conn, project).await? {
        by_flag
            .entry(flag)
            .or_default()
            .push(FeatureEnvironmentSummary {
                name: environment.name,
                enabled: environment.enabled,
                environment_type: environment.environment_type,
                sort_order: environment.sort_order,
            });
    }
    let mut features = Vec::new();
    for row in feature_store::list_live(conn, project).await? {
        let environments = by_flag.remove(&row.name).unwrap_or_default();
        features.push(FeatureListItem {
            summary: summary(&row),
            environments,
        });
    }
    Ok(FeatureList {
        version: 2,
        features,
    })
}

async fn view(conn: &mut AnyConnection, row: &FeatureRow) -> Result<Feature, ApiError> {
    let mut environments = Vec::new();
    for environment in feature_store::environments(conn, &row.project_id, &row.name).await? {
        let strategies = strategies::list_rows(conn, &row.name, &environment.name).await?;
        let variants = variants::stored(conn, &row.name, &environment.name).await?;
        environments.push(FeatureEnvironment {
            name: environment.name,
            enabled: environment.enabled,
            environment_type: environment.environment_type,
            sort_order: environment.sort_order,
            strategies,
            variants,
        });
    }
    Ok(Feature {
        summary: summary(row),
        environments,
        variants: Vec::new(),
        dependencies: dependencies::of_feature(conn, &row.name).await?,
        children: dependencies::children(conn, &row.name).await?,
        links: super::feature_links::of_feature(conn, &row.name).await?,
        potentially_stale: row.potentially_stale,
    })
}

pub async fn get(conn: &mut AnyConnection, project: &str, name: &str) -> Result<Feature, ApiError> {
    let row = require_live(conn, project, name).await?;
    view(conn, &row).await
}

/// One environment of a live flag; 404 for an environment the project does not use.
pub async fn environment(
    conn: &mut AnyConnection,
    project: &str,
    name: &str,
    environment: &str,
) -> Result<FeatureEnvironmentDetails, ApiError> {
    let row = require_live(conn, project, name).await?;
    require_project_environment(conn, project, environment).await?;
    let found = view(conn, &row)
        .await?
        .environments
        .into_iter()
        .find(|candidate| candidate.name == environment)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Environment {environment} does not exist in project {project}"
            ))
        })?;
    Ok(FeatureEnvironmentDetails {
        feature_name: row.name,
        environment: found.name.clone(),
        environment_type: found.environment_type,
        enabled: found.enabled,
        sort_order: found.sort_order,
        variant_count: found.variants.len(),
        has_strategies: !found.strategies.is_empty(),
        has_enabled_strategies: found.strategies.iter().any(|strategy| !strategy.disabled),
        strategies: found.strategies,
        variants: found.variants,
        last_seen_at: None,
        name: found.name,
    })
}

/// 409 if the name is taken, archived flags included.
async fn ensure_name_free(conn: &mut AnyConnection, name: &str) -> Result<(), ApiError> {
    if let Some(existing) = feature_store::get(conn, name).await? {
        let archived = if existing.archived_at.is_some() {
            " (archived)"
        } else {
            ""
        };
        return Err(ApiError::name_exists(format!(
            "A flag named {name} already exists in project {}{archived}",
            existing.project_id
        )));
    }
    Ok(())
}

pub async fn validate_name(
    conn: &mut AnyConnection,
    input: ValidateFeatureName,
) -> Result<(), ApiError> {
    name::validate("name", &input.name)?;
    if let Some(project) = &input.project_id {
        projects::require(conn, project).await?;
    }
    ensure_name_free(conn, &input.name).await
}

pub async fn create(
    tx: &mut WriteTx,
    project: &str,
    input: CreateFeature,
    limits: &Limits,
) -> Result<FeatureSummary, ApiError> {
    name::validate("name", &input.name)?;
    let project_row = projects::require(tx.conn(), project).await?;
    projects::ensure_active(&project_row)?;
    ensure_name_free(tx.conn(), &input.name).await?;
    ensure_flag_room(tx, limits).await?;
    let row = FeatureRow {
        name: input.name,
        project_id: project.to_owned(),
        feature_type: input
            .feature_type
            .unwrap_or(FeatureType::Release)
            .as_str()
            .to_owned(),
        description: input.description,
        stale: false,
        potentially_stale: false,
        impression_data: input.impression_data.unwrap_or(false),
        created_at: tx.now(),
        archived_at: None,
    };
    feature_store::insert(tx.conn(), &row).await?;
    let created = summary(&row);
    tx.record(feature_event(
        EventType::FeatureCreated,
        &row,
        Some(payload(&created)),
        None,
    ))
    .await?;
    for tag in input.tags.unwrap_or_default() {
        tags::add_feature_tag(tx, &row.name, tag).await?;
    }
    Ok(created)
}

fn feature_event(
    event_type: EventType,
    row: &FeatureRow,
    data: Option<serde_json::Value>,
    pre_data: Option<serde_json::Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(row.project_id.clone()),
        feature_name: Some(row.name.clone()),
        data,
        pre_data,
        ..NewEvent::default()
    }
}

/// Updates metadata: `feature-metadata-updated`, plus `feature-stale-on/off` and `feature-type-updated` when
/// those change. Nothing changed, no event.
pub async fn update(
    tx: &mut WriteTx,
    project: &str,
    name: &str,
    input: UpdateFeature,
) -> Result<Feature, ApiError> {
    let before = require_live(tx.conn(), project, name).await?;
    if let Some(new_name) = &input.name {
        if new_name != name {
            return Err(ApiError::invalid_field(
                "name",
                format!("name: a flag cannot be renamed ({new_name} ≠ {name})"),
            ));
        }
    }
    let after = FeatureRow {
        feature_type: input
            .feature_type
            .map(|t| t.as_str().to_owned())
            .unwrap_or(before.feature_type.clone()),
        description: input.description.or(before.description.clone()),
        stale: input.stale.unwrap_or(before.stale),
        impression_data: input.impression_data.unwrap_or(before.impression_data),
        ..before.clone()
    };
    let (old, new) = (summary(&before), summary(&after));
    if old != new {
        feature_store::update(tx.conn(), &after).await?;
        let (data, pre_data) = (Some(payload(&new)), Some(payload(&old)));
        tx.record(feature_event(
            EventType::FeatureMetadataUpdated,
            &after,
            data.clone(),
            pre_data.clone(),
        ))
        .await?;
        if old.stale != new.stale {
            let event_type = if new.stale {
                EventType::FeatureStaleOn
            } else {
                EventType::FeatureStaleOff
            };
            tx.record(feature_event(
                event_type,
                &after,
                data.clone(),
                pre_data.clone(),
            ))
            .await?;
        }
        if old.feature_type != new.feature_type {
            tx.record(feature_event(
                EventType::FeatureTypeUpdated,
                &after,
                data,
                pre_data,
            ))
            .await?;
        }
    }
    view(tx.conn(), &after).await
}

/// Applies a JSON Patch to `{name, type, description, stale, impressionData}`, then updates as PUT does.
pub async fn patch(
    tx: &mut WriteTx,
    project: &str,
    name: &str,
    operations: json_patch::Patch,
) -> Result<Feature, ApiError> {
    let row = require_live(tx.conn(), project, name).await?;
    let current = summary(&row);
    let mut document = serde_json::json!({
        "name": current.name,
        "type": current.feature_type,
        "description": current.description,
        "stale": current.stale,
        "impressionData": current.impression_data,
    });
    json_patch::patch(&mut document, &operations)
        .map_err(|error| ApiError::validation(format!("The patch does not apply: {error}")))?;
    let input: UpdateFeature = serde_path_to_error::deserialize(document).map_err(|error| {
        ApiError::validation(format!(
            "The patched flag is invalid at {}: {}",
            error.path(),
            error.inner()
        ))
    })?;
    update(tx, project, name, input).await
}

/// Archives a live flag: it leaves SDK outputs, its name stays taken, its own dependencies go. Refused
/// (403) while change requests are on for an environment of the project, unless applying one; refused
/// (400) while a live flag depends on it.
pub async fn archive(tx: &mut WriteTx, project: &str, name: &str) -> Result<(), ApiError> {
    archive_one(tx, project, name).await?;
    dependencies::ensure_no_live_children(tx, name).await
}

async fn archive_one(tx: &mut WriteTx, project: &str, name: &str) -> Result<(), ApiError> {
    change_request_gate::ensure_archivable(tx, project).await?;
    let before = require_live(tx.conn(), project, name).await?;
    let after = FeatureRow {
        archived_at: Some(tx.now()),
        ..before.clone()
    };
    feature_store::update(tx.conn(), &after).await?;
    let (data, pre_data) = (payload(&summary(&after)), payload(&summary(&before)));
    tx.record(feature_event(
        EventType::FeatureArchived,
        &after,
        Some(data),
        Some(pre_data),
    ))
    .await?;
    dependencies::drop_on_archive(tx, &after).await
}

/// Archives several flags of a project, all or none (a parent together with all its children too).
pub async fn archive_many(
    tx: &mut WriteTx,
    project: &str,
    input: ArchiveFeatures,
) -> Result<(), ApiError> {
    change_request_gate::ensure_archivable(tx, project).await?;
    if input.features.is_empty() {
        return Err(ApiError::invalid_field(
            "features",
            "features must list at least one flag",
        ));
    }
    for name in &input.features {
        archive_one(tx, project, name).await?;
    }
    for name in &input.features {
        dependencies::ensure_no_live_children(tx, name).await?;
    }
    Ok(())
}

/// 400 `ExceedsLimitError` when one more live flag would pass the `featureFlags` limit.
async fn ensure_flag_room(tx: &mut WriteTx, limits: &Limits) -> Result<(), ApiError> {
    let live = feature_store::count_live(tx.conn()).await?;
    limits::ensure_within(
        "featureFlags",
        "live flags",
        to_count(live) + 1,
        limits.feature_flags,
    )
}

/// Brings an archived flag back, off in every environment (it counts against `featureFlags` again). Not
/// archived: nothing to do.
pub async fn revive(tx: &mut WriteTx, name: &str, limits: &Limits) -> Result<(), ApiError> {
    let before = feature_store::get(tx.conn(), name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Flag {name} does not exist")))?;
    if before.archived_at.is_none() {
        return Ok(());
    }
    let project = projects::require(tx.conn(), &before.project_id).await?;
    projects::ensure_active(&project)?;
    ensure_flag_room(tx, limits).await?;
    let after = FeatureRow {
        archived_at: None,
        ..before.clone()
    };
    feature_store::update(tx.conn(), &after).await?;
    feature_store::disable_everywhere(tx.conn(), name).await?;
    let (data, pre_data) = (payload(&summary(&after)), payload(&summary(&before)));
    tx.record(feature_event(
        EventType::FeatureRevived,
        &after,
        Some(data),
        Some(pre_data),
    ))
    .await?;
    Ok(())
}

/// Deletes an archived flag for good. Unknown or not archived: nothing to do.
pub async fn delete_archived(tx: &mut WriteTx, name: &str) -> Result<(), ApiError> {
    let Some(before) = feature_store::get(tx.conn(), name).await? else {
        return Ok(());
    };
    if before.archived_at.is_none() {
        return Ok(());
    }
    feature_store::delete(tx.conn(), name).await?;
    tx.record(feature_event(
        EventType::FeatureDeleted,
        &before,
        None,
        Some(payload(&summary(&before))),
    ))
    .await?;
    Ok(())
}

pub async fn archived(
    conn: &mut AnyConnection,
    project: Option<&str>,
) -> Result<ArchivedFeatureList, ApiError> {
    let mut environments_by_flag: HashMap<String, Vec<ArchivedFeatureEnvironment>> = HashMap::new();
    for (flag, environment) in feature_store::archived_environments(conn, project).await? {
        environments_by_flag
            .entry(flag)
            .or_default()
            .push(ArchivedFeatureEnvironment {
                name: environment.name,
                last_seen_at: None,
                enabled: environment.enabled,
            });
    }
    let mut features = Vec::new();
    for row in feature_store::list_archived(conn, project).await? {
        let environments = environments_by_flag.remove(&row.name).unwrap_or_default();
        features.push(ArchivedFeature {
            name: row.name,
            feature_type: row.feature_type,
            description: row.description,
            project: row.project_id,
            stale: row.stale,
            impression_data: row.impression_data,
            created_at: row.created_at.to_string(),
            archived_at: row.archived_at.map(|at| at.to_string()),
            last_seen_at: None,
            environments,
        });
    }
    Ok(ArchivedFeatureList {
        version: 2,
        features,
    })
}

/// Turns a flag on or off in an environment; an event only on a real change. Turning on a flag without an
/// enabled strategy first adds the default `flexibleRollout` (or, when asked, re-enables the disabled ones).
pub async fn set_enabled(
    tx: &mut WriteTx,
    project: &str,
    name: &str,
    environment: &str,
    enabled: bool,
    activate_disabled_strategies: bool,
) -> Result<(), ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let row = require_in_project(tx.conn(), project, name).await?;
    super::environments::require(tx.conn(), environment).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    ensure_not_archived(&row)?;
    if feature_store::is_enabled(tx.conn(), name, environment).await? == enabled {
        return Ok(());
    }
    if enabled {
        let existing = strategy_store::list(tx.conn(), name, environment).await?;
        if !existing.iter().any(|strategy| !strategy.disabled) {
            if activate_disabled_strategies && !existing.is_empty() {
                strategies::enable_all(tx, &row, environment, existing).await?;
            } else {
                strategies::add_default(tx, &row, environment).await?;
            }
        }
    }
    switch(tx, &row, environment, enabled).await
}
