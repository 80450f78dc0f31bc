//! `/context`: the context fields constraints can test (the built-ins and custom ones); create and edit one
//! (description, legal values with their descriptions as rows, whether it can be stickiness); delete a
//! custom one (built-ins show no Delete; the domain refuses them anyway). The same domain functions as
//! `/api/admin/context…`. The same pages serve a project's own fields at `/projects/<p>/context…`
//! (`ui::project_context_fields` holds their routes): a [`Place`] says which.

use super::controls::{edit_rows, enter_saves, field, row_focus};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::{PageQuery, Paged};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::context_fields::{self, ContextField, ContextFieldInput};
use crate::http::state::AppState;
use crate::model::context_field::LegalValue;
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
        .route("/context", get(list))
        .route("/context/create", get(new_field).post(create))
        .route("/context/edit/{name}", get(edit_field).post(update))
        .route("/context/{name}/delete", post(delete))
}

/// How many legal values the list shows before "and N more".
const VALUES_SHOWN: usize = 8;

/// Whose fields a page shows and writes: the instance's (`/context…`) or project `.0`'s
/// (`/projects/<p>/context…`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Place<'a>(pub Option<&'a str>);

impl Place<'_> {
    /// The page's path below the base path: `rest` after `/context` (or `/projects/<p>/context`).
    fn path(&self, rest: &str) -> String {
        match self.0 {
            None => format!("/context{rest}"),
            Some(project) => format!("/projects/{project}/context{rest}"),
        }
    }

    /// The route template of a form (as in `ui::PERMISSIONS`).
    fn template(&self, rest: &str) -> String {
        match self.0 {
            None => format!("/context{rest}"),
            Some(_) => format!("/projects/{{project}}/context{rest}"),
        }
    }

    fn scope(&self) -> Scope {
        self.0.map(Scope::project).unwrap_or_default()
    }
}

/// `GET /context`: a page of the fields.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<PageQuery>,
) -> Result<Response, UiError> {
    list_page(&state, &who, Place(None), query).await
}

