//! The checks of an import, as Unleash words them (`POST /api/admin/features-batch/validate`): errors stop
//! an import (duplicates, flags of other projects or archived, unknown strategies, missing segments,
//! context fields whose legal values differ or that another project owns, unknown tag types or parents,
//! bad shapes, limits); warnings do not (custom strategies used).

use super::bodies::{ImportToggles, ImportValidation, ValidationItem};
use crate::domain::features::FeatureType;
use crate::domain::limits::Limits;
use crate::domain::projects::to_count;
use crate::domain::{environments, projects};
use crate::model::constraint::validate_constraints;
use crate::model::name;
use crate::model::variant::{normalize_flag_variants, normalize_variants};
use crate::store::change_requests as change_request_store;
use crate::store::context_fields as field_store;
use crate::store::features as feature_store;
use crate::store::segments as segment_store;
use crate::store::strategy_definitions as definition_store;
use crate::store::tags as tag_store;
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};
use vexil_shared::ApiError;

/// Collects findings under their message, in the order first met.
#[derive(Default)]
struct Findings(Vec<ValidationItem>);

impl Findings {
    fn add(&mut self, message: &str, item: impl Into<String>) {
        let item = item.into();
        match self.0.iter_mut().find(|found| found.message == message) {
            Some(found) => {
                if !found.affected_items.contains(&item) {
                    found.affected_items.push(item);
                }
            }
            None => self.0.push(ValidationItem {
                message: message.to_owned(),
                affected_items: vec![item],
            }),
        }
    }
}

const DUPLICATES: &str = "We detected the following features are duplicate in your import data:";
const ARCHIVED: &str = "The following features will not be imported as they are currently archived. To import them, please unarchive them first:";
const UNKNOWN_STRATEGIES: &str =
    "We detected the following custom strategy in the import file that needs to be created first:";
const MISSING_SEGMENTS: &str =
    "We detected the following segments in the import file that need to be created first:";
const LEGAL_VALUES: &str = "We detected the following context fields that do not have matching legal values with the imported ones:";
const INVALID: &str = "The following entries of the import data are invalid:";
const CUSTOM_STRATEGIES: &str = "The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:";
const CHANGE_REQUESTS: &str = "Change requests are enabled for this project and environment: the import would change flags directly, so it is refused; turn change requests off for it, or import into another environment:";
const MISSING_TAG_TYPES: &str =
    "We detected the following tag types that are neither in the import data nor defined:";
const MISSING_PARENTS: &str = "We detected the following parent flags that are neither in the import data nor live flags of the project:";
const LIMITS: &str = "The import would exceed a resource limit:";
const OTHER_PROJECTS_FIELDS: &str = "The following context fields belong to another project, so the imported flags cannot test them:";

/// 404 for an unknown project or environment, or an environment the project does not use.
pub async fn require_target(
    conn: &mut AnyConnection,
    input: &ImportToggles,
) -> Result<(), ApiError> {
    projects::require(conn, &input.project).await?;
    environments::require(conn, &input.environment).await?;
    crate::domain::feature_lookup::require_project_environment(
        conn,
        &input.project,
        &input.environment,
    )
    .await
}

/// The local id of each segment of the data (by the export's id), matched by name; missing ones absent.
pub async fn local_segments(
    conn: &mut AnyConnection,
    input: &ImportToggles,
) -> Result<BTreeMap<i64, i64>, ApiError> {
    let mut ids = BTreeMap::new();
    for segment in &input.data.segments {
        if let Some(row) = segment_store::get_by_name(conn, &segment.name).await? {
            ids.insert(segment.id, row.id);
        }
    }
    Ok(ids)
}

