//! Automatic progression of release plans: a milestone's transition condition (`intervalMinutes`) starts
//! the next milestone that long after it started. Set or removed per milestone (`PUT`/`DELETE
//! …/progressions/:sourceMilestoneId`, Unleash's routes), paused ([`pause`]: a later action or signal will
//! call it) and resumed (`POST …/progressions/:planId/resume`).
//!
//! Durable and once across replicas, as scheduled change requests are: the plan's row holds when its
//! progression is due (`progression_due_at`, set in the write that starts a milestone); `crate::scheduler`
//! reads [`due`] plans and calls [`progress`] for each in a write of its own, which claims the plan still
//! due inside the write (after the writers' lock; `FOR UPDATE SKIP LOCKED` on Postgres) and starts the next
//! milestone, moving the due time on in the same transaction: a replica that comes second finds nothing due.
//! A restart loses nothing (one due meanwhile starts at the next look). When the next milestone cannot start
//! (change requests turned on, the flag archived, a strategy no longer valid) the write is dropped and the
//! plan paused with the reason ([`settle_refused`]).

use super::plans::{self, plan_event};
use super::{ensure_no_change_requests, plan_view};
use crate::domain::events::{payload, EventType};
use crate::domain::feature_lookup::{project_of, require_in_project, require_project_environment};
use crate::domain::limits::Limits;
use crate::model::release_plan::{Discriminator, TransitionCondition};
use crate::store::release_plans::{self as store, DefinitionRow, MilestoneRow};
use crate::store::WriteTx;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// Plans read at once by the scheduler.
const DUE_BATCH: i64 = 32;

/// `PUT …/progressions/:id`'s body (`changeMilestoneProgressionSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeMilestoneProgression {
    /// The milestone after the source one.
    pub target_milestone: String,
    pub transition_condition: TransitionCondition,
}

/// A milestone's progression (`milestoneProgressionSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneProgression {
    pub source_milestone: String,
    pub target_milestone: String,
    pub transition_condition: TransitionCondition,
}

/// When the progression of the active milestone falls due: `intervalMinutes` after it started, when a
/// milestone follows and it is not paused.
fn due_time(milestones: &[MilestoneRow], active: Option<&str>) -> Option<Timestamp> {
    let index = milestones
        .iter()
        .position(|milestone| Some(milestone.id.as_str()) == active)?;
    let milestone = &milestones[index];
    if index + 1 >= milestones.len() || milestone.paused_at.is_some() {
        return None;
    }
    Some(
        milestone
            .started_at?
            .plus_minutes(milestone.interval_minutes?),
    )
}

/// The plan of the flag in the environment that holds milestone `milestone_id`, its milestones and the
/// milestone's index; 404 when none does.
async fn plan_with_milestone(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    milestone_id: &str,
) -> Result<(DefinitionRow, Vec<MilestoneRow>, usize), ApiError> {
    require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    for plan in store::plans_of(tx.conn(), feature, Some(environment)).await? {
        let milestones = store::milestones(tx.conn(), &plan.id).await?;
        if let Some(index) = milestones.iter().position(|m| m.id == milestone_id) {
            return Ok((plan, milestones, index));
        }
    }
    Err(ApiError::not_found(format!(
        "Milestone {milestone_id} is in no release plan of flag {feature} in environment {environment}"
    )))
}

