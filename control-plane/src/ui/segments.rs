//! `/segments`: the segments, searchable and a page at a time, each with its constraints and where it is
//! used; create and edit with the constraint editor; delete.

use super::constraint_editor::{
    constraint_fields, constraint_focus, constraint_rows, constraints_of, edit_constraints,
    ConstraintDraft,
};
use super::controls::{enter_saves, field};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::{ListQuery, Paged};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use super::vocabulary::constraint_chip;
use crate::domain::access::Scope;
use crate::domain::segments::{Segment, SegmentInput};
use crate::domain::{change_requests, context_fields, segments, strategy_usage};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use std::sync::Arc;
use vexil_shared::ApiError;

/// The segment pages' routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/segments", get(list))
        .route("/segments/create", get(new_segment).post(create))
        .route("/segments/edit/{id}", get(edit_segment).post(update))
        .route("/segments/{id}/delete", post(delete))
}

/// `GET /segments`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let (list, used_by) = async {
        let mut conn = state.store.read().await?;
        let list: Vec<Segment> = segments::list(&mut conn)
            .await?
            .segments
            .into_iter()
            .filter(|segment| segment.matches(&query.query))
            .collect();
        let used_by = strategy_usage::of_every_segment(&mut conn).await?;
        Ok::<_, ApiError>((list, used_by))
    }
    .await?;
    let paged = Paged::new(query.page, list.len());
    let used_by = |segment: &Segment| -> Vec<String> {
        let mut flags: Vec<String> = used_by
            .get(&segment.id)
            .into_iter()
            .flatten()
            .map(|strategy| format!("{} ({})", strategy.feature_name, strategy.environment))
            .collect();
        flags.dedup();
        flags
    };
    let root = Scope::default();
    let may_create = who.may_submit("/segments/create", &root);
    let may_edit = who.may_submit("/segments/edit/{id}", &root);
    let may_delete = who.may_submit("/segments/{id}/delete", &root);
    let markup = shell.render(
        "Segments",
        html! {
            div.page-head {
                div {
                    h1 { "Segments" }
                    p.subtitle { "Reusable sets of constraints that strategies can add." }
                }
                @if may_create {
                    a.button.primary href=(who.link("/segments/create")) { "New segment" }
                }
            }
            (query.form(&who, "/segments", "Search segments", "Name or description"))
            @if list.is_empty() {
                (query.empty(&who, "/segments", "No segments yet.", "segment"))
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Constraints" }
                            th scope="col" { "Used by" }
                            th.hide-narrow scope="col" { "Project" }
                            @if may_edit || may_delete { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for segment in paged.slice(&list) {
                                @let used_by = used_by(segment);
                                tr {
                                    td.flag-name {
                                        strong { (segment.name) }
                                        @if let Some(description) = segment.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td {
                                        @if segment.constraints.is_empty() { span.muted { "none: everyone" } }
                                        @else {
                                            ul.chips aria-label=(format!("Conditions of {}, all must match", segment.name)) {
                                                @for constraint in &segment.constraints { li { (constraint_chip(constraint)) } }
                                            }
                                        }
                                    }
                                    td {
                                        @if used_by.is_empty() {
                                            span.muted { "not used" }
                                        } @else {
                                            (used_by.join(", "))
                                        }
                                    }
                                    td.hide-narrow { (segment.project.clone().unwrap_or_else(|| "all projects".to_owned())) }
                                    @if may_edit || may_delete {
                                        td {
                                            div.row-actions {
                                                @if may_edit {
                                                    a.button href=(who.link(&format!("/segments/edit/{}", segment.id)))
                                                        aria-label=(format!("Edit {}", segment.name)) { "Edit" }
                                                }
                                                @if may_delete {
                                                    form.inline method="post" action=(who.link(&format!("/segments/{}/delete", segment.id))) {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        button.danger type="submit" aria-label=(format!("Delete {}", segment.name)) { "Delete" }
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
                (paged.pager(|page| query.page_link(&who, "/segments", page)))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// What the segment form holds.
#[derive(Debug, Default)]
struct SegmentDraft {
    name: String,
    description: String,
    project: String,
    constraints: Vec<ConstraintDraft>,
    /// The control that takes the focus (after a constraint was added or removed).
    focus: Option<String>,
}

async fn segment_form(
    state: &AppState,
    who: &SignedIn,
    id: Option<i64>,
    draft: &SegmentDraft,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let focus = draft.focus.as_deref();
    let mut conn = state.store.read().await?;
    // The instance's fields and, for a segment of a project, that project's.
    let project = Some(draft.project.as_str()).filter(|project| !project.is_empty());
    let context_fields = context_fields::usable_in(&mut conn, project).await?;
    drop(conn);
    let mut fields = vec![
        ("name".to_owned(), "segment-name".to_owned()),
        ("description".to_owned(), "segment-description".to_owned()),
        ("project".to_owned(), "segment-project".to_owned()),
    ];
    fields.extend(constraint_fields(&draft.constraints));
    let errors = FieldErrors::of(error, &fields, "segment-name");
    let heading = if id.is_some() {
        "Edit segment"
    } else {
        "New segment"
    };
    let action = match id {
        Some(id) => who.link(&format!("/segments/edit/{id}")),
        None => who.link("/segments/create"),
    };
    let markup = shell.render(
        heading,
        html! {
            div.page-head { div { h1 { (heading) } p.subtitle { a href=(who.link("/segments")) { "← Segments" } } } }
            (errors.general())
            form.form-narrow #segment-form method="post" action=(action) data-redraw {
                (enter_saves("Save segment"))
                input type="hidden" name="csrf" value=(who.csrf);
                (field("segment-name", "Name", errors.at("segment-name"), None, html! {
                    input #segment-name type="text" name="name" value=(draft.name) required
                        aria-describedby="segment-name-error" aria-invalid=(errors.invalid("segment-name"));
                }))
                (field("segment-description", "Description", errors.at("segment-description"), None, html! {
                    textarea #segment-description name="description" rows="2"
                        aria-describedby="segment-description-error" aria-invalid=(errors.invalid("segment-description")) { (draft.description) }
                }))
                (field("segment-project", "Project", errors.at("segment-project"), Some("Empty: every project may use it"), html! {
                    input #segment-project type="text" name="project" value=(draft.project)
                        aria-describedby="segment-project-hint segment-project-error" aria-invalid=(errors.invalid("segment-project"));
                }))
                fieldset {
                    legend { "Constraints" }
                    (constraint_rows(&context_fields, &draft.constraints, (true, None), &errors, focus))
                    button #add-constraint type="submit" formnovalidate name="intent" value="add-constraint"
                        autofocus[focus == Some("add-constraint")] { "Add constraint" }
                }
                div.actions {
                    button.primary type="submit" name="intent" value="save" { "Save segment" }
                    button #refresh-form type="submit" formnovalidate name="intent" value="refresh"
                        autofocus[focus == Some("refresh-form")] { "Update form" }
                    a href=(who.link("/segments")) { "Cancel" }
                }
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

/// `GET /segments/create`.
pub async fn new_segment(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
) -> Result<Response, UiError> {
    who.ensure_may_submit("/segments/create", &Scope::default())?;
    segment_form(
        &state,
        &who,
        None,
        &SegmentDraft::default(),
        None,
        StatusCode::OK,
    )
    .await
}

/// `GET /segments/edit/<id>`.
pub async fn edit_segment(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.ensure_may_submit("/segments/edit/{id}", &Scope::default())?;
    let segment = {
        let mut conn = state.store.read().await?;
        segments::get(&mut conn, id).await?
    };
    let draft = SegmentDraft {
        name: segment.name,
        description: segment.description.unwrap_or_default(),
        project: segment.project.unwrap_or_default(),
        constraints: segment
            .constraints
            .iter()
            .map(ConstraintDraft::of)
            .collect(),
        focus: None,
    };
    segment_form(&state, &who, Some(id), &draft, None, StatusCode::OK).await
}

async fn save_segment(
    state: &AppState,
    who: &SignedIn,
    id: Option<i64>,
    form: &super::session::FormFields,
) -> Result<Response, UiError> {
    let mut draft = SegmentDraft {
        name: form.text("name").trim().to_owned(),
        description: form.text("description"),
        project: form.text("project").trim().to_owned(),
        constraints: constraints_of(form),
        focus: None,
    };
    let intent = form.get("intent").unwrap_or("save");
    if edit_constraints(intent, &mut draft.constraints) || intent != "save" {
        draft.focus = constraint_focus(intent, &draft.constraints)
            .or_else(|| (intent != "save").then(|| "refresh-form".to_owned()));
        return segment_form(state, who, id, &draft, None, StatusCode::OK).await;
    }
    let input = SegmentInput {
        name: draft.name.clone(),
        description: Some(draft.description.clone()).filter(|text| !text.is_empty()),
        project: Some(draft.project.clone()).filter(|project| !project.is_empty()),
        constraints: draft
            .constraints
            .iter()
            .map(ConstraintDraft::to_constraint)
            .collect(),
    };
    // An edit of a segment used where change requests are on joins the caller's draft there.
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let proposed = match id {
            Some(id) => {
                change_requests::make_or_propose_segment(&mut tx, id, input, &state.limits).await?
            }
            None => segments::create(&mut tx, input, &state.limits)
                .await
                .map(|_| None)?,
        };
        state.commit(tx).await?;
        Ok(match proposed {
            None if id.is_some() => Done::to(
                who.link("/segments"),
                format!("Segment {} saved.", draft.name),
            ),
            None => Done::to(
                who.link("/segments"),
                format!("Segment {} created.", draft.name),
            ),
            Some(request) => Done::to(
                who.link(&format!(
                    "/projects/{}/change-requests/{}",
                    request.project, request.id
                )),
                format!(
                    "Change requests are on where segment {} is used: your edit was added to this \
                     request instead of being made. It is applied once the request is approved.",
                    draft.name
                ),
            ),
        })
    }
    .await;
    written(done, async |error| {
        segment_form(state, who, id, &draft, Some(error), StatusCode::OK).await
    })
    .await
}

/// `POST /segments/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    save_segment(&state, &who, None, &form).await
}

/// `POST /segments/edit/<id>`.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    save_segment(&state, &who, Some(id), &form).await
}

/// `POST /segments/<id>/delete`: refused (409, as a page) while a strategy uses it.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    segments::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(who.link("/segments"), "The segment was deleted.").into_response())
}
