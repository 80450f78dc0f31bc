//! `/projects/<p>/actions/create`: a new action set (name, description, the service account it runs as, the
//! signal endpoint it listens to, its filters and actions — three rows of each, more when the set has more),
//! posted to `/projects/<p>/actions`; `/projects/<p>/actions/<id>/edit`: the same form filled with the set,
//! posted to `/projects/<p>/actions/<id>`, which replaces it. A refusal draws the form again with what was
//! typed and the error beside its field. Admins only, as the admin API's `Access` area
//! (`domain::action_sets::create` and `update`).

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::action_sets::{self, ActionSet, CreateAction, CreateActionSet, Match};
use crate::domain::{service_accounts, signal_endpoints};
use crate::http::state::AppState;
use crate::model::action_set::{ActionKind, Filter, SIGNAL_ENDPOINT_SOURCE};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use vexil_shared::engine::OPERATORS;
use vexil_shared::ApiError;

/// The filter and action rows the form offers at least.
const ROWS: usize = 3;

/// The rows a form may post (`rows`): the most a set can have within any sane limit.
const MAX_ROWS: usize = 50;

/// This module's pages (the new set's form posts to the Actions page's path: [`create`]).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects/{project}/actions/create", get(new_set))
        .route("/projects/{project}/actions/{id}/edit", get(edit_set))
        .route("/projects/{project}/actions/{id}", post(update))
}

/// How many filter and action rows the form drew (its hidden `rows`).
fn rows_of(form: &FormFields) -> usize {
    form.text("rows")
        .parse()
        .unwrap_or(ROWS)
        .clamp(ROWS, MAX_ROWS)
}

/// The set a form describes: rows without a path (filters) or an action are left out.
fn input_of(project: &str, form: &FormFields) -> CreateActionSet {
    let rows = rows_of(form);
    let mut payload = BTreeMap::new();
    for row in 0..rows {
        let path = form.text(&format!("filter-path-{row}")).trim().to_owned();
        if path.is_empty() {
            continue;
        }
        let values = form
            .text(&format!("filter-values-{row}"))
            .split(',')
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
            .collect();
        payload.insert(
            path,
            Filter {
                operator: form.text(&format!("filter-operator-{row}")),
                values,
                value: None,
                inverted: form.checked(&format!("filter-inverted-{row}")),
                case_insensitive: form.checked(&format!("filter-ci-{row}")),
            },
        );
    }
    let mut actions = Vec::new();
    for row in 0..rows {
        let action = form.text(&format!("action-{row}"));
        if action.is_empty() {
            continue;
        }
        let mut params = Map::new();
        params.insert("project".to_owned(), Value::from(project));
        for (name, control) in [
            ("featureName", "action-flag"),
            ("environment", "action-environment"),
            ("strategyId", "action-strategy"),
        ] {
            let value = form.text(&format!("{control}-{row}")).trim().to_owned();
            if !value.is_empty() {
                params.insert(name.to_owned(), Value::from(value));
            }
        }
        actions.push(CreateAction {
            action,
            sort_order: i64::try_from(actions.len()).unwrap_or(0) + 1,
            execution_params: params,
        });
    }
    let description = form.text("description");
    CreateActionSet {
        name: form.text("name"),
        description: (!description.trim().is_empty()).then_some(description),
        enabled: Some(form.checked("enabled")),
        actor_id: form.text("actorId").parse().unwrap_or(0),
        matching: Match {
            source: SIGNAL_ENDPOINT_SOURCE.to_owned(),
            source_id: form.text("sourceId").parse().unwrap_or(0),
            payload,
        },
        actions,
    }
}

