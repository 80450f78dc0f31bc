//! `/projects/<p>/actions`: a project's action sets, each with its service account, the signal endpoint it
//! listens to, its filters and its actions in words, a switch, a delete, and its latest executions with each
//! action's outcome. Admins only, as the admin API's `Access` area (`domain::action_sets`); a new set is made
//! at `action_set_form`'s page, and edited with the admin API (`PUT /api/admin/projects/:p/actions/:id`).

use super::action_set_form;
use super::controls::when;
use super::page::{Page, UiError};
use super::scope::Done;
use super::session::{InAccess, SignedIn, UiWrite};
use super::vocabulary::operator_phrase;
use crate::domain::access::Area;
use crate::domain::action_sets::{self, ActionSet, ActionSetEvent};
use crate::domain::{service_accounts, signal_endpoints};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How many executions a set shows.
const SHOWN_EXECUTIONS: usize = 10;

/// This module's page and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/projects/{project}/actions",
            get(page).post(action_set_form::create),
        )
        .route("/projects/{project}/actions/{id}/enabled", post(switch))
        .route("/projects/{project}/actions/{id}/delete", post(delete))
}

fn page_path(project: &str) -> String {
    format!("/projects/{project}/actions")
}

/// What the page needs besides the sets: names of service accounts and endpoints by id, each set's log.
struct Names {
    accounts: BTreeMap<i64, String>,
    endpoints: BTreeMap<i64, String>,
}

