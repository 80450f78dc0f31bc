//! `/release-templates` (Unleash's URL): the release templates, each its milestones in order; "New release
//! template" (a name); a template's page (`/release-templates/edit/<id>`): its name, and per milestone its
//! name, when the next starts by itself, and its strategies (added and edited with the strategy form:
//! `release_template_strategies`); "Add milestone"; archive and delete. Only Admins write templates (no row
//! in `ui::PERMISSIONS`, as the API); a refusal draws the form again with what was typed.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use super::vocabulary::{strategy_heading, StrategyNames};
use crate::domain::access::Area;
use crate::domain::release_plans::{templates, MilestoneInput, ReleasePlanTemplate, TemplateInput};
use crate::domain::strategy_definitions;
use crate::http::state::AppState;
use crate::model::release_plan::TransitionCondition;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// The template pages' routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/release-templates", get(list))
        .route("/release-templates/create", get(new_template).post(create))
        .route("/release-templates/edit/{id}", get(edit).post(rename))
        .route("/release-templates/{id}/archive", post(archive))
        .route("/release-templates/{id}/delete", post(delete))
        .route("/release-templates/{id}/milestones", post(add_milestone))
        .route(
            "/release-templates/{id}/milestones/{milestone}",
            post(update_milestone),
        )
        .route(
            "/release-templates/{id}/milestones/{milestone}/delete",
            post(delete_milestone),
        )
}

/// Whether the caller may write templates: Admins, as the API decides for a write without a permission row.
fn may_edit(who: &SignedIn) -> bool {
    who.authorize(false, Area::Settings).is_ok()
}

/// 403 (as a page) for the template forms of someone who may not write templates.
pub(super) fn ensure_may_edit(who: &SignedIn) -> Result<(), ApiError> {
    if may_edit(who) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::NoAccess,
        "Only Admins change release templates",
    ))
}

