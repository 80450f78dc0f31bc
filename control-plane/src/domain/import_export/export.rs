//! The export: live flags of a selection with their configuration in one environment, in Unleash's
//! `exportResultSchema` (strategies with their `sortOrder`, which Unleash leaves out, so that an import keeps
//! the evaluation order).

use super::bodies::{
    ExportContextField, ExportDependencies, ExportDependency, ExportFeature,
    ExportFeatureEnvironment, ExportFeatureTag, ExportQuery, ExportResult, ExportSegment,
    ExportStrategy, ExportTagType,
};
use crate::domain::events::EventType;
use crate::domain::{dependencies, environments, projects, tags, variants};
use crate::store::context_fields as field_store;
use crate::store::features::{self as feature_store, FeatureRow};
use crate::store::projects as project_store;
use crate::store::segments as segment_store;
use crate::store::strategies::{self as strategy_store, StrategyRow};
use crate::store::tags as tag_store;
use crate::store::WriteTx;
use serde_json::Value;
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use vexil_shared::ApiError;

/// Stickiness values that name no context field.
const NOT_FIELDS: [&str; 2] = ["default", "random"];

/// The flags the query selects: named ones (unknown names are left out, as Unleash does), else tagged
/// ones, else a project's; each live.
async fn selected(
    conn: &mut AnyConnection,
    query: &ExportQuery,
) -> Result<Vec<FeatureRow>, ApiError> {
    if let Some(names) = query.features.as_ref().filter(|names| !names.is_empty()) {
        let mut rows = Vec::new();
        for name in names.iter().collect::<BTreeSet<_>>() {
            if let Some(row) = feature_store::get(conn, name).await? {
                if row.archived_at.is_none() {
                    rows.push(row);
                }
            }
        }
        return Ok(rows);
    }
    if let Some(tag) = &query.tag {
        let Some((tag_type, value)) = tag.split_once(':') else {
            return Err(ApiError::invalid_field(
                "tag",
                format!("tag: {tag:?} is not type:value"),
            ));
        };
        let mut rows = Vec::new();
        for name in tag_store::features_with_tag(conn, tag_type, value).await? {
            if let Some(row) = feature_store::get(conn, &name).await? {
                if row.archived_at.is_none() {
                    rows.push(row);
                }
            }
        }
        return Ok(rows);
    }
    if let Some(project) = &query.project {
        projects::require(conn, project).await?;
        return Ok(feature_store::list_live(conn, project).await?);
    }
    if query.features.is_some() {
        return Ok(feature_store::list_all_live(conn).await?);
    }
    Err(ApiError::validation(
        "Give features, tag or project to say which flags to export",
    ))
}

fn export_strategy(row: StrategyRow) -> ExportStrategy {
    ExportStrategy {
        id: Some(row.id),
        feature_name: Some(row.feature_name),
        title: row.title,
        parameters: row
            .parameters
            .into_iter()
            .map(|(key, value)| (key, Value::String(value)))
            .collect(),
        constraints: row.constraints,
        variants: row.variants,
        disabled: Some(row.disabled),
        segments: row.segments,
        sort_order: Some(row.sort_order),
        name: row.name,
    }
}

/// The context fields the strategies, their segments and the variants name.
fn used_fields(
    result: &ExportResult,
    segment_constraints: &[crate::model::constraint::Constraint],
) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for strategy in &result.feature_strategies {
        names.extend(strategy.constraints.iter().map(|c| c.context_name.clone()));
        if let Some(Value::String(stickiness)) = strategy.parameters.get("stickiness") {
            names.insert(stickiness.clone());
        }
        names.extend(strategy.variants.iter().map(|v| v.stickiness.clone()));
    }
    names.extend(segment_constraints.iter().map(|c| c.context_name.clone()));
    for environment in &result.feature_environments {
        for variant in &environment.variants {
            names.insert(variant.stickiness.clone());
            names.extend(variant.overrides.iter().map(|o| o.context_name.clone()));
        }
    }
    names.retain(|name| !NOT_FIELDS.contains(&name.as_str()));
    names
}

