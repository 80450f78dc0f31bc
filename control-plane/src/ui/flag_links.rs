//! A flag's links (`domain::feature_links`: the ticket, the design, the dashboard that belong with it): listed
//! on the flag page ([`section`]), added and changed at `/projects/<p>/features/<f>/links`, through the admin
//! API's own domain functions. Writes need `UPDATE_FEATURE` in the project (`ui::PERMISSIONS`), as
//! `POST …/features/:f/link` does. A refused form is drawn again with what was typed and the message beside
//! its field.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::feature_links::{self, FeatureLink, LinkInput};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

/// The route template of the form that adds a link (the key of its permission).
pub const ADD_FORM: &str = "/projects/{project}/features/{feature}/links";

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(ADD_FORM, get(list).post(create))
        .route(
            "/projects/{project}/features/{feature}/links/{id}",
            get(edit).post(update),
        )
        .route(
            "/projects/{project}/features/{feature}/links/{id}/remove",
            post(remove),
        )
}

/// What a link is called on the page: its title, else its address.
fn label(link: &FeatureLink) -> &str {
    link.title.as_deref().unwrap_or(&link.url)
}

/// The links section of the flag page at `base`: each link (opens the address), and for who may change them
/// the way to the links page.
pub fn section(base: &str, links: &[FeatureLink], may_change: bool) -> Markup {
    html! {
        section.card #links aria-labelledby="links-title" {
            div.card-head {
                h2 #links-title { "Links" }
                @if may_change {
                    div.row-actions { a.button href=(format!("{base}/links")) { "Add or change links" } }
                }
            }
            @if links.is_empty() {
                p.muted { "No links yet: a ticket, a design or a dashboard that belongs with this flag." }
            } @else {
                ul.link-list aria-label="Links of this flag" {
                    @for link in links {
                        li {
                            a href=(link.url) rel="noopener noreferrer" { (label(link)) }
                            @if link.title.is_some() { " " span.muted.link-url { (link.url) } }
                        }
                    }
                }
            }
        }
    }
}

/// The body a form describes.
fn input_of(form: &FormFields) -> LinkInput {
    LinkInput {
        url: form.text("url"),
        title: Some(form.text("title")),
    }
}

/// The add or edit form, filled from `form`, with `error` beside its field.
fn link_form(
    who: &SignedIn,
    action: &str,
    (form, error): (&FormFields, Option<&ApiError>),
    (submit, cancel): (&str, Option<&str>),
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[("url", "link-url"), ("title", "link-title")],
        "link-url",
    );
    html! {
        (errors.general())
        form.form-narrow method="post" action=(action) novalidate {
            input type="hidden" name="csrf" value=(who.csrf);
            (field("link-url", "Address", errors.at("link-url"),
                Some("An http:// or https:// address"), html! {
                input #link-url type="url" name="url" value=(form.text("url")) required maxlength="10000"
                    autocomplete="url" aria-invalid=(errors.invalid("link-url"))
                    aria-describedby="link-url-hint link-url-error";
            }))
            (field("link-title", "Title", errors.at("link-title"),
                Some("Optional: what people read instead of the address, up to 100 characters"), html! {
                input #link-title type="text" name="title" value=(form.text("title")) maxlength="100"
                    aria-invalid=(errors.invalid("link-title"))
                    aria-describedby="link-title-hint link-title-error";
            }))
            div.actions {
                button.primary type="submit" { (submit) }
                @if let Some(cancel) = cancel { a href=(cancel) { "Cancel" } }
            }
        }
    }
}

/// The flag's links, after checking that the flag is in `project` and that the caller may change them.
async fn links_of(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
) -> Result<Vec<FeatureLink>, ApiError> {
    who.ensure_may_submit(ADD_FORM, &Scope::project(project))?;
    let mut conn = state.store.read().await?;
    feature_links::of_feature_in(&mut conn, project, feature).await
}