/// `PUT …/progressions/:sourceMilestoneId`: the source milestone hands over to the next one (the target,
/// which must be the one after it) `intervalMinutes` after it started.
pub async fn set(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    source: &str,
    body: ChangeMilestoneProgression,
) -> Result<MilestoneProgression, ApiError> {
    ensure_no_change_requests(tx, project, environment).await?;
    let (mut plan, mut milestones, index) =
        plan_with_milestone(tx, project, feature, environment, source).await?;
    let minutes = body.transition_condition.interval_minutes;
    if minutes < 1 {
        return Err(ApiError::invalid_field(
            "transitionCondition.intervalMinutes",
            "transitionCondition.intervalMinutes: must be at least 1",
        ));
    }
    let next = milestones
        .get(index + 1)
        .map(|milestone| milestone.id.clone());
    if next.as_deref() != Some(body.target_milestone.as_str()) {
        return Err(ApiError::invalid_field(
            "targetMilestone",
            format!(
                "targetMilestone: must be the milestone after {source} ({})",
                next.as_deref().unwrap_or("it is the last one")
            ),
        ));
    }
    let before = milestones[index].interval_minutes;
    milestones[index].interval_minutes = Some(minutes);
    store::update_milestone(tx.conn(), &milestones[index]).await?;
    plan.progression_due_at = due_time(&milestones, plan.active_milestone_id.as_deref());
    store::update_definition(tx.conn(), &plan).await?;
    let progression = MilestoneProgression {
        source_milestone: source.to_owned(),
        target_milestone: body.target_milestone,
        transition_condition: body.transition_condition,
    };
    let event_type = if before.is_some() {
        EventType::MilestoneProgressionUpdated
    } else {
        EventType::MilestoneProgressionCreated
    };
    let pre_data = before.map(|minutes| json!({"sourceMilestone": source, "transitionCondition": {"intervalMinutes": minutes}}));
    tx.record(plan_event(
        event_type,
        project,
        &plan,
        Some(payload(&progression)),
        pre_data,
    ))
    .await?;
    Ok(progression)
}

/// `DELETE …/progressions/:sourceMilestoneId`: the milestone no longer hands over by itself.
pub async fn delete(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    source: &str,
) -> Result<(), ApiError> {
    let (mut plan, mut milestones, index) =
        plan_with_milestone(tx, project, feature, environment, source).await?;
    let Some(minutes) = milestones[index].interval_minutes.take() else {
        return Err(ApiError::not_found(format!(
            "Milestone {source} has no progression"
        )));
    };
    store::update_milestone(tx.conn(), &milestones[index]).await?;
    plan.progression_due_at = due_time(&milestones, plan.active_milestone_id.as_deref());
    store::update_definition(tx.conn(), &plan).await?;
    let pre_data =
        json!({"sourceMilestone": source, "transitionCondition": {"intervalMinutes": minutes}});
    tx.record(plan_event(
        EventType::MilestoneProgressionDeleted,
        project,
        &plan,
        None,
        Some(pre_data),
    ))
    .await?;
    Ok(())
}

/// Pauses the progression of plan `id`'s active milestone (`reason` recorded on the event, as a signal's
/// action or a refused progression gives it). Returns whether it paused anything (false: no such plan, no
/// milestone started, or already paused).
pub async fn pause(tx: &mut WriteTx, id: &str, reason: Option<&str>) -> Result<bool, ApiError> {
    let Some(mut plan) = store::get_definition(tx.conn(), id, Discriminator::Plan).await? else {
        return Ok(false);
    };
    let mut milestones = store::milestones(tx.conn(), id).await?;
    let Some(active) = milestones
        .iter_mut()
        .find(|milestone| Some(&milestone.id) == plan.active_milestone_id.as_ref())
        .filter(|milestone| milestone.paused_at.is_none())
    else {
        return Ok(false);
    };
    active.paused_at = Some(tx.now());
    store::update_milestone(tx.conn(), active).await?;
    plan.progression_due_at = None;
    store::update_definition(tx.conn(), &plan).await?;
    let project = project_of(tx.conn(), plan.feature_name.as_deref().unwrap_or_default()).await?;
    let data = json!({"releasePlanId": plan.id, "milestoneId": plan.active_milestone_id, "reason": reason});
    tx.record(plan_event(
        EventType::ReleasePlanProgressionsPaused,
        &project,
        &plan,
        Some(data),
        None,
    ))
    .await?;
    Ok(true)
}

/// Pauses the progression of the flag's release plan in the environment (the `PAUSE_RELEASE_PLAN` action):
/// 404 when the flag is not the project's or has no plan there; `Ok(false)` when it was paused already or no
/// milestone is started (nothing to stop).
pub async fn pause_in(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    reason: &str,
) -> Result<bool, ApiError> {
    require_in_project(tx.conn(), project, feature).await?;
    require_project_environment(tx.conn(), project, environment).await?;
    let plan = store::plans_of(tx.conn(), feature, Some(environment))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Flag {feature} has no release plan in environment {environment}"
            ))
        })?;
    pause(tx, &plan.id, Some(reason)).await
}

