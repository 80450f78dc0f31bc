//! Flag dependencies (Unleash's rules): a child flag requires the state of parent flags of its own project,
//! one level deep — a parent has no parents and a child is nobody's parent; parents are live flags. The
//! dependency reaches SDKs in the client document (`dependencies`), where the engine evaluates it.
//! Dependencies belong to no environment, so a direct write is refused (403) while change requests are on
//! in any environment of the project. Archiving a child drops its dependencies; a parent with live
//! children cannot be archived. The functions over a [`WriteTx`] can be called by other domain modules
//! (import) in their own transaction.

use super::change_request_gate;
use super::events::{payload, EventType};
use super::feature_lookup::{ensure_not_archived, require_in_project};
use super::projects;
pub use crate::model::dependency::CreateDependency;
use crate::store::dependencies::{self as dependency_store, DependencyRow};
use crate::store::features::{self as feature_store, FeatureRow};
use crate::store::projects as project_store;
use crate::store::strategies as strategy_store;
use crate::store::variants as variant_store;
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A dependency on a parent flag (dependentFeatureSchema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Dependency {
    /// The parent flag.
    pub feature: String,
    /// Whether the parent must be enabled (`false`: disabled, and variants are ignored).
    pub enabled: bool,
    /// The parent's variants that satisfy it; empty: any.
    pub variants: Vec<String>,
}

/// A child flag's dependencies (featureDependenciesSchema), as export reads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FeatureDependencies {
    /// The child flag.
    pub feature: String,
    pub dependencies: Vec<Dependency>,
}

fn view(row: DependencyRow) -> Dependency {
    Dependency {
        feature: row.parent,
        enabled: row.enabled,
        variants: row.variants,
    }
}

/// The dependencies of one flag, by parent name.
pub async fn of_feature(
    conn: &mut AnyConnection,
    child: &str,
) -> Result<Vec<Dependency>, ApiError> {
    Ok(dependency_store::of_child(conn, child)
        .await?
        .into_iter()
        .map(view)
        .collect())
}

/// The names of the flags that depend on `parent`, by name.
pub async fn children(conn: &mut AnyConnection, parent: &str) -> Result<Vec<String>, ApiError> {
    Ok(dependency_store::children_of(conn, parent).await?)
}

/// The dependencies of the named flags that have any, by child name.
pub async fn of_features(
    conn: &mut AnyConnection,
    children: &[String],
) -> Result<Vec<FeatureDependencies>, ApiError> {
    Ok(group(dependency_store::of_children(conn, children).await?))
}

/// Every flag's dependencies, by child name (the client document's).
pub async fn by_child(
    conn: &mut AnyConnection,
) -> Result<BTreeMap<String, Vec<Dependency>>, ApiError> {
    let mut by_child: BTreeMap<String, Vec<Dependency>> = BTreeMap::new();
    for row in dependency_store::list_all(conn).await? {
        by_child
            .entry(row.child.clone())
            .or_default()
            .push(view(row));
    }
    Ok(by_child)
}

fn group(rows: Vec<DependencyRow>) -> Vec<FeatureDependencies> {
    let mut grouped: Vec<FeatureDependencies> = Vec::new();
    for row in rows {
        match grouped.last_mut() {
            Some(last) if last.feature == row.child => last.dependencies.push(view(row)),
            _ => grouped.push(FeatureDependencies {
                feature: row.child.clone(),
                dependencies: vec![view(row)],
            }),
        }
    }
    grouped
}

fn event(event_type: EventType, child: &FeatureRow, data: Option<serde_json::Value>) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(child.project_id.clone()),
        feature_name: Some(child.name.clone()),
        data,
        ..NewEvent::default()
    }
}

/// The child of a dependency write: a live flag of the project (404 / 400), change requests off.
async fn writable_child(
    tx: &mut WriteTx,
    project: &str,
    child: &str,
) -> Result<FeatureRow, ApiError> {
    let row = require_in_project(tx.conn(), project, child).await?;
    change_request_gate::ensure_dependencies_writable(tx, project).await?;
    ensure_not_archived(&row)?;
    Ok(row)
}