/// The links page: the list with Edit and Remove, and the form for a new one as typed.
async fn list_page(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
    (form, error): (&FormFields, Option<&ApiError>),
    status: StatusCode,
) -> Result<Response, UiError> {
    let links = links_of(state, who, (project, feature)).await?;
    let flag_page = who.link(&format!("/projects/{project}/features/{feature}"));
    let markup = who.shell().render(
        &format!("Links of {feature}"),
        html! {
            div.page-head { div {
                h1 { "Links of " (feature) }
                p.subtitle { a href=(format!("{flag_page}#links")) { "← " (feature) } " · Shown on the flag's page, for everyone who reads it." }
            } }
            @if links.is_empty() {
                div.empty { p { "No links yet." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Title" }
                            th scope="col" { "Address" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for link in &links {
                                tr {
                                    td data-label="Title" { (link.title.as_deref().unwrap_or("—")) }
                                    td data-label="Address" { a.link-url href=(link.url) rel="noopener noreferrer" { (link.url) } }
                                    td data-label="Actions" {
                                        a href=(format!("{flag_page}/links/{}", link.id))
                                            aria-label=(format!("Edit link {}", label(link))) { "Edit" }
                                        " "
                                        form.inline method="post" action=(format!("{flag_page}/links/{}/remove", link.id)) {
                                            input type="hidden" name="csrf" value=(who.csrf);
                                            button.danger type="submit" aria-label=(format!("Remove link {}", label(link))) { "Remove" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="new-link-title" {
                h2 #new-link-title { "New link" }
                (link_form(who, &format!("{flag_page}/links"), (form, error), ("Add link", None)))
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

/// `GET /projects/<p>/features/<f>/links`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
) -> Result<Response, UiError> {
    let fresh = (&FormFields::default(), None);
    list_page(&state, &who, (&project, &feature), fresh, StatusCode::OK).await
}

/// `POST /projects/<p>/features/<f>/links` (`url`, `title`): a new link.
pub async fn create(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let link = feature_links::create(&mut tx, &project, &feature, input_of(&form)).await?;
        state.commit(tx).await?;
        let page = who.link(&format!("/projects/{project}/features/{feature}/links"));
        Ok(Done::to(page, format!("Link {} added.", label(&link))))
    }
    .await;
    written(done, async |error| {
        let typed = (&form, Some(error));
        list_page(
            &state,
            &who,
            (&project, &feature),
            typed,
            StatusCode::BAD_REQUEST,
        )
        .await
    })
    .await
}

fn edit_page(
    who: &SignedIn,
    (project, feature, id): (&str, &str, &str),
    form: (&FormFields, Option<&ApiError>),
    status: StatusCode,
) -> Response {
    let links = who.link(&format!("/projects/{project}/features/{feature}/links"));
    let markup = who.shell().render(
        "Edit link",
        html! {
            div.page-head { div {
                h1 { "Edit link" }
                p.subtitle { a href=(links) { "← Links of " (feature) } }
            } }
            (link_form(who, &format!("{links}/{id}"), form, ("Save link", Some(&links))))
        },
    );
    Page { status, markup }.into_response()
}

/// `GET /projects/<p>/features/<f>/links/<id>`: the edit form.
pub async fn edit(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature, id)): Path<(String, String, String)>,
) -> Result<Response, UiError> {
    let links = links_of(&state, &who, (&project, &feature)).await?;
    let link = (links.into_iter().find(|link| link.id == id))
        .ok_or_else(|| ApiError::not_found(format!("Flag {feature} has no link {id}")))?;
    let mut fields = vec![("url".to_owned(), link.url)];
    fields.extend(link.title.map(|title| ("title".to_owned(), title)));
    let place = (project.as_str(), feature.as_str(), id.as_str());
    let form = (&FormFields(fields), None);
    Ok(edit_page(&who, place, form, StatusCode::OK))
}

/// `POST /projects/<p>/features/<f>/links/<id>` (`url`, `title`).
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path((project, feature, id)): Path<(String, String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let place = (project.as_str(), feature.as_str(), id.as_str());
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        feature_links::update(&mut tx, place, input_of(&form)).await?;
        state.commit(tx).await?;
        let page = who.link(&format!("/projects/{project}/features/{feature}/links"));
        Ok(Done::to(page, "The link was saved."))
    }
    .await;
    written(done, async |error| {
        let typed = (&form, Some(error));
        Ok(edit_page(&who, place, typed, StatusCode::BAD_REQUEST))
    })
    .await
}

/// `POST /projects/<p>/features/<f>/links/<id>/remove`.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path((project, feature, id)): Path<(String, String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    feature_links::delete(&mut tx, (&project, &feature, &id)).await?;
    state.commit(tx).await?;
    let page = who.link(&format!("/projects/{project}/features/{feature}/links"));
    Ok(Done::to(page, "The link was removed.").into_response())
}
