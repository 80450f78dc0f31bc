//! A project's everyday administration beyond its settings: the default strategy of each of its
//! environments (`…/environments/:env/default-strategy`), tags on several of its flags at once
//! (`PUT …/tags`), which flags of a planned archive others depend on (`…/archive/validate`), and archiving
//! or reviving the project itself (`/api/admin/projects/archive/:p`, `…/revive/:p`). Moving a flag to
//! another project is [`super::feature_move`].

use super::events::{payload, EventType};
use super::feature_batches::BatchFeatures;
use super::limits::Limits;
use super::projects::{self, DEFAULT_PROJECT};
use super::strategies;
use super::tags::{self, UpdateTags};
use crate::model::strategy::StrategyInput;
use crate::store::dependencies as dependency_store;
use crate::store::features as feature_store;
use crate::store::projects as project_store;
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The environment name that sets the default strategy of every environment of the project.
pub const ALL_ENVIRONMENTS: &str = "*";

/// The stored default strategy of a project environment, as the API shows it; `None` when none is set (a
/// flag switched on there then gets `flexibleRollout` at 100 %).
pub async fn default_strategy(
    conn: &mut AnyConnection,
    project: &str,
    environment: &str,
) -> Result<Option<StrategyInput>, ApiError> {
    let stored = project_store::default_strategy(conn, project, environment).await?;
    Ok(stored.and_then(|text| serde_json::from_str(&text).ok()))
}

/// `POST /api/admin/projects/:p/environments/:env/default-strategy` (`*`: every environment the project
/// uses): checks the strategy as a strategy write (`strategies::checked_default`), stores it, and records
/// `default-strategy-updated` for each environment whose default changed. 404 for an unknown project or an
/// environment the project does not use. Answers the strategy as stored.
pub async fn set_default_strategy(
    tx: &mut WriteTx,
    project: &str,
    environment: &str,
    input: StrategyInput,
    limits: &Limits,
) -> Result<StrategyInput, ApiError> {
    projects::require(tx.conn(), project).await?;
    let environments = if environment == ALL_ENVIRONMENTS {
        project_store::environments(tx.conn(), project).await?
    } else {
        if !project_store::has_environment(tx.conn(), project, environment).await? {
            return Err(ApiError::not_found(format!(
                "Environment {environment} does not exist in project {project}"
            )));
        }
        vec![environment.to_owned()]
    };
    let strategy = strategies::checked_default(tx, project, input, limits).await?;
    let text = serde_json::to_string(&strategy).map_err(|_| ApiError::internal())?;
    for environment in environments {
        let before = default_strategy(tx.conn(), project, &environment).await?;
        if before.as_ref() == Some(&strategy) {
            continue;
        }
        project_store::set_default_strategy(tx.conn(), project, &environment, Some(&text)).await?;
        tx.record(NewEvent {
            event_type: EventType::DefaultStrategyUpdated.as_str(),
            project: Some(project.to_owned()),
            environment: Some(environment.clone()),
            data: Some(payload(&strategy)),
            pre_data: before.map(|before| payload(&before)),
            ..NewEvent::default()
        })
        .await?;
    }
    Ok(strategy)
}

/// `POST /api/admin/projects/:p/environments` (projectEnvironmentSchema): the project starts using the
/// environment and, when the body has a `defaultStrategy`, that becomes its default there (one write).
pub async fn add_environment(
    tx: &mut WriteTx,
    project: &str,
    mut input: projects::AddProjectEnvironment,
    limits: &Limits,
) -> Result<(), ApiError> {
    let default_strategy = input.default_strategy.take();
    let environment = input.environment.clone();
    projects::add_environment(tx, project, input).await?;
    if let Some(strategy) = default_strategy {
        set_default_strategy(tx, project, &environment, strategy, limits).await?;
    }
    Ok(())
}

/// `PUT /api/admin/projects/:p/tags` (tagsBulkAddSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TagsBulkAdd {
    /// Flags of the project (archived ones too), each named once or more.
    pub features: Vec<String>,
    pub tags: UpdateTags,
}

