//! `/projects`: every project (its name opening its overview, description, flag count opening its flags) and
//! the new-project form;
//! a project's settings `/projects/<id>/settings`: name and description, which environments it uses, the
//! change-request settings of each of those (on/off, required approvals: a form for Admins only), and deleting an empty project
//! after a confirmation. The same domain functions as `/api/admin/projects…` and the change-request
//! configuration routes.

use super::controls::{field, switch};
use super::favorites::{star, star_id};
use super::field_errors::FieldErrors;
use super::page::{see_other, Page, UiError};
use super::paging::Paged;
use super::project_default_strategy::{self as default_strategy, DefaultDraft};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::change_requests::{
    self, ChangeRequestConfigInput, EnvironmentChangeRequestConfig,
};
use crate::domain::environments::{self, Environment};
use crate::domain::project_admin;
use crate::domain::projects::{self, AddProjectEnvironment, CreateProject, Project, UpdateProject};
use crate::http::state::AppState;
use crate::model::strategy::StrategyInput;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects", get(list).post(create))
        .route("/create-project", get(new_project))
        .route(
            "/projects/{project}/settings",
            get(settings).post(save_settings),
        )
        .route(
            "/projects/{project}/environments/{environment}/switch",
            post(set_environment),
        )
        .route(
            "/projects/{project}/environments/{environment}/change-requests",
            post(configure_change_requests),
        )
        .route(default_strategy::FORM, post(save_default_strategy))
        .route(
            "/projects/{project}/delete",
            get(confirm_delete).post(delete),
        )
}

#[derive(Debug, Deserialize)]
pub struct ProjectsQuery {
    /// The flag list's project picker sends its choice here.
    project: Option<String>,
    page: Option<usize>,
}

/// What the new-project form holds (kept when it is shown again with a message).
#[derive(Debug, Default)]
struct NewProject {
    name: String,
    id: String,
    description: String,
    environments: Vec<String>,
}

impl NewProject {
    fn of(form: &FormFields) -> NewProject {
        NewProject {
            name: form.text("name").trim().to_owned(),
            id: form.text("id").trim().to_owned(),
            description: form.text("description"),
            environments: form
                .all("environment")
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }
}

async fn projects_and_environments(
    state: &AppState,
    who: &SignedIn,
) -> Result<(Vec<Project>, Vec<Environment>), ApiError> {
    let mut conn = state.store.read().await?;
    let projects = projects::list_for(&mut conn, who.actor.user_id)
        .await?
        .projects;
    let environments = environments::list(&mut conn).await?.environments;
    Ok((projects, environments))
}

/// `GET /projects` (with `?project=<id>`: the picker's choice, to that project's flags).
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<ProjectsQuery>,
) -> Result<Response, UiError> {
    if let Some(project) = query.project {
        let encoded: String = url::form_urlencoded::byte_serialize(project.as_bytes()).collect();
        return Ok(see_other(&who.link(&format!("/projects/{encoded}"))));
    }
    let (list, _) = projects_and_environments(&state, &who).await?;
    Ok(Page::ok(list_page(&who, &list, query.page)).into_response())
}

/// `GET /create-project`: the form for a new project, using every environment to start with.
pub async fn new_project(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
) -> Result<Response, UiError> {
    who.ensure_may_submit("/projects", &Scope::default())?;
    let (_, environments) = projects_and_environments(&state, &who).await?;
    let draft = NewProject {
        environments: environments.iter().map(|one| one.name.clone()).collect(),
        ..NewProject::default()
    };
    Ok(Page::ok(create_page(&who, &environments, &draft, None)).into_response())
}

