//! The client-API features document of one environment, built from the store: what SDKs and edges evaluate.
//! Archived flags are left out; a flag is enabled when its switch is on and its project uses the environment;
//! strategies come in sortOrder without the disabled ones and without their admin-only fields, with their
//! segment ids; every segment is listed at the top level; flag-level variants are the environment's.

use super::segments;
use super::strategies::{self, Constraint, Strategy, StrategyVariant};
use super::variants::{self, FlagVariant};
use crate::store::features as feature_store;
use crate::store::projects as project_store;
use crate::store::strategies as strategy_store;
use crate::store::variants as variant_store;
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap, HashSet};
use vexil_shared::model::{self, FeaturesDocument};
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
    let mut strategies_by_flag: BTreeMap<String, Vec<Strategy>> = BTreeMap::new();
    for row in strategy_store::list_in_environment(conn, environment).await? {
        if row.disabled == 0 || detail == Detail::Admin {
            strategies_by_flag
                .entry(row.feature_name.clone())
                .or_default()
                .push(strategies::view(&row)?);
        }
    }
    let mut variants_by_flag: HashMap<String, Vec<FlagVariant>> = HashMap::new();
    for (feature, text) in variant_store::list_in_environment(conn, environment).await? {
        variants_by_flag.insert(feature, variants::parse(&text)?);
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
        features.push(client_feature(
            row,
            uses_environment,
            switched_on,
            strategies,
            variants,
            detail,
        ));
    }
    let segments = segments::all_rows(conn)
        .await?
        .into_iter()
        .map(|(row, constraints)| model::Segment {
            id: row.id,
            name: Some(row.name),
            constraints: constraints.into_iter().map(client_constraint).collect(),
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
) -> Result<Option<model::Feature>, ApiError> {
    let Some(row) = feature_store::get(conn, name).await? else {
        return Ok(None);
    };
    if row.archived_at.is_some() {
        return Ok(None);
    }
    let uses_environment =
        project_store::has_environment(conn, &row.project_id, environment).await?;
    let switched_on = feature_store::is_enabled(conn, name, environment).await?;
    let mut strategies = Vec::new();
    for strategy in strategy_store::list(conn, name, environment).await? {
        if strategy.disabled == 0 {
            strategies.push(strategies::view(&strategy)?);
        }
    }
    let variants = match variant_store::get(conn, name, environment).await? {
        Some(text) => variants::parse(&text)?,
        None => Vec::new(),
    };
    Ok(Some(client_feature(
        row,
        uses_environment,
        switched_on,
        strategies,
        variants,
        Detail::Client,
    )))
}

/// A flag's document entry: switched on only where its project uses the environment, and without
/// strategies or variants where it does not.
fn client_feature(
    row: feature_store::FeatureRow,
    uses_environment: bool,
    switched_on: bool,
    strategies: Vec<Strategy>,
    variants: Vec<FlagVariant>,
    detail: Detail,
) -> model::Feature {
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
    model::Feature {
        enabled: uses_environment && switched_on,
        name: row.name,
        feature_type: Some(row.feature_type),
        description: row.description,
        project: row.project_id,
        stale: row.stale != 0,
        impression_data: row.impression_data != 0,
        strategies,
        variants,
        dependencies: Vec::new(),
    }
}

fn client_constraint(constraint: Constraint) -> model::Constraint {
    model::Constraint {
        context_name: constraint.context_name,
        operator: constraint.operator,
        case_insensitive: constraint.case_insensitive,
        inverted: constraint.inverted,
        values: constraint.values,
        value: constraint.value,
    }
}

fn client_variant(variant: StrategyVariant) -> model::Variant {
    model::Variant {
        name: variant.name,
        weight: variant.weight,
        weight_type: Some(variant.weight_type.as_str().to_owned()),
        stickiness: Some(variant.stickiness),
        payload: variant.payload.map(|payload| model::VariantPayload {
            payload_type: payload.payload_type,
            value: payload.value,
        }),
        overrides: Vec::new(),
    }
}

fn flag_variant(variant: FlagVariant) -> model::Variant {
    model::Variant {
        name: variant.name,
        weight: variant.weight,
        weight_type: Some(variant.weight_type.as_str().to_owned()),
        stickiness: Some(variant.stickiness),
        payload: variant.payload.map(|payload| model::VariantPayload {
            payload_type: payload.payload_type,
            value: payload.value,
        }),
        overrides: variant
            .overrides
            .into_iter()
            .map(|override_| model::VariantOverride {
                context_name: override_.context_name,
                values: override_.values,
            })
            .collect(),
    }
}

fn client_strategy(strategy: Strategy, detail: Detail) -> model::FeatureStrategy {
    let admin = detail == Detail::Admin;
    model::FeatureStrategy {
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
