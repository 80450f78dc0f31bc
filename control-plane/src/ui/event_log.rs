//! The readable form of audit events, shared by a flag's page and the event log (`/history`): each event's
//! type, place, author and time, and what it changed (`diff`: leaf by leaf, `preData` → `data`).

use super::controls::when;
use super::diff::diff_list;
use crate::domain::events::Event;
use maud::{html, Markup};

/// One event of a list: its type, where, who, when, then each changed leaf as `path: − before → + after`.
/// `about` names what the event is about where the list holds events of many things (the event log).
pub fn event_item(event: &Event, about: Option<Markup>) -> Markup {
    html! {
        li {
            strong { (event.event_type) }
            @if let Some(about) = about { " " (about) }
            @if let Some(environment) = &event.environment { " in " (environment) }
            " · by " (event.created_by) " · " time datetime=(event.created_at) { (when(&event.created_at)) }
            (diff_list(event.pre_data.as_ref(), event.data.as_ref()))
        }
    }
}
