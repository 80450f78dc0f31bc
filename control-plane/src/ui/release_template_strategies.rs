//! A release template milestone's strategies: the strategy form (`strategy_form`'s, at a milestone: no
//! "Disabled", global segments only, a new flexibleRollout grouped by `{{featureName}}`) at
//! `/release-templates/<id>/milestones/<milestone>/strategies/create` and `…/edit?strategyId=`, and delete.
//! Writes through `domain::release_plans::templates` (Admins only, as the API).

use super::constraint_editor::ConstraintDraft;
use super::page::UiError;
use super::release_templates::ensure_may_edit;
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use super::strategy_form::{
    choices, form_edit, new_draft, render, FormPage, FormPlace, StrategyDraft,
};
use super::variant_editor::VariantDraft;
use crate::domain::release_plans::{templates, MilestoneStrategyInput};
use crate::http::state::AppState;
use crate::model::release_plan::{MilestoneStrategy, FEATURE_NAME_PLACEHOLDER};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

const MILESTONE: &str = "/release-templates/{id}/milestones/{milestone}/strategies";

/// The milestone strategy routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(&format!("{MILESTONE}/create"), get(page).post(save))
        .route(&format!("{MILESTONE}/edit"), get(page).post(save))
        .route(&format!("{MILESTONE}/delete"), post(delete))
}

#[derive(Debug, Deserialize)]
pub struct StrategyQuery {
    #[serde(rename = "strategyId")]
    strategy_id: Option<String>,
}

fn draft_of(strategy: &MilestoneStrategy) -> StrategyDraft {
    StrategyDraft {
        id: Some(strategy.id.clone()),
        name: strategy.strategy_name.clone(),
        title: strategy.title.clone().unwrap_or_default(),
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
        ..StrategyDraft::default()
    }
}

/// The form of milestone `milestone` (named `name`) of template `id`.
fn place(who: &SignedIn, (id, milestone, name): (&str, &str, &str), editing: bool) -> FormPlace {
    let template = who.link(&format!("/release-templates/edit/{id}"));
    let verb = if editing { "edit" } else { "create" };
    FormPlace {
        action: who.link(&format!(
            "/release-templates/{id}/milestones/{milestone}/strategies/{verb}"
        )),
        subtitle: html! { "Milestone " strong { (name) } " of " a href=(template) { "its release template" } },
        back: template,
        may_disable: false,
    }
}

/// The milestone's name and, when asked, its strategy `strategy_id`.
async fn milestone_of(
    state: &AppState,
    (id, milestone): (&str, &str),
    strategy_id: Option<&str>,
) -> Result<(String, Option<MilestoneStrategy>), ApiError> {
    let mut conn = state.store.read().await?;
    let template = templates::get(&mut conn, id).await?;
    let found = template
        .milestones
        .into_iter()
        .find(|candidate| candidate.id == milestone)
        .ok_or_else(|| ApiError::not_found(format!("Milestone {milestone} does not exist")))?;
    let strategy = match strategy_id {
        Some(strategy_id) => Some(
            found
                .strategies
                .iter()
                .find(|strategy| strategy.id == strategy_id)
                .cloned()
                .ok_or_else(|| ApiError::not_found("No strategy with this id in this milestone"))?,
        ),
        None => None,
    };
    Ok((found.name, strategy))
}

/// `GET …/strategies/create` and `…/edit?strategyId=`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((id, milestone)): Path<(String, String)>,
    Query(query): Query<StrategyQuery>,
) -> Result<Response, UiError> {
    ensure_may_edit(&who)?;
    let (name, strategy) =
        milestone_of(&state, (&id, &milestone), query.strategy_id.as_deref()).await?;
    let draft = match &strategy {
        Some(strategy) => draft_of(strategy),
        None => new_draft("", FEATURE_NAME_PLACEHOLDER, "flexibleRollout"),
    };
    let choices = choices(&state, None).await?;
    let page = FormPage {
        place: place(&who, (&id, &milestone, &name), draft.id.is_some()),
        draft: &draft,
        error: None,
        status: StatusCode::OK,
        focus: None,
    };
    Ok(render(&who, &choices, page).into_response())
}

/// `POST …/strategies/create` and `…/edit` (a posted `strategyId` says which): another row, another
/// strategy, or save.
pub async fn save(
    State(state): State<Arc<AppState>>,
    Path((id, milestone)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let (name, _) = milestone_of(&state, (&id, &milestone), None).await?;
    let choices = choices(&state, None).await?;
    let mut draft = StrategyDraft::from_form(&form);
    let redraw = |draft: &StrategyDraft, error: Option<&ApiError>, focus: Option<String>| {
        let page = FormPage {
            place: place(&who, (&id, &milestone, &name), draft.id.is_some()),
            draft,
            error,
            status: StatusCode::OK,
            focus,
        };
        render(&who, &choices, page).into_response()
    };
    if let Some(focus) = form_edit(form.get("intent").unwrap_or("save"), &mut draft) {
        return Ok(redraw(&draft, None, focus));
    }
    let definition = choices.definitions.iter().find(|d| d.name == draft.name);
    let done = async {
        let input = draft.to_input(definition)?;
        let input = MilestoneStrategyInput {
            id: None,
            milestone_id: None,
            sort_order: 0,
            title: input.title,
            strategy_name: input.name,
            parameters: input.parameters,
            constraints: input.constraints,
            variants: input.variants,
            segments: input.segments,
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        match &draft.id {
            Some(strategy) => {
                templates::update_strategy(&mut tx, &id, &milestone, strategy, input).await?;
            }
            None => {
                templates::add_strategy(&mut tx, &id, &milestone, input).await?;
            }
        }
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/release-templates/edit/{id}")),
            format!("The strategy of milestone {name} was saved."),
        ))
    }
    .await;
    written(done, async |error| Ok(redraw(&draft, Some(error), None))).await
}

/// `POST …/strategies/delete` (`strategyId`).
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path((id, milestone)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let strategy = form.text("strategyId");
    let mut tx = state.store.begin_write(&who.actor).await?;
    templates::delete_strategy(&mut tx, &id, &milestone, &strategy).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(&format!("/release-templates/edit/{id}")),
        "The strategy was removed from the milestone.",
    )
    .into_response())
}
