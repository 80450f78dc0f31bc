//! The strategies of a flag in an environment: a defined strategy name (built-in or custom), validated
//! constraints, existing segments (a project segment only in its project), normalised variants, parameters
//! stored as strings, within the resource limits. Ids are UUIDs. Every write asks the change-request gate
//! first.

use super::change_request_gate;
use super::events::{payload, EventType};
use super::feature_lookup::{ensure_not_archived, require_in_project, require_project_environment};
use super::feature_switch::switch;
use super::limits::{self, Limits};
use super::{context_fields, segments, strategy_definitions};
use crate::model::constraint::Constraint;
use crate::model::strategy::{StrategyInput, StrategySortOrder};
use crate::model::strategy_definition::check_values;
use crate::model::variant::{
    default_stickiness, normalize_variants, normalize_variants_keeping_weights, StrategyVariant,
};
use crate::store::features::{self as feature_store, FeatureRow};
use crate::store::projects as project_store;
use crate::store::strategies::{self as strategy_store, StrategyRow};
use crate::store::{NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use uuid::Uuid;
use vexil_shared::ApiError;

/// A strategy as the admin API shows it (spec endpoint 15).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Strategy {
    pub id: String,
    pub name: String,
    pub title: Option<String>,
    pub disabled: bool,
    pub feature_name: String,
    pub sort_order: i64,
    pub segments: Vec<i64>,
    pub constraints: Vec<Constraint>,
    pub variants: Vec<StrategyVariant>,
    pub parameters: BTreeMap<String, String>,
}

pub fn view(row: &StrategyRow) -> Strategy {
    Strategy {
        id: row.id.clone(),
        name: row.name.clone(),
        title: row.title.clone(),
        disabled: row.disabled,
        feature_name: row.feature_name.clone(),
        sort_order: row.sort_order,
        segments: row.segments.clone(),
        constraints: row.constraints.clone(),
        variants: row.variants.clone(),
        parameters: row.parameters.clone(),
    }
}

/// The body that writes this strategy again (parameters as strings, sortOrder kept).
pub fn input_of(row: StrategyRow) -> StrategyInput {
    StrategyInput {
        name: row.name,
        title: row.title,
        disabled: Some(row.disabled),
        sort_order: Some(row.sort_order),
        constraints: Some(row.constraints),
        parameters: Some(
            row.parameters
                .into_iter()
                .map(|(key, value)| (key, Value::String(value)))
                .collect(),
        ),
        variants: Some(row.variants),
        segments: Some(row.segments),
    }
}

/// The body that adds a copy of `strategy` (to another environment, as Unleash's "Copy to"): everything but
/// its id and place, which the copy gets after the last strategy there.
pub fn copy_of(strategy: &Strategy) -> StrategyInput {
    StrategyInput {
        name: strategy.name.clone(),
        title: strategy.title.clone(),
        disabled: Some(strategy.disabled),
        sort_order: None,
        constraints: Some(strategy.constraints.clone()),
        parameters: Some(
            strategy
                .parameters
                .iter()
                .map(|(key, value)| (key.clone(), Value::String(value.clone())))
                .collect(),
        ),
        variants: Some(strategy.variants.clone()),
        segments: Some(strategy.segments.clone()),
    }
}

/// The strategies of a flag in an environment, in sortOrder.
pub async fn list_rows(
    conn: &mut AnyConnection,
    feature: &str,
    environment: &str,
) -> Result<Vec<Strategy>, ApiError> {
    let rows = strategy_store::list(conn, feature, environment).await?;
    Ok(rows.iter().map(view).collect())
}

/// Spec endpoint 15: every strategy, disabled ones included; an archived flag's too.
pub async fn list(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
    environment: &str,
) -> Result<Vec<Strategy>, ApiError> {
    require_in_project(conn, project, feature).await?;
    require_project_environment(conn, project, environment).await?;
    list_rows(conn, feature, environment).await
}

fn strategy_not_found(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "Strategy {id} does not exist for this flag and environment"
    ))
}

