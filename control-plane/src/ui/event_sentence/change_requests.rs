//! The sentences of change requests' events: their settings per environment, a request's life (opened,
//! sent for review, approved, applied…) and the changes proposed in it ("proposed to switch dark-mode on in
//! production (change request #3)").

use super::{environment, project, text, Context};
use crate::domain::events::Event;
use maud::{html, Markup};
use serde_json::Value;

/// The sentence after "who" for a `change-*` event; `None` for other types.
pub(super) fn action(event: &Event, context: &Context) -> Option<Markup> {
    let place = html! { (environment(event)) (project(event, context)) };
    let request = request(event, context);
    let markup = match event.event_type.as_str() {
        "change-request-configuration-updated" => configuration(event, context),
        "change-request-created" => html! { "opened " (request) (place) },
        "change-request-discarded" => html! { "deleted the draft " (request) (place) },
        "change-request-sent-to-review" => html! { "sent " (request) " for review" (place) },
        "change-request-approval-added" => html! { "added an approval to " (request) (place) },
        "change-request-approved" => html! { "approved " (request) (place) },
        "change-request-rejected" => html! { "rejected " (request) (place) },
        "change-request-cancelled" => html! { "cancelled " (request) (place) },
        "change-request-applied" => html! { "applied " (request) (place) },
        "change-request-scheduled" => html! {
            "scheduled " (request) (place) " to be applied at " (at(event))
        },
        "change-request-scheduled-application-success" => html! {
            "applied " (request) (place) " on its schedule (" (at(event)) ")"
        },
        "change-request-scheduled-application-failure" => html! {
            "could not apply " (request) (place) " on its schedule (" (at(event)) "): "
            (text(event, "reason").unwrap_or_default())
        },
        "change-request-schedule-suspended" => html! {
            "suspended the schedule of " (request) (place) " (" (at(event)) "): "
            (text(event, "reason").unwrap_or_default())
        },
        "change-added" => html! {
            "proposed to " (proposal(event.data.as_ref(), event, context)) (place) " (" (request) ")"
        },
        "change-edited" => html! {
            "changed a proposal of " (request) " to: " (proposal(event.data.as_ref(), event, context)) (place)
        },
        "change-discarded" => html! {
            "withdrew the proposal to " (proposal(event.pre_data.as_ref(), event, context)) (place)
            " (" (request) ")"
        },
        _ => return None,
    };
    Some(markup)
}

/// A schedule event's `scheduledAt`, as the pages write times.
fn at(event: &Event) -> String {
    crate::ui::controls::when(&text(event, "scheduledAt").unwrap_or_default())
}

/// "change request #3", linked to its page while it exists.
fn request(event: &Event, context: &Context) -> Markup {
    let id = text(event, "changeRequestId").unwrap_or_default();
    let name = format!("change request #{id}");
    match event.project.as_deref() {
        Some(project) if event.event_type != "change-request-discarded" => {
            context.link(&format!("/projects/{project}/change-requests/{id}"), &name)
        }
        _ => html! { span.subject { (name) } },
    }
}

/// What a change (an event's `data` or `preData`: `{action, payload, feature}`) proposes, as the rest of a
/// sentence after "to": "switch dark-mode on", "add a gradual rollout of 50% to dark-mode".
fn proposal(change: Option<&Value>, event: &Event, context: &Context) -> Markup {
    let change = change.unwrap_or(&Value::Null);
    let payload = change.get("payload");
    let flag = match (
        change.get("feature").and_then(Value::as_str),
        &event.project,
    ) {
        (Some(name), Some(project)) => {
            context.link(&format!("/projects/{project}/features/{name}"), name)
        }
        (Some(name), None) => html! { span.subject { (name) } },
        (None, _) => html! { "the flag" },
    };
    let action = change.get("action").and_then(Value::as_str).unwrap_or("");
    match action {
        "updateEnabled" => {
            let on = payload.and_then(|p| p.get("enabled")) == Some(&Value::Bool(true));
            html! { "switch " (flag) @if on { " on" } @else { " off" } }
        }
        "addStrategy" => html! { "add " (super::flag::strategy(payload)) " to " (flag) },
        "updateStrategy" => html! { "change " (super::flag::strategy(payload)) " on " (flag) },
        "deleteStrategy" => html! { "remove a strategy from " (flag) },
        "reorderStrategy" => html! { "reorder the strategies of " (flag) },
        "patchVariant" => html! { "set the variants of " (flag) },
        "archiveFeature" => html! { "archive " (flag) },
        "addDependency" => {
            let parent = payload
                .and_then(|p| p.get("feature"))
                .and_then(Value::as_str)
                .unwrap_or("another flag");
            html! { "make " (flag) " depend on " span.subject { (parent) } }
        }
        "deleteDependency" => html! { "remove a dependency of " (flag) },
        "updateSegment" => {
            let name = payload.and_then(|p| p.get("name")).and_then(Value::as_str);
            html! { "change the segment " span.subject { (name.unwrap_or("")) } }
        }
        "deleteSegment" => html! { "delete a segment" },
        other => html! { "make a change (" (other) ")" },
    }
}

/// "required change requests with 2 approvals in production", "stopped requiring change requests …".
fn configuration(event: &Event, context: &Context) -> Markup {
    let value =
        |payload: &Option<Value>, name: &str| payload.as_ref().and_then(|p| p.get(name)).cloned();
    let enabled = value(&event.data, "changeRequestsEnabled") == Some(Value::Bool(true));
    let approvals = value(&event.data, "requiredApprovals")
        .and_then(|approvals| approvals.as_u64())
        .unwrap_or(1);
    let place = html! { (environment(event)) (project(event, context)) };
    html! {
        @if enabled {
            "required change requests with "
            (approvals) @if approvals == 1 { " approval" } @else { " approvals" }
            (place)
        } @else {
            "stopped requiring change requests" (place)
        }
    }
}