/// `GET /release-templates`.
pub async fn list(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    let list = {
        let mut conn = state.store.read().await?;
        templates::list(&mut conn).await?
    };
    let editable = may_edit(&who);
    let markup = who.shell().render(
        "Release templates",
        html! {
            div.page-head {
                div {
                    h1 { "Release templates" }
                    p.subtitle { "Milestones of strategies a flag goes through, applied on a flag's page per environment." }
                }
                @if editable {
                    a.button.primary href=(who.link("/release-templates/create")) { "New release template" }
                }
            }
            @if list.is_empty() {
                p.muted { "No release templates yet." }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Milestones" }
                            @if editable { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for template in &list {
                                tr {
                                    td.flag-name { strong { (template.name) } }
                                    td {
                                        @if template.milestones.is_empty() { span.muted { "none yet" } }
                                        @else { (template.milestones.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(" → ")) }
                                    }
                                    @if editable {
                                        td {
                                            div.row-actions {
                                                a.button href=(who.link(&format!("/release-templates/edit/{}", template.id)))
                                                    aria-label=(format!("Edit {}", template.name)) { "Edit" }
                                                form.inline method="post" action=(who.link(&format!("/release-templates/{}/archive", template.id))) {
                                                    input type="hidden" name="csrf" value=(who.csrf);
                                                    button type="submit" aria-label=(format!("Archive {}", template.name)) { "Archive" }
                                                }
                                                form.inline method="post" action=(who.link(&format!("/release-templates/{}/delete", template.id))) {
                                                    input type="hidden" name="csrf" value=(who.csrf);
                                                    button.danger type="submit" aria-label=(format!("Delete {}", template.name)) { "Delete" }
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
    Ok(Page::ok(markup).into_response())
}

/// The name form of a new template, with what was typed and its refusal.
fn name_form(who: &SignedIn, name: &str, error: Option<&ApiError>) -> Page {
    let errors = FieldErrors::of(error, &[("name", "template-name")], "template-name");
    let markup = who.shell().render(
        "New release template",
        html! {
            div.page-head { div { h1 { "New release template" } p.subtitle { a href=(who.link("/release-templates")) { "← Release templates" } } } }
            (errors.general())
            form.form-narrow method="post" action=(who.link("/release-templates/create")) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("template-name", "Name", errors.at("template-name"), Some("Its milestones come next"), html! {
                    input #template-name type="text" name="name" value=(name) required
                        aria-describedby="template-name-hint template-name-error" aria-invalid=(errors.invalid("template-name"));
                }))
                div.actions { button.primary type="submit" { "Create template" } }
            }
        },
    );
    Page::ok(markup)
}

/// `GET /release-templates/create`.
pub async fn new_template(who: SignedIn) -> Result<Response, UiError> {
    ensure_may_edit(&who)?;
    Ok(name_form(&who, "", None).into_response())
}

/// `POST /release-templates/create`: on to the template's page, to add its milestones.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let name = form.text("name");
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let input = TemplateInput {
            id: None,
            name: name.clone(),
            milestones: None,
        };
        let template = templates::create(&mut tx, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/release-templates/edit/{}", template.id)),
            format!(
                "The release template {} was created: add its milestones.",
                template.name
            ),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(name_form(&who, &name, Some(error)).into_response())
    })
    .await
}

/// A refused form of the template's page: which one (`name`, `new-milestone` or a milestone's id), what was
/// typed (name, minutes) and the refusal.
struct Refused<'a> {
    form: &'a str,
    name: &'a str,
    minutes: &'a str,
    error: &'a ApiError,
}

/// A milestone's form: its name and minutes (typed, or stored), posting to `action`.
fn milestone_form(
    who: &SignedIn,
    key: &str,
    action: &str,
    values: (&str, &str),
    refused: Option<&Refused<'_>>,
    button: &str,
) -> Markup {
    let error = refused
        .filter(|refused| refused.form == key)
        .map(|refused| refused.error);
    let (name_id, minutes_id) = (format!("{key}-name"), format!("{key}-minutes"));
    let fields = [
        ("name", name_id.as_str()),
        ("transitionCondition.intervalMinutes", minutes_id.as_str()),
    ];
    let errors = FieldErrors::of(error, &fields, &name_id);
    html! {
        (errors.general())
        form.form-narrow method="post" action=(action) {
            input type="hidden" name="csrf" value=(who.csrf);
            (field(&name_id, "Milestone name", errors.at(&name_id), None, html! {
                input id=(name_id) type="text" name="name" value=(values.0) required
                    aria-describedby=(format!("{name_id}-error")) aria-invalid=(errors.invalid(&name_id));
            }))
            (field(&minutes_id, "Start the next milestone after (minutes)", errors.at(&minutes_id), Some("Optional: empty, the next starts by hand"), html! {
                input id=(minutes_id) type="number" min="1" step="1" name="minutes" value=(values.1)
                    aria-describedby=(format!("{minutes_id}-hint {minutes_id}-error")) aria-invalid=(errors.invalid(&minutes_id));
            }))
            div.actions { button type="submit" { (button) } }
        }
    }
}

/// The template's page, with a refused form drawn again.
async fn template_page(
    state: &AppState,
    who: &SignedIn,
    id: &str,
    refused: Option<Refused<'_>>,
) -> Result<Page, UiError> {
    let (template, names) = {
        let mut conn = state.store.read().await?;
        let template = templates::get(&mut conn, id).await?;
        let definitions = strategy_definitions::list(&mut conn).await?.strategies;
        (template, StrategyNames::of(&definitions))
    };
    let refused = refused.as_ref();
    let typed = |key: &str, name: &str, minutes: String| match refused
        .filter(|refused| refused.form == key)
    {
        Some(refused) => (refused.name.to_owned(), refused.minutes.to_owned()),
        None => (name.to_owned(), minutes),
    };
    let page = who.link(&format!("/release-templates/edit/{id}"));
    let name = typed("name", &template.name, String::new()).0;
    let name_errors = FieldErrors::of(
        refused.filter(|r| r.form == "name").map(|r| r.error),
        &[("name", "template-name")],
        "template-name",
    );
    let markup = who.shell().render(
        &template.name,
        html! {
            div.page-head {
                div { h1 { "Release template " (template.name) } p.subtitle { a href=(who.link("/release-templates")) { "← Release templates" } } }
            }
            (name_errors.general())
            form.form-narrow method="post" action=(page) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("template-name", "Name", name_errors.at("template-name"), None, html! {
                    input #template-name type="text" name="name" value=(name) required
                        aria-describedby="template-name-error" aria-invalid=(name_errors.invalid("template-name"));
                }))
                div.actions { button.primary type="submit" { "Save name" } }
            }
            @for (index, milestone) in template.milestones.iter().enumerate() {
                @let heading = format!("milestone-{}", milestone.id);
                @let action = who.link(&format!("/release-templates/{id}/milestones/{}", milestone.id));
                @let minutes = milestone.transition_condition.map(|c| c.interval_minutes.to_string()).unwrap_or_default();
                @let (name, minutes) = typed(&milestone.id, &milestone.name, minutes);
                section.card aria-labelledby=(heading) {
                    h2 id=(heading) { "Milestone " (index + 1) ": " (milestone.name) }
                    (milestone_form(who, &milestone.id, &action, (&name, &minutes), refused, "Save milestone"))
                    h3 { "Strategies" }
                    @if milestone.strategies.is_empty() { p.muted { "None: the flag is on for everyone in this milestone." } }
                    ul {
                        @for strategy in &milestone.strategies {
                            li {
                                (strategy_heading(&names, &strategy.strategy_name, strategy.title.as_deref()))
                                @if let Some(rollout) = strategy.parameters.get("rollout") { " " (rollout) "%" }
                                " "
                                a.button href=(format!("{action}/strategies/edit?strategyId={}", strategy.id))
                                    aria-label=(format!("Edit strategy of {}", milestone.name)) { "Edit" }
                                form.inline method="post" action=(format!("{action}/strategies/delete")) {
                                    input type="hidden" name="csrf" value=(who.csrf);
                                    input type="hidden" name="strategyId" value=(strategy.id);
                                    button.danger type="submit" aria-label=(format!("Delete strategy of {}", milestone.name)) { "Delete" }
                                }
                            }
                        }
                    }
                    div.row-actions {
                        a.button href=(format!("{action}/strategies/create")) aria-label=(format!("Add strategy to {}", milestone.name)) { "Add strategy" }
                        form.inline method="post" action=(format!("{action}/delete")) {
                            input type="hidden" name="csrf" value=(who.csrf);
                            button.danger type="submit" aria-label=(format!("Remove milestone {}", milestone.name)) { "Remove milestone" }
                        }
                    }
                }
            }
            section.card aria-labelledby="new-milestone-title" {
                h2 #new-milestone-title { "Add milestone" }
                @let (name, minutes) = typed("new-milestone", "", String::new());
                (milestone_form(who, "new-milestone", &who.link(&format!("/release-templates/{id}/milestones")), (&name, &minutes), refused, "Add milestone"))
            }
        },
    );
    Ok(Page::ok(markup))
}

/// `GET /release-templates/edit/<id>`.
pub async fn edit(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    ensure_may_edit(&who)?;
    Ok(template_page(&state, &who, &id, None)
        .await?
        .into_response())
}

/// A form of the template's page written through `write`, then back to the page; a refusal draws it again.
async fn on_page(
    state: &AppState,
    who: &SignedIn,
    (id, key): (&str, &str),
    form: &FormFields,
    write: impl AsyncFnOnce(&mut crate::store::WriteTx) -> Result<String, ApiError>,
) -> Result<Response, UiError> {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let notice = write(&mut tx).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/release-templates/edit/{id}")),
            notice,
        ))
    }
    .await;
    let (name, minutes) = (form.text("name"), form.text("minutes"));
    written(done, async |error| {
        let refused = Refused {
            form: key,
            name: &name,
            minutes: &minutes,
            error,
        };
        Ok(template_page(state, who, id, Some(refused))
            .await?
            .into_response())
    })
    .await
}