pub async fn get(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
    environment: &str,
    id: Uuid,
) -> Result<Strategy, ApiError> {
    require_in_project(conn, project, feature).await?;
    require_project_environment(conn, project, environment).await?;
    let id = id.to_string();
    let row = strategy_store::get(conn, feature, environment, &id)
        .await?
        .ok_or_else(|| strategy_not_found(&id))?;
    Ok(view(&row))
}

/// The flag row for a strategy write: the flag is live and the project uses the environment.
async fn writable_feature(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
) -> Result<FeatureRow, ApiError> {
    let row = require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    ensure_not_archived(&row)?;
    Ok(row)
}

/// Parameter values as strings (a null leaves the parameter out); 400 for an array or object.
pub fn parameter_strings(
    parameters: serde_json::Map<String, Value>,
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut normalized = BTreeMap::new();
    for (key, value) in parameters {
        let text = match value {
            Value::String(text) => text,
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            Value::Null => continue,
            Value::Array(_) | Value::Object(_) => {
                return Err(ApiError::invalid_field(
                    format!("parameters.{key}"),
                    format!("parameters.{key} must be a string, a number or a boolean"),
                ))
            }
        };
        normalized.insert(key, text);
    }
    Ok(normalized)
}

/// Parameter values as strings; `flexibleRollout` gets its defaults (rollout 100, the project's stickiness,
/// the flag name as groupId).
fn normalize_parameters(
    strategy: &str,
    parameters: serde_json::Map<String, Value>,
    feature: &str,
    project_stickiness: &str,
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut normalized = parameter_strings(parameters)?;
    if strategy == "flexibleRollout" {
        normalized
            .entry("rollout".to_owned())
            .or_insert_with(|| "100".to_owned());
        normalized
            .entry("stickiness".to_owned())
            .or_insert_with(|| project_stickiness.to_owned());
        normalized
            .entry("groupId".to_owned())
            .or_insert_with(|| feature.to_owned());
    }
    Ok(normalized)
}

/// How a write takes variant weights: recomputed ([`normalize_variants`]), or, for an import, kept when
/// they add up ([`normalize_variants_keeping_weights`]).
type Weights = fn(Vec<StrategyVariant>) -> Result<Vec<StrategyVariant>, ApiError>;

/// 400 for a strategy title over 100 characters.
pub fn check_title(title: Option<&str>) -> Result<(), ApiError> {
    if title.is_some_and(|title| title.chars().count() > 100) {
        return Err(ApiError::invalid_field(
            "title",
            "title must be at most 100 characters long",
        ));
    }
    Ok(())
}

/// Validates an input and turns it into the stored row's content (keys and createdAt are the caller's).
async fn validated_row(
    tx: &mut WriteTx,
    feature: &FeatureRow,
    input: StrategyInput,
    template: StrategyRow,
    weights: Weights,
) -> Result<StrategyRow, ApiError> {
    let declared = strategy_definitions::declared_parameters(tx.conn(), &input.name).await?;
    check_title(input.title.as_deref())?;
    let constraints = input.constraints.unwrap_or_default();
    context_fields::check_constraints(tx.conn(), Some(&feature.project_id), &constraints).await?;
    let segments = input.segments.unwrap_or_default();
    segments::check_strategy_segments(tx.conn(), &segments, &feature.project_id).await?;
    let variants = weights(input.variants.unwrap_or_default())?;
    let project_stickiness = project_store::get(tx.conn(), &feature.project_id)
        .await?
        .map(|project| project.default_stickiness)
        .unwrap_or_else(default_stickiness);
    let parameters = normalize_parameters(
        &input.name,
        input.parameters.unwrap_or_default(),
        &feature.name,
        &project_stickiness,
    )?;
    check_values(&declared, &parameters)?;
    Ok(StrategyRow {
        name: input.name,
        title: input.title,
        disabled: input.disabled.unwrap_or(false),
        sort_order: input.sort_order.unwrap_or(template.sort_order),
        constraints,
        parameters,
        variants,
        segments,
        ..template
    })
}

