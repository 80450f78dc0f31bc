//! Cloning a flag (`POST …/features/:featureName/clone`): a new flag of the same project with the source's
//! type, description and impression data, and in every environment its strategies, flag-level variants and
//! switch. Every piece goes through the single write's domain function in the caller's `WriteTx`
//! (`feature-created`, `feature-strategy-add`, `feature-environment-variants-updated`,
//! `feature-environment-enabled`), so the limits and the change-request gate apply: a clone that would write
//! into an environment with change requests on is refused as a whole.

use super::change_request_gate;
use super::feature_lookup::require_live;
use super::feature_switch::switch;
use super::features::{self, CreateFeature, Feature, FeatureType};
use super::limits::Limits;
use super::{strategies, variants};
use crate::model::strategy::StrategyInput;
use crate::store::features as feature_store;
use crate::store::strategies::{self as strategy_store, StrategyRow};
use crate::store::WriteTx;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// `POST /api/admin/projects/:projectId/features/:featureName/clone`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneFeature {
    /// The new flag's name.
    pub name: String,
    /// Whether the strategies' `groupId` parameter becomes the new name (default true).
    pub replace_group_id: Option<bool>,
}

/// The source strategy as the body that adds it to the clone.
fn copy_of(row: StrategyRow, new_name: &str, replace_group_id: bool) -> StrategyInput {
    let mut input = strategies::input_of(row);
    if replace_group_id {
        if let Some(group_id) = input
            .parameters
            .as_mut()
            .and_then(|parameters| parameters.get_mut("groupId"))
        {
            *group_id = Value::String(new_name.to_owned());
        }
    }
    input
}

pub async fn clone(
    tx: &mut WriteTx,
    project: &str,
    source: &str,
    input: CloneFeature,
    limits: &Limits,
) -> Result<Feature, ApiError> {
    let source_row = require_live(tx.conn(), project, source).await?;
    let replace_group_id = input.replace_group_id.unwrap_or(true);
    let create = CreateFeature {
        name: input.name,
        feature_type: FeatureType::from_stored(&source_row.feature_type),
        description: source_row.description.clone(),
        impression_data: Some(source_row.impression_data),
        // As in Unleash, a clone starts without the source's tags.
        tags: None,
    };
    let created = features::create(tx, project, create, limits).await?;
    let clone_row = require_live(tx.conn(), project, &created.name).await?;
    for environment in feature_store::environments(tx.conn(), project, source).await? {
        let environment = environment.name;
        for strategy in strategy_store::list(tx.conn(), source, &environment).await? {
            let body = copy_of(strategy, &created.name, replace_group_id);
            strategies::add(tx, project, &created.name, &environment, body, limits).await?;
        }
        let flag_variants = variants::stored(tx.conn(), source, &environment).await?;
        if !flag_variants.is_empty() {
            variants::set(tx, project, &created.name, &environment, flag_variants).await?;
        }
        if feature_store::is_enabled(tx.conn(), source, &environment).await? {
            change_request_gate::ensure_writable(tx, project, &environment).await?;
            switch(tx, &clone_row, &environment, true).await?;
        }
    }
    features::get(tx.conn(), project, &created.name).await
}
