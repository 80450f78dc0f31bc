//! The instance-wide lists, each searchable and a page at a time: `/segments` (each with its constraints and
//! where it is used; create, edit with the strategy form's constraint editor, delete) and `/archive`
//! (archived flags: revive, delete for good).

use super::controls::{enter_saves, field, when};
use super::field_errors::FieldErrors;
use super::page::{see_other, Nav, Page, UiError};
use super::paging::{Paged, PAGE_SIZE};
use super::session::{SignedIn, UiWrite};
use super::strategy_form::{
    constraint_fields, constraint_rows, constraints_of, edit_constraints, ConstraintDraft,
};
use crate::domain::search::features::{self as feature_search, FeatureSearchQuery};
use crate::domain::segments::{Segment, SegmentInput};
use crate::domain::{context_fields, feature_lookup, features, segments, strategy_usage};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// `GET /segments`.
pub async fn segments(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell(Nav::Segments, "default");
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
    .await
    .map_err(|error| UiError::new(error, &shell))?;
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
    let markup = shell.render(
        "Segments",
        html! {
            div.page-head {
                div {
                    h1 { "Segments" }
                    p.subtitle { "Reusable sets of constraints that strategies can add." }
                }
                @if who.may_write {
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
                            @if who.may_write { th scope="col" { "Actions" } }
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
                                        @for constraint in &segment.constraints {
                                            div { code { (constraint.context_name) " " (constraint.operator) " "
                                                (constraint.value.clone().unwrap_or_else(|| constraint.values.join(", "))) } }
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
                                    @if who.may_write {
                                        td {
                                            div.row-actions {
                                                a.button href=(who.link(&format!("/segments/edit/{}", segment.id)))
                                                    aria-label=(format!("Edit {}", segment.name)) { "Edit" }
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
                (paged.pager(|page| query.page_link(&who, "/segments", page)))
            }
        },
    );
    Ok(who.finish(Page::ok(markup)))
}

/// The archive's and the segments' query string: the search text and the page.
#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    query: String,
    page: Option<usize>,
}

impl ListQuery {
    /// The link to page `page` of the list at `path`, keeping the search.
    fn page_link(&self, who: &SignedIn, path: &str, page: usize) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if !self.query.trim().is_empty() {
            query.append_pair("query", self.query.trim());
        }
        query.append_pair("page", &page.to_string());
        who.link(&format!("{path}?{}", query.finish()))
    }

    /// The search form of a list.
    fn form(&self, who: &SignedIn, path: &str, label: &str, placeholder: &str) -> Markup {
        html! {
            form.filters method="get" action=(who.link(path)) role="search" {
                div.field {
                    label for="search" { (label) }
                    input #search type="search" name="query" value=(self.query) placeholder=(placeholder);
                }
                button type="submit" { "Search" }
            }
        }
    }

    /// The empty state of a list: nothing at all, or nothing matching the search.
    fn empty(&self, who: &SignedIn, path: &str, none: &str, what: &str) -> Markup {
        html! {
            div.empty {
                @if self.query.trim().is_empty() {
                    p { (none) }
                } @else {
                    p { "No " (what) " matches \u{201c}" (self.query.trim()) "\u{201d}." }
                    a href=(who.link(path)) { "Clear the search" }
                }
            }
        }
    }
}

/// `GET /archive`: archived flags, the last archived first, found by name or description, a page at a time
/// (through the flag search, so one page costs the same with 10 or 100,000 archived flags).
pub async fn archive(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let shell = who.shell(Nav::Archive, "default");
    let asked = query.page.unwrap_or(1).max(1);
    let search = |page: usize| FeatureSearchQuery {
        query: Some(query.query.trim().to_owned()).filter(|text| !text.is_empty()),
        archived: Some("IS:true".to_owned()),
        sort_by: Some("archivedAt".to_owned()),
        sort_order: Some("desc".to_owned()),
        offset: Some(((page - 1) * PAGE_SIZE).to_string()),
        limit: Some(PAGE_SIZE.to_string()),
        ..FeatureSearchQuery::default()
    };
    let (list, paged) = async {
        let mut conn = state.store.read().await?;
        let mut result = feature_search::search(&mut conn, &search(asked)).await?;
        let paged = Paged::new(Some(asked), usize::try_from(result.total).unwrap_or(0));
        if paged.page != asked {
            // Past the end: the last page.
            result = feature_search::search(&mut conn, &search(paged.page)).await?;
        }
        Ok::<_, ApiError>((result.features, paged))
    }
    .await
    .map_err(|error| UiError::new(error, &shell))?;
    let markup = shell.render(
        "Archive",
        html! {
            div.page-head {
                div {
                    h1 { "Archive" }
                    p.subtitle { "Archived flags: out of every SDK's answers, their names still taken." }
                }
            }
            (query.form(&who, "/archive", "Search archived flags", "Name or description"))
            @if list.is_empty() {
                (query.empty(&who, "/archive", "No archived flags.", "archived flag"))
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "Project" }
                            th.hide-narrow scope="col" { "Archived" }
                            @if who.may_write { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for flag in &list {
                                tr {
                                    td.flag-name {
                                        strong { (flag.name) }
                                        @if let Some(description) = flag.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td.hide-narrow { (flag.project) }
                                    td.hide-narrow { (flag.archived_at.as_deref().map(when).unwrap_or_default()) }
                                    @if who.may_write {
                                        td {
                                            div.row-actions {
                                                form.inline method="post" action=(who.link(&format!("/archive/{}/revive", flag.name))) {
                                                    input type="hidden" name="csrf" value=(who.csrf);
                                                    button type="submit" aria-label=(format!("Revive {}", flag.name)) { "Revive" }
                                                }
                                                form.inline method="post" action=(who.link(&format!("/archive/{}/delete", flag.name))) {
                                                    input type="hidden" name="csrf" value=(who.csrf);
                                                    button.danger type="submit" aria-label=(format!("Delete for good: {}", flag.name)) { "Delete for good" }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                (paged.pager(|page| query.page_link(&who, "/archive", page)))
            }
        },
    );
    Ok(who.finish(Page::ok(markup)))
}

/// `POST /archive/<flag>/revive`: back, off everywhere, on its page.
pub async fn revive(
    State(state): State<Arc<AppState>>,
    Path(feature): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Response {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        features::revive(&mut tx, &feature, &state.limits).await?;
        let project = feature_lookup::project_of(tx.conn(), &feature).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(project)
    }
    .await;
    match done {
        Ok(project) => see_other(&who.link(&format!("/projects/{project}/features/{feature}"))),
        Err(error) => UiError::new(error, &who.shell(Nav::Archive, "default")).into_response(),
    }
}

/// `POST /archive/<flag>/delete`: gone for good.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(feature): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Response {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        features::delete_archived(&mut tx, &feature).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match done {
        Ok(()) => see_other(&who.link("/archive")),
        Err(error) => UiError::new(error, &who.shell(Nav::Archive, "default")).into_response(),
    }
}

/// What the segment form holds.
#[derive(Debug, Default)]
struct SegmentDraft {
    name: String,
    description: String,
    project: String,
    constraints: Vec<ConstraintDraft>,
}

async fn segment_form(
    state: &AppState,
    who: &SignedIn,
    id: Option<i64>,
    draft: &SegmentDraft,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Response {
    let shell = who.shell(Nav::Segments, "default");
    let context_fields = async {
        let mut conn = state.store.read().await?;
        context_fields::list(&mut conn).await
    }
    .await;
    let context_fields = match context_fields {
        Ok(context_fields) => context_fields,
        Err(error) => return UiError::new(error, &shell).into_response(),
    };
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
            form.form-narrow method="post" action=(action) {
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
                    (constraint_rows(&context_fields, &draft.constraints, true, &errors))
                    button type="submit" formnovalidate name="intent" value="add-constraint" { "Add constraint" }
                }
                div.actions {
                    button.primary type="submit" name="intent" value="save" { "Save segment" }
                    button #refresh-form type="submit" formnovalidate name="intent" value="refresh" { "Update form" }
                    a href=(who.link("/segments")) { "Cancel" }
                }
            }
        },
    );
    who.finish(Page { status, markup })
}

/// `GET /segments/create`.
pub async fn new_segment(State(state): State<Arc<AppState>>, who: SignedIn) -> Response {
    if let Err(error) = who.ensure_may_write() {
        return UiError::new(error, &who.shell(Nav::Segments, "default")).into_response();
    }
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
) -> Response {
    let shell = who.shell(Nav::Segments, "default");
    if let Err(error) = who.ensure_may_write() {
        return UiError::new(error, &shell).into_response();
    }
    let found = async {
        let mut conn = state.store.read().await?;
        segments::get(&mut conn, id).await
    }
    .await;
    match found {
        Ok(segment) => {
            let draft = SegmentDraft {
                name: segment.name,
                description: segment.description.unwrap_or_default(),
                project: segment.project.unwrap_or_default(),
                constraints: segment
                    .constraints
                    .iter()
                    .map(ConstraintDraft::of)
                    .collect(),
            };
            segment_form(&state, &who, Some(id), &draft, None, StatusCode::OK).await
        }
        Err(error) => UiError::new(error, &shell).into_response(),
    }
}

async fn save_segment(
    state: &AppState,
    who: &SignedIn,
    id: Option<i64>,
    form: &super::session::FormFields,
) -> Response {
    let mut draft = SegmentDraft {
        name: form.text("name").trim().to_owned(),
        description: form.text("description"),
        project: form.text("project").trim().to_owned(),
        constraints: constraints_of(form),
    };
    let intent = form.get("intent").unwrap_or("save");
    if edit_constraints(intent, &mut draft.constraints) || intent != "save" {
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
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        match id {
            Some(id) => segments::update(&mut tx, id, input, &state.limits).await?,
            None => drop(segments::create(&mut tx, input, &state.limits).await?),
        }
        state.commit(tx).await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match done {
        Ok(()) => see_other(&who.link("/segments")),
        Err(error) if matches!(error.kind.status(), 400 | 409) => {
            let status =
                StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::BAD_REQUEST);
            segment_form(state, who, id, &draft, Some(&error), status).await
        }
        Err(error) => UiError::new(error, &who.shell(Nav::Segments, "default")).into_response(),
    }
}

/// `POST /segments/create`.
pub async fn create_segment(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Response {
    save_segment(&state, &who, None, &form).await
}

/// `POST /segments/edit/<id>`.
pub async fn update_segment(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite,
) -> Response {
    save_segment(&state, &who, Some(id), &form).await
}

/// `POST /segments/<id>/delete`: refused (409, as a page) while a strategy uses it.
pub async fn delete_segment(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite,
) -> Response {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        segments::delete(&mut tx, id).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match done {
        Ok(()) => see_other(&who.link("/segments")),
        Err(error) => UiError::new(error, &who.shell(Nav::Segments, "default")).into_response(),
    }
}