/// Variant names: trimmed, 1 to 100 characters, each once (in the given order).
fn checked_variants(variants: Vec<String>) -> Result<Vec<String>, ApiError> {
    let mut checked: Vec<String> = Vec::with_capacity(variants.len());
    for (index, variant) in variants.into_iter().enumerate() {
        let name = variant.trim();
        let length = name.chars().count();
        if length == 0 || length > 100 {
            return Err(ApiError::invalid_field(
                format!("variants[{index}]"),
                format!("variants[{index}] must be 1 to 100 characters long"),
            ));
        }
        if !checked.iter().any(|known| known == name) {
            checked.push(name.to_owned());
        }
    }
    Ok(checked)
}

/// Adds (or replaces) the child's dependency on `input.feature` (`feature-dependency-added`): the parent is
/// a live flag of the same project, not the child, without parents of its own, and the child is nobody's
/// parent (400 otherwise); 404 for an unknown project or child.
pub async fn add(
    tx: &mut WriteTx,
    project: &str,
    child: &str,
    input: CreateDependency,
) -> Result<Dependency, ApiError> {
    let child_row = writable_child(tx, project, child).await?;
    let parent = input.feature;
    if parent == child_row.name {
        return Err(ApiError::invalid_field(
            "feature",
            "feature: a flag cannot depend on itself",
        ));
    }
    match feature_store::get(tx.conn(), &parent).await? {
        Some(row) if row.project_id != project => {
            return Err(ApiError::invalid_field(
                "feature",
                format!(
                    "feature: the parent flag {parent} is in project {}, not {project}: \
                 a parent must be in the child's project",
                    row.project_id
                ),
            ))
        }
        Some(row) if row.archived_at.is_some() => {
            return Err(ApiError::invalid_field(
                "feature",
                format!("feature: the parent flag {parent} is archived"),
            ))
        }
        Some(_) => {}
        None => {
            return Err(ApiError::invalid_field(
                "feature",
                format!("feature: no flag named {parent} exists in project {project}"),
            ))
        }
    }
    if !dependency_store::of_child(tx.conn(), &parent)
        .await?
        .is_empty()
    {
        return Err(ApiError::invalid_field(
            "feature",
            format!("feature: {parent} depends on other flags itself, so it cannot be a parent"),
        ));
    }
    if !dependency_store::children_of(tx.conn(), child)
        .await?
        .is_empty()
    {
        return Err(ApiError::validation(format!(
            "{child} is the parent of other flags, so it cannot depend on another flag"
        )));
    }
    let enabled = input.enabled.unwrap_or(true);
    let variants = if enabled {
        checked_variants(input.variants.unwrap_or_default())?
    } else {
        Vec::new()
    };
    let row = DependencyRow {
        child: child_row.name.clone(),
        parent,
        enabled,
        variants,
    };
    dependency_store::upsert(tx.conn(), &row).await?;
    let dependency = view(row);
    tx.record(event(
        EventType::FeatureDependencyAdded,
        &child_row,
        Some(payload(&dependency)),
    ))
    .await?;
    Ok(dependency)
}

/// Removes the child's dependency on `parent` (`feature-dependency-removed`); one that does not exist
/// changes nothing.
pub async fn remove(
    tx: &mut WriteTx,
    project: &str,
    child: &str,
    parent: &str,
) -> Result<(), ApiError> {
    let child_row = writable_child(tx, project, child).await?;
    if dependency_store::delete(tx.conn(), child, parent).await? {
        tx.record(event(
            EventType::FeatureDependencyRemoved,
            &child_row,
            Some(serde_json::json!({ "feature": parent })),
        ))
        .await?;
    }
    Ok(())
}

