//! A flag's page (`/projects/<project>/features/<flag>`): per environment its switch and strategies in
//! order (edit, delete, Move up/Move down, add) under what it serves there in a few words, its release plan, its variants, its
//! tags (`flag_tags`), its settings, archive with a confirmation, and its event log with what each event changed. The variants
//! form of one environment is `flag_variants`'.

use super::controls::{field, notice, switch, switch_id, when};
use super::dependencies::{section as dependencies_section, Dependencies, DependencyDraft};
use super::event_log::{event_days, DayHeading};
use super::event_sentence::Context;
use super::favorites::{star, star_id};
use super::flag_copy::copy_menu;
use super::flag_lifecycle::section as lifecycle_section;
use super::flag_links::{self, section as links_section};
use super::flag_summary::Served;
use super::flag_tags::{section as tags_section, TagDraft};
use super::page::{see_other, Page, UiError};
use super::release_plan_section::{section as release_plan_section, PlanPlace};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use super::vocabulary::{strategy_heading, Rule, StrategyNames};
use crate::domain::access;
use crate::domain::access::Scope;
use crate::domain::change_requests::{self, Outcome};
use crate::domain::dependencies;
use crate::domain::events::{self, Event, EventQuery};
use crate::domain::favorites;
use crate::domain::features::{self, Feature, FeatureType, UpdateFeature, FEATURE_TYPES};
use crate::domain::flag_summaries;
use crate::domain::lifecycle::{self, FeatureLifecycleStage};
use crate::domain::release_plans::{plans, templates, ReleasePlan, ReleasePlanTemplate};
use crate::domain::segments;
use crate::domain::strategies::{self, Strategy};
use crate::domain::strategy_definitions;
use crate::domain::tags::{self, Tag, TagType};
use crate::http::state::AppState;
use crate::model::change_request::Change;
use crate::model::dependency::RemoveDependency;
use crate::model::strategy::StrategySortOrder;
use crate::store::favorites::Favorite;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects/{project}/features/{feature}", get(page))
        .route(
            "/projects/{project}/features/{feature}/dependencies",
            post(add_dependency),
        )
        .route(
            "/projects/{project}/features/{feature}/dependencies/remove",
            post(remove_dependency),
        )
        .route(
            "/projects/{project}/features/{feature}/settings",
            post(save_settings),
        )
        .route(
            "/projects/{project}/features/{feature}/archive",
            get(confirm_archive).post(archive),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/delete",
            post(delete),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/move",
            post(move_strategy),
        )
}

/// Events shown on the flag page (newest first).
const EVENTS_SHOWN: u32 = 50;

#[derive(Debug, Default, Deserialize)]
pub struct FlagQuery {
    notice: Option<String>,
}

/// A strategy's rule in words: its summary, its constraints and segments as chips, its variants.
fn strategy_summary(strategy: &Strategy, segment_names: &HashMap<i64, String>) -> Markup {
    Rule {
        name: &strategy.name,
        parameters: &strategy.parameters,
        constraints: &strategy.constraints,
        segments: &strategy.segments,
        segment_names,
        variants: strategy.variants.iter().map(|v| v.name.as_str()).collect(),
    }
    .markup()
}

/// What the flag page shows besides the flag: segment names, the flag's events, and the parents it could
/// take (for who may add a dependency).
struct Loaded {
    flag: Feature,
    segment_names: HashMap<i64, String>,
    strategy_names: StrategyNames,
    events: Vec<Event>,
    /// The first [`PARENT_SUGGESTIONS`] possible parents, and whether there are more.
    parent_options: (Vec<String>, bool),
    tags: Vec<Tag>,
    /// The tag types to choose from (for who may add a tag).
    tag_types: Vec<TagType>,
    /// environment → the change requests waiting to change the flag there.
    pending: HashMap<String, Vec<i64>>,
    stages: Vec<FeatureLifecycleStage>,
    /// Whether the signed-in user marked it a favourite.
    favorite: bool,
    /// Its release plans, and the templates to apply (for who may write).
    plans: (Vec<ReleasePlan>, Vec<ReleasePlanTemplate>),
}

