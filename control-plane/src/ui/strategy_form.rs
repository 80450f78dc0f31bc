//! The strategy form (`…/features/<flag>/strategies/create?environmentId=` and `…/edit?environmentId=&strategyId=`,
//! Unleash's URLs; one handler for both). It works without JavaScript: "Add constraint", "Remove" and choosing
//! another strategy post the form back and it is drawn again with what was typed; "Save strategy" (and Enter)
//! writes through `strategies::add`/`update` (or a change request draft where change requests are on), and a
//! refusal draws the form again with the message. A strategy's delete and moves are the flag page's. The
//! form's pieces ([`render`] at a [`FormPlace`], [`choices`], [`form_edit`]) also edit a release template's
//! milestone strategies (`release_template_strategies`).

use super::constraint_editor::{
    constraint_fields, constraint_focus, constraint_rows, constraints_of, edit_constraints,
    ConstraintDraft,
};
use super::controls::{enter_saves, field};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use super::variant_editor::{
    drafts_of, edit_variants, variant_fields, variant_focus, variant_rows, VariantDraft,
};
use super::vocabulary::{parameter_hint, parameter_label, stickiness_label, StrategyNames};
use crate::domain::access::Scope;
use crate::domain::change_requests;
use crate::domain::context_fields::{self, ContextField};
use crate::domain::segments::{self, Segment};
use crate::domain::strategies::{self, Strategy};
use crate::domain::strategy_definitions::{self, StrategyDefinition};
use crate::domain::{features, projects};
use crate::http::state::AppState;
use crate::model::change_request::{Change, StrategyUpdate};
use crate::model::strategy::StrategyInput;
use crate::model::strategy_definition::ParameterType;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use uuid::Uuid;
use vexil_shared::ApiError;

/// What the form holds.
#[derive(Debug, Clone, Default)]
pub struct StrategyDraft {
    pub environment: String,
    pub id: Option<String>,
    pub name: String,
    pub title: String,
    pub disabled: bool,
    pub parameters: BTreeMap<String, String>,
    pub constraints: Vec<ConstraintDraft>,
    pub segments: Vec<i64>,
    /// Strategy variants.
    pub variants: Vec<VariantDraft>,
}

/// The field-name prefix of the strategy form's variant editor.
const VARIANT_PREFIX: &str = "sv";

impl StrategyDraft {
    fn of(environment: &str, strategy: &Strategy) -> StrategyDraft {
        StrategyDraft {
            environment: environment.to_owned(),
            id: Some(strategy.id.clone()),
            name: strategy.name.clone(),
            title: strategy.title.clone().unwrap_or_default(),
            disabled: strategy.disabled,
            parameters: strategy.parameters.clone(),
            constraints: strategy
                .constraints
                .iter()
                .map(ConstraintDraft::of)
                .collect(),
            segments: strategy.segments.clone(),
            variants: strategy
                .variants
                .iter()
                .map(VariantDraft::of_strategy)
                .collect(),
        }
    }

    /// The form as posted.
    pub fn from_form(form: &FormFields) -> StrategyDraft {
        let constraints = constraints_of(form);
        let parameters = form
            .0
            .iter()
            .filter_map(|(name, value)| {
                name.strip_prefix("param.")
                    .map(|name| (name.to_owned(), value.clone()))
            })
            .collect();
        StrategyDraft {
            environment: form.text("environment"),
            id: form.get("strategyId").map(str::to_owned),
            name: form.get("strategy").unwrap_or("flexibleRollout").to_owned(),
            title: form.text("title"),
            disabled: form.checked("disabled"),
            parameters,
            constraints,
            segments: form
                .all("segment")
                .iter()
                .filter_map(|id| id.parse().ok())
                .collect(),
            variants: drafts_of(form, VARIANT_PREFIX),
        }
    }

