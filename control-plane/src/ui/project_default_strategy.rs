//! The default strategy of each environment a project uses, on the project's settings page: what a flag
//! without strategies there gets when it is switched on (shown for every kind of strategy; the form sets a
//! gradual rollout: rollout, stickiness, group id). The post (`projects::save_default_strategy`) goes
//! through `project_admin::set_default_strategy`, the admin API's `POST …/environments/:env/default-strategy`;
//! a refusal draws the settings page again with what was typed.

use super::controls::field;
use super::session::{FormFields, SignedIn};
use crate::domain::access::Scope;
use crate::model::strategy::StrategyInput;
use maud::{html, Markup};
use serde_json::Value;

/// The form's route, as `ui::PERMISSIONS` lists it.
pub const FORM: &str = "/projects/{project}/environments/{environment}/default-strategy";

/// What the form held when it was refused: the environment, rollout, stickiness, group id, and the message.
#[derive(Debug, Clone, Default)]
pub struct DefaultDraft {
    pub environment: String,
    pub rollout: String,
    pub stickiness: String,
    pub group_id: String,
    pub message: String,
}

const STICKINESS: [&str; 4] = ["default", "userId", "sessionId", "random"];

fn parameter(strategy: Option<&StrategyInput>, name: &str) -> Option<String> {
    strategy
        .and_then(|strategy| strategy.parameters.as_ref())
        .and_then(|parameters| parameters.get(name))
        .map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
}

/// One environment's default strategy: a line saying what it is, and the form where the caller may set it.
pub fn section(
    who: &SignedIn,
    (project, base): (&str, &str),
    environment: &str,
    current: Option<&StrategyInput>,
    draft: Option<&DefaultDraft>,
) -> Markup {
    let draft = draft.filter(|draft| draft.environment == environment);
    let gradual = current.filter(|strategy| strategy.name == "flexibleRollout");
    let rollout = draft.map_or_else(
        || parameter(gradual, "rollout").unwrap_or_else(|| "100".to_owned()),
        |draft| draft.rollout.clone(),
    );
    let stickiness = draft.map_or_else(
        || parameter(gradual, "stickiness").unwrap_or_else(|| "default".to_owned()),
        |draft| draft.stickiness.clone(),
    );
    let group_id = draft.map_or_else(
        || parameter(gradual, "groupId").unwrap_or_default(),
        |draft| draft.group_id.clone(),
    );
    let error = draft.map(|draft| draft.message.as_str());
    let id = |what: &str| format!("default-{what}-{environment}");
    html! {
        div.default-strategy {
            h4 { "Default strategy" }
            p.default-strategy-summary {
                @match current {
                    None => { "None set: a flag switched on here without strategies gets a gradual rollout to 100 %." }
                    Some(strategy) => {
                        (strategy.title.clone().unwrap_or_else(|| strategy.name.clone()))
                        @if let Some(parameters) = strategy.parameters.as_ref().filter(|parameters| !parameters.is_empty()) {
                            " ("
                            @for (index, (name, value)) in parameters.iter().enumerate() {
                                @if index > 0 { ", " }
                                (name) " " code { (value.as_str().map_or_else(|| value.to_string(), str::to_owned)) }
                            }
                            ")"
                        }
                        @let constraints = strategy.constraints.as_ref().map_or(0, Vec::len);
                        @if constraints > 0 { ", " (constraints) " constraint(s)" }
                    }
                }
            }
            @if who.may_submit(FORM, &Scope::project(project)) {
                form.default-strategy-form method="post" action=(format!("{base}/environments/{environment}/default-strategy")) novalidate {
                    input type="hidden" name="csrf" value=(who.csrf);
                    @if let Some(message) = error {
                        p.error role="alert" { (message) }
                    }
                    (field(&id("rollout"), &format!("Rollout in {environment} (%)"), None, Some("0 to 100"), html! {
                        input id=(id("rollout")) type="number" name="rollout" min="0" max="100" step="1" value=(rollout)
                            aria-describedby=(format!("{}-hint", id("rollout")))
                            aria-invalid=(if error.is_some() { "true" } else { "false" });
                    }))
                    (field(&id("stickiness"), &format!("Stickiness in {environment}"), None, None, html! {
                        select id=(id("stickiness")) name="stickiness" {
                            @for option in STICKINESS {
                                option value=(option) selected[option == stickiness] { (option) }
                            }
                            @if !STICKINESS.contains(&stickiness.as_str()) {
                                option value=(stickiness) selected { (stickiness) }
                            }
                        }
                    }))
                    (field(&id("group"), &format!("Group id in {environment}"), None, Some("empty: the flag's name"), html! {
                        input id=(id("group")) type="text" name="groupId" value=(group_id) autocomplete="off"
                            aria-describedby=(format!("{}-hint", id("group")));
                    }))
                    div.actions { button type="submit" { "Save default strategy" } }
                }
            }
        }
    }
}

/// The form's fields (`rollout`, `stickiness`, `groupId`) as typed, for environment `environment`.
pub fn draft_of(form: &FormFields, environment: &str) -> DefaultDraft {
    DefaultDraft {
        environment: environment.to_owned(),
        rollout: form.text("rollout").trim().to_owned(),
        stickiness: form.text("stickiness").trim().to_owned(),
        group_id: form.text("groupId").trim().to_owned(),
        message: String::new(),
    }
}

/// The gradual rollout the form asks for.
pub fn input_of(draft: &DefaultDraft) -> StrategyInput {
    let mut parameters = serde_json::Map::new();
    for (name, value) in [
        ("rollout", &draft.rollout),
        ("stickiness", &draft.stickiness),
        ("groupId", &draft.group_id),
    ] {
        parameters.insert(name.to_owned(), Value::String(value.clone()));
    }
    StrategyInput {
        name: "flexibleRollout".to_owned(),
        title: None,
        disabled: None,
        sort_order: None,
        constraints: None,
        parameters: Some(parameters),
        variants: None,
        segments: None,
    }
}
