//! The playground (`/playground`): a context form (environment, the standard fields, projects, properties
//! as name/value rows) and, for it, every flag's answer, its variant and per strategy what decided it, from
//! `domain::playground::evaluate` (what `POST /api/admin/playground` answers, the engine's explanation).
//!
//! The form is a GET: evaluating changes nothing, so the answer is a page like any other, linkable and
//! reloadable, and needs no CSRF token. "Add property" submits the same form back with one more row, so it
//! works without JavaScript.

use super::controls::field;
use super::page::{Page, UiError};
use super::session::{FormFields, SignedIn};
use super::vocabulary::{field_label, strategy_heading, strategy_summary, Said, StrategyNames};
use crate::domain::playground::{
    self, PlaygroundConstraint, PlaygroundFeature, PlaygroundPage, PlaygroundRequest,
    PlaygroundStrategy,
};
use crate::domain::{environments, projects, strategy_definitions};
use crate::http::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use serde_json::{Map, Value};
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/playground", get(page))
}

/// Flags per page of the answer.
const PAGE_SIZE: usize = 50;

/// The standard context fields: (query name, label, hint).
const CONTEXT_FIELDS: [(&str, &str, Option<&str>); 5] = [
    ("userId", "User ID", None),
    ("sessionId", "Session ID", None),
    ("remoteAddress", "IP address", Some("e.g. 192.0.2.10")),
    ("appName", "Application", None),
    (
        "currentTime",
        "Current time",
        Some("RFC 3339, e.g. 2026-11-24T12:00:00Z; empty: now"),
    ),
];

/// The form as submitted (or its defaults on a first visit).
struct ContextForm {
    environment: String,
    /// The standard fields' values, in [`CONTEXT_FIELDS`] order.
    values: Vec<String>,
    projects: Vec<String>,
    properties: Vec<(String, String)>,
    /// Whether the last row was just added ("Add property"): it takes the focus.
    added_row: bool,
    evaluate: bool,
    page: usize,
}

impl ContextForm {
    fn of(fields: &FormFields, first_environment: &str) -> ContextForm {
        let names = fields.all("propertyName");
        let values = fields.all("propertyValue");
        let mut properties: Vec<(String, String)> = names
            .iter()
            .enumerate()
            .map(|(index, name)| {
                let value = values.get(index).copied().unwrap_or_default();
                ((*name).to_owned(), value.to_owned())
            })
            .collect();
        let action = fields.get("action").unwrap_or_default();
        if action == "add" {
            properties.push((String::new(), String::new()));
        }
        let first_visit = fields.0.is_empty();
        ContextForm {
            environment: fields
                .get("environment")
                .unwrap_or(first_environment)
                .to_owned(),
            values: CONTEXT_FIELDS
                .iter()
                .map(|(name, _, _)| match (*name, first_visit) {
                    ("appName", true) => "playground".to_owned(),
                    _ => fields.text(name),
                })
                .collect(),
            projects: fields
                .all("projects")
                .into_iter()
                .map(str::to_owned)
                .collect(),
            properties,
            added_row: action == "add",
            evaluate: action == "evaluate",
            page: fields
                .get("page")
                .and_then(|page| page.parse().ok())
                .unwrap_or(1)
                .max(1),
        }
    }

    /// The domain's request, or the row whose property has a value but no name.
    fn request(&self) -> Result<PlaygroundRequest, usize> {
        let mut context = Map::new();
        for ((name, _, _), value) in CONTEXT_FIELDS.iter().zip(&self.values) {
            if !value.trim().is_empty() {
                context.insert((*name).to_owned(), Value::String(value.trim().to_owned()));
            }
        }
        let mut properties = Map::new();
        for (index, (name, value)) in self.properties.iter().enumerate() {
            match (name.trim(), value.as_str()) {
                ("", "") => {}
                ("", _) => return Err(index),
                (name, value) => {
                    properties.insert(name.to_owned(), Value::String(value.to_owned()));
                }
            }
        }
        if !properties.is_empty() {
            context.insert("properties".to_owned(), Value::Object(properties));
        }
        let projects = if self.projects.is_empty() {
            Value::String("*".to_owned())
        } else {
            Value::Array(self.projects.iter().cloned().map(Value::String).collect())
        };
        Ok(PlaygroundRequest {
            environment: self.environment.clone(),
            projects: Some(projects),
            context: Value::Object(context),
        })
    }