    /// The body the API takes; parameters of the chosen definition only. A variant weight that is not a
    /// percentage is refused here, naming it.
    pub fn to_input(
        &self,
        definition: Option<&StrategyDefinition>,
    ) -> Result<StrategyInput, ApiError> {
        let parameters = definition
            .map(|definition| {
                definition
                    .parameters
                    .iter()
                    .map(|parameter| {
                        let value = self
                            .parameters
                            .get(&parameter.name)
                            .cloned()
                            .unwrap_or_default();
                        (parameter.name.clone(), serde_json::Value::String(value))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let variants = self
            .variants
            .iter()
            .enumerate()
            .map(|(index, draft)| draft.to_strategy_variant(index))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(StrategyInput {
            name: self.name.clone(),
            title: Some(self.title.trim().to_owned()).filter(|title| !title.is_empty()),
            disabled: Some(self.disabled),
            sort_order: None,
            constraints: Some(
                self.constraints
                    .iter()
                    .map(ConstraintDraft::to_constraint)
                    .collect(),
            ),
            parameters: Some(parameters),
            variants: Some(variants),
            segments: Some(self.segments.clone()),
        })
    }
}

/// The defaults of a new flexibleRollout (as Unleash's form); `feature` is its groupId.
pub(super) fn new_draft(environment: &str, feature: &str, name: &str) -> StrategyDraft {
    StrategyDraft {
        environment: environment.to_owned(),
        name: name.to_owned(),
        parameters: BTreeMap::from([
            ("rollout".to_owned(), "100".to_owned()),
            ("stickiness".to_owned(), "default".to_owned()),
            ("groupId".to_owned(), feature.to_owned()),
        ]),
        ..StrategyDraft::default()
    }
}

/// What the form offers: the strategy definitions, context fields and segments.
pub(super) struct Choices {
    pub definitions: Vec<StrategyDefinition>,
    context_fields: Vec<ContextField>,
    segments: Vec<Segment>,
    /// This instance's limit of values per constraint.
    max_values: u32,
}

/// The choices in `project` (its segments and the global ones), or, without one, the global segments only.
pub(super) async fn choices(state: &AppState, project: Option<&str>) -> Result<Choices, ApiError> {
    let mut conn = state.store.read().await?;
    if let Some(project) = project {
        projects::require(&mut conn, project).await?;
    }
    let definitions = strategy_definitions::list(&mut conn).await?.strategies;
    // The instance's fields and the project's own: never another project's.
    let context_fields = context_fields::usable_in(&mut conn, project).await?;
    let segments = segments::list(&mut conn)
        .await?
        .segments
        .into_iter()
        .filter(|segment| {
            segment
                .project
                .as_deref()
                .is_none_or(|owner| Some(owner) == project)
        })
        .collect();
    Ok(Choices {
        definitions,
        context_fields,
        segments,
        max_values: state.limits.constraint_values,
    })
}

fn parameter_control(
    choices: &Choices,
    draft: &StrategyDraft,
    definition: &StrategyDefinition,
    errors: &FieldErrors,
) -> Markup {
    html! {
        @for parameter in &definition.parameters {
            @let id = format!("param-{}", parameter.name);
            @let name = format!("param.{}", parameter.name);
            @let value = draft.parameters.get(&parameter.name).cloned().unwrap_or_default();
            @let hint = parameter_hint(&parameter.name).or(Some(parameter.description.as_str()).filter(|hint| !hint.is_empty()));
            @let error = errors.at(&id);
            @let invalid = errors.invalid(&id);
            @let described = if hint.is_some() { format!("{id}-hint {id}-error") } else { format!("{id}-error") };
            @if parameter.name == "stickiness" {
                (field(&id, "Stickiness", error, hint, html! {
                    select id=(id) name=(name) aria-describedby=(described) aria-invalid=(invalid) {
                        @for option in ["default", "userId", "sessionId", "random"].into_iter().map(str::to_owned)
                            .chain(choices.context_fields.iter().filter(|f| f.stickiness && !["userId", "sessionId"].contains(&f.name.as_str())).map(|f| f.name.clone())) {
                            option value=(option) selected[option == value] { (stickiness_label(&option)) }
                        }
                    }
                }))
            } @else {
                @match parameter.parameter_type {
                    ParameterType::Percentage => {
                        @let label = parameter_label(&parameter.name);
                        (field(&id, &label, error, Some("0 to 100 %"), html! {
                            div.percentage {
                                // The slider is the script's (kept in step with the number, which is sent):
                                // without JavaScript it stays hidden.
                                input id=(format!("{id}-slider")) type="range" min="0" max="100" step="1"
                                    value=(value.parse::<u8>().unwrap_or(0).min(100)) hidden
                                    data-mirrors=(id) aria-label=(format!("{label} slider"))
                                    aria-describedby=(format!("{id}-hint"));
                                input id=(id) type="number" name=(name) min="0" max="100" step="1" value=(value)
                                    aria-describedby=(format!("{id}-hint {id}-error")) aria-invalid=(invalid);
                            }
                        }))
                    }
                    ParameterType::List => {
                        (field(&id, &parameter_label(&parameter.name), error, Some("Comma-separated"), html! {
                            textarea id=(id) name=(name) rows="2" aria-describedby=(format!("{id}-hint {id}-error"))
                                aria-invalid=(invalid) { (value) }
                        }))
                    }
                    ParameterType::Boolean => {
                        input type="hidden" name=(name) value="false";
                        label.check { input id=(id) type="checkbox" name=(name) value="true" checked[value == "true"]
                            aria-describedby=(format!("{id}-error")) aria-invalid=(invalid); (parameter_label(&parameter.name)) }
                        p.field-error id=(format!("{id}-error")) aria-live="polite" { @if let Some(error) = error { (error) } }
                    }
                    ParameterType::Number => {
                        (field(&id, &parameter_label(&parameter.name), error, hint, html! {
                            input id=(id) type="number" name=(name) value=(value)
                                aria-describedby=(described) aria-invalid=(invalid);
                        }))
                    }
                    ParameterType::String => {
                        (field(&id, &parameter_label(&parameter.name), error, hint, html! {
                            input id=(id) type="text" name=(name) value=(value)
                                aria-describedby=(described) aria-invalid=(invalid);
                        }))
                    }
                }
            }
        }
    }
}

/// Where the form writes: a flag's environment, or a release template's milestone.
pub(super) struct FormPlace {
    /// The form's action.
    pub action: String,
    /// The page "Cancel" goes back to.
    pub back: String,
    /// The place in words, under the heading.
    pub subtitle: Markup,
    /// Whether the strategy can be disabled (a flag's; a milestone's has no switch).
    pub may_disable: bool,
}

pub(super) struct FormPage<'a> {
    pub place: FormPlace,
    pub draft: &'a StrategyDraft,
    pub error: Option<&'a ApiError>,
    pub status: StatusCode,
    /// The control that takes the focus (after a row was added or removed).
    pub focus: Option<String>,
}

/// Where the strategy form's controls are, for [`FieldErrors`]: the body's `name`, `title`,
/// `parameters.<name>`, `segments`, then the constraint and variant editors' own.
fn form_fields(
    definition: Option<&StrategyDefinition>,
    draft: &StrategyDraft,
) -> Vec<(String, String)> {
    let mut fields = vec![
        ("name".to_owned(), "strategy".to_owned()),
        ("strategyName".to_owned(), "strategy".to_owned()),
        ("title".to_owned(), "title".to_owned()),
        ("segments".to_owned(), "segments".to_owned()),
    ];
    fields.extend(definition.into_iter().flat_map(|definition| {
        definition.parameters.iter().map(|parameter| {
            (
                format!("parameters.{}", parameter.name),
                format!("param-{}", parameter.name),
            )
        })
    }));
    fields.extend(constraint_fields(&draft.constraints));
    fields.extend(variant_fields(VARIANT_PREFIX, &draft.variants, false));
    fields
}

pub(super) fn render(who: &SignedIn, choices: &Choices, page: FormPage<'_>) -> Page {
    let FormPage {
        place,
        draft,
        error,
        status,
        focus,
    } = page;
    let focus = focus.as_deref();
    let shell = who.shell();
    let editing = draft.id.is_some();
    let heading = if editing {
        "Edit strategy"
    } else {
        "Add strategy"
    };
    let definition = choices.definitions.iter().find(|d| d.name == draft.name);
    let errors = FieldErrors::of(error, &form_fields(definition, draft), "strategy");
    let names = StrategyNames::of(&choices.definitions);
    let markup = shell.render(
        heading,
        html! {
            div.page-head {
                div {
                    h1 { (heading) }
                    p.subtitle { (place.subtitle) }
                }
            }
            (errors.general())
            form.form-narrow #strategy-form method="post" action=(place.action) data-redraw {
                (enter_saves("Save strategy"))
                input type="hidden" name="csrf" value=(who.csrf);
                input type="hidden" name="environment" value=(draft.environment);
                @if let Some(id) = &draft.id { input type="hidden" name="strategyId" value=(id); }
                (field("strategy", "Strategy", errors.at("strategy"), definition.and_then(|d| d.description.as_deref()), html! {
                    select #strategy name="strategy" data-autosubmit="refresh-form" aria-describedby="strategy-hint strategy-error"
                        title=(format!("API name: {}", draft.name)) aria-invalid=(errors.invalid("strategy")) {
                        @for candidate in &choices.definitions {
                            @if !candidate.deprecated || candidate.name == draft.name {
                                option value=(candidate.name) selected[candidate.name == draft.name] {
                                    (names.name(&candidate.name))
                                }
                            }
                        }
                    }
                }))
                (field("title", "Title", errors.at("title"), Some("Optional"), html! {
                    input #title type="text" name="title" value=(draft.title) aria-describedby="title-hint title-error"
                        aria-invalid=(errors.invalid("title"));
                }))
                @if let Some(definition) = definition {
                    (parameter_control(choices, draft, definition, &errors))
                }
                fieldset {
                    legend { "Constraints" }
                    (constraint_rows(&choices.context_fields, &draft.constraints, (true, Some(choices.max_values)), &errors, focus))
                    button #add-constraint type="submit" formnovalidate name="intent" value="add-constraint"
                        autofocus[focus == Some("add-constraint")] { "Add constraint" }
                }
                fieldset {
                    legend { "Segments" }
                    @if choices.segments.is_empty() {
                        p.muted { "No segments yet. " a href=(who.link("/segments")) { "Segments" } " are reusable sets of constraints." }
                    }
                    @for segment in &choices.segments {
                        label.check {
                            input type="checkbox" name="segment" value=(segment.id) checked[draft.segments.contains(&segment.id)]
                                aria-describedby="segments-error" aria-invalid=(errors.invalid("segments"));
                            (segment.name)
                        }
                    }
                    p.field-error #segments-error aria-live="polite" { @if let Some(error) = errors.at("segments") { (error) } }
                }
                fieldset {
                    legend { "Strategy variants" }
                    (variant_rows(true, VARIANT_PREFIX, &draft.variants, (false, focus), &errors))
                    @let add = format!("add-{VARIANT_PREFIX}");
                    button id=(add) type="submit" formnovalidate name="intent" value=(add)
                        autofocus[focus == Some(add.as_str())] { "Add strategy variant" }
                }
                @if place.may_disable {
                    label.check { input type="checkbox" name="disabled" value="true" checked[draft.disabled]; "Disabled" }
                }
                div.actions {
                    button.primary type="submit" name="intent" value="save" { "Save strategy" }
                    button #refresh-form type="submit" formnovalidate name="intent" value="refresh"
                        autofocus[focus == Some("refresh-form")] { "Update form" }
                    a href=(place.back) { "Cancel" }
                }
            }
        },
    );
    Page { status, markup }
}

/// A flag's strategy form in `environment`: it posts to Unleash's create or edit URL.
fn flag_place(who: &SignedIn, project: &str, feature: &str, draft: &StrategyDraft) -> FormPlace {
    let flag = who.link(&format!("/projects/{project}/features/{feature}"));
    let verb = if draft.id.is_some() { "edit" } else { "create" };
    FormPlace {
        action: format!("{flag}/strategies/{verb}"),
        subtitle: html! { "Flag " a href=(flag) { (feature) } " in " strong { (draft.environment) } },
        back: flag,
        may_disable: true,
    }
}

/// A post that edits the form itself rather than saving it (a constraint or variant added or removed,
/// another strategy chosen): `Some` with the control to focus when it is drawn again; `None` for "save".
pub(super) fn form_edit(intent: &str, draft: &mut StrategyDraft) -> Option<Option<String>> {
    if edit_constraints(intent, &mut draft.constraints) {
        return Some(constraint_focus(intent, &draft.constraints));
    }
    if edit_variants(intent, VARIANT_PREFIX, &mut draft.variants) {
        return Some(variant_focus(intent, VARIANT_PREFIX, &draft.variants));
    }
    (intent != "save").then(|| Some("refresh-form".to_owned()))
}

/// The form's routes: Unleash's two URLs, the same handlers.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/projects/{project}/features/{feature}/strategies/create",
            get(page).post(save),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/edit",
            get(page).post(save),
        )
}