/// Records `features-exported` (the environment and the flags' names) for an export answered.
pub async fn record(
    tx: &mut WriteTx,
    query: &ExportQuery,
    result: &ExportResult,
) -> Result<(), ApiError> {
    let features: Vec<&str> = result.features.iter().map(|f| f.name.as_str()).collect();
    let data = serde_json::json!({"environment": query.environment, "features": features});
    tx.record(EventType::FeaturesExported.instance_wide(Some(data), None))
        .await?;
    Ok(())
}

/// `POST /api/admin/features-batch/export`: 404 for an unknown environment or project.
pub async fn export(
    conn: &mut AnyConnection,
    query: &ExportQuery,
) -> Result<ExportResult, ApiError> {
    environments::require(conn, &query.environment).await?;
    let environment = query.environment.as_str();
    let mut result = ExportResult {
        features: Vec::new(),
        feature_strategies: Vec::new(),
        feature_environments: Vec::new(),
        context_fields: Vec::new(),
        feature_tags: Vec::new(),
        segments: Vec::new(),
        tag_types: Vec::new(),
        dependencies: Vec::new(),
    };
    for row in selected(conn, query).await? {
        if project_store::has_environment(conn, &row.project_id, environment).await? {
            let strategies = strategy_store::list(conn, &row.name, environment).await?;
            result
                .feature_strategies
                .extend(strategies.into_iter().map(export_strategy));
            result.feature_environments.push(ExportFeatureEnvironment {
                enabled: feature_store::is_enabled(conn, &row.name, environment).await?,
                feature_name: Some(row.name.clone()),
                environment: Some(environment.to_owned()),
                variants: variants::stored(conn, &row.name, environment).await?,
                name: Some(row.name.clone()),
            });
        }
        result.features.push(ExportFeature {
            name: row.name,
            description: row.description,
            feature_type: Some(row.feature_type),
            project: Some(row.project_id),
            stale: Some(row.stale),
            impression_data: Some(row.impression_data),
            archived: Some(false),
        });
    }
    let names: Vec<String> = result.features.iter().map(|f| f.name.clone()).collect();
    let mut tag_types = BTreeSet::new();
    for tagged in tags::tags_of_features(conn, &names).await? {
        tag_types.insert(tagged.tag.tag_type.clone());
        result.feature_tags.push(ExportFeatureTag {
            feature_name: tagged.feature_name,
            tag_type: Some(tagged.tag.tag_type),
            tag_value: tagged.tag.value,
        });
    }
    for name in tag_types {
        let tag_type = tags::get_type(conn, &name).await?;
        result.tag_types.push(ExportTagType {
            name: tag_type.name,
            description: tag_type.description,
            icon: tag_type.icon,
            color: tag_type.color,
        });
    }
    for child in dependencies::of_features(conn, &names).await? {
        result.dependencies.push(ExportDependencies {
            feature: child.feature,
            dependencies: child
                .dependencies
                .into_iter()
                .map(|parent| ExportDependency {
                    feature: parent.feature,
                    enabled: Some(parent.enabled),
                    variants: parent.variants,
                })
                .collect(),
        });
    }
    let segment_ids: BTreeSet<i64> = result
        .feature_strategies
        .iter()
        .flat_map(|strategy| strategy.segments.iter().copied())
        .collect();
    let mut segment_constraints = Vec::new();
    for id in segment_ids {
        if let Some(segment) = segment_store::get(conn, id).await? {
            result.segments.push(ExportSegment {
                id,
                name: segment.name,
            });
            segment_constraints.extend(segment.constraints);
        }
    }
    for name in used_fields(&result, &segment_constraints) {
        if let Some(field) = field_store::get(conn, &name).await? {
            result.context_fields.push(ExportContextField {
                name: field.name,
                description: field.description,
                stickiness: Some(field.stickiness),
                sort_order: Some(field.sort_order),
                legal_values: field.legal_values,
                project: field.project,
            });
        }
    }
    Ok(result)
}
