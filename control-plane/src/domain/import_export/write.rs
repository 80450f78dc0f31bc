//! The import: one [`WriteTx`], all or nothing. It refuses data that does not validate ([`validate`]),
//! then creates the missing context fields, creates or updates the flags, and sets each flag's strategies,
//! flag-level variants and switch in the environment, each through its own domain function (so the
//! change-request gate, the checks, the limits and the audit events are theirs), then the tag types, each
//! flag's tags and its parents (replaced by the data's, as Unleash does), and records one
//! `features-imported` event when anything changed. Importing the same data again changes nothing.

use super::bodies::{ExportFeature, ExportStrategy, ImportReport, ImportToggles};
use super::validate::{local_segments, validate};
use crate::domain::change_request_gate;
use crate::domain::context_fields::{self, ContextFieldInput};
use crate::domain::dependencies::{self, CreateDependency, Dependency};
use crate::domain::events::{payload, EventType};
use crate::domain::features::{self, CreateFeature, FeatureType, UpdateFeature};
use crate::domain::limits::Limits;
use crate::domain::tags::{self, Tag, TagType};
use crate::domain::{strategies, variants};
use crate::model::strategy::StrategyInput;
use crate::store::context_fields as field_store;
use crate::store::features as feature_store;
use crate::store::{NewEvent, WriteTx};
use std::collections::{BTreeMap, BTreeSet};
use vexil_shared::ApiError;

fn feature_type(feature: &ExportFeature) -> Result<Option<FeatureType>, ApiError> {
    feature
        .feature_type
        .as_ref()
        .map(|text| {
            serde_json::from_value(serde_json::Value::String(text.clone())).map_err(|_| {
                ApiError::validation(format!("flag {}: unknown flag type {text:?}", feature.name))
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
                // The export's featureTags are written after the flags.
                tags: None,
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

/// Where a strategy goes among its flag's in the environment: Unleash evaluates them by `sortOrder`, then by
/// creation. A strategy without `sortOrder` goes after those with one (Unleash gives a new strategy the
/// next place). Creation is told by the id where it is a ULID (Unleash's ids: their text sorts by creation
/// time); Unleash 8.2's export lists strategies in neither order and without `sortOrder`, so that is all
/// an import of it has. Other ids (Vexil's are random UUIDs, and its exports carry `sortOrder`) tell
/// nothing: those keep the file's order, after the ULIDs.
/// `(sortOrder, no ULID, ULID, index in the file)`.
type EvaluationKey = (i64, bool, String, usize);

fn evaluation_key(strategy: &ExportStrategy, index: usize) -> EvaluationKey {
    let ulid = strategy
        .id
        .as_deref()
        .filter(|id| is_ulid(id))
        .map(str::to_ascii_uppercase);
    (
        strategy.sort_order.unwrap_or(i64::MAX),
        ulid.is_none(),
        ulid.unwrap_or_default(),
        index,
    )
}

/// 26 characters of Crockford's base 32, the first at most `7` (a 128-bit value).
fn is_ulid(id: &str) -> bool {
    id.len() == 26
        && id.as_bytes()[0] <= b'7'
        && id.bytes().all(|byte| {
            byte.is_ascii_digit()
                || (byte.is_ascii_alphabetic()
                    && !matches!(byte.to_ascii_uppercase(), b'I' | b'L' | b'O' | b'U'))
        })
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
                    // A project's field stays a project's: the one its flags are imported into.
                    project: field.project.as_ref().map(|_| project.to_owned()),
                },
            )
            .await?;
            report.created_context_fields.push(field.name.clone());
        }
    }

    let mut by_feature: BTreeMap<&str, Vec<(EvaluationKey, StrategyInput)>> = BTreeMap::new();
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
        by_feature
            .entry(feature)
            .or_default()
            .push((evaluation_key(strategy, index), input));
    }

    for feature in &input.data.features {
        let (created, updated) = upsert_feature(tx, project, feature, limits).await?;
        if created {
            report.created_features.push(feature.name.clone());
        } else if updated {
            report.updated_features.push(feature.name.clone());
        }
        let mut wanted = by_feature.remove(feature.name.as_str()).unwrap_or_default();
        wanted.sort_by(|(a, _), (b, _)| a.cmp(b));
        let wanted = wanted.into_iter().map(|(_, input)| input).collect();
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

    for tag_type in &input.data.tag_types {
        let created = tags::ensure_tag_type(
            tx,
            TagType {
                name: tag_type.name.clone(),
                description: tag_type.description.clone(),
                icon: tag_type.icon.clone(),
                color: tag_type.color.clone(),
            },
        )
        .await?;
        if created {
            report.created_tag_types.push(tag_type.name.clone());
        }
    }
    for feature in &input.data.features {
        let changed = replace_tags(tx, &feature.name, &input.data.feature_tags).await?
            | replace_dependencies(tx, project, &feature.name, &input.data.dependencies).await?;
        if changed
            && !report.created_features.contains(&feature.name)
            && !report.changed_configurations.contains(&feature.name)
        {
            report.changed_configurations.push(feature.name.clone());
        }
    }

    let anything = !(report.created_features.is_empty()
        && report.created_tag_types.is_empty()
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

/// Gives the flag exactly the data's tags (as Unleash's import replaces them); whether any changed.
async fn replace_tags(
    tx: &mut WriteTx,
    feature: &str,
    tags_of_data: &[super::bodies::ExportFeatureTag],
) -> Result<bool, ApiError> {
    let wanted: BTreeSet<(String, String)> = tags_of_data
        .iter()
        .filter(|tag| tag.feature_name == feature)
        .map(|tag| {
            let tag_type = tag.tag_type.clone().unwrap_or_else(|| "simple".to_owned());
            (tag_type, tag.tag_value.trim().to_owned())
        })
        .collect();
    let current: BTreeSet<(String, String)> = tags::feature_tags(tx.conn(), feature)
        .await?
        .tags
        .into_iter()
        .map(|tag| (tag.tag_type, tag.value))
        .collect();
    for (tag_type, value) in wanted.difference(&current) {
        let tag = Tag {
            value: value.clone(),
            tag_type: tag_type.clone(),
            color: None,
        };
        tags::add_feature_tag(tx, feature, tag).await?;
    }
    for (tag_type, value) in current.difference(&wanted) {
        tags::remove_feature_tag(tx, feature, tag_type, value).await?;
    }
    Ok(wanted != current)
}

/// Gives the flag exactly the data's parents; whether they changed.
async fn replace_dependencies(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    data: &[super::bodies::ExportDependencies],
) -> Result<bool, ApiError> {
    let mut wanted: Vec<Dependency> = data
        .iter()
        .filter(|child| child.feature == feature)
        .flat_map(|child| child.dependencies.iter())
        .map(|parent| {
            let enabled = parent.enabled.unwrap_or(true);
            Dependency {
                feature: parent.feature.clone(),
                enabled,
                variants: if enabled {
                    parent.variants.clone()
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    wanted.sort_by(|a, b| a.feature.cmp(&b.feature));
    let mut current = dependencies::of_feature(tx.conn(), feature).await?;
    current.sort_by(|a, b| a.feature.cmp(&b.feature));
    if wanted == current {
        return Ok(false);
    }
    if !current.is_empty() {
        dependencies::remove_all(tx, project, feature).await?;
    }
    for parent in wanted {
        let input = CreateDependency {
            feature: parent.feature,
            enabled: Some(parent.enabled),
            variants: Some(parent.variants),
        };
        dependencies::add(tx, project, feature, input).await?;
    }
    Ok(true)
}
