//! The import: one [`WriteTx`], all or nothing. It refuses data that does not validate ([`validate`]),
//! then creates the missing context fields, creates or updates the flags, and sets each flag's strategies,
//! flag-level variants and switch in the environment, each through its own domain function (so the
//! change-request gate, the checks, the limits and the audit events are theirs), and records one
//! `features-imported` event when anything changed. Importing the same data again changes nothing.

use super::bodies::{ExportFeature, ImportReport, ImportToggles};
use super::validate::{local_segments, validate};
use crate::domain::change_request_gate;
use crate::domain::context_fields::{self, ContextFieldInput};
use crate::domain::events::{payload, EventType};
use crate::domain::features::{self, CreateFeature, FeatureType, UpdateFeature};
use crate::domain::limits::Limits;
use crate::domain::{strategies, variants};
use crate::model::strategy::StrategyInput;
use crate::store::context_fields as field_store;
use crate::store::features as feature_store;
use crate::store::{NewEvent, WriteTx};
use std::collections::BTreeMap;
use vexil_shared::ApiError;

fn feature_type(feature: &ExportFeature) -> Result<Option<FeatureType>, ApiError> {
    feature
        .feature_type
        .as_ref()
        .map(|text| {
            serde_json::from_value(serde_json::Value::String(text.clone())).map_err(|_| {
                ApiError::validation(format!(
                    "flag {}: unknown flag type {text:?}",
                    feature.name
                ))
            })
        })
        .transpose()
}

/// Creates the flag, or updates its metadata; returns whether it was created and whether it changed.
async fn upsert_feature(
    tx: &mut WriteTx,
    project: &str,
    feature: &ExportFeature,
    limits: &Limits,
) -> Result<(bool, bool), ApiError> {
    let feature_type = feature_type(feature)?;
    let before = feature_store::get(tx.conn(), &feature.name).await?;
    let created = before.is_none();
    if created {
        features::create(
            tx,
            project,
            CreateFeature {
                name: feature.name.clone(),
                feature_type,
                description: feature.description.clone(),
                impression_data: feature.impression_data,
            },
            limits,
        )
        .await?;
    }
    let update = UpdateFeature {
        name: None,
        feature_type,
        description: feature.description.clone(),
        stale: feature.stale,
        impression_data: feature.impression_data,
    };
    features::update(tx, project, &feature.name, update).await?;
    let after = feature_store::get(tx.conn(), &feature.name).await?;
    Ok((created, !created && before != after))
}

/// `POST /api/admin/features-batch/import` and `vexil-control-plane import`: 404 for an unknown target, 403
/// where change requests are on, 400 listing the validation errors; else the whole data set, in `tx`.
pub async fn import(
    tx: &mut WriteTx,
    input: ImportToggles,
    limits: &Limits,
) -> Result<ImportReport, ApiError> {
    super::validate::require_target(tx.conn(), &input).await?;
    change_request_gate::ensure_writable(tx, &input.project, &input.environment).await?;
    let validation = validate(tx.conn(), &input, limits).await?;
    if !validation.errors.is_empty() {
        let findings: Vec<String> = validation
            .errors
            .iter()
            .map(|error| format!("{} {}", error.message, error.affected_items.join(", ")))
            .collect();
        return Err(ApiError::validation(format!(
            "The import was refused, nothing was changed: {}",
            findings.join("; ")
        )));
    }
    let segments = local_segments(tx.conn(), &input).await?;
    let (project, environment) = (input.project.as_str(), input.environment.as_str());
    let mut report = ImportReport {
        warnings: validation.warnings,
        ..ImportReport::default()
    };

    for field in &input.data.context_fields {
        if field_store::get(tx.conn(), &field.name).await?.is_none() {
            context_fields::create(
                tx,
                ContextFieldInput {
                    name: Some(field.name.clone()),
                    description: field.description.clone(),
                    stickiness: field.stickiness,
                    sort_order: field.sort_order,
                    legal_values: Some(field.legal_values.clone()),
                },
            )
            .await?;
            report.created_context_fields.push(field.name.clone());
        }
    }

    let mut by_feature: BTreeMap<&str, Vec<(i64, usize, StrategyInput)>> = BTreeMap::new();
    for (index, strategy) in input.data.feature_strategies.iter().enumerate() {
        let Some(feature) = strategy.feature_name.as_deref() else {
            continue;
        };
        let input = StrategyInput {
            name: strategy.name.clone(),
            title: strategy.title.clone(),
            disabled: strategy.disabled,
            sort_order: None,
            constraints: Some(strategy.constraints.clone()),
            parameters: Some(strategy.parameters.clone()),
            variants: Some(strategy.variants.clone()),
            segments: Some(
                strategy
                    .segments
                    .iter()
                    .filter_map(|id| segments.get(id).copied())
                    .collect(),
            ),
        };
        by_feature.entry(feature).or_default().push((
            strategy.sort_order.unwrap_or(i64::MAX),
            index,
            input,
        ));
    }

    for feature in &input.data.features {
        let (created, updated) = upsert_feature(tx, project, feature, limits).await?;
        if created {
            report.created_features.push(feature.name.clone());
        } else if updated {
            report.updated_features.push(feature.name.clone());
        }
        let mut wanted = by_feature.remove(feature.name.as_str()).unwrap_or_default();
        wanted.sort_by_key(|(sort_order, index, _)| (*sort_order, *index));
        let wanted = wanted.into_iter().map(|(_, _, input)| input).collect();
        let mut changed =
            strategies::replace_all(tx, project, &feature.name, environment, wanted, limits)
                .await?;
        let switch = input.data.feature_environments.iter().find(|entry| {
            entry.feature_name.as_ref().or(entry.name.as_ref()) == Some(&feature.name)
        });
        if let Some(switch) = switch {
            let before = variants::stored(tx.conn(), &feature.name, environment).await?;
            let after = variants::set_imported(
                tx,
                project,
                &feature.name,
                environment,
                switch.variants.clone(),
            )
            .await?;
            changed |= before != after.variants;
            let was = feature_store::is_enabled(tx.conn(), &feature.name, environment).await?;
            features::set_enabled(
                tx,
                project,
                &feature.name,
                environment,
                switch.enabled,
                false,
            )
            .await?;
            changed |= was != switch.enabled;
        }
        if changed && !created {
            report.changed_configurations.push(feature.name.clone());
        }
    }

    let anything = !(report.created_features.is_empty()
        && report.updated_features.is_empty()
        && report.created_context_fields.is_empty()
        && report.changed_configurations.is_empty());
    if anything {
        tx.record(NewEvent {
            event_type: EventType::FeaturesImported.as_str(),
            project: Some(project.to_owned()),
            environment: Some(environment.to_owned()),
            data: Some(payload(&report)),
            ..NewEvent::default()
        })
        .await?;
    }
    Ok(report)
}
