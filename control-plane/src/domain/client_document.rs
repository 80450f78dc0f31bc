//! The client-API features document of one environment, built from the store: what SDKs and edges evaluate.
//! Archived flags are left out; a flag is enabled when its switch is on and its project uses the environment;
//! strategies come in sortOrder without the disabled ones and without their admin-only fields.

use super::strategies::{self, Strategy};
use crate::store::features as feature_store;
use crate::store::projects as project_store;
use crate::store::strategies as strategy_store;
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap, HashSet};
use vexil_shared::model::{self, FeaturesDocument};
use vexil_shared::ApiError;

/// The document SDKs would receive for `environment` (404 if it does not exist).
pub async fn features_document(
    conn: &mut AnyConnection,
    environment: &str,
) -> Result<FeaturesDocument, ApiError> {
    super::environments::require(conn, environment).await?;
    let switched_on: HashSet<String> = feature_store::enabled_in(conn, environment)
        .await?
        .into_iter()
        .collect();
    let mut strategies_by_flag: BTreeMap<String, Vec<Strategy>> = BTreeMap::new();
    for row in strategy_store::list_in_environment(conn, environment).await? {
        if row.disabled == 0 {
            strategies_by_flag
                .entry(row.feature_name.clone())
                .or_default()
                .push(strategies::view(&row)?);
        }
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
        let strategies = if uses_environment {
            strategies_by_flag
                .remove(&row.name)
                .unwrap_or_default()
                .into_iter()
                .map(client_strategy)
                .collect()
        } else {
            Vec::new()
        };
        features.push(model::Feature {
            enabled: uses_environment && switched_on.contains(&row.name),
            name: row.name,
            feature_type: Some(row.feature_type),
            description: row.description,
            project: row.project_id,
            stale: row.stale != 0,
            impression_data: row.impression_data != 0,
            strategies,
            variants: Vec::new(),
            dependencies: Vec::new(),
        });
    }
    Ok(FeaturesDocument {
        version: 2,
        features,
        segments: Vec::new(),
    })
}

fn client_strategy(strategy: Strategy) -> model::FeatureStrategy {
    model::FeatureStrategy {
        id: None,
        name: strategy.name,
        title: None,
        disabled: false,
        sort_order: None,
        parameters: strategy.parameters,
        constraints: strategy
            .constraints
            .into_iter()
            .map(|constraint| model::Constraint {
                context_name: constraint.context_name,
                operator: constraint.operator,
                case_insensitive: constraint.case_insensitive,
                inverted: constraint.inverted,
                values: constraint.values,
                value: constraint.value,
            })
            .collect(),
        segments: strategy.segments,
        variants: strategy
            .variants
            .into_iter()
            .map(|variant| model::Variant {
                name: variant.name,
                weight: variant.weight,
                weight_type: Some(variant.weight_type.as_str().to_owned()),
                stickiness: Some(variant.stickiness),
                payload: variant.payload.map(|payload| model::VariantPayload {
                    payload_type: payload.payload_type,
                    value: payload.value,
                }),
                overrides: Vec::new(),
            })
            .collect(),
    }
}
