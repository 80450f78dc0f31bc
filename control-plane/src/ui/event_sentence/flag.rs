//! The sentences of events about one flag: its creation and settings, its switch, strategies and variants
//! per environment, its tags and dependencies, and imports into a project.

use super::strategy::{rollout_of, strategy_phrase};
use super::{
    and_list, changed_fields, count, environment, field, flag_name, project, text, words, Context,
};
use crate::domain::events::Event;
use maud::{html, Markup};
use serde_json::Value;

/// The sentence after "who" for a flag's event; `None` for other types.
pub(super) fn action(event: &Event, context: &Context) -> Option<Markup> {
    let flag = flag_name(event, context);
    let place = html! { (environment(event)) (project(event, context)) };
    let plain = html! { span.subject { (event.feature_name.as_deref().unwrap_or("a flag")) } };
    let markup = match event.event_type.as_str() {
        "feature-created" => {
            let kind = text(event, "type").filter(|kind| kind != "release");
            html! {
                "created the " @if let Some(kind) = kind { (words(&kind)) " " } "flag " (flag) (place)
            }
        }
        // A link added, changed or removed (`domain::feature_links`: `{link}` before and after).
        "feature-metadata-updated" if link_of(event.data.as_ref()).is_some() => {
            let link = |data: Option<&Value>| {
                link_of(data).filter(|link| !link.is_null()).map(|link| {
                    let title = link.get("title").and_then(Value::as_str);
                    let url = link.get("url").and_then(Value::as_str);
                    title.or(url).unwrap_or("a link").to_owned()
                })
            };
            match (link(event.pre_data.as_ref()), link(event.data.as_ref())) {
                (None, Some(added)) => {
                    html! { "linked " (flag) " to " span.subject { (added) } (place) }
                }
                (Some(removed), None) => {
                    html! { "removed the link " span.subject { (removed) } " from " (flag) (place) }
                }
                (_, _) => html! { "changed a link of " (flag) (place) },
            }
        }
        "feature-metadata-updated" => {
            let ignored = ["createdAt", "archivedAt", "archived", "stale"];
            let changed: Vec<String> = changed_fields(event, &ignored)
                .iter()
                .map(|name| words(name))
                .collect();
            html! {
                @if changed.is_empty() {
                    "edited the settings of " (flag) (place)
                } @else {
                    "changed the " (and_list(&changed)) " of " (flag) (place)
                }
            }
        }
        // A flag type's lifetime (no flag).
        "feature-type-updated" if event.feature_name.is_none() => {
            let name = text(event, "name").unwrap_or_else(|| "a flag type".to_owned());
            match event
                .data
                .as_ref()
                .and_then(|data| data.get("lifetimeDays"))
                .and_then(Value::as_i64)
            {
                Some(days) => {
                    html! { "set the expected lifetime of " (name) " flags to " (count(usize::try_from(days).unwrap_or(0), "day")) }
                }
                None => html! { "set " (name) " flags to never become potentially stale" },
            }
        }
        "feature-type-updated" => {
            let before = event.pre_data.as_ref().and_then(|data| data.get("type"));
            let after = event.data.as_ref().and_then(|data| data.get("type"));
            html! {
                "changed the type of " (flag) (place)
                @if let (Some(Value::String(before)), Some(Value::String(after))) = (before, after) {
                    " from " (words(before)) " to " (words(after))
                }
            }
        }
        "feature-stale-on" => html! { "marked " (flag) " as stale" (place) },
        "feature-stale-off" => html! { "marked " (flag) " as no longer stale" (place) },
        "feature-archived" => html! { "archived " (plain) (place) },
        "feature-project-change" => html! {
            "moved " (flag) " from project " strong.place { (text(event, "oldProject").unwrap_or_default()) }
            " to " strong.place { (text(event, "newProject").unwrap_or_default()) }
        },
        "feature-revived" => html! { "revived " (flag) " from the archive" (place) },
        "feature-deleted" => html! { "deleted " (plain) " for good" (place) },
        "feature-environment-enabled" => html! { "switched " (flag) " on" (place) },
        "feature-environment-disabled" => html! { "switched " (flag) " off" (place) },
        "feature-strategy-add" => {
            html! { "added " (strategy(event.data.as_ref())) " to " (flag) (place) }
        }
        "feature-strategy-update" => strategy_update(event, flag, place),
        "feature-strategy-remove" => {
            html! { "removed " (strategy(event.pre_data.as_ref())) " from " (flag) (place) }
        }
        "strategy-order-changed" => html! { "reordered the strategies of " (flag) (place) },
        "feature-environment-variants-updated" => {
            let names = variant_names(event.data.as_ref());
            html! {
                @if names.is_empty() {
                    "removed the variants of " (flag) (place)
                } @else {
                    "set the variants of " (flag) (place) " to " (and_list(&names))
                }
            }
        }
        "feature-completed" => {
            let status = text(event, "status").unwrap_or_else(|| "kept".to_owned());
            html! { "marked " (flag) " completed (" (status) ")" (place) }
        }
        "feature-uncompleted" => html! { "marked " (flag) " as no longer completed" (place) },
        "feature-potentially-stale-on" => {
            html! { "found " (flag) " potentially stale: older than its type's expected lifetime" (place) }
        }
        "feature-favorited" => html! { "marked " (flag) " as a favourite" (place) },
        "feature-unfavorited" => html! { "removed " (flag) " from their favourites" (place) },
        "feature-tagged" => html! { "tagged " (flag) " with " (tag(event)) (place) },
        "feature-untagged" => html! { "removed the tag " (tag(event)) " from " (flag) (place) },
        "feature-dependency-added" => dependency_added(event, context, flag, place),
        "feature-dependency-removed" => {
            let parent = parent(event, context);
            html! { "removed the dependency of " (flag) " on " (parent) (place) }
        }
        "feature-dependencies-removed" => {
            html! { "removed every dependency of " (flag) (place) }
        }
        "features-imported" => imported(event, context),
        _ => return None,
    };
    Some(markup)
}

