//! Scheduled change requests: an Approved request scheduled for a time (`PUT …/state` with `Scheduled` and
//! `scheduledAt`), moved, listed, and applied at its time by the control plane itself (`crate::scheduler`
//! calls [`due`], then [`apply_scheduled`] for each in a write of its own, as the one who scheduled it).
//!
//! Once across replicas: [`apply_scheduled`] re-reads the schedule inside its write (which already holds the
//! writers' lock: the revision row on Postgres, the one writer connection on SQLite), pending and due, locked
//! `FOR UPDATE SKIP LOCKED` on Postgres, and marks it applied in the same transaction as the changes and their
//! events; a replica that comes second finds it no longer pending and writes nothing. When the request cannot
//! be applied, that write is dropped and [`settle_refused`] records the outcome in another one, again only if
//! the schedule is still pending: `failed` (a change cannot be applied: the flag archived, a strategy gone…)
//! or `suspended` (the one who scheduled it was deleted or may no longer apply it), with the reason and its
//! event. The request stays Scheduled then, to be rescheduled, applied, rejected or cancelled.

use super::applying::apply_all;
use super::{request_event, set_state, Schedule, ScheduledChangeRequest, ScheduledQuery};
use crate::domain::access::{self, Credential, Scope, Who};
use crate::domain::events::EventType;
use crate::domain::limits::Limits;
use crate::domain::permissions::Permission;
use crate::domain::roles::RootRole;
use crate::model::change_request::{Change, ChangeRequestState, ScheduleStatus};
use crate::store::change_request_schedules::{self as schedule_store, ScheduleRow};
use crate::store::change_requests::{self as store, ChangeRequestRow};
use crate::store::users::{self as user_store, Account};
use crate::store::{Actor, WriteTx};
use crate::time::Timestamp;
use serde_json::{json, Value};
use sqlx::AnyConnection;
use vexil_shared::{ApiError, ErrorKind};

/// Schedules read at once by the scheduler.
const DUE_BATCH: i64 = 32;

/// `Scheduled` with `scheduledAt`: the request (Approved, or Scheduled: a new time) is to be applied at that
/// time, in the future, as the caller. Records `change-request-scheduled` (its `preData`: the time it had).
pub(super) async fn schedule(
    tx: &mut WriteTx,
    row: &mut ChangeRequestRow,
    scheduled_at: Option<&str>,
    data: Value,
) -> Result<(), ApiError> {
    let text = scheduled_at.ok_or_else(|| {
        ApiError::invalid_field(
            "scheduledAt",
            "scheduledAt: required with the state Scheduled",
        )
    })?;
    let at = Timestamp::parse(text).map_err(|error| {
        ApiError::invalid_field(
            "scheduledAt",
            format!("scheduledAt: {text:?} is not an RFC 3339 date-time ({error})"),
        )
    })?;
    if at <= tx.now() {
        return Err(ApiError::invalid_field(
            "scheduledAt",
            format!(
                "scheduledAt: {at} is not in the future (it is {} now)",
                tx.now()
            ),
        ));
    }
    let before = schedule_store::get(tx.conn(), row.id)
        .await?
        .filter(|_| row.state == ChangeRequestState::Scheduled);
    let actor = tx.actor().clone();
    let schedule = ScheduleRow {
        change_request_id: row.id,
        scheduled_at: at,
        status: ScheduleStatus::Pending,
        reason: None,
        scheduled_by: actor.name,
        scheduled_by_user_id: actor.user_id,
        updated_at: tx.now(),
    };
    schedule_store::put(tx.conn(), &schedule).await?;
    if row.state != ChangeRequestState::Scheduled {
        set_state(tx, row, ChangeRequestState::Scheduled).await?;
    }
    let mut data = data;
    data["scheduledAt"] = at.to_string().into();
    let pre_data = before.map(|before| {
        json!({"scheduledAt": before.scheduled_at.to_string(), "status": before.status.as_str()})
    });
    tx.record(request_event(
        EventType::ChangeRequestScheduled,
        row,
        data,
        pre_data,
    ))
    .await?;
    Ok(())
}

/// The schedule the API shows: a Scheduled request's, else none.
pub(super) async fn shown(
    conn: &mut AnyConnection,
    row: &ChangeRequestRow,
) -> Result<Option<Schedule>, ApiError> {
    if row.state != ChangeRequestState::Scheduled {
        return Ok(None);
    }
    Ok(schedule_store::get(conn, row.id)
        .await?
        .map(|schedule| Schedule {
            scheduled_at: schedule.scheduled_at.to_string(),
            status: schedule.status,
            reason: schedule.reason,
        }))
}