/// The form's query, as Unleash's URLs have it: `environmentId`, and `strategyId` to edit a strategy or
/// `strategyName` to start a new one with that strategy.
#[derive(Debug, Deserialize)]
pub struct FormQuery {
    #[serde(rename = "environmentId")]
    environment: String,
    #[serde(rename = "strategyId")]
    strategy_id: Option<String>,
    #[serde(rename = "strategyName")]
    strategy_name: Option<String>,
}

/// `GET …/strategies/create?environmentId=[&strategyName=]` and `…/edit?environmentId=&strategyId=`: the
/// form, empty or holding the strategy.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
    Query(query): Query<FormQuery>,
) -> Result<Response, UiError> {
    let form = match query.strategy_id {
        Some(_) => "/projects/{project}/features/{feature}/strategies/edit",
        None => "/projects/{project}/features/{feature}/strategies/create",
    };
    who.ensure_may_submit(form, &Scope::environment(&project, &query.environment))?;
    let draft = async {
        let mut conn = state.store.read().await?;
        match &query.strategy_id {
            Some(id) => {
                let id = Uuid::parse_str(id)
                    .map_err(|_| ApiError::not_found("No strategy with this id"))?;
                let strategy =
                    strategies::get(&mut conn, &project, &feature, &query.environment, id).await?;
                Ok::<_, ApiError>(StrategyDraft::of(&query.environment, &strategy))
            }
            None => {
                features::environment(&mut conn, &project, &feature, &query.environment).await?;
                let name = query.strategy_name.as_deref().unwrap_or("flexibleRollout");
                Ok(new_draft(&query.environment, &feature, name))
            }
        }
    }
    .await?;
    let choices = choices(&state, Some(&project)).await?;
    let page = FormPage {
        place: flag_place(&who, &project, &feature, &draft),
        draft: &draft,
        error: None,
        status: StatusCode::OK,
        focus: None,
    };
    Ok(render(&who, &choices, page).into_response())
}

