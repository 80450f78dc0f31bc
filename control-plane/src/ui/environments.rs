//! `/environments`: every environment (name, type, on/off, sort order, how many projects use it) with the
//! new-environment form; edit an environment's type and sort order; turn one on or off; delete one that is
//! not protected, after a confirmation. The same domain functions as `/api/admin/environments…`.

use super::controls::{field, switch};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::{PageQuery, Paged};
use super::scope::{written, Done};
use super::session::{FormFields, SignedIn, UiWrite};
use crate::domain::access::Scope;
use crate::domain::environments::{self, CreateEnvironment, Environment, UpdateEnvironment};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/environments", get(list).post(create))
        .route("/environments/create", get(new_environment))
        .route("/environments/edit/{name}", get(edit).post(update))
        .route("/environments/{name}/switch", post(set_enabled))
        .route(
            "/environments/{name}/delete",
            get(confirm_delete).post(delete),
        )
}

/// The types Unleash's environments use, offered as suggestions (any URL-safe type is accepted).
const SUGGESTED_TYPES: [&str; 4] = ["development", "test", "preproduction", "production"];

/// What an environment form holds (kept when it is shown again with a message).
#[derive(Debug, Default)]
struct EnvironmentDraft {
    name: String,
    environment_type: String,
    sort_order: String,
}

impl EnvironmentDraft {
    fn of(form: &FormFields) -> EnvironmentDraft {
        EnvironmentDraft {
            name: form.text("name").trim().to_owned(),
            environment_type: form.text("type").trim().to_owned(),
            sort_order: form.text("sortOrder").trim().to_owned(),
        }
    }

    /// The sort order as typed: empty → none; not a whole number → the message for the field.
    fn sort_order(&self) -> Result<Option<i64>, ApiError> {
        if self.sort_order.is_empty() {
            return Ok(None);
        }
        self.sort_order.parse().map(Some).map_err(|_| {
            ApiError::invalid_field(
                "sortOrder",
                "sortOrder must be a whole number (empty: after the last)",
            )
        })
    }
}

/// Where a refusal shows: beside the name (on the new-environment form), the type or the sort order, else
/// above the form.
fn placed(error: Option<&ApiError>, with_name: bool) -> FieldErrors {
    let mut fields = vec![
        ("type", "environment-type"),
        ("sortOrder", "environment-sort-order"),
    ];
    if with_name {
        fields.push(("name", "environment-name"));
    }
    FieldErrors::of(error, &fields, "environment-name")
}

fn type_control(draft: &EnvironmentDraft, error: Option<&str>) -> Markup {
    field(
        "environment-type",
        "Type",
        error,
        Some("For example development, test, preproduction or production"),
        html! {
            input #environment-type type="text" name="type" value=(draft.environment_type) required
                list="environment-types" autocomplete="off" aria-describedby="environment-type-hint"
                aria-invalid=(if error.is_some() { "true" } else { "false" });
            datalist #environment-types {
                @for suggestion in SUGGESTED_TYPES { option value=(suggestion) {} }
            }
        },
    )
}

fn sort_order_control(draft: &EnvironmentDraft, error: Option<&str>) -> Markup {
    field(
        "environment-sort-order",
        "Sort order",
        error,
        Some("Lower comes first; empty: after the last"),
        html! {
            input #environment-sort-order type="number" name="sortOrder" value=(draft.sort_order) step="1"
                aria-describedby="environment-sort-order-hint"
                aria-invalid=(if error.is_some() { "true" } else { "false" });
        },
    )
}

async fn all_environments(state: &AppState) -> Result<Vec<Environment>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(environments::list(&mut conn).await?.environments)
}

