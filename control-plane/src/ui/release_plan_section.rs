//! A flag's release plan in one environment, on its page: the plan's milestones in order, the active one
//! marked, each with its strategies in a few words, its progression, and a "Start" button; "Resume" when
//! its progression is paused; "Remove release plan"; where there is none, "Apply a release template". Its
//! posts go through `domain::release_plans` (refused where change requests are on: the error page says so).

use super::page::UiError;
use super::scope::Done;
use super::session::{SignedIn, UiWrite};
use super::vocabulary::{strategy_heading, StrategyNames};
use crate::domain::access::Scope;
use crate::domain::release_plans::{plans, progressions, ReleasePlan, ReleasePlanTemplate};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;

/// The release-plan posts of a flag in an environment.
pub fn routes() -> Router<Arc<AppState>> {
    const PLAN: &str =
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan";
    Router::new()
        .route(PLAN, post(apply))
        .route(&format!("{PLAN}/start"), post(start))
        .route(&format!("{PLAN}/resume"), post(resume))
        .route(&format!("{PLAN}/remove"), post(remove))
}

/// What the section shows of a flag in one environment.
pub struct PlanPlace<'a> {
    pub project: &'a str,
    pub feature: &'a str,
    pub environment: &'a str,
    /// The flag's plan there, if any.
    pub plan: Option<&'a ReleasePlan>,
    /// The templates one may apply.
    pub templates: &'a [ReleasePlanTemplate],
}

/// The section (inside the environment's card).
pub fn section(who: &SignedIn, names: &StrategyNames, place: &PlanPlace<'_>) -> Markup {
    let PlanPlace {
        project,
        feature,
        environment,
        plan,
        templates,
    } = place;
    let here = Scope::environment(project, environment);
    let may_apply = who.may_submit(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan",
        &here,
    );
    let may_start = who.may_submit(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan/start",
        &here,
    );
    let may_remove = who.may_submit(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan/remove",
        &here,
    );
    let action = who.link(&format!(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan"
    ));
    let heading = format!("release-plan-{environment}");
    html! {
        @if let Some(plan) = plan {
            section.release-plan aria-labelledby=(heading) {
                h3 id=(heading) { "Release plan: " (plan.name) }
                ol.milestones {
                    @for (index, milestone) in plan.milestones.iter().enumerate() {
                        @let active = plan.active_milestone_id.as_deref() == Some(milestone.id.as_str());
                        li.milestone.active[active] aria-current=[active.then_some("step")] {
                            div.strategy-head {
                                span.title {
                                    (milestone.name)
                                    @if active { " " span.badge { "active" } }
                                    @if milestone.paused_at.is_some() { " " span.badge.stale { "paused" } }
                                }
                                @if may_start && active && milestone.paused_at.is_some() {
                                    form.inline method="post" action=(format!("{action}/resume")) {
                                        input type="hidden" name="csrf" value=(who.csrf);
                                        input type="hidden" name="planId" value=(plan.id);
                                        button type="submit" aria-label=(format!("Resume the release plan in {environment}")) { "Resume" }
                                    }
                                }
                                @if may_start {
                                    form.inline method="post" action=(format!("{action}/start")) {
                                        input type="hidden" name="csrf" value=(who.csrf);
                                        input type="hidden" name="planId" value=(plan.id);
                                        input type="hidden" name="milestoneId" value=(milestone.id);
                                        button type="submit" aria-label=(format!("Start {} in {environment}", milestone.name)) { "Start" }
                                    }
                                }
                            }
                            p.muted {
                                @if milestone.strategies.is_empty() { "No strategies: the flag is on for everyone." }
                                @for (place, strategy) in milestone.strategies.iter().enumerate() {
                                    @if place > 0 { ", " }
                                    (strategy_heading(names, &strategy.strategy_name, strategy.title.as_deref()))
                                    @if let Some(rollout) = strategy.parameters.get("rollout") { " " (rollout) "%" }
                                }
                                @if let Some(condition) = milestone.transition_condition {
                                    @if index + 1 < plan.milestones.len() {
                                        " · the next starts " (condition.interval_minutes) " min after this one"
                                    }
                                }
                            }
                        }
                    }
                }
                @if may_remove {
                    form.inline method="post" action=(format!("{action}/remove")) {
                        input type="hidden" name="csrf" value=(who.csrf);
                        input type="hidden" name="planId" value=(plan.id);
                        button.danger type="submit" aria-label=(format!("Remove release plan from {environment}")) { "Remove release plan" }
                    }
                }
            }
        } @else if may_apply && !templates.is_empty() {
            form.inline method="post" action=(action) {
                input type="hidden" name="csrf" value=(who.csrf);
                @let select = format!("template-{environment}");
                label for=(select) { "Release template" }
                " "
                select id=(select) name="templateId" {
                    @for template in templates.iter() { option value=(template.id) { (template.name) } }
                }
                " "
                button type="submit" aria-label=(format!("Apply template in {environment}")) { "Apply template" }
            }
        }
    }
}

fn flag_page(who: &SignedIn, project: &str, feature: &str, environment: &str) -> String {
    who.link(&format!(
        "/projects/{project}/features/{feature}#env-{environment}"
    ))
}

/// `POST …/release-plan` (`templateId`).
pub async fn apply(
    State(state): State<Arc<AppState>>,
    Path((project, feature, environment)): Path<(String, String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    let plan = plans::add(
        &mut tx,
        &project,
        &feature,
        &environment,
        &form.text("templateId"),
    )
    .await?;
    state.commit(tx).await?;
    let notice = format!(
        "The release plan {} was applied in {environment}; start its first milestone when ready.",
        plan.name
    );
    Ok(Done::to(flag_page(&who, &project, &feature, &environment), notice).into_response())
}

/// `POST …/release-plan/start` (`planId`, `milestoneId`).
pub async fn start(
    State(state): State<Arc<AppState>>,
    Path((project, feature, environment)): Path<(String, String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    let milestone = plans::start_milestone(
        &mut tx,
        &project,
        &feature,
        &environment,
        &form.text("planId"),
        &form.text("milestoneId"),
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    let notice = format!(
        "The milestone {} started in {environment}: the flag's strategies there are its.",
        milestone.name
    );
    Ok(Done::to(flag_page(&who, &project, &feature, &environment), notice).into_response())
}

/// `POST …/release-plan/resume` (`planId`): its paused progression is due again.
pub async fn resume(
    State(state): State<Arc<AppState>>,
    Path((project, feature, environment)): Path<(String, String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    progressions::resume(
        &mut tx,
        &project,
        &feature,
        &environment,
        &form.text("planId"),
    )
    .await?;
    state.commit(tx).await?;
    let notice = format!("The release plan in {environment} was resumed.");
    Ok(Done::to(flag_page(&who, &project, &feature, &environment), notice).into_response())
}

/// `POST …/release-plan/remove` (`planId`): the flag keeps its strategies.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path((project, feature, environment)): Path<(String, String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    plans::remove(
        &mut tx,
        &project,
        &feature,
        &environment,
        &form.text("planId"),
    )
    .await?;
    state.commit(tx).await?;
    let notice =
        format!("The release plan was removed from {environment}; the flag keeps its strategies.");
    Ok(Done::to(flag_page(&who, &project, &feature, &environment), notice).into_response())
}
