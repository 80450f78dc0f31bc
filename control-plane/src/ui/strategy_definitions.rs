//! `/strategies`: the strategy definitions flags' strategies name (the built-ins and custom ones); create
//! and edit a custom one with its parameters (name, type, description, required); deprecate or reactivate
//! one (deprecated ones leave the strategy form's list, flags keep them); delete a custom one no flag uses.
//! The same domain functions as `/api/admin/strategies…`.

use super::controls::{edit_rows, enter_saves, field};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::{PageQuery, Paged};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use super::vocabulary::{parameter_label, StrategyNames};
use crate::domain::access::Scope;
use crate::domain::strategy_definitions::{
    self, CreateStrategyDefinition, StrategyDefinition, UpdateStrategyDefinition,
};
use crate::http::state::AppState;
use crate::model::strategy_definition::{ParameterType, StrategyParameter};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/strategies", get(list))
        .route("/strategies/create", get(new_definition).post(create))
        .route("/strategies/edit/{name}", get(edit_definition).post(update))
        .route("/strategies/{name}/deprecate", post(deprecate))
        .route("/strategies/{name}/reactivate", post(reactivate))
        .route("/strategies/{name}/delete", post(delete))
}

/// The parameter types, as the API spells them.
const PARAMETER_TYPES: [(ParameterType, &str); 5] = [
    (ParameterType::String, "string"),
    (ParameterType::Percentage, "percentage"),
    (ParameterType::List, "list"),
    (ParameterType::Number, "number"),
    (ParameterType::Boolean, "boolean"),
];

fn type_name(parameter_type: ParameterType) -> &'static str {
    PARAMETER_TYPES
        .iter()
        .find(|(known, _)| *known == parameter_type)
        .map_or("string", |(_, name)| name)
}