/// Possible parents a flag's page suggests (a project of 5,000 flags would otherwise send them all).
const PARENT_SUGGESTIONS: usize = 100;

async fn load(
    state: &AppState,
    who: &SignedIn,
    project: &str,
    feature: &str,
) -> Result<Loaded, ApiError> {
    let mut conn = state.store.read().await?;
    let flag = features::get(&mut conn, project, feature).await?;
    let in_project = Scope::project(project);
    let parent_options = if who.may_submit(
        "/projects/{project}/features/{feature}/dependencies",
        &in_project,
    ) {
        dependencies::parent_suggestions(&mut conn, project, feature, PARENT_SUGGESTIONS).await?
    } else {
        (Vec::new(), false)
    };
    let segment_names = segments::list(&mut conn)
        .await?
        .segments
        .into_iter()
        .map(|segment| (segment.id, segment.name))
        .collect();
    let definitions = strategy_definitions::list(&mut conn).await?.strategies;
    let strategy_names = StrategyNames::of(&definitions);
    let query = EventQuery {
        feature: Some(feature.to_owned()),
        limit: Some(EVENTS_SHOWN),
        ..EventQuery::default()
    };
    let personal = access::personal_fields(who.credential);
    let events = events::list(&mut conn, query, personal).await?.events;
    let tags = tags::feature_tags(&mut conn, feature).await?.tags;
    let tag_types = if who.may_submit("/projects/{project}/features/{feature}/tags", &in_project) {
        tags::list_types(&mut conn).await?.tag_types
    } else {
        Vec::new()
    };
    let pending = flag_summaries::pending_change_requests(&mut conn, feature).await?;
    let favorite = favorites::of_user(&mut conn, Favorite::Feature, who.actor.user_id)
        .await?
        .contains(feature);
    // Only offered where a plan may be applied (in some environment of the project).
    let templates = if who.may_submit(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan",
        &in_project,
    ) {
        templates::list(&mut conn).await?
    } else {
        Vec::new()
    };
    let plans = (plans::of_flag(&mut conn, feature).await?, templates);
    let stages = lifecycle::get(&mut conn, project, feature).await?;
    Ok(Loaded {
        flag,
        segment_names,
        strategy_names,
        events,
        parent_options,
        tags,
        tag_types,
        pending,
        favorite,
        plans,
        stages,
    })
}

/// `GET /projects/<project>/features/<flag>`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
    Query(query): Query<FlagQuery>,
) -> Result<Response, UiError> {
    let dependency = (&DependencyDraft::default(), None);
    let page = draw(
        &state,
        &who,
        (&project, &feature),
        query.notice.as_deref(),
        dependency,
        (&TagDraft::default(), None),
    )
    .await?;
    Ok(Page::ok(page).into_response())
}

