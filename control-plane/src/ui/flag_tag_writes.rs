//! The posts of a flag's tags section (`flag_tags`): add and remove, through the admin API's own domain
//! functions (`tags::add_feature_tag`, `tags::remove_feature_tag`). A refused value draws the flag page again
//! with what was typed and the message beside the field.

use super::dependencies::DependencyDraft;
use super::flag::draw;
use super::flag_tags::TagDraft;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::SignedIn;
use super::session::UiWrite;
use crate::domain::features;
use crate::domain::tags::{self, Tag};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
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