fn list_page(who: &SignedIn, list: &[Project], page: Option<usize>) -> Markup {
    let shell = who.shell();
    let paged = Paged::new(page, list.len());
    shell.render(
        "Projects",
        html! {
            div.page-head {
                div {
                    h1 { "Projects" }
                    p.subtitle { "Each project holds its own flags and uses some of the environments." }
                }
                @if who.may_submit("/projects", &Scope::default()) {
                    a.button.primary href=(who.link("/create-project")) { "New project" }
                }
            }
            div.table-wrap {
                table {
                    thead { tr {
                        th scope="col" { "Name" }
                        th.hide-narrow scope="col" { "Id" }
                        th scope="col" { "Flags" }
                        th.hide-narrow scope="col" { "Environments" }
                        th scope="col" { "Settings" }
                    } }
                    tbody {
                        @for project in paged.slice(list) {
                            tr {
                                td.flag-name {
                                    (star(who, &project.name, project.favorite,
                                        &who.link(&format!("/projects/{}/favorite", project.id)),
                                        &format!("{}#{}", who.link(&format!("/projects?page={}", paged.page)), star_id(&project.id))))
                                    a href=(who.link(&format!("/projects/{}/overview", project.id))) { (project.name) }
                                    @if let Some(description) = project.description.as_deref().filter(|d| !d.is_empty()) {
                                        p.desc { (description) }
                                    }
                                }
                                td.hide-narrow { code { (project.id) } }
                                td {
                                    a href=(who.link(&format!("/projects/{}", project.id)))
                                        aria-label=(format!("Flags of {}: {}", project.name, project.feature_count)) { (project.feature_count) }
                                }
                                td.hide-narrow {
                                    @if project.environments.is_empty() {
                                        span.muted { "none" }
                                    } @else {
                                        (project.environments.join(", "))
                                    }
                                }
                                td {
                                    a.button href=(who.link(&format!("/projects/{}/settings", project.id)))
                                        aria-label=(format!("Settings of {}", project.name)) { "Settings" }
                                }
                            }
                        }
                    }
                }
            }
            (paged.pager(|page| who.link(&format!("/projects?page={page}"))))
        },
    )
}

