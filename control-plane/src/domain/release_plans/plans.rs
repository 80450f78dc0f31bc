//! Release plans of a flag in an environment: `…/environments/:environment/release-plans…`. Applying a
//! template copies its milestones (new ids, `{{featureName}}` in `groupId` replaced) into a plan, one per
//! flag and environment; starting a milestone replaces the flag's strategies there with the milestone's.

use super::{
    ensure_no_change_requests, milestone_view, plan_view, templates, Milestone, ReleasePlan,
};
use crate::domain::events::{payload, EventType};
use crate::domain::feature_lookup::{
    ensure_not_archived, require_in_project, require_project_environment,
};
use crate::domain::limits::Limits;
use crate::domain::strategies;
use crate::model::release_plan::{Discriminator, MilestoneStrategy, FEATURE_NAME_PLACEHOLDER};
use crate::model::strategy::StrategyInput;
use crate::store::release_plans::{self as store, DefinitionRow, MilestoneRow};
use crate::store::{NewEvent, WriteTx};
use serde_json::{json, Value};
use sqlx::AnyConnection;
use uuid::Uuid;
use vexil_shared::ApiError;

/// An event about a plan of `feature` in `environment` of `project`.
pub(crate) fn plan_event(
    event_type: EventType,
    project: &str,
    plan: &DefinitionRow,
    data: Option<Value>,
    pre_data: Option<Value>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.as_str(),
        project: Some(project.to_owned()),
        environment: plan.environment.clone(),
        feature_name: plan.feature_name.clone(),
        data,
        pre_data,
    }
}

/// The plans of a flag in an environment, oldest first.
pub async fn list(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
    environment: &str,
) -> Result<Vec<ReleasePlan>, ApiError> {
    require_in_project(conn, project, feature).await?;
    require_project_environment(conn, project, environment).await?;
    let rows = store::plans_of(conn, feature, Some(environment)).await?;
    views(conn, rows).await
}

/// The plans of a flag in every environment (its page shows them).
pub async fn of_flag(
    conn: &mut AnyConnection,
    feature: &str,
) -> Result<Vec<ReleasePlan>, ApiError> {
    let rows = store::plans_of(conn, feature, None).await?;
    views(conn, rows).await
}

async fn views(
    conn: &mut AnyConnection,
    rows: Vec<DefinitionRow>,
) -> Result<Vec<ReleasePlan>, ApiError> {
    let mut plans = Vec::new();
    for row in rows {
        let milestones = store::milestones(conn, &row.id).await?;
        plans.push(plan_view(&row, &milestones));
    }
    Ok(plans)
}

/// Plan `id` of the flag in the environment, with its milestones; 404 for another's.
pub(crate) async fn require(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<(DefinitionRow, Vec<MilestoneRow>), ApiError> {
    require_in_project(conn, project, feature).await?;
    require_project_environment(conn, project, environment).await?;
    let row = store::get_definition(conn, id, Discriminator::Plan)
        .await?
        .filter(|row| {
            row.feature_name.as_deref() == Some(feature)
                && row.environment.as_deref() == Some(environment)
        })
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Release plan {id} does not exist for flag {feature} in environment {environment}"
            ))
        })?;
    let milestones = store::milestones(conn, id).await?;
    Ok((row, milestones))
}