/// A strategy (an event's `data` or `preData`) as the object of a sentence, with its constraints and
/// segments counted: "a gradual rollout of 50% with 1 constraint".
pub(super) fn strategy(strategy: Option<&Value>) -> String {
    let Some(strategy) = strategy else {
        return "a strategy".to_owned();
    };
    let name = strategy.get("name").and_then(Value::as_str).unwrap_or("");
    let mut phrase = strategy_phrase(name, strategy.get("parameters"));
    let counted: Vec<String> = [("constraints", "constraint"), ("segments", "segment")]
        .into_iter()
        .filter_map(|(field, thing)| {
            let number = strategy.get(field).and_then(Value::as_array)?.len();
            (number > 0).then(|| count(number, thing))
        })
        .collect();
    if !counted.is_empty() {
        phrase.push_str(" with ");
        phrase.push_str(&and_list(&counted));
    }
    if let Some(title) = strategy.get("title").and_then(Value::as_str) {
        if !title.trim().is_empty() {
            phrase.push_str(&format!(" (“{}”)", title.trim()));
        }
    }
    phrase
}

/// "changed the gradual rollout of new-checkout in production from 50% to 75%", or which parts of a
/// strategy changed.
fn strategy_update(event: &Event, flag: Markup, place: Markup) -> Markup {
    let (before, after) = (event.pre_data.as_ref(), event.data.as_ref());
    let name_of = |strategy: Option<&Value>| {
        strategy
            .and_then(|strategy| strategy.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let rollout = |strategy: Option<&Value>| {
        rollout_of(
            &name_of(strategy),
            strategy.and_then(|s| s.get("parameters")),
        )
    };
    let disabled = |strategy: Option<&Value>| {
        strategy
            .and_then(|strategy| strategy.get("disabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let parts: Vec<String> = changed_fields(event, &["disabled", "sortOrder"])
        .iter()
        .map(|name| words(name))
        .collect();
    match (rollout(before), rollout(after)) {
        (Some(old), Some(new)) if old != new && name_of(before) == name_of(after) => {
            let also: Vec<&String> = parts.iter().filter(|part| *part != "parameters").collect();
            html! {
                "changed the gradual rollout of " (flag) (place) " from " (old) " to " (new)
                @if !also.is_empty() {
                    " (and its " (and_list(&also.into_iter().cloned().collect::<Vec<_>>())) ")"
                }
            }
        }
        _ if disabled(before) != disabled(after) => html! {
            @if disabled(after) { "paused " } @else { "resumed " }
            (strategy(after)) " on " (flag) (place)
        },
        _ if parts.is_empty() => html! { "changed " (strategy(after)) " on " (flag) (place) },
        _ => html! {
            "changed the " (and_list(&parts)) " of " (strategy(after)) " on " (flag) (place)
        },
    }
}

fn variant_names(variants: Option<&Value>) -> Vec<String> {
    variants
        .and_then(|data| data.get("variants"))
        .and_then(Value::as_array)
        .map(|variants| {
            variants
                .iter()
                .filter_map(|variant| variant.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A tag as its chip reads: "simple: beta".
pub(super) fn tag(event: &Event) -> Markup {
    let (kind, value) = (text(event, "type"), text(event, "value"));
    html! {
        span.tag-name {
            @if let Some(kind) = kind { (kind) ": " }
            (value.unwrap_or_default())
        }
    }
}

/// The parent flag of a dependency event (same project as the child), linked.
fn parent(event: &Event, context: &Context) -> Markup {
    let name = text(event, "feature").unwrap_or_else(|| "another flag".to_owned());
    match &event.project {
        Some(project) => context.link(&format!("/projects/{project}/features/{name}"), &name),
        None => html! { span.subject { (name) } },
    }
}

/// "made checkout depend on payments being off" / "… on payments (variant a or b)".
fn dependency_added(event: &Event, context: &Context, flag: Markup, place: Markup) -> Markup {
    let enabled = field(event, "enabled").and_then(Value::as_bool) != Some(false);
    let variants = field(event, "variants")
        .and_then(Value::as_array)
        .map(|variants| {
            variants
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    html! {
        "made " (flag) " depend on " (parent(event, context))
        @if !enabled { " being off" }
        @if !variants.is_empty() { " (variant " (variants.join(" or ")) ")" }
        (place)
    }
}

/// "imported 2 new flags and changes to 1 flag into production (project shop)".
fn imported(event: &Event, context: &Context) -> Markup {
    let number = |name: &str| {
        field(event, name)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    let mut parts = Vec::new();
    let created = number("createdFeatures");
    if created > 0 {
        parts.push(format!("{} created", count(created, "flag")));
    }
    let changed = number("updatedFeatures") + number("changedConfigurations");
    if changed > 0 {
        parts.push(format!("{} changed", count(changed, "flag")));
    }
    let project_name = event.project.as_deref().unwrap_or("default");
    html! {
        "imported flags into "
        (context.link(&format!("/projects/{project_name}"), project_name))
        (environment(event))
        @if !parts.is_empty() { ": " (and_list(&parts)) }
    }
}

/// The `link` of a link event's data or pre-data (`null` when removed), if it is one.
fn link_of(data: Option<&Value>) -> Option<&Value> {
    data.and_then(|data| data.get("link"))
}
