//! The sentences of release templates' and plans' events ("started the milestone Everyone of the release
//! plan Gradual for checkout in production").

use super::{environment, flag_name, project, text, Context};
use crate::domain::events::Event;
use maud::{html, Markup};

/// The sentence after "who" for a `release-plan-*` or `milestone-progression-*` event; `None` for others.
pub(super) fn action(event: &Event, context: &Context) -> Option<Markup> {
    let name = text(event, "name").unwrap_or_default();
    let template = match (text(event, "id"), event.event_type.as_str()) {
        (Some(id), kind) if kind != "release-plan-template-deleted" => {
            context.link(&format!("/release-templates/edit/{id}"), &name)
        }
        _ => html! { span.subject { (name) } },
    };
    let place = html! { " for " (flag_name(event, context)) (environment(event)) (project(event, context)) };
    let plan = text(event, "releasePlanName")
        .map(|plan| html! { " " span.subject { (plan) } })
        .unwrap_or_default();
    let markup = match event.event_type.as_str() {
        "release-plan-template-created" => html! { "created the release template " (template) },
        "release-plan-template-updated" => html! { "changed the release template " (template) },
        "release-plan-template-archived" => html! { "archived the release template " (template) },
        "release-plan-template-deleted" => html! { "deleted the release template " (template) },
        "release-plan-added" => {
            html! { "applied the release template " span.subject { (name) } (place) }
        }
        "release-plan-removed" => {
            html! { "removed the release plan " span.subject { (name) } (place) }
        }
        "release-plan-milestone-started" => html! {
            "started the milestone " span.subject { (text(event, "milestoneName").unwrap_or_default()) }
            " of the release plan" (plan) (place)
        },
        "release-plan-progressions-paused" => html! {
            "paused the release plan" (place)
            @if let Some(reason) = text(event, "reason") { ": " (reason) }
        },
        "release-plan-progressions-resumed" => html! { "resumed the release plan" (place) },
        "milestone-progression-created" | "milestone-progression-updated" => html! {
            "set a milestone of the release plan" (place) " to start the next after "
            (event.data.as_ref().and_then(|data| data["transitionCondition"]["intervalMinutes"].as_i64()).unwrap_or_default())
            " minutes"
        },
        "milestone-progression-deleted" => html! {
            "stopped a milestone of the release plan" (place) " from starting the next by itself"
        },
        _ => return None,
    };
    Some(markup)
}