/// Both posts of the form: another constraint, one less, another strategy, or save.
async fn submit(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
    form: &FormFields,
) -> Result<Response, UiError> {
    let choices = choices(state, Some(project)).await?;
    let mut draft = StrategyDraft::from_form(form);
    let intent = form.get("intent").unwrap_or("save");
    let redraw = |draft: &StrategyDraft, error: Option<&ApiError>, focus: Option<String>| {
        let page = FormPage {
            place: flag_place(who, project, feature, draft),
            draft,
            error,
            status: StatusCode::OK,
            focus,
        };
        render(who, &choices, page).into_response()
    };
    if let Some(focus) = form_edit(intent, &mut draft) {
        return Ok(redraw(&draft, None, focus));
    }
    let definition = choices.definitions.iter().find(|d| d.name == draft.name);
    let environment = draft.environment.clone();
    let done = async {
        let input = draft.to_input(definition)?;
        let (change, made) = match &draft.id {
            None => (Change::AddStrategy(input), "added to"),
            Some(id) => {
                let id = Uuid::parse_str(id)
                    .map_err(|_| ApiError::not_found("No strategy with this id"))?;
                let update = StrategyUpdate {
                    id,
                    strategy: input,
                };
                (Change::UpdateStrategy(update), "saved in")
            }
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        let outcome = change_requests::make_or_propose(
            &mut tx,
            (project, &environment, feature),
            change,
            &state.limits,
        )
        .await?;
        state.commit(tx).await?;
        // Back on the flag page at the environment the strategy is in.
        Ok(Done::after_change(
            who.link(&format!(
                "/projects/{project}/features/{feature}#env-{environment}"
            )),
            outcome,
            format!("The strategy was {made} {environment}."),
        ))
    }
    .await;
    written(done, async |error| Ok(redraw(&draft, Some(error), None))).await
}

/// `POST …/strategies/create` and `…/edit` (a posted `strategyId` says which strategy).
pub async fn save(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    submit(&state, &who, (&project, &feature), &form).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::constraint::Constraint;

    #[test]
    fn a_posted_form_becomes_the_api_body() {
        let form = FormFields::parse(
            b"strategy=flexibleRollout&environment=development&param.rollout=50&param.stickiness=default\
              &param.groupId=g&param.bogus=x&constraintCount=2&c0.contextName=country&c0.operator=IN\
              &c0.values=NO%0ASE%2C+&c0.caseInsensitive=true&c1.contextName=currentTime\
              &c1.operator=DATE_AFTER&c1.value=2026-01-02T03%3A04&c1.inverted=true&segment=3",
        );
        let draft = StrategyDraft::from_form(&form);
        assert_eq!(draft.environment, "development");
        assert_eq!(draft.segments, [3]);
        let constraints: Vec<Constraint> = draft
            .constraints
            .iter()
            .map(ConstraintDraft::to_constraint)
            .collect();
        assert_eq!(constraints[0].values, ["NO", "SE"]);
        assert!(constraints[0].case_insensitive && !constraints[0].inverted);
        assert_eq!(constraints[0].value, None);
        assert_eq!(
            constraints[1].value.as_deref(),
            Some("2026-01-02T03:04:00.000Z")
        );
        assert!(constraints[1].values.is_empty() && constraints[1].inverted);
        let input = draft.to_input(None).unwrap();
        assert_eq!(input.parameters, Some(Default::default()));
        assert_eq!(input.name, "flexibleRollout");
    }
}
