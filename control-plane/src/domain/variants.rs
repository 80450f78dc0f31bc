//! Flag-level variants of a flag in one environment (API.md §3.3, weights §7): validated and normalised like
//! strategy variants (fix keeps its weight, variable ones share what is left of 1000), sorted by name, with
//! overrides. SDKs use them when the deciding strategy has no variants of its own.

use super::events::{payload, EventType};
use super::features::{ensure_not_archived, require_in_project, require_project_environment};
use super::strategies::{normalize_variants, StrategyVariant, VariantPayload, WeightType};
use crate::store::variants as variant_store;
use crate::store::{corrupt_json, NewEvent, StoreError, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// Context values that force a variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantOverride {
    pub context_name: String,
    pub values: Vec<String>,
}

/// A flag-level variant: the fields of a strategy variant plus overrides. (Spelled out rather than
/// `#[serde(flatten)]`, which would lose the path of a bad field in error messages.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagVariant {
    pub name: String,
    /// 0 to 1000; `variable` weights are recomputed on write.
    #[serde(default)]
    pub weight: u32,
    /// Default `variable`.
    #[serde(default = "variable")]
    pub weight_type: WeightType,
    /// Default `default`.
    #[serde(default = "default_stickiness")]
    pub stickiness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<VariantPayload>,
    #[serde(default)]
    pub overrides: Vec<VariantOverride>,
}

fn variable() -> WeightType {
    WeightType::Variable
}

fn default_stickiness() -> String {
    "default".to_owned()
}

impl FlagVariant {
    /// Splits into the strategy-variant part (normalised the same way) and the overrides.
    fn split(self) -> (StrategyVariant, Vec<VariantOverride>) {
        let variant = StrategyVariant {
            name: self.name,
            weight: self.weight,
            weight_type: self.weight_type,
            stickiness: self.stickiness,
            payload: self.payload,
        };
        (variant, self.overrides)
    }

    fn join(variant: StrategyVariant, overrides: Vec<VariantOverride>) -> FlagVariant {
        FlagVariant {
            name: variant.name,
            weight: variant.weight,
            weight_type: variant.weight_type,
            stickiness: variant.stickiness,
            payload: variant.payload,
            overrides,
        }
    }
}

/// `GET · PUT · PATCH …/environments/:environment/variants`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FlagVariants {
    pub version: u32,
    pub variants: Vec<FlagVariant>,
}

pub fn parse(text: &str) -> Result<Vec<FlagVariant>, StoreError> {
    serde_json::from_str(text)
        .map_err(|error| corrupt_json("feature_environment_variants.variants", error))
}

/// The stored variants of a flag in an environment (none when never set).
pub async fn stored(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Vec<FlagVariant>, ApiError> {
    match variant_store::get(conn, feature, environment).await? {
        Some(text) => Ok(parse(&text)?),
        None => Ok(Vec::new()),
    }
}

pub async fn get(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
    environment: &str,
) -> Result<FlagVariants, ApiError> {
    require_in_project(conn, project, feature).await?;
    require_project_environment(conn, project, environment).await?;
    Ok(FlagVariants {
        version: 1,
        variants: stored(conn, feature, environment).await?,
    })
}

/// Sorted by name, weights normalised, overrides checked.
fn normalize(mut variants: Vec<FlagVariant>) -> Result<Vec<FlagVariant>, ApiError> {
    variants.sort_by(|a, b| a.name.cmp(&b.name));
    for (index, variant) in variants.iter().enumerate() {
        for (position, override_) in variant.overrides.iter().enumerate() {
            super::names::validate(
                &format!("variants[{index}].overrides[{position}].contextName"),
                &override_.context_name,
            )?;
        }
    }
    let (plain, overrides): (Vec<StrategyVariant>, Vec<Vec<VariantOverride>>) =
        variants.into_iter().map(FlagVariant::split).unzip();
    Ok(normalize_variants(plain)?
        .into_iter()
        .zip(overrides)
        .map(|(variant, overrides)| FlagVariant::join(variant, overrides))
        .collect())
}

/// Replaces the variants of a flag in an environment; `feature-environment-variants-updated` on a change.
pub async fn set(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    variants: Vec<FlagVariant>,
) -> Result<FlagVariants, ApiError> {
    let row = require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    ensure_not_archived(&row)?;
    let after = normalize(variants)?;
    let before = stored(tx.conn(), feature, environment).await?;
    if after != before {
        variant_store::set(
            tx.conn(),
            feature,
            environment,
            &payload(&after).to_string(),
        )
        .await?;
        tx.record(NewEvent {
            event_type: EventType::FeatureEnvironmentVariantsUpdated.as_str(),
            project: Some(row.project_id.clone()),
            environment: Some(environment.to_owned()),
            feature_name: Some(row.name.clone()),
            data: Some(serde_json::json!({ "variants": after })),
            pre_data: Some(serde_json::json!({ "variants": before })),
        })
        .await?;
    }
    Ok(FlagVariants {
        version: 1,
        variants: after,
    })
}

/// Applies a JSON Patch to the variants array, then replaces them as PUT does.
pub async fn patch(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    operations: json_patch::Patch,
) -> Result<FlagVariants, ApiError> {
    require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    let mut document = payload(&stored(tx.conn(), feature, environment).await?);
    json_patch::patch(&mut document, &operations)
        .map_err(|error| ApiError::validation(format!("The patch does not apply: {error}")))?;
    let variants: Vec<FlagVariant> =
        serde_path_to_error::deserialize(document).map_err(|error| {
            ApiError::validation(format!(
                "The patched variants are invalid at {}: {}",
                error.path(),
                error.inner()
            ))
        })?;
    set(tx, project, feature, environment, variants).await
}