/// The environments list, page `page`.
fn list_page(who: &SignedIn, list: &[Environment], page: Option<usize>) -> Markup {
    let shell = who.shell();
    let paged = Paged::new(page, list.len());
    // A switch brings the same page back.
    let back = who.link(&format!("/environments?page={}", paged.page));
    let root = Scope::default();
    let may_create = who.may_submit("/environments", &root);
    let may_switch = who.may_submit("/environments/{name}/switch", &root);
    let may_edit = who.may_submit("/environments/edit/{name}", &root);
    let may_delete = who.may_submit("/environments/{name}/delete", &root);
    shell.render(
        "Environments",
        html! {
            div.page-head {
                div {
                    h1 { "Environments" }
                    p.subtitle { "Where flags are served: each project uses some of them, each flag is on or off in each." }
                }
                @if may_create {
                    a.button.primary href=(who.link("/environments/create")) { "New environment" }
                }
            }
            @if list.is_empty() {
                div.empty { p { "No environments yet." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name and type" }
                            th scope="col" { "Enabled" }
                            th.hide-narrow scope="col" { "Sort order" }
                            th.hide-narrow scope="col" { "Projects" }
                            @if may_edit || may_delete { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for environment in paged.slice(list) {
                                tr {
                                    td.flag-name {
                                        strong { (environment.name) }
                                        " " span.tag { (environment.environment_type) }
                                        @if environment.protected { " " span.badge { "protected" } }
                                    }
                                    td {
                                        (switch(who, may_switch, &format!("{} enabled", environment.name), environment.enabled,
                                            &who.link(&format!("/environments/{}/switch", environment.name)), &back))
                                    }
                                    td.hide-narrow { (environment.sort_order) }
                                    td.hide-narrow { (environment.project_count) }
                                    @if may_edit || may_delete {
                                        td {
                                            div.row-actions {
                                                @if may_edit {
                                                    a.button href=(who.link(&format!("/environments/edit/{}", environment.name)))
                                                        aria-label=(format!("Edit {}", environment.name)) { "Edit" }
                                                }
                                                @if may_delete && !environment.protected {
                                                    a.button.danger href=(who.link(&format!("/environments/{}/delete", environment.name)))
                                                        aria-label=(format!("Delete {}", environment.name)) { "Delete" }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                (paged.pager(|page| who.link(&format!("/environments?page={page}"))))
            }
        },
    )
}

/// The form for a new environment (`draft`, refused with `error`).
fn create_page(who: &SignedIn, draft: &EnvironmentDraft, error: Option<&ApiError>) -> Markup {
    let errors = placed(error, true);
    let name_error = errors.at("environment-name");
    who.shell().render(
        "New environment",
        html! {
            div.page-head { div {
                h1 { "New environment" }
                p.subtitle { a href=(who.link("/environments")) { "← Environments" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(who.link("/environments")) novalidate {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("environment-name", "Environment name", name_error, Some("URL-safe characters; it cannot be renamed"), html! {
                    input #environment-name type="text" name="name" value=(draft.name) required autocomplete="off"
                        aria-describedby="environment-name-hint"
                        aria-invalid=(if name_error.is_some() { "true" } else { "false" });
                }))
                (type_control(draft, errors.at("environment-type")))
                (sort_order_control(draft, errors.at("environment-sort-order")))
                div.actions {
                    button.primary type="submit" { "Create environment" }
                    a href=(who.link("/environments")) { "Cancel" }
                }
            }
        },
    )
}

/// `GET /environments`: a page of the environments.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<PageQuery>,
) -> Result<Response, UiError> {
    let list = all_environments(&state).await?;
    Ok(Page::ok(list_page(&who, &list, query.page)).into_response())
}

/// `GET /environments/create`: the form for a new one.
pub async fn new_environment(who: SignedIn) -> Result<Response, UiError> {
    who.ensure_may_submit("/environments", &Scope::default())?;
    let draft = EnvironmentDraft::default();
    Ok(Page::ok(create_page(&who, &draft, None)).into_response())
}

/// `POST /environments`: a new environment.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = EnvironmentDraft::of(&form);
    let done = async {
        let input = CreateEnvironment {
            name: draft.name.clone(),
            environment_type: draft.environment_type.clone(),
            enabled: None,
            sort_order: draft.sort_order()?,
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        environments::create(&mut tx, input, &state.limits).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link("/environments"),
            format!("Environment {} created", draft.name),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(Page::ok(create_page(&who, &draft, Some(error))).into_response())
    })
    .await
}

fn edit_page(
    who: &SignedIn,
    name: &str,
    draft: &EnvironmentDraft,
    error: Option<&ApiError>,
    status: StatusCode,
) -> Response {
    let shell = who.shell();
    let errors = placed(error, false);
    let markup = shell.render(
        &format!("Edit {name}"),
        html! {
            div.page-head { div {
                h1 { "Edit environment " (name) }
                p.subtitle { a href=(who.link("/environments")) { "← Environments" } }
            } }
            (errors.general())
            form.form-narrow method="post" action=(who.link(&format!("/environments/edit/{name}"))) novalidate {
                input type="hidden" name="csrf" value=(who.csrf);
                (type_control(draft, errors.at("environment-type")))
                (sort_order_control(draft, errors.at("environment-sort-order")))
                div.actions {
                    button.primary type="submit" { "Save environment" }
                    a href=(who.link("/environments")) { "Cancel" }
                }
            }
        },
    );
    Page { status, markup }.into_response()
}

/// `GET /environments/edit/<name>`.
pub async fn edit(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(name): Path<String>,
) -> Result<Response, UiError> {
    who.ensure_may_submit("/environments/edit/{name}", &Scope::default())?;
    let mut conn = state.store.read().await?;
    let environment = environments::get(&mut conn, &name).await?;
    let draft = EnvironmentDraft {
        name: environment.name,
        environment_type: environment.environment_type,
        sort_order: environment.sort_order.to_string(),
    };
    Ok(edit_page(&who, &name, &draft, None, StatusCode::OK))
}

/// `POST /environments/edit/<name>`: its type and sort order.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let draft = EnvironmentDraft::of(&form);
    let done = async {
        let input = UpdateEnvironment {
            environment_type: draft.environment_type.clone(),
            sort_order: draft.sort_order()?,
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        environments::update(&mut tx, &name, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link("/environments"),
            format!("Environment {name} saved"),
        ))
    }
    .await;
    written(done, async |error| {
        Ok(edit_page(
            &who,
            &name,
            &draft,
            Some(error),
            StatusCode::BAD_REQUEST,
        ))
    })
    .await
}

/// `POST /environments/<name>/switch`: on or off everywhere.
pub async fn set_enabled(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let enabled = form.get("enabled") == Some("true");
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        environments::set_enabled(&mut tx, &name, enabled).await?;
        state.commit(tx).await?;
        let now = if enabled { "on" } else { "off" };
        Ok::<_, ApiError>(Done::to(
            who.link("/environments"),
            format!("Environment {name} switched {now}"),
        ))
    }
    .await;
    Ok(done?.into_response())
}

/// `GET /environments/<name>/delete`: the confirmation.
pub async fn confirm_delete(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(name): Path<String>,
) -> Result<Response, UiError> {
    let shell = who.shell();
    who.ensure_may_submit("/environments/{name}/delete", &Scope::default())?;
    let environment = async {
        let mut conn = state.store.read().await?;
        environments::get(&mut conn, &name).await
    }
    .await?;
    let markup = shell.render(
        "Delete environment",
        html! {
            section.card.form-narrow aria-labelledby="delete-title" {
                h1 #delete-title { "Delete environment " (environment.name) "?" }
                p { "Every flag's settings in it (on/off, strategies, variants) are deleted with it, and "
                    (environment.project_count) " project(s) stop using it. This cannot be undone." }
                form method="post" action=(who.link(&format!("/environments/{name}/delete"))) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions {
                        button.primary.danger type="submit" { "Delete environment " (environment.name) }
                        a href=(who.link("/environments")) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST /environments/<name>/delete`: refused (as a page) for a protected one.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        environments::delete(&mut tx, &name).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(Done::to(
            who.link("/environments"),
            format!("Environment {name} deleted"),
        ))
    }
    .await;
    Ok(done?.into_response())
}