/// `POST …/progressions/:planId/resume`: the paused progression of the active milestone is due again at its
/// time (`intervalMinutes` after the milestone started: at once if that has passed). Nothing when not paused.
pub async fn resume(
    tx: &mut WriteTx,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<(), ApiError> {
    ensure_no_change_requests(tx, project, environment).await?;
    let (mut plan, mut milestones) =
        plans::require(tx.conn(), project, feature, environment, id).await?;
    let Some(active) = milestones
        .iter_mut()
        .find(|milestone| Some(&milestone.id) == plan.active_milestone_id.as_ref())
        .filter(|milestone| milestone.paused_at.is_some())
    else {
        return Ok(());
    };
    active.paused_at = None;
    store::update_milestone(tx.conn(), active).await?;
    plan.progression_due_at = due_time(&milestones, plan.active_milestone_id.as_deref());
    store::update_definition(tx.conn(), &plan).await?;
    let data = json!({"releasePlanId": plan.id, "milestoneId": plan.active_milestone_id});
    tx.record(plan_event(
        EventType::ReleasePlanProgressionsResumed,
        project,
        &plan,
        Some(data),
        Some(payload(&plan_view(&plan, &milestones))),
    ))
    .await?;
    Ok(())
}

/// When the next plan's progression falls due.
pub async fn next_due(conn: &mut AnyConnection) -> Result<Option<Timestamp>, ApiError> {
    Ok(store::next_due(conn).await?)
}

/// The plans whose progression is due at `now`, the earliest first (a batch).
pub async fn due(conn: &mut AnyConnection, now: Timestamp) -> Result<Vec<String>, ApiError> {
    Ok(store::due(conn, now, DUE_BATCH).await?)
}

/// What [`progress`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The next milestone started in this write: commit it.
    Started,
    /// Nothing due any more (another replica progressed it, paused, removed): drop the write.
    Gone,
    /// The next milestone cannot start: drop this write and pause the plan with [`settle_refused`].
    Refused(String),
}

/// Starts the next milestone of plan `id` if its progression is still due at the write's time, marking the
/// active one's progression executed. A store failure is an error (it stays due and is tried again).
pub async fn progress(tx: &mut WriteTx, id: &str, limits: &Limits) -> Result<Progress, ApiError> {
    let now = tx.now();
    let Some(plan) = store::claim_due(tx.conn(), id, now).await? else {
        return Ok(Progress::Gone);
    };
    let mut milestones = store::milestones(tx.conn(), id).await?;
    let Some(index) = milestones
        .iter()
        .position(|milestone| Some(&milestone.id) == plan.active_milestone_id.as_ref())
        .filter(|index| index + 1 < milestones.len())
    else {
        return Ok(Progress::Gone);
    };
    let feature = plan.feature_name.clone().unwrap_or_default();
    let environment = plan.environment.clone().unwrap_or_default();
    let attempt = async {
        let project = project_of(tx.conn(), &feature).await?;
        ensure_no_change_requests(tx, &project, &environment).await?;
        milestones[index].progression_executed_at = Some(tx.now());
        store::update_milestone(tx.conn(), &milestones[index]).await?;
        plans::start(tx, &project, plan, milestones, index + 1, limits).await?;
        Ok::<(), ApiError>(())
    };
    match attempt.await {
        Ok(()) => Ok(Progress::Started),
        Err(error) if matches!(error.kind, ErrorKind::Internal | ErrorKind::Unavailable) => {
            Err(error)
        }
        Err(error) => Ok(Progress::Refused(error.message)),
    }
}

/// Pauses plan `id` after a refused progression (if it is still due), with the reason. Returns whether it
/// did.
pub async fn settle_refused(tx: &mut WriteTx, id: &str, reason: &str) -> Result<bool, ApiError> {
    let now = tx.now();
    if store::claim_due(tx.conn(), id, now).await?.is_none() {
        return Ok(false);
    }
    pause(tx, id, Some(reason)).await
}