/// 400 `ExceedsLimitError` for too many constraints, constraint values or segments on one strategy.
pub(crate) fn check_limits(input: &StrategyInput, limits: &Limits) -> Result<(), ApiError> {
    let constraints = input.constraints.as_deref().unwrap_or_default();
    limits::ensure_within(
        "constraints",
        "the constraints of this strategy",
        constraints.len(),
        limits.constraints,
    )
    .map_err(|error| error.at_field("constraints"))?;
    for (index, constraint) in constraints.iter().enumerate() {
        limits::ensure_within(
            "constraintValues",
            &format!("the values of constraints[{index}]"),
            constraint.values.len(),
            limits.constraint_values,
        )
        .map_err(|error| {
            ApiError {
                message: format!("constraints[{index}].values: {}", error.message),
                ..error
            }
            .at_field(format!("constraints[{index}].values"))
        })?;
    }
    limits::ensure_within(
        "strategySegments",
        "the segments of this strategy",
        input.segments.as_ref().map_or(0, Vec::len),
        limits.strategy_segments,
    )
    .map_err(|error| error.at_field("segments"))
}

fn strategy_event(
    event_type: EventType,
    feature: &FeatureRow,
    environment: &str,
    data: Option<Value>,
    pre_data: Option<Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(feature.project_id.clone()),
        environment: Some(environment.to_owned()),
        feature_name: Some(feature.name.clone()),
        data,
        pre_data,
    }
}

async fn next_sort_order(
    tx: &mut WriteTx,
    feature: &str,
    environment: &str,
) -> Result<i64, ApiError> {
    Ok(
        strategy_store::max_sort_order(tx.conn(), feature, environment)
            .await?
            .map_or(0, |max| max + 1),
    )
}

async fn insert(
    tx: &mut WriteTx,
    feature: &FeatureRow,
    environment: &str,
    input: StrategyInput,
) -> Result<Strategy, ApiError> {
    let template = StrategyRow {
        id: Uuid::new_v4().to_string(),
        feature_name: feature.name.clone(),
        environment: environment.to_owned(),
        name: String::new(),
        title: None,
        disabled: false,
        sort_order: next_sort_order(tx, &feature.name, environment).await?,
        constraints: Vec::new(),
        parameters: BTreeMap::new(),
        variants: Vec::new(),
        segments: Vec::new(),
        created_at: tx.now(),
    };
    let row = validated_row(tx, feature, input, template, normalize_variants).await?;
    strategy_store::insert(tx.conn(), &row).await?;
    let strategy = view(&row);
    tx.record(strategy_event(
        EventType::FeatureStrategyAdd,
        feature,
        environment,
        Some(payload(&strategy)),
        None,
    ))
    .await?;
    Ok(strategy)
}

pub async fn add(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    input: StrategyInput,
    limits: &Limits,
) -> Result<Strategy, ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let feature = writable_feature(tx, project, feature, environment).await?;
    check_limits(&input, limits)?;
    let existing = strategy_store::list(tx.conn(), &feature.name, environment).await?;
    limits::ensure_within(
        "featureEnvironmentStrategies",
        "the strategies of this flag in this environment",
        existing.len() + 1,
        limits.feature_environment_strategies,
    )?;
    insert(tx, &feature, environment, input).await
}