/// A request's schedule as its page shows it, whatever its status (an applied one's too).
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRecord {
    pub scheduled_at: Timestamp,
    pub status: ScheduleStatus,
    pub reason: Option<String>,
    /// Who scheduled it.
    pub scheduled_by: String,
    /// When it was scheduled or, once settled, when it was applied, failed or was suspended.
    pub updated_at: Timestamp,
}

/// The schedule of request `id` of `project`, if it has one (none once it left Scheduled other than by its
/// schedule being applied).
pub async fn schedule_of(
    conn: &mut AnyConnection,
    project: &str,
    id: i64,
) -> Result<Option<ScheduleRecord>, ApiError> {
    super::require(conn, project, id).await?;
    Ok(schedule_store::get(conn, id)
        .await?
        .map(|schedule| ScheduleRecord {
            scheduled_at: schedule.scheduled_at,
            status: schedule.status,
            reason: schedule.reason,
            scheduled_by: schedule.scheduled_by,
            updated_at: schedule.updated_at,
        }))
}

/// `GET …/change-requests/scheduled`: the project's Scheduled requests still pending, the earliest first,
/// those matching `query` (all of them for an empty query: a Vexil extension; Unleash answers none).
pub async fn scheduled(
    conn: &mut AnyConnection,
    project: &str,
    query: &ScheduledQuery,
) -> Result<Vec<ScheduledChangeRequest>, ApiError> {
    crate::domain::projects::require(conn, project).await?;
    let everything = query.features.is_empty()
        && query.strategy_ids.is_empty()
        && query.variants_for_flags.is_empty();
    let mut found = Vec::new();
    for id in schedule_store::pending_of_project(conn, project).await? {
        let Some(row) = store::get(conn, id).await? else {
            continue;
        };
        let changes = store::changes(conn, id).await?;
        let matches = everything
            || changes.iter().any(|change| {
                let feature = change.feature.as_deref().unwrap_or_default();
                let strategy = match &change.change {
                    Change::UpdateStrategy(update) => Some(update.id.to_string()),
                    Change::DeleteStrategy { id } => Some(id.to_string()),
                    _ => None,
                };
                query.features.iter().any(|name| name == feature)
                    || strategy.is_some_and(|strategy| {
                        query
                            .strategy_ids
                            .iter()
                            .any(|id| id.eq_ignore_ascii_case(&strategy))
                    })
                    || (matches!(change.change, Change::PatchVariant { .. })
                        && query.variants_for_flags.iter().any(|name| name == feature))
            });
        if matches {
            found.push(ScheduledChangeRequest {
                id: row.id,
                environment: row.environment,
                title: row.title,
            });
        }
    }
    Ok(found)
}

/// When the next pending schedule falls due.
pub async fn next_due(conn: &mut AnyConnection) -> Result<Option<Timestamp>, ApiError> {
    Ok(schedule_store::next_due(conn).await?)
}

/// A schedule due now: the request, and who scheduled it (the actor of its application).
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    pub id: i64,
    pub actor: Actor,
}

/// The pending schedules due at `now`, the earliest first (a batch).
pub async fn due(conn: &mut AnyConnection, now: Timestamp) -> Result<Vec<Due>, ApiError> {
    Ok(schedule_store::due(conn, now, DUE_BATCH)
        .await?
        .into_iter()
        .map(|schedule| Due {
            id: schedule.change_request_id,
            actor: Actor {
                name: schedule.scheduled_by,
                user_id: schedule.scheduled_by_user_id,
            },
        })
        .collect())
}

/// Why a schedule did not apply: `failed` or `suspended`, and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: ScheduleStatus,
    pub reason: String,
}

/// What [`apply_scheduled`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// Applied in this write: commit it.
    Applied,
    /// Nothing to do (applied or settled by another replica, moved, cancelled): drop the write.
    Gone,
    /// Not applicable: drop this write (it may hold part of the changes) and record the refusal with
    /// [`settle_refused`] in another one.
    Refused(Refusal),
}