/// The form for a new project (`draft`, refused with `error`).
fn create_page(
    who: &SignedIn,
    environments: &[Environment],
    draft: &NewProject,
    error: Option<&ApiError>,
) -> Markup {
    // The message goes next to the field it is about: the id's rule or a taken id, the name's rule.
    let errors = FieldErrors::of(
        error,
        &[("id", "project-id"), ("name", "project-name")],
        "project-id",
    );
    let (id_error, name_error) = (errors.at("project-id"), errors.at("project-name"));
    who.shell().render(
        "New project",
        html! {
            div.page-head { div {
                h1 { "New project" }
                p.subtitle { a href=(who.link("/projects")) { "← Projects" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(who.link("/projects")) novalidate {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("project-name", "Project name", name_error, None, html! {
                    input #project-name type="text" name="name" value=(draft.name) required autocomplete="off"
                        aria-invalid=(if name_error.is_some() { "true" } else { "false" });
                }))
                (field("project-id", "Project id", id_error, Some("Used in URLs and API tokens; empty: the name. URL-safe characters only."), html! {
                    input #project-id type="text" name="id" value=(draft.id) autocomplete="off"
                        aria-describedby="project-id-hint"
                        aria-invalid=(if id_error.is_some() { "true" } else { "false" });
                }))
                (field("project-description", "Description", None, None, html! {
                    textarea #project-description name="description" rows="2" { (draft.description) }
                }))
                fieldset {
                    legend { "Environments it uses" }
                    @for environment in environments {
                        label.check {
                            input type="checkbox" name="environment" value=(environment.name)
                                checked[draft.environments.contains(&environment.name)];
                            (environment.name)
                        }
                    }
                }
                div.actions {
                    button.primary type="submit" { "Create project" }
                    a href=(who.link("/projects")) { "Cancel" }
                }
            }
        },
    )
}

/// `POST /projects`: a new project, then its settings page.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = NewProject::of(&form);
    let input = CreateProject {
        id: Some(draft.id.clone()).filter(|id| !id.is_empty()),
        name: draft.name.clone(),
        description: Some(draft.description.clone()).filter(|text| !text.is_empty()),
        mode: None,
        default_stickiness: None,
        environments: Some(draft.environments.clone()),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let project = projects::create(&mut tx, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{}/settings", project.id)),
            format!(
                "Project {} created. Choose its environments and change requests here.",
                project.name
            ),
        ))
    }
    .await;
    written(done, async |error| {
        let (_, environments) = projects_and_environments(&state, &who).await?;
        let markup = create_page(&who, &environments, &draft, Some(error));
        Ok(Page::ok(markup).into_response())
    })
    .await
}

/// What the settings page shows again after a refused write: what was typed and the message.
#[derive(Debug, Default)]
struct SettingsDraft {
    /// Name and description as typed, with the message of the details form.
    details: Option<(String, String, String)>,
    /// Environment, approvals as typed, and the message of that environment's change-request form.
    change_requests: Option<(String, String, String)>,
    /// An environment's default-strategy form as typed, with its message.
    default_strategy: Option<DefaultDraft>,
}

struct SettingsFacts {
    project: Project,
    environments: Vec<Environment>,
    change_requests: Vec<EnvironmentChangeRequestConfig>,
    /// The default strategy of each environment the project uses that has one.
    default_strategies: BTreeMap<String, StrategyInput>,
}

async fn settings_facts(state: &AppState, id: &str) -> Result<SettingsFacts, ApiError> {
    let mut conn = state.store.read().await?;
    let project = projects::get(&mut conn, id).await?;
    let environments = environments::list(&mut conn).await?.environments;
    let change_requests = change_requests::configuration(&mut conn, id).await?;
    let mut default_strategies = BTreeMap::new();
    for environment in &project.environments {
        if let Some(strategy) = project_admin::default_strategy(&mut conn, id, environment).await? {
            default_strategies.insert(environment.clone(), strategy);
        }
    }
    Ok(SettingsFacts {
        project,
        environments,
        change_requests,
        default_strategies,
    })
}

async fn settings_page(
    state: &AppState,
    who: &SignedIn,
    id: &str,
    draft: &SettingsDraft,
    status: StatusCode,
) -> Result<Response, UiError> {
    let shell = who.shell();
    let facts = settings_facts(state, id).await?;
    let SettingsFacts {
        project,
        environments,
        change_requests,
        default_strategies,
    } = facts;
    let (name, description, details_error) = match &draft.details {
        Some((name, description, message)) => {
            (name.clone(), description.clone(), Some(message.as_str()))
        }
        None => (
            project.name.clone(),
            project.description.clone().unwrap_or_default(),
            None,
        ),
    };
    let base = who.link(&format!("/projects/{id}"));
    let here = format!("{base}/settings");
    let in_project = Scope::project(id);
    let markup = shell.render(
        &format!("Settings of {}", project.name),
        html! {
            div.page-head {
                div {
                    h1 { "Settings of " (project.name) }
                    p.subtitle {
                        a href=(who.link("/projects")) { "← Projects" } " · "
                        a href=(base) { "Flags of " (project.name) } " · id " code { (project.id) }
                    }
                }
            }
            section.card aria-labelledby="details-title" {
                h2 #details-title { "Project" }
                @if who.may_submit("/projects/{project}/settings", &in_project) {
                    form.form-narrow method="post" action=(here) novalidate {
                        input type="hidden" name="csrf" value=(who.csrf);
                        (field("project-name", "Project name", details_error, None, html! {
                            input #project-name type="text" name="name" value=(name) required
                                aria-invalid=(if details_error.is_some() { "true" } else { "false" });
                        }))
                        (field("project-description", "Description", None, None, html! {
                            textarea #project-description name="description" rows="2" { (description) }
                        }))
                        div.actions { button.primary type="submit" { "Save project" } }
                    }
                } @else {
                    dl.meta {
                        dt { "Name" } dd { (project.name) }
                        dt { "Description" } dd { (project.description.clone().unwrap_or_default()) }
                    }
                }
            }
            section.card aria-labelledby="environments-title" {
                h2 #environments-title { "Environments" }
                p.muted { "Flags of this project are served in the environments it uses. Change requests: a change there becomes a draft that needs approvals before it is applied." }
                div.project-environments {
                    @for environment in &environments {
                        @let used = project.environments.contains(&environment.name);
                        @let setting = change_requests.iter().find(|one| one.environment == environment.name);
                        section.project-environment aria-labelledby=(format!("env-{}", environment.name)) {
                            div.switch-line {
                                h3 id=(format!("env-{}", environment.name)) { (environment.name) }
                                span.badge { (environment.environment_type) }
                                (switch(who, who.may_submit("/projects/{project}/environments/{environment}/switch", &in_project), &format!("Use {}", environment.name), used,
                                    &format!("{base}/environments/{}/switch", environment.name), &here))
                            }
                            @if !used {
                                p.muted { "Not used by this project." }
                            } @else {
                                @if let Some(setting) = setting {
                                    (change_request_form(who, id, &base, setting, draft))
                                }
                                (default_strategy::section(who, (id, &base), &environment.name,
                                    default_strategies.get(&environment.name), draft.default_strategy.as_ref()))
                            }
                        }
                    }
                }
            }
            @if project.id != projects::DEFAULT_PROJECT && who.may_submit("/projects/{project}/delete", &in_project) {
                section.card aria-labelledby="delete-title" {
                    h2 #delete-title { "Delete project" }
                    p.muted { "Only a project without flags (archived ones too) and without segments of its own can be deleted." }
                    a.button.danger href=(format!("{base}/delete")) { "Delete project" }
                }
            }
        },
    );
    Ok(Page { status, markup }.into_response())
}

fn change_request_form(
    who: &SignedIn,
    project: &str,
    base: &str,
    setting: &EnvironmentChangeRequestConfig,
    draft: &SettingsDraft,
) -> Markup {
    let environment = &setting.environment;
    let (approvals, error) = match &draft.change_requests {
        Some((at, typed, message)) if at == environment => (typed.clone(), Some(message.as_str())),
        _ => (setting.required_approvals.to_string(), None),
    };
    let id = format!("approvals-{environment}");
    html! {
        @if who.may_submit("/projects/{project}/environments/{environment}/change-requests", &Scope::environment(project, environment)) {
            form.change-request-form method="post" action=(format!("{base}/environments/{environment}/change-requests")) novalidate {
                input type="hidden" name="csrf" value=(who.csrf);
                label.check {
                    input type="checkbox" name="enabled" value="true" checked[setting.change_request_enabled];
                    "Change requests in " (environment)
                }
                (field(&id, &format!("Required approvals in {environment}"), error, Some("1 to 10"), html! {
                    input id=(id) type="number" name="approvals" min="1" max="10" step="1" value=(approvals)
                        aria-describedby=(format!("{id}-hint"))
                        aria-invalid=(if error.is_some() { "true" } else { "false" });
                }))
                div.actions { button type="submit" { "Save" } }
            }
        } @else {
            p {
                @if setting.change_request_enabled {
                    "Change requests on: " (setting.required_approvals) " approval(s) needed."
                } @else {
                    "Change requests off."
                }
            }
        }
    }
}

/// `GET /projects/<id>/settings`.
pub async fn settings(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    settings_page(&state, &who, &id, &SettingsDraft::default(), StatusCode::OK).await
}

/// `POST /projects/<id>/settings`: name and description.
pub async fn save_settings(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let (name, description) = (
        form.text("name").trim().to_owned(),
        form.text("description"),
    );
    let input = UpdateProject {
        name: name.clone(),
        description: Some(description.clone()),
        mode: None,
        default_stickiness: None,
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        projects::update(&mut tx, &id, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{id}/settings")),
            "The project's name and description were saved.",
        ))
    }
    .await;
    written(done, async |error| {
        let draft = SettingsDraft {
            details: Some((name.clone(), description.clone(), error.message.clone())),
            ..SettingsDraft::default()
        };
        settings_page(&state, &who, &id, &draft, StatusCode::OK).await
    })
    .await
}

