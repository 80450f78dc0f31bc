//! The instance-wide lists: `/segments` (each with its constraints and where it is used) and `/archive`
//! (archived flags: revive, delete for good).

use super::controls::when;
use super::page::{see_other, Nav, Page, UiError};
use super::session::{SignedIn, UiWrite};
use crate::domain::{feature_lookup, features, segments};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use maud::html;
use std::sync::Arc;
use vexil_shared::ApiError;

/// `GET /segments`.
pub async fn segments(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
) -> Result<Response, UiError> {
    let shell = who.shell(Nav::Segments, "default");
    let list = async {
        let mut conn = state.store.read().await?;
        segments::list(&mut conn).await
    }
    .await
    .map_err(|error| UiError::new(error, &shell))?
    .segments;
    let markup = shell.render(
        "Segments",
        html! {
            div.page-head {
                div {
                    h1 { "Segments" }
                    p.subtitle { "Reusable sets of constraints that strategies can add." }
                }
            }
            @if list.is_empty() {
                div.empty { p { "No segments yet." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Constraints" }
                            th scope="col" { "Used by" }
                            th.hide-narrow scope="col" { "Project" }
                        } }
                        tbody {
                            @for segment in &list {
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
                                    td { (segment.used_in_features) " flags in " (segment.used_in_projects) " projects" }
                                    td.hide-narrow { (segment.project.clone().unwrap_or_else(|| "all projects".to_owned())) }
                                }
                            }
                        }
                    }
                }
            }
        },
    );
    Ok(who.finish(Page::ok(markup)))
}

/// `GET /archive`.
pub async fn archive(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
) -> Result<Response, UiError> {
    let shell = who.shell(Nav::Archive, "default");
    let list = async {
        let mut conn = state.store.read().await?;
        features::archived(&mut conn, None).await
    }
    .await
    .map_err(|error| UiError::new(error, &shell))?
    .features;
    let markup = shell.render(
        "Archive",
        html! {
            div.page-head {
                div {
                    h1 { "Archive" }
                    p.subtitle { "Archived flags: out of every SDK's answers, their names still taken." }
                }
            }
            @if list.is_empty() {
                div.empty { p { "No archived flags." } }
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
                                                    button.danger type="submit" aria-label=(format!("Delete {} for good", flag.name)) { "Delete for good" }
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
