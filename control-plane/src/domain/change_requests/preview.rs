//! What each change of a request would do: the part of its flag it touches as it is now in the request's
//! environment (or its segment as it is now) and as the change proposes it, as two JSON values of the same
//! shape (the web UI draws their difference). A flag or segment that is gone has no current state.

use super::bodies::ChangeRequest;
use crate::domain::dependencies::Dependency;
use crate::domain::features::{self, FeatureEnvironment};
use crate::domain::segments::{self, Segment};
use crate::domain::strategies::Strategy;
use crate::model::change_request::Change;
use crate::model::dependency::RemoveDependency;
use crate::model::strategy::StrategyInput;
use serde_json::{json, Map, Value};
use sqlx::AnyConnection;
use vexil_shared::{ApiError, ErrorKind};

/// One change, before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePreview {
    pub change_id: i64,
    /// The flag changed; for a segment's change, the segment's name.
    pub feature: String,
    /// The segment a segment's change is about.
    pub segment: Option<i64>,
    /// The action's name as the API spells it (`updateEnabled`, `addStrategy`, …).
    pub action: String,
    /// What the change touches now; `None` for what does not exist yet (a new strategy) or any more.
    pub before: Option<Value>,
    /// What it would be; `None` for what the change removes.
    pub after: Option<Value>,
}

/// A stored strategy in the shape the diff compares.
fn strategy_value(strategy: &Strategy) -> Value {
    json!({
        "name": strategy.name,
        "title": strategy.title.clone().unwrap_or_default(),
        "disabled": strategy.disabled,
        "parameters": strategy.parameters,
        "constraints": strategy.constraints,
        "segments": strategy.segments,
        "variants": strategy.variants,
    })
}

/// A proposed strategy in the same shape, with the defaults a write gives absent fields (a PUT replaces).
fn input_value(input: &StrategyInput) -> Value {
    let parameters: Map<String, Value> = input
        .parameters
        .iter()
        .flatten()
        .map(|(name, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (name.clone(), Value::String(text))
        })
        .collect();
    json!({
        "name": input.name,
        "title": input.title.clone().unwrap_or_default(),
        "disabled": input.disabled.unwrap_or(false),
        "parameters": parameters,
        "constraints": input.constraints.clone().unwrap_or_default(),
        "segments": input.segments.clone().unwrap_or_default(),
        "variants": input.variants.clone().unwrap_or_default(),
    })
}

fn strategy_named<'a>(
    environment: Option<&'a FeatureEnvironment>,
    id: &str,
) -> Option<&'a Strategy> {
    environment.and_then(|environment| environment.strategies.iter().find(|s| s.id == id))
}

/// A strategy's name in a reordering: its title or name, and its id.
fn strategy_label(strategy: Option<&Strategy>, id: &str) -> String {
    match strategy {
        Some(strategy) => format!(
            "{} ({id})",
            strategy
                .title
                .clone()
                .filter(|title| !title.is_empty())
                .unwrap_or_else(|| strategy.name.clone())
        ),
        None => id.to_owned(),
    }
}

/// A flag's dependencies in the shape the diff compares: each parent with what it must be.
fn dependencies_value(dependencies: &[Dependency]) -> Value {
    let by_parent: Map<String, Value> = dependencies
        .iter()
        .map(|dependency| {
            (
                dependency.feature.clone(),
                json!({"enabled": dependency.enabled, "variants": dependency.variants}),
            )
        })
        .collect();
    json!({ "dependencies": by_parent })
}

/// `(before, after)` of one change, given the flag's current state in the environment and its dependencies
/// (`None`: no flag there).
fn compare(
    change: &Change,
    environment: Option<&FeatureEnvironment>,
    dependencies: Option<&[Dependency]>,
) -> (Option<Value>, Option<Value>) {
    let exists = environment.is_some();
    let current = dependencies.unwrap_or_default();
    match change {
        Change::UpdateEnabled { enabled } => (
            environment.map(|environment| json!({"enabled": environment.enabled})),
            Some(json!({"enabled": enabled})),
        ),
        Change::AddStrategy(input) => (None, Some(input_value(input))),
        Change::UpdateStrategy(body) => (
            strategy_named(environment, &body.id.to_string()).map(strategy_value),
            Some(input_value(&body.strategy)),
        ),
        Change::DeleteStrategy { id } => (
            strategy_named(environment, &id.to_string()).map(strategy_value),
            None,
        ),
        Change::ReorderStrategy(entries) => {
            let (mut before, mut after) = (Map::new(), Map::new());
            for entry in entries {
                let strategy = strategy_named(environment, &entry.id);
                let label = strategy_label(strategy, &entry.id);
                if let Some(strategy) = strategy {
                    before.insert(label.clone(), json!(strategy.sort_order));
                }
                after.insert(label, json!(entry.sort_order));
            }
            (
                Some(json!({"sortOrder": before})),
                Some(json!({"sortOrder": after})),
            )
        }
        Change::PatchVariant { variants } => (
            environment.map(|environment| json!({"variants": environment.variants})),
            Some(json!({"variants": variants})),
        ),
        Change::ArchiveFeature(_) => (
            exists.then(|| json!({"archived": false})),
            Some(json!({"archived": true})),
        ),
        Change::AddDependency(input) => {
            let enabled = input.enabled.unwrap_or(true);
            let mut after: Vec<Dependency> = current
                .iter()
                .filter(|dependency| dependency.feature != input.feature)
                .cloned()
                .collect();
            after.push(Dependency {
                feature: input.feature.clone(),
                enabled,
                variants: input
                    .variants
                    .clone()
                    .filter(|_| enabled)
                    .unwrap_or_default(),
            });
            (
                dependencies.map(dependencies_value),
                Some(dependencies_value(&after)),
            )
        }
        // Compared with the segment, not the flag: `compare_segment`.
        Change::UpdateSegment(_) | Change::DeleteSegment { .. } => (None, None),
        Change::DeleteDependency(RemoveDependency { feature }) => {
            let after: Vec<Dependency> = current
                .iter()
                .filter(|dependency| {
                    feature
                        .as_ref()
                        .is_some_and(|parent| *parent != dependency.feature)
                })
                .cloned()
                .collect();
            (
                dependencies.map(dependencies_value),
                Some(dependencies_value(&after)),
            )
        }
    }
}