/// Replaces every strategy of a flag in an environment with `inputs`, in their order (an import). When the
/// stored strategies already say the same (ids and creation times aside), nothing changes and no event is
/// recorded; else the old ones go (`feature-strategy-remove`) and the new ones come
/// (`feature-strategy-add`). Variant weights that add up are kept. The flag's switch is the caller's.
/// Returns whether anything changed.
pub async fn replace_all(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    inputs: Vec<StrategyInput>,
    limits: &Limits,
) -> Result<bool, ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let feature = writable_feature(tx, project, feature, environment).await?;
    for input in &inputs {
        check_limits(input, limits)?;
    }
    limits::ensure_within(
        "featureEnvironmentStrategies",
        "the strategies of this flag in this environment",
        inputs.len(),
        limits.feature_environment_strategies,
    )?;
    let mut wanted = Vec::with_capacity(inputs.len());
    for (index, input) in inputs.into_iter().enumerate() {
        let template = StrategyRow {
            id: Uuid::new_v4().to_string(),
            feature_name: feature.name.clone(),
            environment: environment.to_owned(),
            name: String::new(),
            title: None,
            disabled: false,
            sort_order: i64::try_from(index).unwrap_or(i64::MAX),
            constraints: Vec::new(),
            parameters: BTreeMap::new(),
            variants: Vec::new(),
            segments: Vec::new(),
            created_at: tx.now(),
        };
        let input = StrategyInput {
            sort_order: None,
            ..input
        };
        wanted.push(
            validated_row(
                tx,
                &feature,
                input,
                template,
                normalize_variants_keeping_weights,
            )
            .await?,
        );
    }
    let existing = strategy_store::list(tx.conn(), &feature.name, environment).await?;
    let same = existing.len() == wanted.len()
        && existing
            .iter()
            .zip(&wanted)
            .all(|(old, new)| same_configuration(old, new));
    if same {
        return Ok(false);
    }
    for before in existing {
        strategy_store::delete(tx.conn(), &before.id).await?;
        tx.record(strategy_event(
            EventType::FeatureStrategyRemove,
            &feature,
            environment,
            None,
            Some(payload(&view(&before))),
        ))
        .await?;
    }
    for row in wanted {
        strategy_store::insert(tx.conn(), &row).await?;
        tx.record(strategy_event(
            EventType::FeatureStrategyAdd,
            &feature,
            environment,
            Some(payload(&view(&row))),
            None,
        ))
        .await?;
    }
    Ok(true)
}

/// Whether two strategies configure the same thing (their ids, places and creation times aside).
fn same_configuration(a: &StrategyRow, b: &StrategyRow) -> bool {
    a.name == b.name
        && a.title == b.title
        && a.disabled == b.disabled
        && a.constraints == b.constraints
        && a.parameters == b.parameters
        && a.variants == b.variants
        && a.segments == b.segments
}

/// The strategy a flag gets when turned on without one: its project environment's default strategy when one
/// is set ([`checked_default`], `groupId` the flag's name unless the default names one), else
/// `flexibleRollout` at 100 % (not limited: turning a flag on never fails on `featureEnvironmentStrategies`).
pub async fn add_default(
    tx: &mut WriteTx,
    feature: &FeatureRow,
    environment: &str,
) -> Result<Strategy, ApiError> {
    let configured =
        project_store::default_strategy(tx.conn(), &feature.project_id, environment).await?;
    let input = match configured.and_then(|text| serde_json::from_str::<StrategyInput>(&text).ok())
    {
        Some(input) => StrategyInput {
            sort_order: None,
            ..input
        },
        None => StrategyInput {
            name: "flexibleRollout".to_owned(),
            title: None,
            disabled: None,
            sort_order: None,
            constraints: None,
            parameters: None,
            variants: None,
            segments: None,
        },
    };
    insert(tx, feature, environment, input).await
}