/// `GET /strategies`: a page of the definitions.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<PageQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let definitions = async {
        let mut conn = state.store.read().await?;
        strategy_definitions::list(&mut conn).await
    }
    .await?
    .strategies;
    let paged = Paged::new(query.page, definitions.len());
    let names = StrategyNames::of(&definitions);
    let root = Scope::default();
    let may_create = who.may_submit("/strategies/create", &root);
    let may_edit = who.may_submit("/strategies/edit/{name}", &root);
    let may_delete = who.may_submit("/strategies/{name}/delete", &root);
    let markup = shell.render(
        "Strategies",
        html! {
            div.page-head {
                div {
                    h1 { "Strategies" }
                    p.subtitle { "How a flag decides who gets it: the built-ins and your own, with their parameters." }
                }
                @if may_create {
                    a.button.primary href=(who.link("/strategies/create")) { "New strategy" }
                }
            }
            @if definitions.is_empty() {
                div.empty { p { "No strategies defined." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "Parameters" }
                            th scope="col" { "Kind" }
                            @if may_edit || may_delete { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for definition in paged.slice(&definitions) {
                                @let title = names.name(&definition.name).to_owned();
                                tr {
                                    td.flag-name {
                                        strong { (title) }
                                        @if title != definition.name { " " code.api-name { (definition.name) } }
                                        @if let Some(description) = definition.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td.hide-narrow {
                                        @if definition.parameters.is_empty() { span.muted { "none" } }
                                        @for parameter in &definition.parameters {
                                            div {
                                                @let label = parameter_label(&parameter.name);
                                                @if label != parameter.name { (label) " " code.api-name { (parameter.name) } } @else { code { (parameter.name) } }
                                                " " span.muted { (type_name(parameter.parameter_type)) }
                                                @if parameter.required { " " span.badge { "required" } }
                                            }
                                        }
                                    }
                                    td {
                                        (if definition.editable { "Custom" } else { "Built in" })
                                        @if definition.deprecated { " " span.badge.stale { "deprecated" } }
                                    }
                                    @if may_edit || may_delete {
                                        td {
                                            div.row-actions {
                                                @if may_edit && definition.editable {
                                                    a.button href=(who.link(&format!("/strategies/edit/{}", definition.name)))
                                                        aria-label=(format!("Edit {}", definition.name)) { "Edit" }
                                                }
                                                @let (path, text) = if definition.deprecated { ("reactivate", "Reactivate") } else { ("deprecate", "Deprecate") };
                                                @if may_edit {
                                                    form.inline method="post" action=(who.link(&format!("/strategies/{}/{path}", definition.name))) {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        button type="submit" aria-label=(format!("{text} {}", definition.name)) { (text) }
                                                    }
                                                }
                                                @if may_delete && definition.editable {
                                                    form.inline method="post" action=(who.link(&format!("/strategies/{}/delete", definition.name))) {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        button.danger type="submit" aria-label=(format!("Delete {}", definition.name)) { "Delete" }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                (paged.pager(|page| who.link(&format!("/strategies?page={page}"))))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// One parameter row of the form, as typed.
#[derive(Debug, Clone)]
struct ParameterDraft {
    name: String,
    parameter_type: String,
    description: String,
    required: bool,
}

impl Default for ParameterDraft {
    fn default() -> Self {
        ParameterDraft {
            name: String::new(),
            parameter_type: "string".to_owned(),
            description: String::new(),
            required: false,
        }
    }
}

/// What the strategy form holds.
#[derive(Debug, Default)]
struct DefinitionDraft {
    name: String,
    title: String,
    description: String,
    parameters: Vec<ParameterDraft>,
}

impl DefinitionDraft {
    fn of_definition(definition: StrategyDefinition) -> DefinitionDraft {
        DefinitionDraft {
            name: definition.name,
            title: definition.display_name.unwrap_or_default(),
            description: definition.description.unwrap_or_default(),
            parameters: definition
                .parameters
                .into_iter()
                .map(|parameter| ParameterDraft {
                    name: parameter.name,
                    parameter_type: type_name(parameter.parameter_type).to_owned(),
                    description: parameter.description,
                    required: parameter.required,
                })
                .collect(),
        }
    }

    /// The form's fields: rows `p<i>.name|type|description|required` for `i < parameterCount`.
    fn of_form(form: &FormFields) -> DefinitionDraft {
        let count: usize = form.text("parameterCount").parse().unwrap_or(0);
        DefinitionDraft {
            name: form.text("name").trim().to_owned(),
            title: form.text("title").trim().to_owned(),
            description: form.text("description"),
            parameters: (0..count)
                .map(|index| ParameterDraft {
                    name: form.text(&format!("p{index}.name")).trim().to_owned(),
                    parameter_type: form.text(&format!("p{index}.type")),
                    description: form.text(&format!("p{index}.description")),
                    required: form.checked(&format!("p{index}.required")),
                })
                .collect(),
        }
    }

    /// The parameters as the API takes them; an unknown type is refused naming its row.
    fn parameters(&self) -> Result<Vec<StrategyParameter>, ApiError> {
        self.parameters
            .iter()
            .enumerate()
            .map(|(index, parameter)| {
                let parameter_type = PARAMETER_TYPES
                    .iter()
                    .find(|(_, name)| *name == parameter.parameter_type)
                    .map(|(known, _)| *known)
                    .ok_or_else(|| {
                        ApiError::invalid_field(
                            format!("parameters[{index}].type"),
                            format!(
                                "parameters[{index}].type: unknown type {:?}",
                                parameter.parameter_type
                            ),
                        )
                    })?;
                Ok(StrategyParameter {
                    name: parameter.name.clone(),
                    parameter_type,
                    description: parameter.description.clone(),
                    required: parameter.required,
                })
            })
            .collect()
    }
}

fn form_page(
    who: &SignedIn,
    editing: Option<&str>,
    draft: &DefinitionDraft,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Response {
    let shell = who.shell();
    let mut fields = vec![("parameters", "parameters")];
    if editing.is_none() {
        fields.push(("name", "strategy-name"));
    }
    let errors = FieldErrors::of(error, &fields, "strategy-name");
    let (name_error, parameters_error) = (errors.at("strategy-name"), errors.at("parameters"));
    let (heading, action) = match editing {
        Some(name) => (
            format!("Edit strategy {name}"),
            who.link(&format!("/strategies/edit/{name}")),
        ),
        None => ("New strategy".to_owned(), who.link("/strategies/create")),
    };
    let markup = shell.render(
        &heading,
        html! {
            div.page-head { div {
                h1 { (heading) }
                p.subtitle { a href=(who.link("/strategies")) { "← Strategies" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(action) novalidate {
                (enter_saves("Save strategy"))
                input type="hidden" name="csrf" value=(who.csrf);
                @if editing.is_none() {
                    (field("strategy-name", "Name", name_error, Some("URL-safe characters; SDKs implement the strategy under this name"), html! {
                        input #strategy-name type="text" name="name" value=(draft.name) required autocomplete="off"
                            aria-describedby="strategy-name-hint"
                            aria-invalid=(if name_error.is_some() { "true" } else { "false" });
                    }))
                }
                (field("strategy-title", "Title", None, Some("Optional: the name people read"), html! {
                    input #strategy-title type="text" name="title" value=(draft.title) aria-describedby="strategy-title-hint";
                }))
                (field("strategy-description", "Description", None, None, html! {
                    textarea #strategy-description name="description" rows="2" { (draft.description) }
                }))
                fieldset.parameters aria-describedby="parameters-error" {
                    legend { "Parameters" }
                    input type="hidden" name="parameterCount" value=(draft.parameters.len());
                    @if draft.parameters.is_empty() {
                        p.muted { "No parameters." }
                    }
                    @for (index, parameter) in draft.parameters.iter().enumerate() {
                        @let number = index + 1;
                        fieldset.parameter {
                            legend { "Parameter " (number) }
                            (field(&format!("p{index}-name"), &format!("Parameter {number} name"), None, None, html! {
                                input id=(format!("p{index}-name")) type="text" name=(format!("p{index}.name")) value=(parameter.name) autocomplete="off";
                            }))
                            (field(&format!("p{index}-type"), &format!("Parameter {number} type"), None, None, html! {
                                select id=(format!("p{index}-type")) name=(format!("p{index}.type")) {
                                    @for (_, type_name) in PARAMETER_TYPES {
                                        option value=(type_name) selected[type_name == parameter.parameter_type] { (type_name) }
                                    }
                                }
                            }))
                            (field(&format!("p{index}-description"), &format!("Parameter {number} description"), None, None, html! {
                                input id=(format!("p{index}-description")) type="text" name=(format!("p{index}.description")) value=(parameter.description);
                            }))
                            div.actions {
                                label.check {
                                    input type="checkbox" name=(format!("p{index}.required")) value="true" checked[parameter.required];
                                    "Parameter " (number) " required"
                                }
                                button type="submit" formnovalidate name="intent" value=(format!("remove-parameter-{index}"))
                                    aria-label=(format!("Remove parameter {number}")) { "Remove" }
                            }
                        }
                    }
                    p.field-error #parameters-error aria-live="polite" {
                        @if let Some(message) = parameters_error { (message) }
                    }
                    button type="submit" formnovalidate name="intent" value="add-parameter" { "Add parameter" }
                }
                div.actions {
                    button.primary type="submit" name="intent" value="save" { "Save strategy" }
                    a href=(who.link("/strategies")) { "Cancel" }
                }
            }
        },
    );
    Page { status, markup }.into_response()
}

/// `GET /strategies/create`.
pub async fn new_definition(who: SignedIn) -> Result<Response, UiError> {
    who.ensure_may_submit("/strategies/create", &Scope::default())?;
    let draft = DefinitionDraft::default();
    Ok(form_page(&who, None, &draft, None, StatusCode::OK))
}

/// `GET /strategies/edit/<name>`: a built-in one is refused by the save, as by the API.
pub async fn edit_definition(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(name): Path<String>,
) -> Result<Response, UiError> {
    who.ensure_may_submit("/strategies/edit/{name}", &Scope::default())?;
    let mut conn = state.store.read().await?;
    let definition = strategy_definitions::get(&mut conn, &name).await?;
    let draft = DefinitionDraft::of_definition(definition);
    Ok(form_page(&who, Some(&name), &draft, None, StatusCode::OK))
}

async fn save(
    state: &AppState,
    who: &SignedIn,
    editing: Option<&str>,
    form: &FormFields,
) -> Result<Response, UiError> {
    let mut draft = DefinitionDraft::of_form(form);
    match form.get("intent").unwrap_or("save") {
        "save" => {}
        intent => {
            edit_rows(
                intent,
                "parameter",
                &mut draft.parameters,
                ParameterDraft::default,
            );
            return Ok(form_page(who, editing, &draft, None, StatusCode::OK));
        }
    }
    let done = async {
        let parameters = draft.parameters()?;
        let title = Some(draft.title.clone());
        let description = Some(draft.description.clone());
        let mut tx = state.store.begin_write(&who.actor).await?;
        match editing {
            Some(name) => {
                let input = UpdateStrategyDefinition {
                    name: None,
                    title,
                    description,
                    parameters,
                };
                drop(strategy_definitions::update(&mut tx, name, input).await?)
            }
            None => {
                let input = CreateStrategyDefinition {
                    name: draft.name.clone(),
                    title: title.filter(|title| !title.is_empty()),
                    description: description.filter(|text| !text.is_empty()),
                    parameters,
                };
                drop(strategy_definitions::create(&mut tx, input).await?)
            }
        }
        state.commit(tx).await?;
        let done = if editing.is_some() {
            "saved"
        } else {
            "created"
        };
        Ok(Done::to(
            who.link("/strategies"),
            format!("Strategy {} {done}.", editing.unwrap_or(&draft.name)),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(form_page(who, editing, &draft, Some(error), StatusCode::OK))
    })
    .await
}

/// `POST /strategies/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    save(&state, &who, None, &form).await
}

/// `POST /strategies/edit/<name>`.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    save(&state, &who, Some(&name), &form).await
}

async fn set_deprecated(
    state: &AppState,
    who: &SignedIn,
    name: &str,
    deprecated: bool,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    strategy_definitions::set_deprecated(&mut tx, name, deprecated).await?;
    state.commit(tx).await?;
    let now = if deprecated {
        "deprecated"
    } else {
        "reactivated"
    };
    let done = Done::to(who.link("/strategies"), format!("Strategy {name} {now}."));
    Ok(done.into_response())
}

/// `POST /strategies/<name>/deprecate`.
pub async fn deprecate(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    set_deprecated(&state, &who, &name, true).await
}

/// `POST /strategies/<name>/reactivate`.
pub async fn reactivate(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    set_deprecated(&state, &who, &name, false).await
}

/// `POST /strategies/<name>/delete`: refused (400, as a page) for a built-in one or one a flag uses.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    strategy_definitions::delete(&mut tx, &name).await?;
    state.commit(tx).await?;
    let done = Done::to(who.link("/strategies"), format!("Strategy {name} deleted."));
    Ok(done.into_response())
}