/// `POST /projects/<id>/environments/<environment>/switch`: the project starts or stops using it.
pub async fn set_environment(
    State(state): State<Arc<AppState>>,
    Path((id, environment)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let used = form.get("enabled") == Some("true");
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        if used {
            let input = AddProjectEnvironment {
                environment: environment.clone(),
                change_requests_enabled: None,
                default_strategy: None,
            };
            projects::add_environment(&mut tx, &id, input).await?;
        } else {
            projects::remove_environment(&mut tx, &id, &environment).await?;
        }
        state.commit(tx).await?;
        let now = if used { "uses" } else { "no longer uses" };
        Ok::<_, ApiError>(Done::to(
            who.link(&format!("/projects/{id}/settings")),
            format!("The project {now} environment {environment}."),
        ))
    }
    .await;
    Ok(done?.into_response())
}

/// `POST /projects/<id>/environments/<environment>/change-requests`: on/off and the required approvals
/// (Admins only, as the admin API's rule says).
pub async fn configure_change_requests(
    State(state): State<Arc<AppState>>,
    Path((id, environment)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let typed = form.text("approvals").trim().to_owned();
    let Ok(approvals) = typed.parse::<i64>() else {
        let draft = SettingsDraft {
            change_requests: Some((
                environment,
                typed,
                "Required approvals must be a whole number from 1 to 10".to_owned(),
            )),
            ..SettingsDraft::default()
        };
        return settings_page(&state, &who, &id, &draft, StatusCode::BAD_REQUEST).await;
    };
    let input = ChangeRequestConfigInput {
        change_requests_enabled: form.get("enabled") == Some("true"),
        required_approvals: Some(approvals.into()),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        change_requests::configure(&mut tx, &id, &environment, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{id}/settings")),
            format!("Change requests in {environment} were saved."),
        ))
    }
    .await;
    written(done, async |error| {
        let draft = SettingsDraft {
            change_requests: Some((environment.clone(), typed.clone(), error.message.clone())),
            ..SettingsDraft::default()
        };
        settings_page(&state, &who, &id, &draft, StatusCode::OK).await
    })
    .await
}