    /// This form's URL (evaluated) at `page`.
    fn page_link(&self, base: &str, page: usize) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.append_pair("environment", &self.environment);
        for ((name, _, _), value) in CONTEXT_FIELDS.iter().zip(&self.values) {
            query.append_pair(name, value);
        }
        for project in &self.projects {
            query.append_pair("projects", project);
        }
        for (name, value) in &self.properties {
            query.append_pair("propertyName", name);
            query.append_pair("propertyValue", value);
        }
        query.append_pair("action", "evaluate");
        query.append_pair("page", &page.to_string());
        format!("{base}/playground?{}", query.finish())
    }
}

/// Where a refusal's message goes: beside one field (by its query name) or above the form.
#[derive(Default)]
struct Messages {
    field: Option<(String, String)>,
    property_row: Option<usize>,
    general: Option<String>,
}

impl Messages {
    fn for_field(&self, name: &str) -> Option<&str> {
        self.field
            .as_ref()
            .filter(|(field, _)| field == name)
            .map(|(_, message)| message.as_str())
    }

    /// The domain's refusal beside the field its path names (`environment`, `context.appName`), worded as
    /// people read it ("Application is required"); any other above the form.
    fn of(error: ApiError) -> Messages {
        let path = error.field.as_deref().unwrap_or_default();
        let named = std::iter::once("environment")
            .chain(CONTEXT_FIELDS.iter().map(|(name, _, _)| *name))
            .find(|name| path == *name || path.strip_prefix("context.") == Some(*name));
        match named {
            Some(name) => {
                let message = match error.message.strip_prefix(path) {
                    Some(rest) if rest.starts_with(": ") => rest[2..].to_owned(),
                    Some(rest) if rest.starts_with(' ') => format!("{}{rest}", field_label(path)),
                    _ => error.message.clone(),
                };
                Messages {
                    field: Some((name.to_owned(), message)),
                    ..Messages::default()
                }
            }
            None => Messages {
                general: Some(error.message),
                ..Messages::default()
            },
        }
    }
}

/// A constraint as the flag page shows it ("country is one of NO, SE").
fn constraint_text(constraint: &PlaygroundConstraint) -> String {
    Said::from(constraint).text()
}

fn verdict(result: bool) -> &'static str {
    if result {
        "true"
    } else {
        "false"
    }
}

/// What decided a strategy's result, in words.
fn decided_by(strategy: &PlaygroundStrategy) -> String {
    let failed_constraint = strategy.constraints.iter().find(|c| !c.result);
    let failed_segment = strategy.segments.iter().find(|s| !s.result);
    match (
        strategy.result.evaluation_status.as_str(),
        &strategy.result.enabled,
    ) {
        ("unevaluated", _) => "Not evaluated: the strategy is disabled".to_owned(),
        ("incomplete", _) => {
            "Unknown: a custom strategy only the SDKs that implement it can evaluate".to_owned()
        }
        (_, Value::Bool(true)) => {
            let mut parts: Vec<String> = strategy
                .constraints
                .iter()
                .map(|c| format!("“{}” (true)", constraint_text(c)))
                .collect();
            parts.extend(
                strategy
                    .segments
                    .iter()
                    .map(|s| format!("segment {} (true)", s.name)),
            );
            if parts.is_empty() {
                "Matched: decided by its parameters".to_owned()
            } else {
                format!("Matched: decided by {}", parts.join(", "))
            }
        }
        _ => match (failed_constraint, failed_segment) {
            (Some(constraint), _) => format!(
                "Not matched: decided by “{}” (false)",
                constraint_text(constraint)
            ),
            (None, Some(segment)) => {
                format!("Not matched: decided by segment {} (false)", segment.name)
            }
            (None, None) => {
                "Not matched: decided by its parameters (e.g. the rollout percentage)".to_owned()
            }
        },
    }
}

