//! Batch operations on a project's flags (Unleash's bulk routes): switch several flags on or off in one
//! environment, revive, delete and mark stale. Each batch is one `WriteTx` that goes through the single
//! flag's domain function for every name, so the checks, the events and the change-request gate are those of
//! one flag, and the first refusal rolls the whole batch back.

use super::feature_lookup::require_in_project;
use super::features::{self, UpdateFeature};
use super::limits::Limits;
use crate::store::features::FeatureRow;
use crate::store::WriteTx;
use serde::Deserialize;
use std::collections::BTreeSet;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// `POST …/bulk_features/environments/:environment/on|off`, `POST …/revive`, `POST …/delete`: flag names.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct BatchFeatures {
    #[schema(min_items = 1)]
    pub features: Vec<String>,
}

/// `POST /api/admin/projects/:projectId/stale`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct BatchStale {
    #[schema(min_items = 1)]
    pub features: Vec<String>,
    pub stale: bool,
}

/// The listed names, each once, in their order; 400 for an empty list.
fn names(features: Vec<String>) -> Result<Vec<String>, ApiError> {
    if features.is_empty() {
        return Err(ApiError::invalid_field(
            "features",
            "features must list at least one flag",
        ));
    }
    let mut seen = BTreeSet::new();
    Ok(features
        .into_iter()
        .filter(|name| seen.insert(name.clone()))
        .collect())
}

/// A listed flag of the project; a flag of another project, or none, is bad input (400), an unknown
/// project 404.
async fn require_listed(
    tx: &mut WriteTx,
    project: &str,
    name: &str,
) -> Result<FeatureRow, ApiError> {
    super::projects::require(tx.conn(), project).await?;
    require_in_project(tx.conn(), project, name)
        .await
        .map_err(|error| match error.kind {
            ErrorKind::NotFound => ApiError::invalid_field(
                "features",
                format!("features: flag {name} does not exist in project {project}"),
            ),
            _ => error,
        })
}

/// Turns every listed flag on or off in `environment`, as the single switch does (a flag turned on without
/// an enabled strategy gets the default one); refused as a whole when change requests are on there.
pub async fn set_enabled(
    tx: &mut WriteTx,
    project: &str,
    environment: &str,
    input: BatchFeatures,
    enabled: bool,
) -> Result<(), ApiError> {
    for name in &names(input.features)? {
        features::set_enabled(tx, project, name, environment, enabled, false).await?;
    }
    Ok(())
}

/// Revives every listed archived flag of the project (a live one: nothing to do).
pub async fn revive(
    tx: &mut WriteTx,
    project: &str,
    input: BatchFeatures,
    limits: &Limits,
) -> Result<(), ApiError> {
    for name in &names(input.features)? {
        require_listed(tx, project, name).await?;
        features::revive(tx, name, limits).await?;
    }
    Ok(())
}

/// Deletes every listed flag of the project for good; each must be archived first (400 otherwise).
pub async fn delete(tx: &mut WriteTx, project: &str, input: BatchFeatures) -> Result<(), ApiError> {
    for name in &names(input.features)? {
        let row = require_listed(tx, project, name).await?;
        if row.archived_at.is_none() {
            return Err(ApiError::invalid_field(
                "features",
                format!("features: flag {name} is not archived; archive it before deleting it"),
            ));
        }
        features::delete_archived(tx, name).await?;
    }
    Ok(())
}

/// Marks every listed live flag of the project stale (or not): `feature-stale-on` / `-off` with
/// `feature-metadata-updated`, as a flag `PUT` does; an archived flag is bad input.
pub async fn set_stale(tx: &mut WriteTx, project: &str, input: BatchStale) -> Result<(), ApiError> {
    for name in &names(input.features)? {
        let row = require_listed(tx, project, name).await?;
        if row.archived_at.is_some() {
            return Err(ApiError::invalid_field(
                "features",
                format!("features: flag {name} is archived"),
            ));
        }
        let change = UpdateFeature {
            name: None,
            feature_type: None,
            description: None,
            stale: Some(input.stale),
            impression_data: None,
        };
        features::update(tx, project, name, change).await?;
    }
    Ok(())
}
