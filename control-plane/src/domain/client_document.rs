//! The client-API features document of one environment, built from the store: what SDKs and edges evaluate.
//! Archived flags are left out; a flag is enabled when its switch is on and its project uses the environment;
//! strategies come in sortOrder without the disabled ones and without their admin-only fields, with their
//! segment ids; every segment is listed at the top level; flag-level variants are the environment's;
//! dependencies and tags hold in every environment.

use super::dependencies::{self, Dependency};
use crate::model::constraint::Constraint;
use crate::model::variant::{FlagVariant, StrategyVariant};
use crate::store::features as feature_store;
use crate::store::projects as project_store;
use crate::store::segments as segment_store;
use crate::store::strategies::{self as strategy_store, StrategyRow};
use crate::store::tags::{self as tag_store, TagRow};
use crate::store::variants as variant_store;
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap, HashSet};
use vexil_shared::model::{self as client, FeaturesDocument};
use vexil_shared::ApiError;

/// How much of each strategy the document keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// What SDKs receive: enabled strategies only, no ids, titles or sort orders.
    Client,
    /// For the playground: disabled strategies too (marked), with ids, titles and sort orders.
    Admin,
}

/// The document SDKs would receive for `environment` (404 if it does not exist).
pub async fn features_document(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<FeaturesDocument, ApiError> {
    document(conn, environment, Detail::Client).await
}

/// The document of `environment` with the given strategy detail (404 if it does not exist).
pub async fn document(
    conn: &mut AnyConnection,
    environment: &str,
    detail: Detail,
) -> Result<FeaturesDocument, ApiError> {
    super::environments::require(conn, environment).await?;
    let switched_on: HashSet<String> = feature_store::enabled_in(conn, environment)
        .await?
        .into_iter()
        .collect();
    let mut strategies_by_flag: BTreeMap<String, Vec<StrategyRow>> = BTreeMap::new();
    for row in strategy_store::list_in_environment(conn, environment).await? {
        if !row.disabled || detail == Detail::Admin {
            strategies_by_flag
                .entry(row.feature_name.clone())
                .or_default()
                .push(row);
        }
    }
    let mut variants_by_flag: HashMap<String, Vec<FlagVariant>> =
        variant_store::list_in_environment(conn, environment)
            .await?
            .into_iter()
            .map(|row| (row.feature_name, row.variants))
            .collect();
    let mut dependencies_by_flag = dependencies::by_child(conn).await?;
    let mut tags_by_flag: HashMap<String, Vec<TagRow>> = HashMap::new();
    for row in tag_store::of_all_features(conn).await? {
        tags_by_flag
            .entry(row.feature_name)
            .or_default()
            .push(row.tag);
    }
    let mut project_uses_environment: HashMap<String, bool> = HashMap::new();
    let mut features = Vec::new();
    for row in feature_store::list_all_live(conn).await? {
        let uses_environment = match project_uses_environment.get(&row.project_id) {
            Some(uses) => *uses,
            None => {
                let uses =
                    project_store::has_environment(conn, &row.project_id, environment).await?;
                project_uses_environment.insert(row.project_id.clone(), uses);
                uses
            }
        };
        let strategies = strategies_by_flag.remove(&row.name).unwrap_or_default();
        let variants = variants_by_flag.remove(&row.name).unwrap_or_default();
        let switched_on = switched_on.contains(&row.name);
        let related = Related {
            dependencies: dependencies_by_flag.remove(&row.name).unwrap_or_default(),
            tags: tags_by_flag.remove(&row.name).unwrap_or_default(),
        };
        features.push(client_feature(
            row,
            uses_environment,
            switched_on,
            strategies,
            variants,
            related,
            detail,
        ));
    }
    let segments = segment_store::list(conn)
        .await?
        .into_iter()
        .map(|row| client::Segment {
            id: row.id,
            name: Some(row.name),
            constraints: row.constraints.into_iter().map(client_constraint).collect(),
        })
        .collect();
    Ok(FeaturesDocument {
        version: 2,
        features,
        segments,
    })
}

/// One flag of `environment` as [`features_document`] lists it; `None` when it is archived or does not
/// exist (the caller knows the environment exists).
pub async fn feature_in(
    conn: &mut AnyConnection,
    environment: &str,
    name: &str,
) -> Result<Option<client::Feature>, ApiError> {
    let Some(row) = feature_store::get(conn, name).await? else {
        return Ok(None);
    };
    if row.archived_at.is_some() {
        return Ok(None);
    }
    let uses_environment =
        project_store::has_environment(conn, &row.project_id, environment).await?;
    let switched_on = feature_store::is_enabled(conn, name, environment).await?;
    let strategies = strategy_store::list(conn, name, environment)
        .await?
        .into_iter()
        .filter(|strategy| !strategy.disabled)
        .collect();
    let variants = variant_store::get(conn, name, environment)
        .await?
        .unwrap_or_default();
    let related = Related {
        dependencies: dependencies::of_feature(conn, name).await?,
        tags: tag_store::of_feature(conn, name).await?,
    };
    Ok(Some(client_feature(
        row,
        uses_environment,
        switched_on,
        strategies,
        variants,
        related,
        Detail::Client,
    )))
}

/// What a flag carries in every environment: its dependencies and its tags.
struct Related {
    dependencies: Vec<Dependency>,
    tags: Vec<TagRow>,
}

/// A flag's document entry: switched on only where its project uses the environment, and without
/// strategies or variants where it does not.
fn client_feature(
    row: feature_store::FeatureRow,
    uses_environment: bool,
    switched_on: bool,
    strategies: Vec<StrategyRow>,
    variants: Vec<FlagVariant>,
    related: Related,
    detail: Detail,
) -> client::Feature {
    let (strategies, variants) = if uses_environment {
        (
            strategies
                .into_iter()
                .map(|strategy| client_strategy(strategy, detail))
                .collect(),
            variants.into_iter().map(flag_variant).collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    client::Feature {
        enabled: uses_environment && switched_on,
        name: row.name,
        feature_type: Some(row.feature_type),
        description: row.description,
        project: row.project_id,
        stale: row.stale,
        impression_data: row.impression_data,
        strategies,
        variants,
        dependencies: related
            .dependencies
            .into_iter()
            .map(|dependency| client::FeatureDependency {
                feature: dependency.feature,
                enabled: dependency.enabled,
                variants: dependency.variants,
            })
            .collect(),
        tags: related
            .tags
            .into_iter()
            .map(|tag| client::FeatureTag {
                tag_type: tag.tag_type,
                value: tag.value,
            })
            .collect(),
    }
}

fn client_constraint(constraint: Constraint) -> client::Constraint {
    client::Constraint {
        context_name: constraint.context_name,
        operator: constraint.operator,
        case_insensitive: constraint.case_insensitive,
        inverted: constraint.inverted,
        values: constraint.values,
        value: constraint.value,
    }
}

fn client_variant(variant: StrategyVariant) -> client::Variant {
    client::Variant {
        name: variant.name,
        weight: variant.weight,
        weight_type: Some(variant.weight_type.as_str().to_owned()),
        stickiness: Some(variant.stickiness),
        payload: variant.payload.map(|payload| client::VariantPayload {
            payload_type: payload.payload_type,
            value: payload.value,
        }),
        overrides: Vec::new(),
    }
}

fn flag_variant(variant: FlagVariant) -> client::Variant {
    client::Variant {
        name: variant.name,
        weight: variant.weight,
        weight_type: Some(variant.weight_type.as_str().to_owned()),
        stickiness: Some(variant.stickiness),
        payload: variant.payload.map(|payload| client::VariantPayload {
            payload_type: payload.payload_type,
            value: payload.value,
        }),
        overrides: variant
            .overrides
            .into_iter()
            .map(|override_| client::VariantOverride {
                context_name: override_.context_name,
                values: override_.values,
            })
            .collect(),
    }
}

fn client_strategy(strategy: StrategyRow, detail: Detail) -> client::FeatureStrategy {
    let admin = detail == Detail::Admin;
    client::FeatureStrategy {
        id: admin.then_some(strategy.id),
        name: strategy.name,
        title: if admin { strategy.title } else { None },
        disabled: admin && strategy.disabled,
        sort_order: admin.then_some(strategy.sort_order),
        parameters: strategy.parameters,
        constraints: strategy
            .constraints
            .into_iter()
            .map(client_constraint)
            .collect(),
        segments: strategy.segments,
        variants: strategy.variants.into_iter().map(client_variant).collect(),
    }
}
