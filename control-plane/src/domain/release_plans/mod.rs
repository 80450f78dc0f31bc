//! Release templates and release plans (Unleash Enterprise's, open here): a template is an ordered list of
//! milestones, each a set of strategies ([`templates`]); a plan is a copy of a template's milestones for one
//! flag in one environment, `{{featureName}}` in a strategy's `groupId` replaced by the flag's name
//! ([`plans`]). Starting a milestone replaces the flag's strategies there with the milestone's, in one
//! write (one revision, the strategy events and `release-plan-milestone-started`). A milestone with a
//! transition condition starts the next one when due ([`progressions`], applied by `crate::scheduler`).
//!
//! Change requests: a plan cannot bypass them. Where change requests are on, applying a plan, starting a
//! milestone, changing a progression and resuming are refused (400, naming change requests); removing or
//! pausing a plan changes no flag and is allowed.

pub mod plans;
pub mod progressions;
pub mod templates;

use crate::model::release_plan::{MilestoneStrategy, TransitionCondition};
use crate::store::change_requests as change_request_store;
use crate::store::release_plans::{DefinitionRow, MilestoneRow};
use crate::store::WriteTx;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A milestone of a template or plan (`releasePlanMilestoneSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Milestone {
    pub id: String,
    pub name: String,
    pub sort_order: i64,
    /// The template or plan it belongs to.
    pub release_plan_definition_id: String,
    #[schema(format = DateTime)]
    pub started_at: Option<String>,
    pub transition_condition: Option<TransitionCondition>,
    #[schema(format = DateTime)]
    pub progression_executed_at: Option<String>,
    #[schema(format = DateTime)]
    pub paused_at: Option<String>,
    pub strategies: Vec<MilestoneStrategy>,
}

/// A release template (`releasePlanTemplateSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleasePlanTemplate {
    pub id: String,
    /// Always `template`.
    pub discriminator: String,
    pub name: String,
    pub created_by_user_id: i64,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub milestones: Vec<Milestone>,
    #[schema(format = DateTime)]
    pub archived_at: Option<String>,
}

/// A release plan of a flag in an environment (`releasePlanSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleasePlan {
    pub id: String,
    /// Always `plan`.
    pub discriminator: String,
    pub name: String,
    pub feature_name: String,
    pub environment: String,
    pub created_by_user_id: i64,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub active_milestone_id: Option<String>,
    pub milestones: Vec<Milestone>,
    pub release_plan_template_id: String,
    /// Always empty: Vexil has no safeguards.
    #[schema(value_type = Vec<Object>)]
    pub safeguards: Vec<Value>,
}

/// A strategy of a milestone as written (`createReleasePlanMilestoneStrategySchema`; `id` and
/// `milestoneId` of `updateReleasePlanMilestoneStrategySchema` are accepted and not needed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneStrategyInput {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub milestone_id: Option<String>,
    #[serde(default)]
    pub sort_order: i64,
    #[serde(default)]
    #[schema(max_length = 100)]
    pub title: Option<String>,
    pub strategy_name: String,
    /// Strings, numbers or booleans, kept as strings; `{{featureName}}` in `groupId` becomes the flag's name.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub parameters: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub constraints: Option<Vec<crate::model::constraint::Constraint>>,
    #[serde(default)]
    pub variants: Option<Vec<crate::model::variant::StrategyVariant>>,
    #[serde(default)]
    pub segments: Option<Vec<i64>>,
}

/// A milestone as written (`createReleasePlanMilestoneSchema`, `updateReleasePlanMilestoneSchema`), with
/// its transition condition (a Vexil extension: Unleash 7.4 sets it through `…/progressions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneInput {
    #[schema(min_length = 1, max_length = 255)]
    pub name: String,
    #[serde(default)]
    pub sort_order: i64,
    #[serde(default)]
    pub release_plan_definition_id: Option<String>,
    #[serde(default)]
    pub transition_condition: Option<TransitionCondition>,
    #[serde(default)]
    /// At most 30 (`templates::MAX_MILESTONE_STRATEGIES`).
    #[schema(max_items = 30)]
    pub strategies: Option<Vec<MilestoneStrategyInput>>,
}

/// `POST /api/admin/release-plan-templates` (`createReleasePlanTemplateSchema`) and its `PUT`
/// (`updateReleasePlanTemplateSchema`: `id`, when given, must be the path's; absent milestones stay).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateInput {
    #[serde(default)]
    pub id: Option<String>,
    #[schema(min_length = 1, max_length = 255)]
    pub name: String,
    /// At most 20 (`templates::MAX_MILESTONES`).
    #[serde(default)]
    #[schema(max_items = 20)]
    pub milestones: Option<Vec<MilestoneInput>>,
}

/// `POST …/release-plans` (`releasePlanTemplateIdSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateId {
    pub template_id: String,
}

pub(crate) fn time(value: Option<crate::time::Timestamp>) -> Option<String> {
    value.map(|at| at.to_string())
}

pub(crate) fn milestone_view(row: &MilestoneRow) -> Milestone {
    Milestone {
        id: row.id.clone(),
        name: row.name.clone(),
        sort_order: row.sort_order,
        release_plan_definition_id: row.definition_id.clone(),
        started_at: time(row.started_at),
        transition_condition: row
            .interval_minutes
            .map(|interval_minutes| TransitionCondition { interval_minutes }),
        progression_executed_at: time(row.progression_executed_at),
        paused_at: time(row.paused_at),
        strategies: row.strategies.clone(),
    }
}

pub(crate) fn template_view(
    row: &DefinitionRow,
    milestones: &[MilestoneRow],
) -> ReleasePlanTemplate {
    ReleasePlanTemplate {
        id: row.id.clone(),
        discriminator: row.discriminator.as_str().to_owned(),
        name: row.name.clone(),
        created_by_user_id: row.created_by_user_id,
        created_at: row.created_at.to_string(),
        milestones: milestones.iter().map(milestone_view).collect(),
        archived_at: time(row.archived_at),
    }
}

pub(crate) fn plan_view(row: &DefinitionRow, milestones: &[MilestoneRow]) -> ReleasePlan {
    ReleasePlan {
        id: row.id.clone(),
        discriminator: row.discriminator.as_str().to_owned(),
        name: row.name.clone(),
        feature_name: row.feature_name.clone().unwrap_or_default(),
        environment: row.environment.clone().unwrap_or_default(),
        created_by_user_id: row.created_by_user_id,
        created_at: row.created_at.to_string(),
        active_milestone_id: row.active_milestone_id.clone(),
        milestones: milestones.iter().map(milestone_view).collect(),
        release_plan_template_id: row.template_id.clone().unwrap_or_default(),
        safeguards: Vec::new(),
    }
}

/// 400 for a release plan's write to a flag in `environment` of `project` where change requests are on: a
/// plan would change the flag there without a change request.
pub(crate) async fn ensure_no_change_requests(
    tx: &mut WriteTx,
    project: &str,
    environment: &str,
) -> Result<(), ApiError> {
    let setting = change_request_store::setting(tx.conn(), project, environment).await?;
    if setting.is_some_and(|setting| setting.enabled) {
        return Err(ApiError::validation(format!(
            "Change requests are enabled for environment {environment} of project {project}: release \
             plans cannot change flags there (a milestone would bypass the change requests); change \
             the strategies in a change request instead"
        )));
    }
    Ok(())
}