/// The flag page's markup; `dependency` and `tag` are the add-dependency and add-tag forms as typed, with
/// their refusal.
pub(super) async fn draw(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
    notice_code: Option<&str>,
    dependency: (&DependencyDraft, Option<&ApiError>),
    tag: (&TagDraft, Option<&ApiError>),
) -> Result<Markup, UiError> {
    let shell = who.shell();
    let Loaded {
        flag,
        segment_names,
        strategy_names,
        events,
        parent_options,
        tags,
        tag_types,
        pending,
        favorite,
        plans,
        stages,
    } = load(state, who, project, feature).await?;
    let base = who.link(&format!("/projects/{project}/features/{feature}"));
    let summary = &flag.summary;
    let in_project = Scope::project(project);
    let may_depend = who.may_submit(
        "/projects/{project}/features/{feature}/dependencies",
        &in_project,
    );
    let may_tag = who.may_submit("/projects/{project}/features/{feature}/tags", &in_project);
    let may_settle = who.may_submit(
        "/projects/{project}/features/{feature}/settings",
        &in_project,
    );
    let may_archive = who.may_submit(
        "/projects/{project}/features/{feature}/archive",
        &in_project,
    );
    let markup = shell.render(
        &summary.name,
        html! {
            p { a href=(who.link(&format!("/projects/{project}"))) { "← Flags of " (project) } }
            div.page-head {
                div {
                    div.title-row {
                        (star(who, &summary.name, favorite, &format!("{base}/favorite"), &format!("{base}#{}", star_id(&summary.name))))
                        h1 {
                            (summary.name)
                            @if summary.stale { " " span.badge.stale { "stale" } }
                            @else if flag.potentially_stale {
                                " " span.badge.stale title="Older than its type's expected lifetime" { "potentially stale" }
                            }
                        }
                    }
                    p.subtitle {
                        (summary.feature_type) " flag in project " (project) " · created " (when(&summary.created_at))
                    }
                    @if let Some(description) = summary.description.as_deref().filter(|d| !d.is_empty()) {
                        p { (description) }
                    }
                }
                div.actions {
                    a.button href=(format!("{base}/metrics")) { "Usage" }
                    @if who.may_submit("/projects/{project}/features/{feature}/clone", &in_project) { a.button href=(format!("{base}/clone")) { "Clone" } }
                }
            }
            (notice(notice_code, &who.link(&format!("/projects/{project}/change-requests"))))
            section aria-labelledby="environments-title" {
                h2.skip #environments-title { "Environments" }
                div.env-grid {
                    @for environment in &flag.environments {
                        @let here = Scope::environment(project, &environment.name);
                        @let may_switch = who.may_submit("/projects/{project}/features/{feature}/environments/{environment}/switch", &here);
                        @let may_add = who.may_submit("/projects/{project}/features/{feature}/strategies/create", &here);
                        @let may_change = who.may_submit("/projects/{project}/features/{feature}/strategies/edit", &here);
                        @let may_delete = who.may_submit("/projects/{project}/features/{feature}/strategies/delete", &here);
                        @let may_vary = who.may_submit("/projects/{project}/features/{feature}/variants", &here);
                        // The environments a strategy here may be copied to.
                        @let others: Vec<&str> = flag.environments.iter().map(|other| other.name.as_str())
                            .filter(|other| *other != environment.name
                                && who.may_submit("/projects/{project}/features/{feature}/strategies/copy", &Scope::environment(project, other)))
                            .collect();
                        section.card aria-labelledby=(format!("env-{}", environment.name)) {
                            div.card-head {
                                div.switch-line {
                                    h2 id=(format!("env-{}", environment.name)) { (environment.name) }
                                    (switch(who, may_switch, &format!("Enabled in {}", environment.name), environment.enabled,
                                        &who.link(&format!("/projects/{project}/features/{feature}/environments/{}/switch", environment.name)),
                                        &format!("{base}#{}", switch_id(feature, &environment.name))))
                                }
                                @if may_add {
                                    div.row-actions {
                                        a.button href=(format!("{base}/strategies/create?environmentId={}", environment.name))
                                            aria-label=(format!("Add strategy to {}", environment.name)) { "Add strategy" }
                                        @if environment.strategies.len() > 1 { (copy_menu(who, &base, (&environment.name, None), &others)) }
                                    }
                                }
                            }
                            p.env-summary {
                                (Served { project, flag: feature, environment: &environment.name, enabled: environment.enabled,
                                    strategies: &environment.strategies,
                                    pending: pending.get(&environment.name).map(Vec::as_slice).unwrap_or_default() }
                                    .markup(who, &strategy_names))
                            }
                            @if environment.strategies.is_empty() {
                                p.muted { "No strategies: when on, the flag is on for everyone in " (environment.name) "." }
                            }
                            div data-strategies=(environment.name) {
                            @for (index, strategy) in environment.strategies.iter().enumerate() {
                                article.strategy aria-label=(format!("Strategy {} in {}", index + 1, environment.name))
                                    data-index=(index) data-draggable[may_change] {
                                    div.strategy-head {
                                        span.title {
                                            (index + 1) ". " (strategy_heading(&strategy_names, &strategy.name, strategy.title.as_deref()))
                                            @if strategy.disabled { " " span.disabled-note { "disabled" } }
                                        }
                                        @if may_change || may_delete {
                                            div.row-actions {
                                                @if may_change {
                                                a.button href=(format!("{base}/strategies/edit?environmentId={}&strategyId={}", environment.name, strategy.id)) { "Edit" }
                                                @for (direction, text, possible) in [("up", "Move up", index > 0), ("down", "Move down", index + 1 < environment.strategies.len())] {
                                                    form.inline method="post" action=(format!("{base}/strategies/move")) data-move {
                                                        input type="hidden" name="csrf" value=(who.csrf);
                                                        input type="hidden" name="environment" value=(environment.name);
                                                        input type="hidden" name="strategyId" value=(strategy.id);
                                                        input type="hidden" name="direction" value=(direction);
                                                        button type="submit" disabled[!possible] { (text) }
                                                    }
                                                }
                                                }
                                                @if may_delete {
                                                form.inline method="post" action=(format!("{base}/strategies/delete")) {
                                                    input type="hidden" name="csrf" value=(who.csrf);
                                                    input type="hidden" name="environment" value=(environment.name);
                                                    input type="hidden" name="strategyId" value=(strategy.id);
                                                    button.danger type="submit" { "Delete" }
                                                }
                                                }
                                                @if may_change {
                                                (copy_menu(who, &base, (&environment.name, Some((&strategy.id, index))), &others))
                                                }
                                            }
                                        }
                                    }
                                    (strategy_summary(strategy, &segment_names))
                                }
                            }
                            }
                            (release_plan_section(who, &strategy_names, &PlanPlace { project, feature, environment: &environment.name,
                                plan: plans.0.iter().find(|plan| plan.environment == environment.name), templates: &plans.1 }))
                            p {
                                @if environment.variants.is_empty() { span.muted { "No variants. " } }
                                @else { "Variants: " (environment.variants.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")) ". " }
                                a href=(format!("{base}/variants?environment={}", environment.name)) {
                                    @if may_vary { "Edit variants in " } @else { "Variants in " } (environment.name)
                                }
                            }
                        }
                    }
                }
            }
            (dependencies_section(who, &base, |name| who.link(&format!("/projects/{project}/features/{name}")),
                &Dependencies { dependencies: &flag.dependencies, children: &flag.children, parent_options: &parent_options.0, more_parents: parent_options.1, may_change: may_depend },
                dependency))
            (tags_section(who, (&base, may_tag), &tags, &tag_types, tag))
            (links_section(&base, &flag.links, who.may_submit(flag_links::ADD_FORM, &in_project)))
            (lifecycle_section(who, &base, &stages,
                who.may_submit("/projects/{project}/features/{feature}/lifecycle/complete", &in_project)))
            section.card aria-labelledby="settings-title" {
                h2 #settings-title { "Settings" }
                @if may_settle {
                    form.form-narrow method="post" action=(format!("{base}/settings")) {
                        input type="hidden" name="csrf" value=(who.csrf);
                        (field("type", "Type", None, None, html! {
                            select #type name="type" {
                                @for feature_type in FEATURE_TYPES {
                                    option value=(feature_type.as_str()) selected[feature_type.as_str() == summary.feature_type] { (feature_type.as_str()) }
                                }
                            }
                        }))
                        (field("description", "Description", None, None, html! {
                            textarea #description name="description" rows="3" { (summary.description.clone().unwrap_or_default()) }
                        }))
                        label.check { input type="checkbox" name="stale" value="true" checked[summary.stale]; "Stale" }
                        label.check { input type="checkbox" name="impressionData" value="true" checked[summary.impression_data]; "Impression data" }
                        div.actions {
                            button.primary type="submit" { "Save settings" }
                        }
                    }
                } @else {
                    dl.meta {
                        dt { "Type" } dd { (summary.feature_type) }
                        dt { "Stale" } dd { (if summary.stale { "yes" } else { "no" }) }
                        dt { "Impression data" } dd { (if summary.impression_data { "on" } else { "off" }) }
                    }
                }
                @if may_archive {
                    hr;
                    p { a.button href=(format!("{base}/archive")) { "Archive flag" } }
                }
                @if who.may_submit(super::flag_move::FORM, &in_project) {
                    p { a.button href=(format!("{base}/move")) { "Move to project…" } }
                }
            }
            section.card aria-labelledby="events-title" {
                h2 #events-title { "Event log" }
                @if events.is_empty() {
                    p.muted { "No events yet." }
                } @else {
                    (event_days(&events, &Context { base: &who.base, on_flag_page: true, on_project_page: false }, DayHeading::H3))
                }
            }
        },
    );
    Ok(markup)
}

/// `POST …/dependencies` (`parent`, `state`, `variants`): added, or proposed where change requests are on; a
/// refusal draws the page again with the form as typed and the message beside its field.
pub async fn add_dependency(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = DependencyDraft::from_form(&form);
    let change = Change::AddDependency(draft.to_input());
    let made = format!("{feature} now depends on {}.", draft.parent);
    let done = write_dependency_change(&state, &who, (&project, &feature), change, made).await;
    let redraw = async |error: &ApiError| {
        let place = (project.as_str(), feature.as_str());
        let tag = (&TagDraft::default(), None);
        let markup = draw(&state, &who, place, None, (&draft, Some(error)), tag).await?;
        Ok(Page::ok(markup).into_response())
    };
    match done {
        // A parent in a project the caller may not use: said beside the form too.
        Err(error) if error.kind.status() == 403 => {
            let mut page = redraw(&error).await?;
            *page.status_mut() = StatusCode::FORBIDDEN;
            Ok(page)
        }
        done => written(done, redraw).await,
    }
}

/// `POST …/dependencies/remove` (`parent`).
pub async fn remove_dependency(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let parent = form.text("parent");
    let made = format!("{feature} no longer depends on {parent}.");
    let change = Change::DeleteDependency(RemoveDependency {
        feature: Some(parent),
    });
    let done = write_dependency_change(&state, &who, (&project, &feature), change, made).await?;
    Ok(done.into_response())
}

/// A dependency change in one write, made or proposed (`make_or_propose_dependency`); where the browser goes
/// next: the flag's dependencies section, or its page with the proposal's notice.
async fn write_dependency_change(
    state: &AppState,
    who: &SignedIn,
    (project, feature): (&str, &str),
    change: Change,
    made: String,
) -> Result<Done, ApiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    let outcome = change_requests::make_or_propose_dependency(
        &mut tx,
        (project, feature),
        change,
        &state.limits,
    )
    .await?;
    state.commit(tx).await?;
    let flag_page = who.link(&format!("/projects/{project}/features/{feature}"));
    Ok(match outcome {
        Outcome::Made => Done::to(format!("{flag_page}#dependencies"), made),
        Outcome::Proposed(_) => Done::after_change(flag_page, outcome, made),
    })
}

