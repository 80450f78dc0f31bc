//! A flag's tags on its page: chips, each with a remove button ("Remove tag simple:beta"), and a form that
//! adds one (tag type and value), both through the admin API's own domain functions
//! (`tags::add_feature_tag`, `tags::remove_feature_tag`). A refused value draws the flag page again with
//! what was typed and the message beside the field.

use super::controls::field;
use super::dependencies::DependencyDraft;
use super::field_errors::FieldErrors;
use super::flag::draw;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use crate::domain::features;
use crate::domain::tags::{self, Tag, TagType};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects/{project}/features/{feature}/tags", post(add))
        .route(
            "/projects/{project}/features/{feature}/tags/remove",
            post(remove),
        )
}

/// The add-tag form as typed.
#[derive(Debug, Default, Clone)]
pub struct TagDraft {
    pub tag_type: String,
    pub value: String,
}

/// The tags section of the flag page at `base`: the flag's `tags`, and for who may write the form with the
/// `types` to choose from, as typed (`draft`) with its refusal.
pub fn section(
    who: &SignedIn,
    base: &str,
    tags: &[Tag],
    types: &[TagType],
    (draft, error): (&TagDraft, Option<&ApiError>),
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[("value", "tag-value"), ("type", "tag-type")],
        "tag-value",
    );
    let chosen = if draft.tag_type.is_empty() {
        "simple"
    } else {
        draft.tag_type.as_str()
    };
    let value_error = errors.at("tag-value");
    html! {
        section.card #tags aria-labelledby="tags-title" {
            h2 #tags-title { "Tags" }
            @if tags.is_empty() {
                p.muted { "No tags yet." }
            } @else {
                ul.chips aria-label="Tags of this flag" {
                    @for tag in tags {
                        @let name = format!("{}:{}", tag.tag_type, tag.value);
                        li {
                            span.chip.tag-chip {
                                (name)
                                @if who.may_write {
                                    form.inline method="post" action=(format!("{base}/tags/remove")) {
                                        input type="hidden" name="csrf" value=(who.csrf);
                                        input type="hidden" name="type" value=(tag.tag_type);
                                        input type="hidden" name="value" value=(tag.value);
                                        button.chip-remove type="submit" aria-label=(format!("Remove tag {name}"))
                                            title=(format!("Remove tag {name}")) { "×" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if who.may_write {
                form.tag-form method="post" action=(format!("{base}/tags")) novalidate {
                    input type="hidden" name="csrf" value=(who.csrf);
                    (errors.general())
                    (field("tag-type", "Tag type", errors.at("tag-type"), None, html! {
                        select #tag-type name="type" aria-invalid=(errors.invalid("tag-type")) {
                            @for tag_type in types {
                                option value=(tag_type.name) selected[tag_type.name == chosen] { (tag_type.name) }
                            }
                        }
                    }))
                    (field("tag-value", "Value", value_error, None, html! {
                        input #tag-value type="text" name="value" value=(draft.value) required autocomplete="off"
                            minlength="2" maxlength="50" aria-describedby="tag-value-error"
                            aria-invalid=(errors.invalid("tag-value"));
                    }))
                    button type="submit" { "Add tag" }
                }
            }
        }
    }
}

/// The flag page's address, after checking that the flag is in `project`.
async fn flag_page(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
) -> Result<String, ApiError> {
    let mut conn = state.store.read().await?;
    features::get(&mut conn, project, feature).await?;
    Ok(who.link(&format!("/projects/{project}/features/{feature}")))
}

/// `POST …/tags` (`type`, `value`): the tag added (created if new); a refusal draws the page again with
/// the form as typed.
pub async fn add(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = TagDraft {
        tag_type: form.text("type"),
        value: form.text("value"),
    };
    let page = flag_page(&state, &who, (&project, &feature)).await?;
    let done = async {
        let input = Tag {
            value: draft.value.clone(),
            tag_type: draft.tag_type.clone(),
            color: None,
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        let tag = tags::add_feature_tag(&mut tx, &feature, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            format!("{page}#tags"),
            format!("Tag {}:{} added to {feature}.", tag.tag_type, tag.value),
        ))
    }
    .await;
    written(done, async |error| {
        let place = (project.as_str(), feature.as_str());
        let dependency = (&DependencyDraft::default(), None);
        let markup = draw(&state, &who, place, None, dependency, (&draft, Some(error))).await?;
        Ok(Page::ok(markup).into_response())
    })
    .await
}

/// `POST …/tags/remove` (`type`, `value`).
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let (tag_type, value) = (form.text("type"), form.text("value"));
    let page = flag_page(&state, &who, (&project, &feature)).await?;
    let mut tx = state.store.begin_write(&who.actor).await?;
    tags::remove_feature_tag(&mut tx, &feature, &tag_type, &value).await?;
    state.commit(tx).await?;
    let done = Done::to(
        format!("{page}#tags"),
        format!("Tag {tag_type}:{value} removed from {feature}."),
    );
    Ok(done.into_response())
}
