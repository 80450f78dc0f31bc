//! A flag's lifecycle on its page: the stages it entered with when, its current stage, and for those who may
//! update the flag (`UPDATE_FEATURE` in its project, `ui::PERMISSIONS`) "Mark completed" (kept or discarded,
//! with what was kept) and "Uncomplete"; the two posts go through `domain::lifecycle`, as the admin API's
//! `…/lifecycle/complete` and `…/lifecycle/uncomplete`.

use super::controls::{field, when};
use super::page::UiError;
use super::scope::Done;
use super::session::{SignedIn, UiWrite};
use super::vocabulary::{stage_badge, stage_words};
use crate::domain::lifecycle::{
    self, CompletedStatus, FeatureLifecycleCompleted, FeatureLifecycleStage, LifecycleStage,
};
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
        .route(
            "/projects/{project}/features/{feature}/lifecycle/complete",
            post(complete),
        )
        .route(
            "/projects/{project}/features/{feature}/lifecycle/uncomplete",
            post(uncomplete),
        )
}

/// The lifecycle card: the stages entered (`stages`, in order; the last is the current one) and, when
/// `may_complete`, the form that marks the flag completed or takes it back.
pub fn section(
    who: &SignedIn,
    base: &str,
    stages: &[FeatureLifecycleStage],
    may_complete: bool,
) -> Markup {
    let current = stages
        .last()
        .map_or(LifecycleStage::Initial, |entry| entry.stage);
    html! {
        section.card aria-labelledby="lifecycle-title" {
            h2 #lifecycle-title { "Lifecycle" }
            p { "Stage: " (stage_badge(current)) }
            ol.plain aria-label="Stages entered" {
                @for entry in stages {
                    li {
                        (stage_words(entry.stage))
                        @if let Some(status) = &entry.status { " (" (status) ")" }
                        " · " (when(&entry.entered_stage_at.to_string()))
                    }
                }
            }
            @if may_complete && current == LifecycleStage::Completed {
                form method="post" action=(format!("{base}/lifecycle/uncomplete")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    button type="submit" { "Uncomplete" }
                }
            } @else if may_complete && current != LifecycleStage::Archived {
                form.form-narrow method="post" action=(format!("{base}/lifecycle/complete")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    (field("lifecycle-status", "Outcome", None, None, html! {
                        select #lifecycle-status name="status" {
                            option value="kept" { "Kept: the feature stays, the flag goes" }
                            option value="discarded" { "Discarded: the feature goes with the flag" }
                        }
                    }))
                    (field("lifecycle-status-value", "What was kept", None,
                        Some("Optional: the variant or behaviour kept."), html! {
                        input #lifecycle-status-value type="text" name="statusValue" maxlength="200"
                            aria-describedby="lifecycle-status-value-hint";
                    }))
                    div.actions { button.primary type="submit" { "Mark completed" } }
                }
            }
        }
    }
}

/// `POST …/lifecycle/complete` (`status`, `statusValue`).
pub async fn complete(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let status = match form.text("status").as_str() {
        "kept" => CompletedStatus::Kept,
        "discarded" => CompletedStatus::Discarded,
        _ => {
            return Err(ApiError::invalid_field("status", "Choose kept or discarded").into());
        }
    };
    let input = FeatureLifecycleCompleted {
        status,
        status_value: Some(form.text("statusValue")),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        lifecycle::complete(&mut tx, &project, &feature, &input).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(back(
            &who,
            &project,
            &feature,
            "The flag is marked completed.",
        ))
    }
    .await;
    Ok(done?.into_response())
}

/// `POST …/lifecycle/uncomplete`.
pub async fn uncomplete(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        lifecycle::uncomplete(&mut tx, &project, &feature).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(back(
            &who,
            &project,
            &feature,
            "The flag is no longer completed.",
        ))
    }
    .await;
    Ok(done?.into_response())
}

fn back(who: &SignedIn, project: &str, feature: &str, message: &'static str) -> Done {
    Done::to(
        who.link(&format!("/projects/{project}/features/{feature}")),
        message,
    )
}
