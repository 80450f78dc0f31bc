//! The "Schedule" section of a change request's page (markup only; its post is `change_requests`'): on an
//! Approved request, a form to apply it at a date and time (UTC); on a Scheduled one, when, by whom and how
//! it stands (pending, failed or suspended with the reason), "Reschedule" and "Cancel schedule"; on one its
//! schedule applied, when that happened.

use super::controls::field;
use super::session::SignedIn;
use crate::domain::access::Scope;
use crate::domain::change_requests::{ChangeRequest, ScheduleRecord};
use crate::model::change_request::{ChangeRequestState, ScheduleStatus};
use crate::time::Timestamp;
use chrono::{NaiveDateTime, TimeZone, Utc};
use maud::{html, Markup};

/// The form's control.
pub const FIELD_ID: &str = "scheduled-at";

/// What the section shows besides the request: its schedule, whether the caller may schedule it now (the
/// state machine's answer), and the form as typed with its error after a refusal.
pub struct ScheduleSection<'a> {
    pub request: &'a ChangeRequest,
    pub schedule: Option<&'a ScheduleRecord>,
    pub may_schedule: bool,
    pub typed: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// `2026-11-26 10:05:30 UTC`.
pub fn utc(at: Timestamp) -> String {
    chrono::DateTime::from_timestamp_millis(at.millis())
        .map(|at| at.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| at.to_string())
}

/// The value of a `datetime-local` control for `at`, in UTC, to the second.
fn local_value(at: Timestamp) -> String {
    chrono::DateTime::from_timestamp_millis(at.millis())
        .map(|at| at.format("%Y-%m-%dT%H:%M:%S").to_string())
        .unwrap_or_default()
}

/// What a `datetime-local` control sent (`2026-11-26T10:05` or with seconds), read as UTC, in RFC 3339;
/// anything else is passed on as typed, for the API's refusal to name.
pub fn scheduled_at(typed: &str) -> String {
    let typed = typed.trim();
    [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S%.f",
    ]
    .iter()
    .find_map(|format| NaiveDateTime::parse_from_str(typed, format).ok())
    .map(|at| Utc.from_utc_datetime(&at).to_rfc3339())
    .unwrap_or_else(|| typed.to_owned())
}

fn form(who: &SignedIn, base: &str, section: &ScheduleSection<'_>, button: &str) -> Markup {
    let value = section
        .typed
        .map(str::to_owned)
        .or_else(|| section.schedule.map(|s| local_value(s.scheduled_at)))
        .unwrap_or_default();
    let hint = format!(
        "In UTC (Coordinated Universal Time), not your own time zone: it is {} now.",
        utc(Timestamp::now())
    );
    html! {
        form.form-narrow method="post" action=(format!("{base}/schedule")) {
            input type="hidden" name="csrf" value=(who.csrf);
            (field(FIELD_ID, "Date and time (UTC)", section.error, Some(&hint), html! {
                input #(FIELD_ID) type="datetime-local" name="scheduledAt" step="1" required value=(value)
                    aria-describedby=(format!("{FIELD_ID}-hint {FIELD_ID}-error"))
                    aria-invalid[section.error.is_some()];
            }))
            div.actions { button.primary type="submit" { (button) } }
        }
    }
}

/// The section, or nothing where there is no schedule to show or make.
pub fn section(who: &SignedIn, base: &str, section: ScheduleSection<'_>) -> Markup {
    let request = section.request;
    let scheduled = request.state == ChangeRequestState::Scheduled;
    let applied = section
        .schedule
        .filter(|schedule| schedule.status == ScheduleStatus::Applied);
    let offered = section.may_schedule
        && who.may_submit(
            "/projects/{project}/change-requests/{id}/schedule",
            &Scope::project(&request.project),
        );
    if !scheduled && applied.is_none() && !offered {
        return html! {};
    }
    html! {
        section.card aria-labelledby="schedule-title" {
            h2 #schedule-title { "Schedule" }
            @if let Some(schedule) = applied {
                p {
                    "Applied on schedule at " strong { (utc(schedule.updated_at)) }
                    " (scheduled for " (utc(schedule.scheduled_at)) " by " (schedule.scheduled_by) ")."
                }
            } @else if scheduled {
                @if let Some(schedule) = section.schedule {
                    @match schedule.status {
                        ScheduleStatus::Failed => p.error-box {
                            strong { "The schedule failed" } " at " (utc(schedule.updated_at))
                            " (it was set for " (utc(schedule.scheduled_at)) " by " (schedule.scheduled_by) "): "
                            (schedule.reason.as_deref().unwrap_or("")) " Reschedule it, apply it now, or cancel it."
                        },
                        ScheduleStatus::Suspended => p.error-box {
                            strong { "The schedule is suspended" } " (it was set for " (utc(schedule.scheduled_at))
                            " by " (schedule.scheduled_by) "): " (schedule.reason.as_deref().unwrap_or(""))
                            " Reschedule it to apply it as yourself, apply it now, or cancel it."
                        },
                        _ => p {
                            "To be applied at " strong { (utc(schedule.scheduled_at)) } ", as "
                            (schedule.scheduled_by) ", who scheduled it."
                        },
                    }
                }
                @if offered {
                    (form(who, base, &section, "Reschedule"))
                    form.actions method="post" action=(format!("{base}/state")) {
                        input type="hidden" name="csrf" value=(who.csrf);
                        button.danger type="submit" name="state" value=(ChangeRequestState::Cancelled.as_str())
                            aria-describedby="cancel-schedule-note" { "Cancel schedule" }
                    }
                    p.muted #cancel-schedule-note {
                        "Cancelling the schedule cancels the request, as in Unleash: a scheduled request does not go back to Approved."
                    }
                }
            } @else {
                p { "Apply this request automatically at a set time instead of now." }
                (form(who, base, &section, "Schedule"))
            }
        }
    }
}
