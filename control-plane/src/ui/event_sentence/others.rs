//! The sentences of events about everything but one flag: projects, environments, API tokens, segments,
//! strategy definitions, context fields, tags, integrations, settings, users and groups (change requests in
//! [`super::change_requests`]).

use super::strategy::strategy_name;
use super::{and_list, changed_fields, environment, text, words, Context};
use crate::domain::events::Event;
use maud::{html, Markup};
use serde_json::Value;

/// Fields every resource carries that say nothing of what someone changed.
const BOOKKEEPING: [&str; 7] = [
    "createdAt",
    "updatedAt",
    "createdBy",
    "seenAt",
    "featureCount",
    "projectCount",
    "userCount",
];

/// The sentence after "who" for an event not about one flag; `None` for types it does not know.
pub(super) fn action(event: &Event, context: &Context) -> Option<Markup> {
    let kind = event.event_type.as_str();
    if kind.starts_with("change-") {
        return super::change_requests::action(event, context);
    }
    if kind.starts_with("release-plan") || kind.starts_with("milestone-progression") {
        return super::release_plans::action(event, context);
    }
    let (thing, verb) = kind.rsplit_once('-')?;
    let markup = match thing {
        "project" => project_action(event, context, verb)?,
        "default-strategy" => {
            let name = project_link(event, context);
            let strategy = text(event, "name").unwrap_or_default();
            let parameters = event.data.as_ref().and_then(|data| data.get("parameters"));
            html! {
                "set the default strategy of project " (name) (environment(event))
                " to " (strategy_name(&strategy, parameters))
            }
        }
        "project-environment" => {
            let name = project_link(event, context);
            match verb {
                "added" => {
                    html! { "added the environment" (environment(event)) " to project " (name) }
                }
                "removed" => {
                    html! { "removed the environment" (environment(event)) " from project " (name) }
                }
                _ => return None,
            }
        }
        "environment" => {
            let name = html! { strong.place { (text(event, "name").or(event.environment.clone()).unwrap_or_default()) } };
            let enabled =
                |payload: &Option<Value>| payload.as_ref().and_then(|p| p.get("enabled")).cloned();
            match verb {
                "created" => html! {
                    "created the environment " (name)
                    @if let Some(kind) = text(event, "type").filter(|kind| Some(kind) != text(event, "name").as_ref()) {
                        " (" (kind) ")"
                    }
                },
                "updated" if enabled(&event.data) != enabled(&event.pre_data) => html! {
                    @if enabled(&event.data) == Some(Value::Bool(false)) { "disabled" } @else { "enabled" }
                    " the environment " (name)
                },
                "updated" => changed(event, "the environment", name),
                "deleted" => html! { "deleted the environment " (name) },
                _ => return None,
            }
        }
        "api-token" => {
            let name = text(event, "tokenName").unwrap_or_else(|| "a token".to_owned());
            let token = html! {
                (token_kind(text(event, "type").as_deref())) " "
                @if verb == "deleted" { span.subject { (name) } } @else { (context.link("/admin/api", &name)) }
            };
            let scope = match event.environment.as_deref() {
                Some("*") | None => html! {},
                Some(environment) => html! { " for " strong.place { (environment) } },
            };
            match verb {
                "created" => html! { "created the " (token) (scope) },
                "updated" => html! { "changed the expiry of the " (token) (scope) },
                "deleted" => html! { "deleted the " (token) (scope) },
                _ => return None,
            }
        }
        "segment" => {
            let name = text(event, "name").unwrap_or_else(|| "a segment".to_owned());
            let segment = match (verb, text(event, "id")) {
                ("deleted", _) | (_, None) => html! { span.subject { (name) } },
                (_, Some(id)) => context.link(&format!("/segments/edit/{id}"), &name),
            };
            created_changed_deleted(event, verb, "the segment", segment)?
        }
        "strategy" => {
            let name = text(event, "name").unwrap_or_default();
            let shown = strategy_name(&name, None);
            let strategy = match verb {
                "deleted" => html! { span.subject { (shown) } },
                _ => context.link(&format!("/strategies/edit/{name}"), &shown),
            };
            match verb {
                "deprecated" => html! { "deprecated the strategy " (strategy) },
                "reactivated" => html! { "reactivated the strategy " (strategy) },
                _ => created_changed_deleted(event, verb, "the strategy", strategy)?,
            }
        }
        "context-field" => {
            let name = text(event, "name").unwrap_or_default();
            let field = match verb {
                "deleted" => html! { span.subject { (name) } },
                _ => context.link(&format!("/context/edit/{name}"), &name),
            };
            created_changed_deleted(event, verb, "the context field", field)?
        }
        "tag-type" => {
            let name = html! { span.subject { (text(event, "name").unwrap_or_default()) } };
            created_changed_deleted(event, verb, "the tag type", name)?
        }
        "tag" => {
            let tag = super::flag::tag(event);
            created_changed_deleted(event, verb, "the tag", tag)?
        }
        "addon-config" => {
            let provider = text(event, "provider").unwrap_or_else(|| "an".to_owned());
            match verb {
                "created" => html! { "set up the " (provider) " integration" },
                "updated" => html! { "changed the " (provider) " integration" },
                "deleted" => html! { "removed the " (provider) " integration" },
                _ => return None,
            }
        }
        "application" if verb == "created" => {
            let name = text(event, "appName").unwrap_or_default();
            let path = format!(
                "/applications/{}",
                crate::domain::metrics::path_segment(&name)
            );
            let app = context.link(&path, &name);
            html! { "first saw the application " (app) }
        }
        "features" if verb == "exported" => {
            let count = event
                .data
                .as_ref()
                .and_then(|data| data["features"].as_array())
                .map_or(0, Vec::len);
            let environment = text(event, "environment").unwrap_or_default();
            html! { "exported " (count) (if count == 1 { " flag" } else { " flags" }) " from " strong.place { (environment) } }
        }
        "setting" if verb == "updated" => {
            let names = changed_fields(event, &[]);
            let names: Vec<String> = names.iter().map(|name| setting_words(name)).collect();
            html! { "changed the " (if names.is_empty() { "settings".to_owned() } else { and_list(&names) }) }
        }
        "banner" => {
            let message = text(event, "message").unwrap_or_default();
            let banner = html! { "“" (message) "”" };
            created_changed_deleted(event, verb, "the banner", banner)?
        }
        "user" => user_action(event, context, verb)?,
        "pat" => {
            let description = text(event, "description").unwrap_or_default();
            match verb {
                "created" => html! { "created the personal access token “" (description) "”" },
                "deleted" => html! { "deleted the personal access token “" (description) "”" },
                _ => return None,
            }
        }
        "service-account" => {
            let name = text(event, "username").unwrap_or_else(|| "a service account".to_owned());
            let account = match verb {
                "deleted" => html! { span.subject { (name) } },
                _ => context.link("/admin/service-accounts", &name),
            };
            created_changed_deleted(event, verb, "the service account", account)?
        }
        "public-signup-token" => {
            let name = text(event, "name").unwrap_or_default();
            let link = context.link("/admin/invite-links", &name);
            match verb {
                "created" => html! { "created the invite link " (link) },
                "updated" => html! { "changed the invite link " (link) },
                _ => return None,
            }
        }
        "public-signup-token-user" if verb == "added" => {
            let name = text(event, "name").unwrap_or_default();
            let user = text(event, "userId").unwrap_or_default();
            let user = context.link(&format!("/admin/users/{user}"), &format!("user #{user}"));
            html! { "signed up " (user) " with the invite link “" (name) "”" }
        }
        "group" => {
            let name = text(event, "name").unwrap_or_else(|| "a group".to_owned());
            let group = match (verb, text(event, "id")) {
                ("deleted", _) | (_, None) => html! { span.subject { (name) } },
                (_, Some(id)) => context.link(&format!("/admin/groups/{id}"), &name),
            };
            created_changed_deleted(event, verb, "the group", group)?
        }
        "group-user" => {
            let user = text(event, "userId").unwrap_or_default();
            let group = text(event, "groupId").unwrap_or_default();
            let user = context.link(&format!("/admin/users/{user}"), &format!("user #{user}"));
            let group = context.link(
                &format!("/admin/groups/{group}"),
                &format!("group #{group}"),
            );
            match verb {
                "added" => html! { "added " (user) " to " (group) },
                "removed" => html! { "removed " (user) " from " (group) },
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(markup)
}

/// "created the segment beta", "changed the description of the segment beta", "deleted …".
fn created_changed_deleted(event: &Event, verb: &str, what: &str, name: Markup) -> Option<Markup> {
    Some(match verb {
        "created" => html! { "created " (what) " " (name) },
        "updated" => changed(event, what, name),
        "deleted" => html! { "deleted " (what) " " (name) },
        _ => return None,
    })
}

/// "changed the description and constraints of the segment beta" (or "changed the segment beta").
fn changed(event: &Event, what: &str, name: Markup) -> Markup {
    let fields: Vec<String> = changed_fields(event, &BOOKKEEPING)
        .iter()
        .map(|field| words(field))
        .collect();
    html! {
        @if fields.is_empty() {
            "changed " (what) " " (name)
        } @else {
            "changed the " (and_list(&fields)) " of " (what) " " (name)
        }
    }
}

fn project_link(event: &Event, context: &Context) -> Markup {
    let id = event
        .project
        .clone()
        .or_else(|| text(event, "id"))
        .unwrap_or_default();
    let name = text(event, "name").unwrap_or_else(|| id.clone());
    if event.event_type == "project-deleted" {
        html! { span.subject { (name) } }
    } else {
        context.link(&format!("/projects/{id}"), &name)
    }
}

fn project_action(event: &Event, context: &Context, verb: &str) -> Option<Markup> {
    let name = project_link(event, context);
    Some(match verb {
        "created" => html! { "created the project " (name) },
        "updated" => changed(event, "the project", name),
        "deleted" => html! { "deleted the project " (name) },
        "archived" => html! { "archived the project " (name) },
        "revived" => html! { "revived the project " (name) " from the archive" },
        "favorited" => html! { "marked the project " (name) " as a favourite" },
        "unfavorited" => html! { "removed the project " (name) " from their favourites" },
        _ => return None,
    })
}

/// "user #3" when the reader may not see people's names (then their pages are closed to them too).
fn user_action(event: &Event, context: &Context, verb: &str) -> Option<Markup> {
    let id = text(event, "id").unwrap_or_default();
    let name = ["name", "username", "email"]
        .into_iter()
        .find_map(|field| text(event, field));
    let user = match (&name, verb) {
        (Some(name), "deleted") => html! { span.subject { (name) } },
        (Some(name), _) => context.link(&format!("/admin/users/{id}"), name),
        (None, _) => html! { span.subject { "user #" (id) } },
    };
    let fields: Vec<String> = changed_fields(event, &BOOKKEEPING)
        .iter()
        .map(|field| match field.as_str() {
            "rootRole" => "role".to_owned(),
            other => words(other),
        })
        .collect();
    Some(match verb {
        "created" => html! { "added the user " (user) },
        "updated" if fields.is_empty() => html! { "changed the password of " (user) },
        "updated" => html! { "changed the " (and_list(&fields)) " of " (user) },
        "deleted" => html! { "removed the user " (user) },
        _ => return None,
    })
}

/// "server SDK token", "frontend token", "admin token".
fn token_kind(kind: Option<&str>) -> &'static str {
    match kind {
        Some("client") => "server SDK token",
        Some("frontend") => "frontend token",
        Some("admin") => "admin token",
        Some("edge") => "edge token",
        _ => "API token",
    }
}

fn setting_words(name: &str) -> String {
    match name {
        "frontendApiOrigins" => "allowed frontend origins".to_owned(),
        other => words(other),
    }
}
