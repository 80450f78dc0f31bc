//! What release templates and plans keep: whether a definition is a template or a plan, a milestone's
//! strategies (as the API shows them, `releasePlanMilestoneStrategySchema`) and its transition condition.

use super::constraint::Constraint;
use super::variant::StrategyVariant;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A release template, or a plan made from one for a flag in an environment (`discriminator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discriminator {
    Template,
    Plan,
}

impl Discriminator {
    pub fn as_str(self) -> &'static str {
        match self {
            Discriminator::Template => "template",
            Discriminator::Plan => "plan",
        }
    }
}

/// The placeholder a template's strategy may use in its `groupId` parameter: the flag's name once applied.
pub const FEATURE_NAME_PLACEHOLDER: &str = "{{featureName}}";

/// A strategy of a milestone: what the flag gets in the environment when the milestone starts. Parameters
/// are kept as strings, as a flag's strategy's are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneStrategy {
    pub id: String,
    pub milestone_id: String,
    pub sort_order: i64,
    pub title: Option<String>,
    pub strategy_name: String,
    pub parameters: BTreeMap<String, String>,
    pub constraints: Vec<Constraint>,
    pub variants: Vec<StrategyVariant>,
    pub segments: Vec<i64>,
}

/// When a milestone hands over to the next one by itself: `intervalMinutes` after it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransitionCondition {
    /// At least 1.
    #[schema(minimum = 1)]
    pub interval_minutes: i64,
}