/// A segment in the shape the diff compares.
fn segment_value(
    name: &str,
    description: Option<&str>,
    project: Option<&str>,
    constraints: Value,
) -> Value {
    json!({
        "name": name,
        "description": description.unwrap_or_default(),
        "project": project.unwrap_or_default(),
        "constraints": constraints,
    })
}

/// `(before, after)` of a segment's change, given the segment now (`None`: gone).
fn compare_segment(change: &Change, current: Option<&Segment>) -> (Option<Value>, Option<Value>) {
    let before = current.map(|segment| {
        let constraints = json!(segment.constraints);
        let (description, project) = (segment.description.as_deref(), segment.project.as_deref());
        segment_value(&segment.name, description, project, constraints)
    });
    let after = match change {
        Change::UpdateSegment(update) => {
            let input = &update.segment;
            let constraints = json!(input.constraints);
            let (description, project) = (input.description.as_deref(), input.project.as_deref());
            Some(segment_value(
                &input.name,
                description,
                project,
                constraints,
            ))
        }
        _ => None,
    };
    (before, after)
}

/// Every change of `request`, in order, compared with its flag's (or segment's) current state.
pub async fn preview(
    conn: &mut AnyConnection,
    request: &ChangeRequest,
) -> Result<Vec<ChangePreview>, ApiError> {
    let mut previews = Vec::new();
    for feature in &request.features {
        let flag = match features::get(conn, &request.project, &feature.name).await {
            Ok(flag) => Some(flag),
            Err(error) if error.kind == ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        let environment = flag.as_ref().and_then(|flag| {
            flag.environments
                .iter()
                .find(|environment| environment.name == request.environment)
        });
        for change in &feature.changes {
            let dependencies = flag.as_ref().map(|flag| flag.dependencies.as_slice());
            let (before, after) = compare(&change.change, environment, dependencies);
            previews.push(ChangePreview {
                change_id: change.id,
                feature: feature.name.clone(),
                segment: None,
                action: change.change.action(),
                before,
                after,
            });
        }
    }
    for change in &request.segments {
        let id = change.change.segment().unwrap_or_default();
        let current = match segments::get(conn, id).await {
            Ok(segment) => Some(segment),
            Err(error) if error.kind == ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        let (before, after) = compare_segment(&change.change, current.as_ref());
        previews.push(ChangePreview {
            change_id: change.id,
            feature: change.name.clone(),
            segment: Some(id),
            action: change.change.action(),
            before,
            after,
        });
    }
    Ok(previews)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(enabled: bool) -> FeatureEnvironment {
        FeatureEnvironment {
            name: "development".to_owned(),
            enabled,
            environment_type: "development".to_owned(),
            sort_order: 1,
            strategies: Vec::new(),
            variants: Vec::new(),
        }
    }

    #[test]
    fn a_switch_compares_the_current_state_with_the_proposed_one() {
        let change = Change::UpdateEnabled { enabled: true };
        assert_eq!(
            compare(&change, Some(&environment(false)), Some(&[])),
            (
                Some(json!({"enabled": false})),
                Some(json!({"enabled": true}))
            )
        );
        assert_eq!(
            compare(&change, None, None),
            (None, Some(json!({"enabled": true})))
        );
    }

    #[test]
    fn a_new_strategy_has_no_before_and_takes_the_defaults() {
        let input: StrategyInput = serde_json::from_value(
            json!({"name": "flexibleRollout", "parameters": {"rollout": 50}}),
        )
        .unwrap();
        let (before, after) = compare(
            &Change::AddStrategy(input),
            Some(&environment(true)),
            Some(&[]),
        );
        assert_eq!(before, None);
        let after = after.unwrap();
        assert_eq!(after["parameters"]["rollout"], "50");
        assert_eq!(after["disabled"], false);
        assert_eq!(after["constraints"], json!([]));
    }

    #[test]
    fn dependency_changes_compare_the_flags_parents() {
        let current = [Dependency {
            feature: "parent-a".to_owned(),
            enabled: true,
            variants: vec!["blue".to_owned()],
        }];
        let add: Change = serde_json::from_value(json!({
            "action": "addDependency",
            "payload": {"feature": "parent-b", "enabled": false, "variants": ["ignored"]}
        }))
        .unwrap();
        let (before, after) = compare(&add, Some(&environment(true)), Some(&current));
        assert_eq!(
            before,
            Some(json!({"dependencies": {"parent-a": {"enabled": true, "variants": ["blue"]}}}))
        );
        assert_eq!(
            after,
            Some(json!({"dependencies": {
                "parent-a": {"enabled": true, "variants": ["blue"]},
                "parent-b": {"enabled": false, "variants": []}
            }}))
        );
        let remove_one: Change = serde_json::from_value(
            json!({"action": "deleteDependency", "payload": {"feature": "parent-a"}}),
        )
        .unwrap();
        let remove_all: Change =
            serde_json::from_value(json!({"action": "deleteDependency", "payload": {}})).unwrap();
        for change in [remove_one, remove_all] {
            assert_eq!(
                compare(&change, None, Some(&current)).1,
                Some(json!({"dependencies": {}}))
            );
        }
    }
}