/// `POST /projects/<id>/environments/<environment>/default-strategy` (`rollout`, `stickiness`, `groupId`):
/// a gradual rollout as the environment's default strategy.
pub async fn save_default_strategy(
    State(state): State<Arc<AppState>>,
    Path((id, environment)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = default_strategy::draft_of(&form, &environment);
    let input = default_strategy::input_of(&draft);
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        project_admin::set_default_strategy(&mut tx, &id, &environment, input, &state.limits)
            .await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{id}/settings")),
            format!("The default strategy of {environment} was saved."),
        ))
    }
    .await;
    written(done, async |error| {
        let draft = SettingsDraft {
            default_strategy: Some(DefaultDraft {
                message: error.message.clone(),
                ..draft.clone()
            }),
            ..SettingsDraft::default()
        };
        settings_page(&state, &who, &id, &draft, StatusCode::OK).await
    })
    .await
}

/// `GET /projects/<id>/delete`: the confirmation.
pub async fn confirm_delete(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    who.ensure_may_submit("/projects/{project}/delete", &Scope::project(&id))?;
    let project = {
        let mut conn = state.store.read().await?;
        projects::get(&mut conn, &id).await?
    };
    let settings = who.link(&format!("/projects/{id}/settings"));
    let markup = shell.render(
        "Delete project",
        html! {
            section.card.form-narrow aria-labelledby="delete-title" {
                h1 #delete-title { "Delete project " (project.name) "?" }
                p { "The project and its settings are gone for good. A project that still holds flags or segments is not deleted." }
                form method="post" action=(who.link(&format!("/projects/{id}/delete"))) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions {
                        button.primary.danger type="submit" { "Delete project " (project.name) }
                        a href=(settings) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST /projects/<id>/delete`: refused (as a page) while it holds flags or segments.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    projects::delete(&mut tx, &id).await?;
    state.commit(tx).await?;
    Ok(Done::to(who.link("/projects"), format!("Project {id} deleted.")).into_response())
}
