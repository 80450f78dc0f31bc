//! What the access pages (API tokens, users, groups, profile) share: the root-role choice.

use crate::domain::roles::RootRole;
use maud::{html, Markup};

/// The options of a root-role select, `current` selected (by id).
pub fn role_options(current: Option<i64>) -> Markup {
    html! {
        @for role in RootRole::ALL {
            option value=(role.id()) selected[current == Some(role.id())] { (role.name()) }
        }
    }
}

/// The root role's name of an id as stored.
pub fn role_name(id: i64) -> &'static str {
    RootRole::from_id(id)
        .map(RootRole::name)
        .unwrap_or("Unknown")
}