pub async fn get(
    conn: &mut AnyConnection,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<ReleasePlan, ApiError> {
    let (row, milestones) = require(conn, project, feature, environment, id).await?;
    Ok(plan_view(&row, &milestones))
}

/// A template's strategy for flag `feature`: `{{featureName}}` in `groupId` becomes its name.
fn for_flag(strategy: &MilestoneStrategy, milestone_id: &str, feature: &str) -> MilestoneStrategy {
    let mut strategy = MilestoneStrategy {
        id: Uuid::new_v4().to_string(),
        milestone_id: milestone_id.to_owned(),
        ..strategy.clone()
    };
    if let Some(group) = strategy.parameters.get_mut("groupId") {
        *group = group.replace(FEATURE_NAME_PLACEHOLDER, feature);
    }
    strategy
}

/// `POST …/release-plans` `{templateId}`: the template applied to the flag in the environment (no milestone
/// started yet). 409 when the flag already has a plan there.
pub async fn add(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    template_id: &str,
) -> Result<ReleasePlan, ApiError> {
    let flag = require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    ensure_not_archived(&flag)?;
    ensure_no_change_requests(tx, project, environment).await?;
    let (template, template_milestones) = templates::require(tx.conn(), template_id)
        .await
        .map_err(|error| error.at_field("templateId"))?;
    if template.archived_at.is_some() {
        return Err(ApiError::invalid_field(
            "templateId",
            format!("templateId: release template {template_id} is archived"),
        ));
    }
    if !store::plans_of(tx.conn(), feature, Some(environment))
        .await?
        .is_empty()
    {
        return Err(ApiError::name_exists(format!(
            "Flag {feature} already has a release plan in environment {environment}: remove it first"
        )));
    }
    let id = Uuid::new_v4().to_string();
    let milestones: Vec<MilestoneRow> = template_milestones
        .iter()
        .map(|milestone| {
            let milestone_id = Uuid::new_v4().to_string();
            MilestoneRow {
                strategies: milestone
                    .strategies
                    .iter()
                    .map(|strategy| for_flag(strategy, &milestone_id, feature))
                    .collect(),
                id: milestone_id,
                definition_id: id.clone(),
                ..milestone.clone()
            }
        })
        .collect();
    let row = DefinitionRow {
        id,
        discriminator: Discriminator::Plan,
        name: template.name,
        created_by_user_id: tx.actor().user_id,
        created_at: tx.now(),
        archived_at: None,
        feature_name: Some(feature.to_owned()),
        environment: Some(environment.to_owned()),
        template_id: Some(template.id),
        active_milestone_id: None,
        progression_due_at: None,
    };
    store::insert_definition(tx.conn(), &row).await?;
    store::replace_milestones(tx.conn(), &row.id, &milestones).await?;
    let plan = plan_view(&row, &milestones);
    tx.record(plan_event(
        EventType::ReleasePlanAdded,
        project,
        &row,
        Some(payload(&plan)),
        None,
    ))
    .await?;
    Ok(plan)
}

/// `DELETE …/release-plans/:planId`: the plan goes; the flag keeps the strategies it has.
pub async fn remove(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<(), ApiError> {
    let (row, milestones) = require(tx.conn(), project, feature, environment, id).await?;
    store::delete_definition(tx.conn(), id).await?;
    tx.record(plan_event(
        EventType::ReleasePlanRemoved,
        project,
        &row,
        None,
        Some(payload(&plan_view(&row, &milestones))),
    ))
    .await?;
    Ok(())
}

/// `POST …/release-plans/:planId/milestones/:milestoneId/start`.
pub async fn start_milestone(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
    milestone_id: &str,
    limits: &Limits,
) -> Result<Milestone, ApiError> {
    ensure_no_change_requests(tx, project, environment).await?;
    let (row, milestones) = require(tx.conn(), project, feature, environment, id).await?;
    let index = milestones
        .iter()
        .position(|milestone| milestone.id == milestone_id)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Milestone {milestone_id} does not exist in release plan {id}"
            ))
        })?;
    start(tx, project, row, milestones, index, limits).await
}

/// Starts milestone `index` of a plan (in `project`): the flag's strategies in the plan's environment become
/// the milestone's (their events), the milestone is the active one, and its transition condition, if any
/// and if a milestone follows, sets when the next starts. Records `release-plan-milestone-started`.
pub(crate) async fn start(
    tx: &mut WriteTx,
    project: &str,
    mut plan: DefinitionRow,
    mut milestones: Vec<MilestoneRow>,
    index: usize,
    limits: &Limits,
) -> Result<Milestone, ApiError> {
    let feature = plan.feature_name.clone().unwrap_or_default();
    let environment = plan.environment.clone().unwrap_or_default();
    let inputs = milestones[index]
        .strategies
        .iter()
        .map(strategy_input)
        .collect();
    strategies::replace_all(tx, project, &feature, &environment, inputs, limits).await?;
    let now = tx.now();
    let milestone = &mut milestones[index];
    milestone.started_at = Some(now);
    milestone.paused_at = None;
    milestone.progression_executed_at = None;
    store::update_milestone(tx.conn(), milestone).await?;
    plan.active_milestone_id = Some(milestone.id.clone());
    plan.progression_due_at = milestone
        .interval_minutes
        .filter(|_| index + 1 < milestones.len())
        .map(|minutes| now.plus_minutes(minutes));
    store::update_definition(tx.conn(), &plan).await?;
    let started = milestone_view(&milestones[index]);
    let data = json!({
        "releasePlanId": plan.id,
        "releasePlanName": plan.name,
        "milestoneId": started.id,
        "milestoneName": started.name,
    });
    tx.record(plan_event(
        EventType::ReleasePlanMilestoneStarted,
        project,
        &plan,
        Some(data),
        None,
    ))
    .await?;
    Ok(started)
}

fn strategy_input(strategy: &MilestoneStrategy) -> StrategyInput {
    StrategyInput {
        name: strategy.strategy_name.clone(),
        title: strategy.title.clone(),
        disabled: None,
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
