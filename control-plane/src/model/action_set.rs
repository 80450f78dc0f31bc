//! An action set's parts as they are written and kept: its filters over a signal's payload and its actions,
//! with the checks that need only the value (a known operator and action, the parameters an action needs).

use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use vexil_shared::engine::Operator;
use vexil_shared::ApiError;

/// The only source of signals: a signal endpoint (`match.sourceId` is its id).
pub const SIGNAL_ENDPOINT_SOURCE: &str = "signal-endpoint";

/// One filter of `match.payload`, keyed by a dotted path into the signal's JSON: a constraint of the engine
/// over the value found there (a string as it is, a number or boolean as its JSON text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    /// A constraint operator (`IN`, `NOT_IN`, `STR_CONTAINS`, `NUM_GT`, `SEMVER_EQ`, `DATE_AFTER`…).
    pub operator: String,
    /// The values (`IN`, `NOT_IN`, `STR_*`, `IN_CIDR`), or the one value of the single-value operators.
    #[serde(default)]
    pub values: Vec<String>,
    /// The value of a single-value operator (`NUM_*`, `SEMVER_*`, `DATE_*`, `REGEX`); else `values[0]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default)]
    pub inverted: bool,
    #[serde(default)]
    pub case_insensitive: bool,
}

impl Filter {
    /// 400 for an operator the engine does not know.
    pub fn check(&self, path: &str) -> Result<(), ApiError> {
        if Operator::parse(&self.operator).is_none() {
            return Err(ApiError::invalid_field(
                format!("match.payload.{path}.operator"),
                format!(
                    "match.payload.{path}.operator: {:?} is not a constraint operator",
                    self.operator
                ),
            ));
        }
        Ok(())
    }

    /// How many values it holds (the `actionSetFilterValues` limit counts them).
    pub fn value_count(&self) -> usize {
        self.values.len() + usize::from(self.value.is_some())
    }
}

/// What an action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    ToggleFeatureOn,
    ToggleFeatureOff,
    DisableFeatureStrategy,
    EnableFeatureStrategy,
    /// Stops the automatic progression of the flag's release plan in the environment.
    PauseReleasePlan,
}

impl ActionKind {
    pub const ALL: [ActionKind; 5] = [
        ActionKind::ToggleFeatureOn,
        ActionKind::ToggleFeatureOff,
        ActionKind::DisableFeatureStrategy,
        ActionKind::EnableFeatureStrategy,
        ActionKind::PauseReleasePlan,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::ToggleFeatureOn => "TOGGLE_FEATURE_ON",
            ActionKind::ToggleFeatureOff => "TOGGLE_FEATURE_OFF",
            ActionKind::DisableFeatureStrategy => "DISABLE_FEATURE_STRATEGY",
            ActionKind::EnableFeatureStrategy => "ENABLE_FEATURE_STRATEGY",
            ActionKind::PauseReleasePlan => "PAUSE_RELEASE_PLAN",
        }
    }

    pub fn parse(name: &str) -> Option<ActionKind> {
        ActionKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// The `executionParams` it needs, each a non-empty string.
    pub fn required_params(self) -> &'static [&'static str] {
        match self {
            ActionKind::ToggleFeatureOn
            | ActionKind::ToggleFeatureOff
            | ActionKind::PauseReleasePlan => &["project", "featureName", "environment"],
            ActionKind::DisableFeatureStrategy | ActionKind::EnableFeatureStrategy => {
                &["project", "featureName", "environment", "strategyId"]
            }
        }
    }
}

/// One action of a set, as kept and shown (actionSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Action {
    pub id: i64,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    pub created_by_user_id: i64,
    /// `TOGGLE_FEATURE_ON`, `TOGGLE_FEATURE_OFF`, `DISABLE_FEATURE_STRATEGY`, `ENABLE_FEATURE_STRATEGY` or
    /// `PAUSE_RELEASE_PLAN`.
    pub action: String,
    #[schema(minimum = 1)]
    pub sort_order: i64,
    /// `{project, featureName, environment}`, and `strategyId` for the strategy actions.
    #[schema(value_type = Object)]
    pub execution_params: Map<String, Value>,
}

impl Action {
    /// The action's kind and a parameter's text (both checked when the set was written).
    pub fn kind(&self) -> Option<ActionKind> {
        ActionKind::parse(&self.action)
    }

    pub fn param(&self, name: &str) -> &str {
        self.execution_params
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// 400 unless `action` is known and `params` holds each parameter it needs as a non-empty string
/// (`index`: its place in `actions`, for the message).
pub fn check_action(
    index: usize,
    action: &str,
    params: &Map<String, Value>,
) -> Result<(), ApiError> {
    let field = format!("actions[{index}]");
    let kind = ActionKind::parse(action).ok_or_else(|| {
        let known: Vec<&str> = ActionKind::ALL.iter().map(|kind| kind.as_str()).collect();
        ApiError::invalid_field(
            format!("{field}.action"),
            format!(
                "{field}.action: {action:?} is not one of {}",
                known.join(", ")
            ),
        )
    })?;
    for name in kind.required_params() {
        let present = params
            .get(*name)
            .and_then(Value::as_str)
            .is_some_and(|value| !value.trim().is_empty());
        if !present {
            return Err(ApiError::invalid_field(
                format!("{field}.executionParams.{name}"),
                format!(
                    "{field}.executionParams.{name}: required by {action} (a non-empty string)"
                ),
            ));
        }
    }
    Ok(())
}