/// The form's fields for a stored set: what editing starts from.
fn fields_of(set: &ActionSet) -> FormFields {
    let mut fields = vec![
        ("name".to_owned(), set.name.clone()),
        (
            "description".to_owned(),
            set.description.clone().unwrap_or_default(),
        ),
        ("actorId".to_owned(), set.actor_id.to_string()),
        ("sourceId".to_owned(), set.matching.source_id.to_string()),
    ];
    if set.enabled {
        fields.push(("enabled".to_owned(), "on".to_owned()));
    }
    let rows = ROWS.max(set.matching.payload.len()).max(set.actions.len());
    fields.push(("rows".to_owned(), rows.to_string()));
    for (row, (path, filter)) in set.matching.payload.iter().enumerate() {
        let mut values = filter.values.clone();
        values.extend(filter.value.clone());
        fields.push((format!("filter-path-{row}"), path.clone()));
        fields.push((format!("filter-operator-{row}"), filter.operator.clone()));
        fields.push((format!("filter-values-{row}"), values.join(", ")));
        if filter.inverted {
            fields.push((format!("filter-inverted-{row}"), "on".to_owned()));
        }
        if filter.case_insensitive {
            fields.push((format!("filter-ci-{row}"), "on".to_owned()));
        }
    }
    for (row, action) in set.actions.iter().enumerate() {
        fields.push((format!("action-{row}"), action.action.clone()));
        for (name, control) in [
            ("featureName", "action-flag"),
            ("environment", "action-environment"),
            ("strategyId", "action-strategy"),
        ] {
            fields.push((format!("{control}-{row}"), action.param(name).to_owned()));
        }
    }
    FormFields(fields)
}

fn options(choices: &[(String, String)], selected: &str) -> Markup {
    html! {
        @for (value, label) in choices {
            option value=(value) selected[value == selected] { (label) }
        }
    }
}

/// The form: a new set (`editing` None) or set `editing`'s.
async fn form_page(
    state: &AppState,
    who: &SignedIn,
    project: &str,
    editing: Option<i64>,
    form: &FormFields,
    error: Option<&ApiError>,
) -> Result<Markup, ApiError> {
    let (accounts, endpoints) = {
        let mut conn = state.store.read().await?;
        action_sets::list(&mut conn, project).await?;
        let accounts: Vec<(String, String)> = service_accounts::list(&mut conn)
            .await?
            .service_accounts
            .into_iter()
            .map(|account| (account.id.to_string(), account.username))
            .collect();
        let endpoints: Vec<(String, String)> = signal_endpoints::list(&mut conn)
            .await?
            .signal_endpoints
            .into_iter()
            .map(|endpoint| (endpoint.id.to_string(), endpoint.name))
            .collect();
        (accounts, endpoints)
    };
    let errors = FieldErrors::of(
        error,
        &[
            ("name", "set-name"),
            ("description", "set-description"),
            ("actorId", "set-actor"),
            ("match.sourceId", "set-source"),
        ],
        "set-name",
    );
    let operators: Vec<(String, String)> = OPERATORS
        .iter()
        .map(|name| ((*name).to_owned(), (*name).to_owned()))
        .collect();
    let mut kinds = vec![(String::new(), "(none)".to_owned())];
    kinds.extend(
        ActionKind::ALL
            .iter()
            .map(|kind| (kind.as_str().to_owned(), kind.as_str().to_owned())),
    );
    let list = format!("/projects/{project}/actions");
    let (title, target, submit) = match editing {
        None => (
            "New action set".to_owned(),
            list.clone(),
            "Create action set",
        ),
        Some(id) => (
            format!("Edit {}", form.text("name")),
            format!("{list}/{id}"),
            "Save action set",
        ),
    };
    let enabled = form.checked("enabled") || (error.is_none() && editing.is_none());
    let rows = rows_of(form);
    Ok(who.shell().render(
        &title,
        html! {
            div.page-head { div {
                h1 { (title) }
                p.subtitle { a href=(who.link(&list)) { "← Actions" } }
            } }
            (errors.general())
            form method="post" action=(who.link(&target)) {
                input type="hidden" name="csrf" value=(who.csrf);
                input type="hidden" name="rows" value=(rows);
                (field("set-name", "Name", errors.at("set-name"), None, html! {
                    input #set-name type="text" name="name" value=(form.text("name")) required maxlength="100"
                        aria-invalid=(errors.invalid("set-name")) aria-describedby="set-name-error";
                }))
                (field("set-description", "Description", errors.at("set-description"), None, html! {
                    input #set-description type="text" name="description" value=(form.text("description"))
                        maxlength="1000" aria-invalid=(errors.invalid("set-description"))
                        aria-describedby="set-description-error";
                }))
                (field("set-actor", "Runs as (service account)", errors.at("set-actor"), None, html! {
                    select #set-actor name="actorId" aria-describedby="set-actor-error" {
                        (options(&accounts, &form.text("actorId")))
                    }
                }))
                (field("set-source", "Listens to (signal endpoint)", errors.at("set-source"), None, html! {
                    select #set-source name="sourceId" aria-describedby="set-source-error" {
                        (options(&endpoints, &form.text("sourceId")))
                    }
                }))
                div.field {
                    label { input type="checkbox" name="enabled" value="on" checked[enabled]; " On" }
                }
                fieldset {
                    legend { "Filters: a dotted path into the signal's JSON (alerts.0.labels.severity), an operator, values separated by commas; all must hold" }
                    @for row in 0..rows {
                        div.field {
                            label for=(format!("filter-path-{row}")) { "Path " (row + 1) }
                            input id=(format!("filter-path-{row}")) type="text" name=(format!("filter-path-{row}"))
                                value=(form.text(&format!("filter-path-{row}")));
                            label for=(format!("filter-operator-{row}")) { "Operator " (row + 1) }
                            select id=(format!("filter-operator-{row}")) name=(format!("filter-operator-{row}")) {
                                (options(&operators, &form.text(&format!("filter-operator-{row}"))))
                            }
                            label for=(format!("filter-values-{row}")) { "Values " (row + 1) }
                            input id=(format!("filter-values-{row}")) type="text" name=(format!("filter-values-{row}"))
                                value=(form.text(&format!("filter-values-{row}")));
                            label { input type="checkbox" name=(format!("filter-inverted-{row}")) value="on"
                                checked[form.checked(&format!("filter-inverted-{row}"))]; " Inverted" }
                            label { input type="checkbox" name=(format!("filter-ci-{row}")) value="on"
                                checked[form.checked(&format!("filter-ci-{row}"))]; " Any case" }
                        }
                    }
                }
                fieldset {
                    legend { "Actions, in this order (the strategy id only for the strategy actions)" }
                    @for row in 0..rows {
                        div.field {
                            label for=(format!("action-{row}")) { "Action " (row + 1) }
                            select id=(format!("action-{row}")) name=(format!("action-{row}")) {
                                (options(&kinds, &form.text(&format!("action-{row}"))))
                            }
                            @for (control, label) in [("action-flag", "Flag"), ("action-environment", "Environment"), ("action-strategy", "Strategy id")] {
                                label for=(format!("{control}-{row}")) { (label) " " (row + 1) }
                                input id=(format!("{control}-{row}")) type="text" name=(format!("{control}-{row}"))
                                    value=(form.text(&format!("{control}-{row}")));
                            }
                        }
                    }
                }
                div.actions {
                    button.primary type="submit" { (submit) }
                    a href=(who.link(&list)) { "Cancel" }
                }
            }
        },
    ))
}