/// Applies request `id` on its schedule, in `tx` (begun as the one who scheduled it): only if its schedule
/// is still pending and due at the write's time. Every change runs through its own domain function, as a
/// manual apply does, with `change-request-applied` and `change-request-scheduled-application-success`.
/// A store failure is an error (the schedule stays pending and is tried again).
pub async fn apply_scheduled(
    tx: &mut WriteTx,
    id: i64,
    limits: &Limits,
) -> Result<Attempt, ApiError> {
    let now = tx.now();
    let Some(schedule) = schedule_store::claim(tx.conn(), id, now).await? else {
        return Ok(Attempt::Gone);
    };
    let Some(mut row) = store::get(tx.conn(), id)
        .await?
        .filter(|row| row.state == ChangeRequestState::Scheduled)
    else {
        return Ok(Attempt::Gone);
    };
    if let Some(reason) = scheduler_may_not_apply(tx.conn(), &schedule, &row).await? {
        return Ok(Attempt::Refused(Refusal {
            status: ScheduleStatus::Suspended,
            reason,
        }));
    }
    // Marked applied first: leaving the Scheduled state forgets any schedule that is not applied.
    if !schedule_store::settle(tx.conn(), id, ScheduleStatus::Applied, None, now).await? {
        return Ok(Attempt::Gone);
    }
    let changes = store::changes(tx.conn(), id).await?;
    let data = json!({"changeRequestId": id, "scheduledAt": schedule.scheduled_at.to_string()});
    match apply_all(tx, &mut row, &changes, limits, data.clone()).await {
        Ok(()) => {}
        Err(error) if matches!(error.kind, ErrorKind::Internal | ErrorKind::Unavailable) => {
            return Err(error)
        }
        Err(error) => {
            return Ok(Attempt::Refused(Refusal {
                status: ScheduleStatus::Failed,
                reason: error.message,
            }))
        }
    }
    tx.record(request_event(
        EventType::ChangeRequestScheduledApplicationSuccess,
        &row,
        data,
        None,
    ))
    .await?;
    Ok(Attempt::Applied)
}

/// Records a refused schedule of request `id` (if it is still pending): its status and reason, and
/// `change-request-scheduled-application-failure` or `change-request-schedule-suspended`. Returns whether
/// it did.
pub async fn settle_refused(
    tx: &mut WriteTx,
    id: i64,
    refusal: &Refusal,
) -> Result<bool, ApiError> {
    let now = tx.now();
    let Some(schedule) = schedule_store::claim(tx.conn(), id, now).await? else {
        return Ok(false);
    };
    let Some(row) = store::get(tx.conn(), id).await? else {
        return Ok(false);
    };
    let reason = Some(refusal.reason.as_str());
    if !schedule_store::settle(tx.conn(), id, refusal.status, reason, now).await? {
        return Ok(false);
    }
    let event_type = if refusal.status == ScheduleStatus::Suspended {
        EventType::ChangeRequestScheduleSuspended
    } else {
        EventType::ChangeRequestScheduledApplicationFailure
    };
    let data = json!({
        "changeRequestId": id,
        "scheduledAt": schedule.scheduled_at.to_string(),
        "reason": refusal.reason,
        "scheduledBy": {"id": schedule.scheduled_by_user_id, "username": schedule.scheduled_by},
    });
    tx.record(request_event(event_type, &row, data, None))
        .await?;
    Ok(true)
}

/// Whether the one who scheduled a request may still apply it, as the admin API's permission rule would
/// decide for them now: `Some(reason)` when not (deleted, deactivated, or their role no longer allows it).
/// An API token has no account to lose: its schedule applies. Otherwise the scheduler must still hold
/// `APPLY_CHANGE_REQUEST` in the request's environment, as `access::authorize` decides now.
async fn scheduler_may_not_apply(
    conn: &mut AnyConnection,
    schedule: &ScheduleRow,
    request: &ChangeRequestRow,
) -> Result<Option<String>, ApiError> {
    let id = schedule.scheduled_by_user_id;
    if id == Actor::ADMIN_TOKEN_USER_ID {
        return Ok(None);
    }
    let (credential, grants) = match user_store::get_of(conn, id, Account::Person).await? {
        Some(person) if person.active => {
            let caller = access::caller(conn, person).await?;
            (caller.credential, caller.grants)
        }
        Some(_) => {
            return Ok(Some(format!(
            "The user who scheduled this change request ({}, user id {id}) has been deactivated",
            schedule.scheduled_by
        )))
        }
        None => match user_store::get_of(conn, id, Account::Service).await? {
            Some(service) => {
                let role = RootRole::from_id(service.root_role).unwrap_or(RootRole::Viewer);
                let grants = access::grants_of_user(conn, id, service.root_role, role).await?;
                (Credential::ServiceAccount(role), grants)
            }
            None => {
                return Ok(Some(format!(
                "The user who scheduled this change request ({}, user id {id}) has been deleted",
                schedule.scheduled_by
            )))
            }
        },
    };
    let who = Who {
        credential,
        grants: &grants,
    };
    let scope = Scope::environment(&request.project_id, &request.environment);
    Ok(who
        .require(Permission::ApplyChangeRequest, scope)
        .err()
        .map(|refusal| {
            format!(
                "The user who scheduled this change request ({}, user id {id}) may no longer apply it: {}",
                schedule.scheduled_by, refusal.message
            )
        }))
}
