//! Flag-level variants of a flag in one environment (API.md §3.3, weights §7): validated and normalised like
//! strategy variants (fix keeps its weight, variable ones share what is left of 1000), sorted by name, with
//! overrides. SDKs use them when the deciding strategy has no variants of its own.

use super::change_request_gate;
use super::events::{payload, EventType};
use super::feature_lookup::{ensure_not_archived, require_in_project, require_project_environment};
use crate::model::variant::{
    normalize_flag_variants, normalize_flag_variants_keeping_weights, FlagVariant,
};
use crate::store::variants as variant_store;
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// `GET · PUT · PATCH …/environments/:environment/variants`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FlagVariants {
    pub version: u32,
    pub variants: Vec<FlagVariant>,
}

/// `PUT …/features/:featureName/variants-batch`: the same variants for several environments.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct PushVariants {
    /// Default: none (removes the flag-level variants).
    pub variants: Option<Vec<FlagVariant>>,
    #[schema(min_items = 1)]
    pub environments: Vec<String>,
}

/// The stored variants of a flag in an environment (none when never set).
pub async fn stored(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Vec<FlagVariant>, ApiError> {
    Ok(variant_store::get(conn, feature, environment)
        .await?
        .unwrap_or_default())
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

/// Replaces the variants of a flag in an environment; `feature-environment-variants-updated` on a change.
pub async fn set(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    variants: Vec<FlagVariant>,
) -> Result<FlagVariants, ApiError> {
    let variants = normalize_flag_variants(variants)?;
    set_normalized(tx, project, feature, environment, variants).await
}

/// As [`set`], for an import: weights that already add up to 1000 are kept as the source split them.
pub async fn set_imported(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    variants: Vec<FlagVariant>,
) -> Result<FlagVariants, ApiError> {
    let variants = normalize_flag_variants_keeping_weights(variants)?;
    set_normalized(tx, project, feature, environment, variants).await
}

async fn set_normalized(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    after: Vec<FlagVariant>,
) -> Result<FlagVariants, ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let row = require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    ensure_not_archived(&row)?;
    let before = stored(tx.conn(), feature, environment).await?;
    if after != before {
        variant_store::set(tx.conn(), feature, environment, &after).await?;
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
    change_request_gate::ensure_writable(tx, project, environment).await?;
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

/// Replaces the variants of a flag in every listed environment, as `set` does in each (one event per
/// environment that changed; refused as a whole if one has change requests on).
pub async fn set_in_environments(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    input: PushVariants,
) -> Result<FlagVariants, ApiError> {
    if input.environments.is_empty() {
        return Err(ApiError::invalid_field(
            "environments",
            "environments must list at least one environment",
        ));
    }
    let variants = input.variants.unwrap_or_default();
    let mut answer = FlagVariants {
        version: 1,
        variants: Vec::new(),
    };
    for environment in &input.environments {
        answer = set(tx, project, feature, environment, variants.clone()).await?;
    }
    Ok(answer)
}