/// `POST …/settings`: type, description, stale, impression data through the API's update.
pub async fn save_settings(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let input = UpdateFeature {
        name: None,
        feature_type: FeatureType::from_stored(&form.text("type")),
        description: Some(form.text("description")),
        stale: Some(form.checked("stale")),
        impression_data: Some(form.checked("impressionData")),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        features::update(&mut tx, &project, &feature, input).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(Done::to(
            who.link(&format!("/projects/{project}/features/{feature}")),
            "The flag's settings were saved.",
        ))
    }
    .await;
    Ok(done?.into_response())
}

/// `GET …/archive`: the confirmation.
pub async fn confirm_archive(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, feature)): Path<(String, String)>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    who.ensure_may_submit(
        "/projects/{project}/features/{feature}/archive",
        &Scope::project(&project),
    )?;
    {
        let mut conn = state.store.read().await?;
        features::get(&mut conn, &project, &feature).await?;
    }
    let base = who.link(&format!("/projects/{project}/features/{feature}"));
    let markup = shell.render(
        "Archive flag",
        html! {
            section.card.form-narrow aria-labelledby="archive-title" {
                h1 #archive-title { "Archive " (feature) "?" }
                p { "The flag leaves every SDK's answers, in every environment. Its name stays taken; it can be revived from the archive." }
                form method="post" action=(format!("{base}/archive")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions {
                        button.primary.danger type="submit" { "Confirm" }
                        a href=(base) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST …/archive`.
pub async fn archive(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    features::archive(&mut tx, &project, &feature).await?;
    state.commit(tx).await?;
    let done = Done::to(
        who.link("/archive"),
        format!("Flag {feature} archived: SDKs no longer get it. Revive it here."),
    );
    Ok(done.into_response())
}

/// Runs one change to the flag in `environment` (or proposes it), then back to the flag page.
async fn change_and_return(
    state: &AppState,
    who: &SignedIn,
    (project, environment, feature): (&str, &str, &str),
    change: Change,
    made: String,
) -> Result<Response, UiError> {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let outcome = change_requests::make_or_propose(
            &mut tx,
            (project, environment, feature),
            change,
            &state.limits,
        )
        .await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(outcome)
    }
    .await?;
    let flag_page = who.link(&format!("/projects/{project}/features/{feature}"));
    Ok(Done::after_change(flag_page, done, made).into_response())
}

fn strategy_id(form: &FormFields) -> Result<Uuid, ApiError> {
    Uuid::parse_str(form.get("strategyId").unwrap_or_default())
        .map_err(|_| ApiError::invalid_field("strategyId", "strategyId: not a strategy id"))
}

/// `POST …/strategies/delete` (`environment`, `strategyId`).
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let id = strategy_id(&form)?;
    let environment = form.text("environment");
    change_and_return(
        &state,
        &who,
        (&project, &environment, &feature),
        Change::DeleteStrategy { id },
        format!("The strategy was deleted from {environment}."),
    )
    .await
}

/// `POST …/strategies/move` (`environment`, `strategyId`, and `direction` up or down: swapped with its
/// neighbour; or `position`: moved to that place, as drag and drop does); the whole order is written again
/// (0, 1, 2…), as the API's set-sort-order takes it.
pub async fn move_strategy(
    State(state): State<Arc<AppState>>,
    Path((project, feature)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let environment = form.text("environment");
    let id = form.text("strategyId");
    let up = form.get("direction") == Some("up");
    let listed = {
        let mut conn = state.store.read().await?;
        strategies::list(&mut conn, &project, &feature, &environment).await?
    };
    let mut order: Vec<String> = listed.into_iter().map(|strategy| strategy.id).collect();
    let Some(index) = order.iter().position(|candidate| *candidate == id) else {
        return Err(ApiError::not_found("No strategy with this id in this environment").into());
    };
    let position = form
        .get("position")
        .and_then(|position| position.parse::<usize>().ok());
    if let Some(position) = position {
        let moved = order.remove(index);
        order.insert(position.min(order.len()), moved);
    } else {
        let other = if up {
            index.checked_sub(1)
        } else {
            Some(index + 1).filter(|other| *other < order.len())
        };
        let Some(other) = other else {
            return Ok(see_other(
                &who.link(&format!("/projects/{project}/features/{feature}")),
            ));
        };
        order.swap(index, other);
    }
    let entries = order
        .into_iter()
        .zip(0i64..)
        .map(|(id, sort_order)| StrategySortOrder { id, sort_order })
        .collect();
    change_and_return(
        &state,
        &who,
        (&project, &environment, &feature),
        Change::ReorderStrategy(entries),
        format!("The strategies in {environment} were reordered."),
    )
    .await
}