/// `POST /release-templates/edit/<id>` (`name`).
pub async fn rename(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let input = TemplateInput {
        id: None,
        name: form.text("name"),
        milestones: None,
    };
    on_page(&state, &who, (&id, "name"), &form, async |tx| {
        let template = templates::update(tx, &id, input).await?;
        Ok(format!("The release template {} was saved.", template.name))
    })
    .await
}

/// The milestone the form describes (`name`, `minutes`), at `sort_order`.
fn milestone_input(form: &FormFields, sort_order: i64) -> Result<MilestoneInput, ApiError> {
    let minutes = form.text("minutes");
    let transition_condition = match minutes.trim() {
        "" => None,
        text => Some(TransitionCondition {
            interval_minutes: text.parse().map_err(|_| {
                ApiError::invalid_field(
                    "transitionCondition.intervalMinutes",
                    "transitionCondition.intervalMinutes: must be a whole number of minutes",
                )
            })?,
        }),
    };
    Ok(MilestoneInput {
        name: form.text("name"),
        sort_order,
        release_plan_definition_id: None,
        transition_condition,
        strategies: None,
    })
}

/// `POST /release-templates/<id>/milestones`: a new last milestone.
pub async fn add_milestone(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    on_page(&state, &who, (&id, "new-milestone"), &form, async |tx| {
        let template: ReleasePlanTemplate = templates::get(tx.conn(), &id).await?;
        let last = template
            .milestones
            .iter()
            .map(|m| m.sort_order + 1)
            .max()
            .unwrap_or(0);
        let milestone = templates::add_milestone(tx, &id, milestone_input(&form, last)?).await?;
        Ok(format!("The milestone {} was added.", milestone.name))
    })
    .await
}

/// `POST /release-templates/<id>/milestones/<milestone>`: its name and minutes (its strategies stay).
pub async fn update_milestone(
    State(state): State<Arc<AppState>>,
    Path((id, milestone)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    on_page(&state, &who, (&id, &milestone), &form, async |tx| {
        let template = templates::get(tx.conn(), &id).await?;
        let place = template
            .milestones
            .iter()
            .find(|m| m.id == milestone)
            .map_or(0, |m| m.sort_order);
        let saved =
            templates::update_milestone(tx, &id, &milestone, milestone_input(&form, place)?)
                .await?;
        Ok(format!("The milestone {} was saved.", saved.name))
    })
    .await
}

/// `POST /release-templates/<id>/milestones/<milestone>/delete`.
pub async fn delete_milestone(
    State(state): State<Arc<AppState>>,
    Path((id, milestone)): Path<(String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    templates::delete_milestone(&mut tx, &id, &milestone).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(&format!("/release-templates/edit/{id}")),
        "The milestone was removed.",
    )
    .into_response())
}

/// `POST /release-templates/<id>/archive`: no longer listed nor applicable (plans made from it stay).
pub async fn archive(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    templates::archive(&mut tx, &id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link("/release-templates"),
        "The release template was archived.",
    )
    .into_response())
}

/// `POST /release-templates/<id>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    templates::delete(&mut tx, &id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link("/release-templates"),
        "The release template was deleted.",
    )
    .into_response())
}