/// `GET /projects/<p>/actions/create`.
pub async fn new_set(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let markup = form_page(&state, &who, &project, None, &FormFields::default(), None).await?;
    Ok(Page::ok(markup).into_response())
}

/// `GET /projects/<p>/actions/<id>/edit` (404 for another project's set).
pub async fn edit_set(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path((project, id)): Path<(String, i64)>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let set = {
        let mut conn = state.store.read().await?;
        action_sets::view(&action_sets::require(&mut conn, &project, id).await?)
    };
    let markup = form_page(&state, &who, &project, Some(id), &fields_of(&set), None).await?;
    Ok(Page::ok(markup).into_response())
}

/// `POST /projects/<p>/actions/<id>`: the set replaced (its actions get new ids); to the Actions page.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path((project, id)): Path<(String, i64)>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = input_of(&project, &form);
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let updated = action_sets::update(&mut tx, &project, id, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{project}/actions")),
            format!("Action set {} saved", updated.name),
        ))
    }
    .await;
    written(done, async |error| {
        let markup = form_page(&state, &who, &project, Some(id), &form, Some(error)).await?;
        Ok(Page::ok(markup).into_response())
    })
    .await
}

/// `POST /projects/<p>/actions`: to the Actions page.
pub async fn create(
    State(state): State<Arc<AppState>>,
    Path(project): Path<String>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = input_of(&project, &form);
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let created = action_sets::create(&mut tx, &project, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{project}/actions")),
            format!("Action set {} created", created.name),
        ))
    }
    .await;
    written(done, async |error| {
        let markup = form_page(&state, &who, &project, None, &form, Some(error)).await?;
        Ok(Page::ok(markup).into_response())
    })
    .await
}