/// A project environment's default strategy, checked as a strategy write is (there is no flag yet): a
/// defined strategy, a title of at most 100 characters, valid constraints, segments usable in the project,
/// within the limits; variants normalised, parameters as strings, an empty `groupId`, `rollout` or
/// `stickiness` left out (the flag's name, 100, the project's stickiness then), enabled (a disabled default would leave the flag switched on without an enabled strategy).
pub async fn checked_default(
    tx: &mut WriteTx,
    project: &str,
    input: StrategyInput,
    limits: &Limits,
) -> Result<StrategyInput, ApiError> {
    check_limits(&input, limits)?;
    let declared = strategy_definitions::declared_parameters(tx.conn(), &input.name).await?;
    check_title(input.title.as_deref())?;
    if input.disabled == Some(true) {
        return Err(ApiError::invalid_field(
            "disabled",
            "disabled: a default strategy must be enabled",
        ));
    }
    let constraints = input.constraints.unwrap_or_default();
    context_fields::check_constraints(tx.conn(), Some(project), &constraints).await?;
    let segments = input.segments.unwrap_or_default();
    segments::check_strategy_segments(tx.conn(), &segments, project).await?;
    let variants = normalize_variants(input.variants.unwrap_or_default())?;
    let mut parameters = parameter_strings(input.parameters.unwrap_or_default())?;
    for key in ["groupId", "rollout", "stickiness"] {
        if parameters
            .get(key)
            .is_some_and(|value| value.trim().is_empty())
        {
            parameters.remove(key);
        }
    }
    check_values(&declared, &parameters)?;
    Ok(StrategyInput {
        name: input.name,
        title: input.title.filter(|title| !title.trim().is_empty()),
        disabled: Some(false),
        sort_order: None,
        constraints: Some(constraints),
        parameters: Some(
            parameters
                .into_iter()
                .map(|(key, value)| (key, Value::String(value)))
                .collect(),
        ),
        variants: Some(variants),
        segments: Some(segments),
    })
}

/// Re-enables every given (disabled) strategy.
pub async fn enable_all(
    tx: &mut WriteTx,
    feature: &FeatureRow,
    environment: &str,
    rows: Vec<StrategyRow>,
) -> Result<(), ApiError> {
    for before in rows.into_iter().filter(|row| row.disabled) {
        let after = StrategyRow {
            disabled: false,
            ..before.clone()
        };
        strategy_store::update(tx.conn(), &after).await?;
        let (data, pre_data) = (payload(&view(&after)), payload(&view(&before)));
        tx.record(strategy_event(
            EventType::FeatureStrategyUpdate,
            feature,
            environment,
            Some(data),
            Some(pre_data),
        ))
        .await?;
    }
    Ok(())
}

/// After a strategy was disabled or removed: an enabled flag left without an enabled strategy turns off.
async fn switch_off_without_strategies(
    tx: &mut WriteTx,
    feature: &FeatureRow,
    environment: &str,
) -> Result<(), ApiError> {
    let remaining = strategy_store::list(tx.conn(), &feature.name, environment).await?;
    if !remaining.iter().any(|row| !row.disabled)
        && feature_store::is_enabled(tx.conn(), &feature.name, environment).await?
    {
        switch(tx, feature, environment, false).await?;
    }
    Ok(())
}

async fn require_strategy(
    tx: &mut WriteTx,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<StrategyRow, ApiError> {
    strategy_store::get(tx.conn(), feature, environment, id)
        .await?
        .ok_or_else(|| strategy_not_found(id))
}

/// Replaces a strategy (absent `sortOrder` keeps its place).
pub async fn update(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    id: Uuid,
    input: StrategyInput,
    limits: &Limits,
) -> Result<Strategy, ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let feature = writable_feature(tx, project, feature, environment).await?;
    check_limits(&input, limits)?;
    let before = require_strategy(tx, &feature.name, environment, &id.to_string()).await?;
    let after = validated_row(tx, &feature, input, before.clone(), normalize_variants).await?;
    let (old, new) = (view(&before), view(&after));
    if old != new {
        strategy_store::update(tx.conn(), &after).await?;
        tx.record(strategy_event(
            EventType::FeatureStrategyUpdate,
            &feature,
            environment,
            Some(payload(&new)),
            Some(payload(&old)),
        ))
        .await?;
        if new.disabled && !old.disabled {
            switch_off_without_strategies(tx, &feature, environment).await?;
        }
    }
    Ok(new)
}