/// `GET /projects/<p>/actions`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let (sets, logs, names) = {
        let mut conn = state.store.read().await?;
        let sets = action_sets::list(&mut conn, &project).await?.actions;
        let mut logs = Vec::with_capacity(sets.len());
        for set in &sets {
            let log = action_sets::executions(&mut conn, &project, set.id).await?;
            logs.push(log.action_set_events);
        }
        let accounts = service_accounts::list(&mut conn)
            .await?
            .service_accounts
            .into_iter()
            .map(|account| (account.id, account.username))
            .collect();
        let endpoints = signal_endpoints::list(&mut conn)
            .await?
            .signal_endpoints
            .into_iter()
            .map(|endpoint| (endpoint.id, endpoint.name))
            .collect();
        (
            sets,
            logs,
            Names {
                accounts,
                endpoints,
            },
        )
    };
    let markup = who.shell().render(
        "Actions",
        html! {
            div.page-head {
                div {
                    h1 { "Actions" }
                    p.subtitle { "What happens in project " (project) " when a signal endpoint receives a signal that passes a set's filters: its actions run in order, as its service account, within seconds. Edit a set with the admin API (PUT /api/admin/projects/" (project) "/actions/<id>). An action on an environment with change requests on is refused and logged." }
                }
                a.button.primary href=(who.link(&format!("{}/create", page_path(&project)))) { "New action set" }
            }
            @if sets.is_empty() {
                div.empty {
                    p { "No action sets in this project." }
                    p { a href=(who.link("/admin/signals")) { "Signal endpoints" } " receive the signals they listen to." }
                }
            }
            @for (set, log) in sets.iter().zip(&logs) {
                (set_markup(&who, &project, set, log, &names))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn filter_words(path: &str, filter: &crate::model::action_set::Filter) -> String {
    let mut values = filter.values.clone();
    values.extend(filter.value.clone());
    let case = if filter.case_insensitive {
        " (any case)"
    } else {
        ""
    };
    format!(
        "{path} {} {}{case}",
        operator_phrase(&filter.operator, filter.inverted),
        values.join(", ")
    )
}

fn action_words(action: &str, params: &serde_json::Map<String, Value>) -> String {
    let param = |name: &str| params.get(name).and_then(Value::as_str).unwrap_or_default();
    let what = match action {
        "TOGGLE_FEATURE_ON" => "Turn on",
        "TOGGLE_FEATURE_OFF" => "Turn off",
        "DISABLE_FEATURE_STRATEGY" => "Disable a strategy of",
        "ENABLE_FEATURE_STRATEGY" => "Enable a strategy of",
        "PAUSE_RELEASE_PLAN" => "Pause the release plan of",
        other => other,
    };
    let strategy = match param("strategyId") {
        "" => String::new(),
        id => format!(" (strategy {id})"),
    };
    format!(
        "{what} {} in {}{strategy}",
        param("featureName"),
        param("environment")
    )
}

fn set_markup(
    who: &SignedIn,
    project: &str,
    set: &ActionSet,
    log: &[ActionSetEvent],
    names: &Names,
) -> Markup {
    let path = format!("{}/{}", page_path(project), set.id);
    let title = format!("set-{}-title", set.id);
    let account = names.accounts.get(&set.actor_id).map_or_else(
        || format!("service account {} (deleted)", set.actor_id),
        Clone::clone,
    );
    let endpoint = names.endpoints.get(&set.matching.source_id).map_or_else(
        || format!("endpoint {} (deleted)", set.matching.source_id),
        Clone::clone,
    );
    html! {
        section.card.access aria-labelledby=(title) {
            h2 id=(title) { (set.name) " " span.muted { (if set.enabled { "· on" } else { "· off" }) } }
            @if let Some(description) = &set.description { p { (description) } }
            dl.meta {
                dt { "Runs as" } dd { (account) }
                dt { "When" } dd { "signal endpoint " strong { (endpoint) } " receives a signal" }
            }
            @if set.matching.payload.is_empty() {
                p { "Every signal passes (no filter)." }
            } @else {
                p { "Where:" }
                ul {
                    @for (path, filter) in &set.matching.payload {
                        li { code { (filter_words(path, filter)) } }
                    }
                }
            }
            p { "Then:" }
            ol {
                @for action in &set.actions {
                    li { (action_words(&action.action, &action.execution_params)) }
                }
            }
            div.actions {
                a.button href=(who.link(&format!("{path}/edit"))) aria-label=(format!("Edit {}", set.name)) { "Edit" }
                form.inline method="post" action=(who.link(&format!("{path}/enabled"))) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    input type="hidden" name="enabled" value=(if set.enabled { "false" } else { "true" });
                    button type="submit" aria-label=(format!("{} {}", if set.enabled { "Turn off" } else { "Turn on" }, set.name)) {
                        (if set.enabled { "Turn off" } else { "Turn on" })
                    }
                }
                form.inline method="post" action=(who.link(&format!("{path}/delete"))) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    button.danger type="submit" aria-label=(format!("Delete {}", set.name)) { "Delete" }
                }
            }
            h3 { "Latest executions" }
            @if log.is_empty() {
                p.muted { "None yet." }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "When" }
                            th scope="col" { "Signal" }
                            th scope="col" { "Outcome" }
                        } }
                        tbody {
                            @for execution in log.iter().take(SHOWN_EXECUTIONS) {
                                tr {
                                    td { (when(&execution.created_at)) }
                                    td { "#" (execution.signal_id) }
                                    td { (outcome(execution)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// An execution's state, and each action's that did not succeed, with why.
fn outcome(execution: &ActionSetEvent) -> Markup {
    let actions = execution.action_set["actions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    html! {
        strong { (execution.state) }
        @for action in actions.iter().filter(|action| action["state"] != "success") {
            br;
            (action["action"].as_str().unwrap_or_default()) ": " (action["state"].as_str().unwrap_or_default())
            @if let Some(details) = action["details"].as_str() { " — " (details) }
        }
    }
}

/// `POST /projects/<p>/actions/<id>/enabled` (`enabled`: `true` or `false`).
pub async fn switch(
    State(state): State<Arc<AppState>>,
    Path((project, id)): Path<(String, i64)>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let enabled = form.text("enabled") == "true";
    let mut tx = state.store.begin_write(&who.actor).await?;
    let set = action_sets::set_enabled(&mut tx, &project, id, enabled).await?;
    state.commit(tx).await?;
    let notice = format!("{} is {}", set.name, if enabled { "on" } else { "off" });
    Ok(Done::to(who.link(&page_path(&project)), notice).into_response())
}

/// `POST /projects/<p>/actions/<id>/delete`: the set and its log.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path((project, id)): Path<(String, i64)>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    action_sets::delete(&mut tx, &project, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(&page_path(&project)),
        "The action set was deleted, with its log.",
    )
    .into_response())
}