/// The list of the fields of `place`.
pub(super) async fn list_page(
    state: &AppState,
    who: &SignedIn,
    place: Place<'_>,
    query: PageQuery,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let (fields, built_in) = async {
        let mut conn = state.store.read().await?;
        let fields = match place.0 {
            None => context_fields::list(&mut conn).await?,
            Some(project) => context_fields::list_of_project(&mut conn, project).await?,
        };
        let built_in = context_fields::built_in_names(&mut conn).await?;
        Ok::<_, ApiError>((fields, built_in))
    }
    .await?;
    let paged = Paged::new(query.page, fields.len());
    let scope = place.scope();
    let may_create = who.may_submit(&place.template("/create"), &scope);
    let may_edit = who.may_submit(&place.template("/edit/{name}"), &scope);
    let may_delete = who.may_submit(&place.template("/{name}/delete"), &scope);
    let heading = match place.0 {
        None => "Context fields".to_owned(),
        Some(project) => format!("Context fields of project {project}"),
    };
    let markup = shell.render(
        &heading,
        html! {
            div.page-head {
                div {
                    h1 { (heading) }
                    @match place.0 {
                        None => p.subtitle { "What constraints can test, and which fields can decide stickiness." },
                        Some(project) => p.subtitle {
                            "Fields only this project's flags and segments can test; every project can test "
                            a href=(who.link("/context")) { "the instance's context fields" } ". · "
                            a href=(who.link(&format!("/projects/{project}/overview"))) { "Project overview" }
                        },
                    }
                }
                @if may_create {
                    a.button.primary href=(who.link(&place.path("/create"))) { "New context field" }
                }
            }
            @if fields.is_empty() {
                div.empty { p { "No context fields yet." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Legal values" }
                            th.hide-narrow scope="col" { "Stickiness" }
                            @if may_edit || may_delete { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for context_field in paged.slice(&fields) {
                                tr {
                                    td.flag-name {
                                        strong { (context_field.name) }
                                        @if built_in.contains(&context_field.name) { " " span.badge { "built in" } }
                                        @if let Some(description) = context_field.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td {
                                        @if context_field.legal_values.is_empty() {
                                            span.muted { "any value" }
                                        } @else {
                                            @for legal in context_field.legal_values.iter().take(VALUES_SHOWN) {
                                                span.tag title=(legal.description.clone().unwrap_or_default()) { (legal.value) }
                                                " "
                                            }
                                            @if context_field.legal_values.len() > VALUES_SHOWN {
                                                span.muted { "and " (context_field.legal_values.len() - VALUES_SHOWN) " more" }
                                            }
                                        }
                                    }
                                    td.hide-narrow { (if context_field.stickiness { "Yes" } else { "No" }) }
                                    @if may_edit || may_delete {
                                        td {
                                            div.row-actions {
                                                @if may_edit {
                                                    a.button href=(who.link(&place.path(&format!("/edit/{}", context_field.name))))
                                                        aria-label=(format!("Edit {}", context_field.name)) { "Edit" }
                                                }
                                                @if may_delete && !built_in.contains(&context_field.name) {
                                                    form.inline method="post" action=(who.link(&place.path(&format!("/{}/delete", context_field.name)))) {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        button.danger type="submit" aria-label=(format!("Delete {}", context_field.name)) { "Delete" }
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
                (paged.pager(|page| who.link(&place.path(&format!("?page={page}")))))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// What the context-field form holds.
#[derive(Debug, Default)]
struct FieldDraft {
    name: String,
    description: String,
    stickiness: bool,
    legal_values: Vec<(String, String)>,
    /// The control that takes the focus (after a legal value was added or removed).
    focus: Option<String>,
}

impl FieldDraft {
    fn of_field(context_field: ContextField) -> FieldDraft {
        FieldDraft {
            name: context_field.name,
            description: context_field.description.unwrap_or_default(),
            stickiness: context_field.stickiness,
            legal_values: context_field
                .legal_values
                .into_iter()
                .map(|legal| (legal.value, legal.description.unwrap_or_default()))
                .collect(),
            focus: None,
        }
    }

    /// The form's fields: rows `v<i>.value` / `v<i>.description` for `i < valueCount`.
    fn of_form(form: &FormFields) -> FieldDraft {
        let count: usize = form.text("valueCount").parse().unwrap_or(0);
        FieldDraft {
            name: form.text("name").trim().to_owned(),
            description: form.text("description"),
            stickiness: form.checked("stickiness"),
            legal_values: (0..count)
                .map(|index| {
                    (
                        form.text(&format!("v{index}.value")).trim().to_owned(),
                        form.text(&format!("v{index}.description")),
                    )
                })
                .collect(),
            focus: None,
        }
    }

    fn input(&self, name: Option<String>) -> ContextFieldInput {
        ContextFieldInput {
            project: None,
            name,
            description: Some(self.description.clone()),
            stickiness: Some(self.stickiness),
            sort_order: None,
            legal_values: Some(
                self.legal_values
                    .iter()
                    .map(|(value, description)| LegalValue {
                        value: value.clone(),
                        description: Some(description.clone()).filter(|text| !text.is_empty()),
                    })
                    .collect(),
            ),
        }
    }
}

fn form_page(
    who: &SignedIn,
    place: Place<'_>,
    editing: Option<&str>,
    draft: &FieldDraft,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Response {
    let shell = who.shell();
    let focus = draft.focus.as_deref();
    let errors = FieldErrors::of(
        error,
        &[("name", "context-name"), ("legalValues", "legal-values")],
        "context-name",
    );
    let name_error = errors.at("context-name");
    let values_error = errors.at("legal-values");
    let (heading, action) = match editing {
        Some(name) => (
            format!("Edit context field {name}"),
            who.link(&place.path(&format!("/edit/{name}"))),
        ),
        None => (
            match place.0 {
                None => "New context field".to_owned(),
                Some(project) => format!("New context field of project {project}"),
            },
            who.link(&place.path("/create")),
        ),
    };
    let back = who.link(&place.path(""));
    let markup = shell.render(
        &heading,
        html! {
            div.page-head { div {
                h1 { (heading) }
                p.subtitle { a href=(back) { "← Context fields" } }
            } }
            (errors.general())
            form.form-narrow #context-field-form method="post" action=(action) novalidate data-redraw {
                (enter_saves("Save context field"))
                input type="hidden" name="csrf" value=(who.csrf);
                @if editing.is_none() {
                    (field("context-name", "Name", name_error, Some("URL-safe characters; it cannot be renamed"), html! {
                        input #context-name type="text" name="name" value=(draft.name) required autocomplete="off"
                            aria-describedby="context-name-hint"
                            aria-invalid=(if name_error.is_some() { "true" } else { "false" });
                    }))
                }
                (field("context-description", "Description", None, None, html! {
                    textarea #context-description name="description" rows="2" { (draft.description) }
                }))
                label.check {
                    input type="checkbox" name="stickiness" value="true" checked[draft.stickiness];
                    "Can be used as stickiness"
                }
                fieldset.legal-values aria-describedby="legal-values-error" {
                    legend { "Legal values" }
                    input type="hidden" name="valueCount" value=(draft.legal_values.len());
                    @if draft.legal_values.is_empty() {
                        p.muted { "No legal values: constraints may test any value." }
                    }
                    @for (index, (value, description)) in draft.legal_values.iter().enumerate() {
                        @let id = format!("v{index}-value");
                        div.legal-value {
                            (field(&id, &format!("Legal value {}", index + 1), None, None, html! {
                                input id=(id) type="text" name=(format!("v{index}.value")) value=(value) autocomplete="off"
                                    autofocus[focus == Some(id.as_str())];
                            }))
                            (field(&format!("v{index}-description"), &format!("Description of legal value {}", index + 1), None, None, html! {
                                input id=(format!("v{index}-description")) type="text" name=(format!("v{index}.description")) value=(description);
                            }))
                            button type="submit" formnovalidate name="intent" value=(format!("remove-value-{index}"))
                                aria-label=(format!("Remove legal value {}", index + 1)) { "Remove" }
                        }
                    }
                    p.field-error #legal-values-error aria-live="polite" {
                        @if let Some(message) = values_error { (message) }
                    }
                    button #add-value type="submit" formnovalidate name="intent" value="add-value"
                        autofocus[focus == Some("add-value")] { "Add legal value" }
                }
                div.actions {
                    button.primary type="submit" name="intent" value="save" { "Save context field" }
                    a href=(back) { "Cancel" }
                }
            }
        },
    );
    Page { status, markup }.into_response()
}

/// `GET /context/create`.
pub async fn new_field(who: SignedIn) -> Result<Response, UiError> {
    new_field_page(&who, Place(None))
}

/// The empty form of a new field of `place` (a project's: 404 for an unknown project, through the save).
pub(super) fn new_field_page(who: &SignedIn, place: Place<'_>) -> Result<Response, UiError> {
    who.ensure_may_submit(&place.template("/create"), &place.scope())?;
    Ok(form_page(
        who,
        place,
        None,
        &FieldDraft::default(),
        None,
        StatusCode::OK,
    ))
}

/// `GET /context/edit/<name>`.
pub async fn edit_field(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(name): Path<String>,
) -> Result<Response, UiError> {
    edit_field_page(&state, &who, Place(None), &name).await
}

/// The form of field `name` of `place` (404 if `place` does not own it).
pub(super) async fn edit_field_page(
    state: &AppState,
    who: &SignedIn,
    place: Place<'_>,
    name: &str,
) -> Result<Response, UiError> {
    who.ensure_may_submit(&place.template("/edit/{name}"), &place.scope())?;
    let mut conn = state.store.read().await?;
    let context_field = context_fields::get(&mut conn, place.0, name).await?;
    let draft = FieldDraft::of_field(context_field);
    Ok(form_page(
        who,
        place,
        Some(name),
        &draft,
        None,
        StatusCode::OK,
    ))
}

/// A post of the form: a row added or removed (the form again), or the save.
pub(super) async fn save(
    state: &AppState,
    who: &SignedIn,
    place: Place<'_>,
    editing: Option<&str>,
    form: &FormFields,
) -> Result<Response, UiError> {
    let mut draft = FieldDraft::of_form(form);
    match form.get("intent").unwrap_or("save") {
        "save" => {}
        intent => {
            edit_rows(intent, "value", &mut draft.legal_values, Default::default);
            draft.focus = row_focus(intent, "value", draft.legal_values.len(), |index| {
                format!("v{index}-value")
            });
            return Ok(form_page(who, place, editing, &draft, None, StatusCode::OK));
        }
    }
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        match (editing, place.0) {
            (Some(name), project) => {
                drop(context_fields::update(&mut tx, project, name, draft.input(None)).await?)
            }
            (None, None) => {
                let input = draft.input(Some(draft.name.clone()));
                drop(context_fields::create(&mut tx, input).await?)
            }
            (None, Some(project)) => {
                let input = draft.input(Some(draft.name.clone()));
                drop(context_fields::create_in_project(&mut tx, project, input).await?)
            }
        }
        state.commit(tx).await?;
        let done = if editing.is_some() {
            "saved"
        } else {
            "created"
        };
        Ok(Done::to(
            who.link(&place.path("")),
            format!("Context field {} {done}.", editing.unwrap_or(&draft.name)),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(form_page(
            who,
            place,
            editing,
            &draft,
            Some(error),
            StatusCode::OK,
        ))
    })
    .await
}

/// `POST /context/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    save(&state, &who, Place(None), None, &form).await
}

/// `POST /context/edit/<name>`.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    save(&state, &who, Place(None), Some(&name), &form).await
}

/// `POST /context/<name>/delete`: refused (400, as a page) for a built-in field, 409 for one in use.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    delete_field(&state, &who, Place(None), &name).await
}

/// Deletes field `name` of `place`, then back to the list.
pub(super) async fn delete_field(
    state: &AppState,
    who: &SignedIn,
    place: Place<'_>,
    name: &str,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    context_fields::delete(&mut tx, place.0, name).await?;
    state.commit(tx).await?;
    let done = Done::to(
        who.link(&place.path("")),
        format!("Context field {name} deleted."),
    );
    Ok(done.into_response())
}