/// Applies a JSON Patch to the strategy's editable fields, then replaces it as PUT does.
pub async fn patch(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    id: Uuid,
    operations: json_patch::Patch,
    limits: &Limits,
) -> Result<Strategy, ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    writable_feature(tx, project, feature, environment).await?;
    let current = view(&require_strategy(tx, feature, environment, &id.to_string()).await?);
    let mut document = serde_json::json!({
        "name": current.name,
        "title": current.title,
        "disabled": current.disabled,
        "sortOrder": current.sort_order,
        "constraints": current.constraints,
        "parameters": current.parameters,
        "variants": current.variants,
        "segments": current.segments,
    });
    json_patch::patch(&mut document, &operations)
        .map_err(|error| ApiError::validation(format!("The patch does not apply: {error}")))?;
    let input: StrategyInput = serde_path_to_error::deserialize(document).map_err(|error| {
        ApiError::validation(format!(
            "The patched strategy is invalid at {}: {}",
            error.path(),
            error.inner()
        ))
    })?;
    update(tx, project, feature, environment, id, input, limits).await
}

pub async fn delete(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    id: Uuid,
) -> Result<(), ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let feature = writable_feature(tx, project, feature, environment).await?;
    let before = require_strategy(tx, &feature.name, environment, &id.to_string()).await?;
    strategy_store::delete(tx.conn(), &before.id).await?;
    let old = view(&before);
    tx.record(strategy_event(
        EventType::FeatureStrategyRemove,
        &feature,
        environment,
        None,
        Some(payload(&old)),
    ))
    .await?;
    switch_off_without_strategies(tx, &feature, environment).await
}

/// The `data` and `preData` of `strategy-order-changed`: an object, as the specification's events have, that
/// holds the strategies' ids in their order, as Unleash records them (`{"strategyIds": [...]}`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StrategyOrder {
    strategy_ids: Vec<String>,
}

impl StrategyOrder {
    /// The ids of `rows`, which the store lists in order (sortOrder, then creation).
    fn of(rows: &[StrategyRow]) -> Self {
        StrategyOrder {
            strategy_ids: rows.iter().map(|row| row.id.clone()).collect(),
        }
    }
}

/// Sets the sortOrder of the listed strategies; every id must be a strategy of this flag and environment;
/// records `strategy-order-changed` with the order before and after ([`StrategyOrder`]) when it changed.
pub async fn set_sort_order(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    entries: Vec<StrategySortOrder>,
) -> Result<(), ApiError> {
    change_request_gate::ensure_writable(tx, project, environment).await?;
    let feature = writable_feature(tx, project, feature, environment).await?;
    let before = strategy_store::list(tx.conn(), &feature.name, environment).await?;
    let old_order = StrategyOrder::of(&before);
    let mut changed = false;
    for (index, entry) in entries.iter().enumerate() {
        let Some(row) = before.iter().find(|row| row.id == entry.id) else {
            return Err(ApiError::validation(format!(
                "[{index}].id: {} is not a strategy of this flag and environment",
                entry.id
            )));
        };
        if row.sort_order != entry.sort_order {
            let after = StrategyRow {
                sort_order: entry.sort_order,
                ..row.clone()
            };
            strategy_store::update(tx.conn(), &after).await?;
            changed = true;
        }
    }
    if changed {
        let after = strategy_store::list(tx.conn(), &feature.name, environment).await?;
        let new_order = StrategyOrder::of(&after);
        tx.record(strategy_event(
            EventType::StrategyOrderChanged,
            &feature,
            environment,
            Some(payload(&new_order)),
            Some(payload(&old_order)),
        ))
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_strings_and_flexible_rollout_gets_defaults() {
        let mut input = serde_json::Map::new();
        input.insert("rollout".to_owned(), serde_json::json!(25));
        let parameters = normalize_parameters("flexibleRollout", input, "flag", "userId").unwrap();
        assert_eq!(parameters["rollout"], "25");
        assert_eq!(parameters["stickiness"], "userId");
        assert_eq!(parameters["groupId"], "flag");
        let mut input = serde_json::Map::new();
        input.insert("userIds".to_owned(), serde_json::json!(["a"]));
        let error = normalize_parameters("userWithId", input, "flag", "default").unwrap_err();
        assert!(error.message.contains("parameters.userIds"));
    }
}