/// Removes every dependency of the child (`feature-dependencies-removed` when it had any).
pub async fn remove_all(tx: &mut WriteTx, project: &str, child: &str) -> Result<(), ApiError> {
    let child_row = writable_child(tx, project, child).await?;
    drop_all(tx, &child_row).await
}

async fn drop_all(tx: &mut WriteTx, child: &FeatureRow) -> Result<(), ApiError> {
    if dependency_store::delete_of_child(tx.conn(), &child.name).await? > 0 {
        tx.record(event(EventType::FeatureDependenciesRemoved, child, None))
            .await?;
    }
    Ok(())
}

/// For an archive: the archived flag's own dependencies go (`feature-dependencies-removed`).
pub async fn drop_on_archive(tx: &mut WriteTx, archived: &FeatureRow) -> Result<(), ApiError> {
    drop_all(tx, archived).await
}

/// After an archive: 400 while a live flag still depends on the archived one.
pub async fn ensure_no_live_children(tx: &mut WriteTx, parent: &str) -> Result<(), ApiError> {
    for child in dependency_store::children_of(tx.conn(), parent).await? {
        let live = feature_store::get(tx.conn(), &child)
            .await?
            .is_some_and(|row| row.archived_at.is_none());
        if live {
            return Err(ApiError::validation(format!(
                "{parent} cannot be archived: flag {child} depends on it (archive it too, or remove \
                 the dependency first)"
            )));
        }
    }
    Ok(())
}

/// `GET …/features/:child/parents` (parentFeatureOptionsSchema): the live flags of the project that could
/// be the child's parent (not the child, without parents of their own), by name; 404 for an unknown project
/// or flag.
pub async fn parent_options(
    conn: &mut AnyConnection,
    project: &str,
    child: &str,
) -> Result<Vec<String>, ApiError> {
    require_in_project(conn, project, child).await?;
    let with_parents: BTreeSet<String> = dependency_store::list_all(conn)
        .await?
        .into_iter()
        .map(|row| row.child)
        .collect();
    Ok(feature_store::list_live(conn, project)
        .await?
        .into_iter()
        .map(|row| row.name)
        .filter(|name| name != child && !with_parents.contains(name))
        .collect())
}

/// The flag page's suggestions for a new parent: at most `limit` of [`parent_options`], by name, and
/// whether there are more (the page then asks for the name to be typed).
pub async fn parent_suggestions(
    conn: &mut AnyConnection,
    project: &str,
    child: &str,
    limit: usize,
) -> Result<(Vec<String>, bool), ApiError> {
    let asked = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
    let mut names = dependency_store::parent_candidates(conn, project, child, asked).await?;
    let more = names.len() > limit;
    names.truncate(limit);
    Ok((names, more))
}

/// `GET …/features/:parent/parent-variants` (parentVariantOptionsSchema): the names of the parent's
/// strategy variants and flag variants in every environment of its project, each once, sorted.
pub async fn parent_variant_options(
    conn: &mut AnyConnection,
    project: &str,
    parent: &str,
) -> Result<Vec<String>, ApiError> {
    require_in_project(conn, project, parent).await?;
    let mut names = BTreeSet::new();
    for environment in project_store::environments(conn, project).await? {
        for strategy in strategy_store::list(conn, parent, &environment).await? {
            names.extend(strategy.variants.into_iter().map(|variant| variant.name));
        }
        let variants = variant_store::get(conn, parent, &environment).await?;
        names.extend(variants.into_iter().flatten().map(|variant| variant.name));
    }
    Ok(names.into_iter().collect())
}

/// `GET /api/admin/projects/:p/dependencies` (dependenciesExistSchema): whether any flag of the project
/// depends on another; 404 for an unknown project.
pub async fn exist_in_project(conn: &mut AnyConnection, project: &str) -> Result<bool, ApiError> {
    projects::require(conn, project).await?;
    Ok(dependency_store::exist_in_project(conn, project).await?)
}