fn constraint_items(constraints: &[PlaygroundConstraint]) -> Markup {
    html! {
        @for constraint in constraints {
            @let said = Said::from(constraint);
            li class=(if constraint.result { "passed" } else { "failed" }) {
                span.chip title=(said.api_form()) { (said.text()) } ": " strong { (verdict(constraint.result)) }
            }
        }
    }
}

fn strategy_item(names: &StrategyNames, strategy: &PlaygroundStrategy) -> Markup {
    let summary = strategy_summary(&strategy.name, &strategy.parameters);
    html! {
        li {
            strong { (strategy_heading(names, &strategy.name, strategy.title.as_deref())) }
            @if !summary.is_empty() { " " span.muted { "· " (summary) } }
            p.decided { (decided_by(strategy)) }
            @if !strategy.constraints.is_empty() || !strategy.segments.is_empty() {
                ul.explain {
                    (constraint_items(&strategy.constraints))
                    @for segment in &strategy.segments {
                        li class=(if segment.result { "passed" } else { "failed" }) {
                            "segment " strong { (segment.name) } ": " strong { (verdict(segment.result)) }
                            @if !segment.constraints.is_empty() {
                                ul.explain { (constraint_items(&segment.constraints)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn feature_card(
    who: &SignedIn,
    names: &StrategyNames,
    environment: &str,
    feature: &PlaygroundFeature,
) -> Markup {
    let variant = feature
        .variant
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| *name != "disabled");
    html! {
        article.card.playground-flag aria-label=(format!("Flag {}", feature.name)) {
            div.card-head {
                h3 {
                    a href=(who.link(&format!("/projects/{}/features/{}", feature.project_id, feature.name))) { (feature.name) }
                    " " span.muted { "in " (feature.project_id) }
                }
                @if feature.is_enabled {
                    span.badge.answer-on { "On" }
                } @else {
                    span.badge.answer-off { "Off" }
                }
            }
            p {
                "Variant: "
                @match variant {
                    Some(name) => { strong { (name) } }
                    None => { span.muted { "none" } }
                }
            }
            @if !feature.is_enabled_in_current_environment {
                p.decided { "Off: decided by the flag's switch, which is off in " (environment) }
            }
            @if feature.strategies.data.is_empty() {
                p.muted { "No strategies: when switched on, on for everyone." }
            } @else {
                ol.strategies-explained {
                    @for strategy in &feature.strategies.data {
                        (strategy_item(names, strategy))
                    }
                }
            }
        }
    }
}

/// `GET /playground`: the form, and with `action=evaluate` the answer.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    RawQuery(raw): RawQuery,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let fields = FormFields::parse(raw.unwrap_or_default().as_bytes());
    let loaded = async {
        let mut conn = state.store.read().await?;
        let environments = environments::list(&mut conn).await?.environments;
        let projects = projects::list(&mut conn).await?.projects;
        let definitions = strategy_definitions::list(&mut conn).await?.strategies;
        Ok::<_, ApiError>((
            conn,
            environments,
            projects,
            StrategyNames::of(&definitions),
        ))
    }
    .await;
    let (mut conn, environments, all_projects, names) = loaded?;
    let first = environments
        .iter()
        .find(|environment| environment.enabled)
        .map(|environment| environment.name.clone())
        .unwrap_or_default();
    let form = ContextForm::of(&fields, &first);
    let mut messages = Messages::default();
    let mut answer = None;
    if form.evaluate {
        match form.request() {
            Err(row) => messages.property_row = Some(row),
            Ok(request) => {
                match playground::evaluate_page(
                    &mut conn,
                    &state.playground,
                    &request,
                    form.page,
                    PAGE_SIZE,
                )
                .await
                {
                    Ok(page) => answer = Some(page),
                    Err(error) if error.kind.status() == 400 => messages = Messages::of(error),
                    Err(error) => return Err(UiError::from(error)),
                }
            }
        }
    }
    drop(conn);
    let refused =
        messages.field.is_some() || messages.property_row.is_some() || messages.general.is_some();
    let markup = shell.render(
        "Playground",
        html! {
            div.page-head {
                div {
                    h1 { "Playground" }
                    p.subtitle { "What each flag answers for a context, and why" }
                }
            }
            @if let Some(message) = &messages.general { p.error-box role="alert" { (message) } }
            form.playground-form #playground-form method="get" action=(who.link("/playground")) data-redraw {
                div.playground-fields {
                    (field("environment", "Environment", messages.for_field("environment"), None, html! {
                        select #environment name="environment" aria-describedby="environment-error" {
                            @for environment in &environments {
                                option value=(environment.name) selected[environment.name == form.environment] { (environment.name) }
                            }
                        }
                    }))
                    @for ((name, label, hint), value) in CONTEXT_FIELDS.iter().zip(&form.values) {
                        @let error = messages.for_field(name);
                        (field(name, label, error, *hint, html! {
                            input type="text" id=(name) name=(name) value=(value)
                                aria-describedby=(format!("{name}-error"))
                                aria-invalid=(if error.is_some() { "true" } else { "false" });
                        }))
                    }
                }
                fieldset {
                    legend { "Projects" }
                    p.hint.muted { "None ticked: every project." }
                    div.project-checks {
                        @for project in &all_projects {
                            label.check {
                                input type="checkbox" name="projects" value=(project.id) checked[form.projects.contains(&project.id)];
                                (project.name)
                            }
                        }
                    }
                }
                fieldset {
                    legend { "Properties" }
                    @if form.properties.is_empty() {
                        p.muted { "No properties. Add one for a constraint on a field of your own (e.g. country)." }
                    }
                    @for (index, (name, value)) in form.properties.iter().enumerate() {
                        @let error = (messages.property_row == Some(index)).then_some("A property needs a name");
                        div.property-row {
                            (field(&format!("property-name-{index}"), "Property name", error, None, html! {
                                input type="text" id=(format!("property-name-{index}")) name="propertyName" value=(name)
                                    autofocus[form.added_row && index + 1 == form.properties.len()]
                                    aria-describedby=(format!("property-name-{index}-error"))
                                    aria-invalid=(if error.is_some() { "true" } else { "false" });
                            }))
                            (field(&format!("property-value-{index}"), "Property value", None, None, html! {
                                input type="text" id=(format!("property-value-{index}")) name="propertyValue" value=(value);
                            }))
                        }
                    }
                }
                div.actions {
                    button.primary type="submit" name="action" value="evaluate" { "Evaluate" }
                    button type="submit" formnovalidate name="action" value="add" { "Add property" }
                }
            }
            @if let Some(answer) = &answer {
                (results(&who, &names, &form, answer))
            } @else if !refused {
                div.empty { p { "Fill in a context and press Evaluate to see every flag's answer." } }
            }
        },
    );
    let status = if refused {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    Ok(Page { status, markup }.into_response())
}

fn results(
    who: &SignedIn,
    names: &StrategyNames,
    form: &ContextForm,
    answer: &PlaygroundPage,
) -> Markup {
    let (total, on, page, shown) = (answer.total, answer.enabled, answer.page, &answer.features);
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    html! {
        section.playground-results aria-labelledby="results-title" {
            h2 #results-title { "Results" }
            p.subtitle role="status" {
                (total) (if total == 1 { " flag" } else { " flags" }) " in " (form.environment) ", " (on) " on"
            }
            @if shown.is_empty() {
                div.empty { p { "No flags in the chosen projects." } }
            }
            @for feature in shown {
                (feature_card(who, names, &form.environment, feature))
            }
            @if pages > 1 {
                div.pager {
                    span { "Page " (page) " of " (pages) }
                    nav aria-label="Pages" {
                        @if page > 1 { a.button href=(form.page_link(&who.base, page - 1)) { "Previous page" } }
                        @if page < pages { a.button href=(form.page_link(&who.base, page + 1)) { "Next page" } }
                    }
                }
            }
        }
    }
}
