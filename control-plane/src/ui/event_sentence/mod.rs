//! An audit event as one line a person reads: who did what, to which flag, segment or project (linked to its
//! page), where ("anna switched dark-mode on in production", "added a gradual rollout of 50% to
//! new-checkout in development"). Every event type the control plane records has its sentence (flags' in
//! [`flag`], release plans' in [`release_plans`], the rest in [`others`]); a type it does not know reads as its name in words.

mod change_requests;
mod flag;
mod others;
mod release_plans;
pub mod strategy;

use crate::domain::events::Event;
use maud::{html, Markup};
use serde_json::Value;

/// Where the sentence is shown.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The UI's base path, for links.
    pub base: &'a str,
    /// On a flag's own page: its name is not linked, and the project goes without saying.
    pub on_flag_page: bool,
    /// On a project's own page (its overview): the project goes without saying.
    pub on_project_page: bool,
}

impl Context<'_> {
    fn link(&self, path: &str, text: &str) -> Markup {
        html! { a href=(format!("{}{path}", self.base)) { (text) } }
    }
}

/// `who` and what they did, as markup (names escaped, places linked); no time.
pub fn sentence(event: &Event, context: &Context) -> Markup {
    let action = flag::action(event, context)
        .or_else(|| others::action(event, context))
        .unwrap_or_else(|| unknown(event, context));
    html! { (actor(event)) " " (action) }
}

/// Who caused the event: a person's name, the system, or an API token's name (said to be one).
pub fn actor(event: &Event) -> Markup {
    let name = event.created_by.as_str();
    html! {
        @if name == "system" {
            span.actor { "System" }
        } @else if event.created_by_user_id <= 0 {
            span.actor { (name) } " " span.muted { "(API token)" }
        } @else {
            span.actor { (name) }
        }
    }
}

/// A type this module has no sentence for: its name in words, with the flag and place it names.
fn unknown(event: &Event, context: &Context) -> Markup {
    html! {
        "recorded “" (event.event_type.replace('-', " ")) "”"
        @if event.feature_name.is_some() { " for " (flag_name(event, context)) }
        (environment(event))
        (project(event, context))
    }
}

/// The flag the event is about, linked to its page (plain on that page itself).
fn flag_name(event: &Event, context: &Context) -> Markup {
    let name = event.feature_name.as_deref().unwrap_or("a flag");
    match (&event.project, context.on_flag_page) {
        (Some(project), false) => {
            context.link(&format!("/projects/{project}/features/{name}"), name)
        }
        _ => html! { span.subject { (name) } },
    }
}

/// " in production", when the event has an environment.
fn environment(event: &Event) -> Markup {
    html! {
        @if let Some(environment) = event.environment.as_deref().filter(|name| *name != "*") {
            " in " strong.place { (environment) }
        }
    }
}

/// " (project shop)" in the event log for things of another project than `default`; nothing on a flag's
/// page, where the project goes without saying.
fn project(event: &Event, context: &Context) -> Markup {
    html! {
        @if let Some(project) = event.project.as_deref().filter(|project| *project != "default" && !context.on_flag_page && !context.on_project_page) {
            " (project " (context.link(&format!("/projects/{project}"), project)) ")"
        }
    }
}

/// A field of the event's `data`, or else of its `preData` (what was deleted).
fn field<'a>(event: &'a Event, name: &str) -> Option<&'a Value> {
    [&event.data, &event.pre_data]
        .into_iter()
        .flatten()
        .find_map(|payload| payload.get(name).filter(|value| !value.is_null()))
}

/// A text field of the event's `data` or `preData`; numbers as their digits.
fn text(event: &Event, name: &str) -> Option<String> {
    match field(event, name)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// "1 constraint", "3 segments".
fn count(number: usize, thing: &str) -> String {
    if number == 1 {
        format!("1 {thing}")
    } else {
        format!("{number} {thing}s")
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The top-level fields whose value differs between `preData` and `data` (in `data`'s order), but for
/// `ignored` ones.
fn changed_fields(event: &Event, ignored: &[&str]) -> Vec<String> {
    let (Some(Value::Object(before)), Some(Value::Object(after))) = (&event.pre_data, &event.data)
    else {
        return Vec::new();
    };
    let mut changed: Vec<String> = Vec::new();
    for name in after.keys().chain(before.keys()) {
        if !ignored.contains(&name.as_str())
            && before.get(name) != after.get(name)
            && !changed.contains(name)
        {
            changed.push(name.clone());
        }
    }
    changed
}

/// A field's name in words: `impressionData` → "impression data", `legalValues` → "legal values".
fn words(name: &str) -> String {
    let mut words = String::new();
    for character in name.chars() {
        if character.is_uppercase() && !words.is_empty() {
            words.push(' ');
        }
        words.extend(character.to_lowercase());
    }
    words.replace(['-', '_'], " ")
}

#[cfg(test)]
mod tests {
    use super::{and_list, words};

    #[test]
    fn lists_and_names_read_as_words() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["a".to_owned()]), "a");
        assert_eq!(
            and_list(&["a".to_owned(), "b".to_owned(), "c".to_owned()]),
            "a, b and c"
        );
        assert_eq!(words("impressionData"), "impression data");
        assert_eq!(words("frontendApiOrigins"), "frontend api origins");
    }
}