/// The checks; `require_target` first.
pub async fn validate(
    conn: &mut AnyConnection,
    input: &ImportToggles,
    limits: &Limits,
) -> Result<ImportValidation, ApiError> {
    require_target(conn, input).await?;
    let data = &input.data;
    let mut errors = Findings::default();
    let mut warnings = Findings::default();
    let other_projects = format!("You cannot import a features that already exist in other projects. You already have the following features defined outside of project {}:", input.project);

    if change_request_store::setting(conn, &input.project, &input.environment)
        .await?
        .is_some_and(|setting| setting.enabled)
    {
        errors.add(
            CHANGE_REQUESTS,
            format!("{}/{}", input.project, input.environment),
        );
    }

    let mut names = BTreeSet::new();
    let mut new_flags = 0usize;
    for (index, feature) in data.features.iter().enumerate() {
        if !names.insert(feature.name.as_str()) {
            errors.add(DUPLICATES, feature.name.clone());
        }
        if let Err(error) = name::validate(&format!("data.features[{index}].name"), &feature.name) {
            errors.add(INVALID, error.message);
        }
        if let Some(feature_type) = &feature.feature_type {
            if serde_json::from_value::<FeatureType>(serde_json::Value::String(
                feature_type.clone(),
            ))
            .is_err()
            {
                errors.add(
                    INVALID,
                    format!("data.features[{index}].type: unknown flag type {feature_type:?}"),
                );
            }
        }
        match feature_store::get(conn, &feature.name).await? {
            Some(row) if row.project_id != input.project => {
                errors.add(
                    &other_projects,
                    format!("{} (in project {})", feature.name, row.project_id),
                );
            }
            Some(row) if row.archived_at.is_some() => errors.add(ARCHIVED, feature.name.clone()),
            Some(_) => {}
            None => new_flags += 1,
        }
    }
    let live = to_count(feature_store::count_live(conn).await?);
    if new_flags > 0 && live + new_flags > limits.feature_flags as usize {
        errors.add(
            LIMITS,
            format!(
                "featureFlags: {} live flags after the import, the limit is {}",
                live + new_flags,
                limits.feature_flags
            ),
        );
    }

    let segment_names: BTreeMap<i64, &str> = data
        .segments
        .iter()
        .map(|segment| (segment.id, segment.name.as_str()))
        .collect();
    let local_segments = local_segments(conn, input).await?;
    for segment in &data.segments {
        if !local_segments.contains_key(&segment.id) {
            errors.add(MISSING_SEGMENTS, segment.name.clone());
        }
    }

    for (index, strategy) in data.feature_strategies.iter().enumerate() {
        let path = format!("data.featureStrategies[{index}]");
        match &strategy.feature_name {
            Some(feature) if names.contains(feature.as_str()) => {}
            Some(feature) => errors.add(
                INVALID,
                format!("{path}.featureName: {feature} is not in data.features"),
            ),
            None => errors.add(INVALID, format!("{path}.featureName is required")),
        }
        match definition_store::get(conn, &strategy.name).await? {
            None => errors.add(UNKNOWN_STRATEGIES, strategy.name.clone()),
            Some(definition) if !definition.built_in => {
                warnings.add(CUSTOM_STRATEGIES, strategy.name.clone());
            }
            Some(_) => {}
        }
        if let Err(error) = validate_constraints(&strategy.constraints) {
            errors.add(INVALID, format!("{path}.{}", error.message));
        }
        if let Err(error) = normalize_variants(strategy.variants.clone()) {
            errors.add(INVALID, format!("{path}.variants: {}", error.message));
        }
        for (position, id) in strategy.segments.iter().enumerate() {
            if !segment_names.contains_key(id) {
                errors.add(
                    INVALID,
                    format!("{path}.segments[{position}]: segment {id} is not in data.segments"),
                );
            }
        }
    }

    for (index, environment) in data.feature_environments.iter().enumerate() {
        let path = format!("data.featureEnvironments[{index}]");
        match environment
            .feature_name
            .as_ref()
            .or(environment.name.as_ref())
        {
            Some(feature) if names.contains(feature.as_str()) => {}
            Some(feature) => errors.add(
                INVALID,
                format!("{path}.featureName: {feature} is not in data.features"),
            ),
            None => errors.add(INVALID, format!("{path}.featureName is required")),
        }
        if let Err(error) = normalize_flag_variants(environment.variants.clone()) {
            errors.add(INVALID, format!("{path}.variants: {}", error.message));
        }
    }

    for field in &data.context_fields {
        if field.legal_values.is_empty() {
            continue;
        }
        if let Some(existing) = field_store::get(conn, &field.name).await? {
            if existing.legal_values.is_empty() {
                continue;
            }
            let known: BTreeSet<&str> = existing
                .legal_values
                .iter()
                .map(|legal| legal.value.as_str())
                .collect();
            if field
                .legal_values
                .iter()
                .any(|legal| !known.contains(legal.value.as_str()))
            {
                errors.add(LEGAL_VALUES, field.name.clone());
            }
        }
    }
    // A project's context field may be tested only by that project's flags.
    let tested: BTreeSet<&str> = data
        .feature_strategies
        .iter()
        .flat_map(|strategy| &strategy.constraints)
        .map(|constraint| constraint.context_name.as_str())
        .chain(data.context_fields.iter().map(|field| field.name.as_str()))
        .collect();
    for name in tested {
        if let Some(field) = field_store::get(conn, name).await? {
            if let Some(owner) = field.project.filter(|owner| *owner != input.project) {
                errors.add(
                    OTHER_PROJECTS_FIELDS,
                    format!("{name} (in project {owner})"),
                );
            }
        }
    }

    let tag_types: BTreeSet<&str> = data.tag_types.iter().map(|t| t.name.as_str()).collect();
    for (index, tag) in data.feature_tags.iter().enumerate() {
        let tag_type = tag.tag_type.as_deref().unwrap_or("simple");
        if !names.contains(tag.feature_name.as_str()) {
            errors.add(
                INVALID,
                format!(
                    "data.featureTags[{index}].featureName: {} is not in data.features",
                    tag.feature_name
                ),
            );
        }
        if !tag_types.contains(tag_type) && tag_store::get_type(conn, tag_type).await?.is_none() {
            errors.add(MISSING_TAG_TYPES, tag_type.to_owned());
        }
    }
    for child in &data.dependencies {
        if !names.contains(child.feature.as_str()) {
            errors.add(
                INVALID,
                format!(
                    "data.dependencies: {} is not in data.features",
                    child.feature
                ),
            );
        }
        for parent in &child.dependencies {
            if names.contains(parent.feature.as_str()) {
                continue;
            }
            let known = feature_store::get(conn, &parent.feature)
                .await?
                .is_some_and(|row| row.project_id == input.project && row.archived_at.is_none());
            if !known {
                errors.add(
                    MISSING_PARENTS,
                    format!("{} (parent of {})", parent.feature, child.feature),
                );
            }
        }
    }

    Ok(ImportValidation {
        errors: errors.0,
        warnings: warnings.0,
        permissions: Vec::new(),
    })
}