/// `PUT /api/admin/projects/:p/tags`: adds `tags.addedTags` to each flag, then removes `tags.removedTags`,
/// with the events a flag's own tag write records (`feature-tagged`, `feature-untagged`, `tag-created` for
/// a new tag). All or nothing: 404 when a flag is not in the project, 400 for a bad tag.
pub async fn tag_features(
    tx: &mut WriteTx,
    project: &str,
    input: TagsBulkAdd,
) -> Result<(), ApiError> {
    projects::require(tx.conn(), project).await?;
    let names: BTreeSet<String> = input.features.into_iter().collect();
    for (index, name) in names.iter().enumerate() {
        if name.is_empty() {
            return Err(ApiError::invalid_field(
                format!("features[{index}]"),
                "features: a flag name is empty",
            ));
        }
        match feature_store::get(tx.conn(), name).await? {
            Some(row) if row.project_id == project => {}
            _ => {
                return Err(ApiError::not_found(format!(
                    "Flag {name} does not exist in project {project}"
                )))
            }
        }
    }
    for name in &names {
        tags::update_feature_tags(tx, name, input.tags.clone()).await?;
    }
    Ok(())
}

/// What archiving the given flags would do to dependencies (validateArchiveFeaturesSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveValidation {
    /// The given flags that live flags outside the list depend on (archiving them is refused), by name.
    pub parents_with_child_features: Vec<String>,
    /// Whether any given flag depends on another or has flags depending on it: those dependencies go
    /// with the archive.
    pub has_deleted_dependencies: bool,
}

/// `POST /api/admin/projects/:p/archive/validate`: reads only. Names that are not flags of the project
/// have no dependencies; 404 for an unknown project.
pub async fn validate_archive(
    conn: &mut AnyConnection,
    project: &str,
    input: BatchFeatures,
) -> Result<ArchiveValidation, ApiError> {
    projects::require(conn, project).await?;
    let mut names = BTreeSet::new();
    for name in input.features {
        if let Some(row) = feature_store::get(conn, &name).await? {
            if row.project_id == project {
                names.insert(name);
            }
        }
    }
    let mut has_deleted_dependencies = false;
    let mut parents = Vec::new();
    for name in &names {
        if !dependency_store::of_child(conn, name).await?.is_empty() {
            has_deleted_dependencies = true;
        }
        let children = dependency_store::children_of(conn, name).await?;
        if !children.is_empty() {
            has_deleted_dependencies = true;
        }
        for child in children.iter().filter(|child| !names.contains(*child)) {
            let live = feature_store::get(conn, child)
                .await?
                .is_some_and(|row| row.archived_at.is_none());
            if live {
                parents.push(name.clone());
                break;
            }
        }
    }
    Ok(ArchiveValidation {
        parents_with_child_features: parents,
        has_deleted_dependencies,
    })
}

/// `POST /api/admin/projects/archive/:p`: archives a project that has no live flags (400 otherwise, and for
/// `default`); it then takes no new flags until revived. Already archived: nothing to do.
/// `project-archived`.
pub async fn archive(tx: &mut WriteTx, project: &str) -> Result<(), ApiError> {
    if project == DEFAULT_PROJECT {
        return Err(ApiError::validation(
            "The default project cannot be archived",
        ));
    }
    let row = projects::require(tx.conn(), project).await?;
    if row.archived_at.is_some() {
        return Ok(());
    }
    let live = project_store::feature_count(tx.conn(), project, false).await?;
    if live > 0 {
        return Err(ApiError::validation(format!(
            "Project {project} still has {live} live flag(s); archive them first"
        )));
    }
    let before = projects::get(tx.conn(), project).await?;
    let now = tx.now();
    project_store::set_archived_at(tx.conn(), project, Some(now)).await?;
    let after = projects::get(tx.conn(), project).await?;
    record(tx, EventType::ProjectArchived, project, &before, &after).await
}

/// `POST /api/admin/projects/revive/:p`: brings an archived project back. Not archived: nothing to do.
/// `project-revived`.
pub async fn revive(tx: &mut WriteTx, project: &str) -> Result<(), ApiError> {
    let row = projects::require(tx.conn(), project).await?;
    if row.archived_at.is_none() {
        return Ok(());
    }
    let before = projects::get(tx.conn(), project).await?;
    project_store::set_archived_at(tx.conn(), project, None).await?;
    let after = projects::get(tx.conn(), project).await?;
    record(tx, EventType::ProjectRevived, project, &before, &after).await
}

async fn record(
    tx: &mut WriteTx,
    event_type: EventType,
    project: &str,
    before: &projects::Project,
    after: &projects::Project,
) -> Result<(), ApiError> {
    tx.record(NewEvent {
        event_type: event_type.as_str(),
        project: Some(project.to_owned()),
        data: Some(payload(after)),
        pre_data: Some(payload(before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}
