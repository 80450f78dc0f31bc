//! `/admin/roles`: the roles — predefined (Admin, Editor, Viewer; Owner, Member) and custom — with a form for
//! a custom role: its name, whether it is a project role or a root role, and its permissions picked by level
//! (root; project; per environment, a row per permission and a column per environment). Admins only (the
//! admin API's `Access` area); the same `domain::role_admin` as `/api/admin/roles`.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::permissions::{Level, Permission};
use crate::domain::role_admin::{self, PermissionReference, RoleInput};
use crate::domain::roles::ProjectRole;
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/roles", get(list))
        .route("/admin/roles/create", get(new_role).post(create))
        .route("/admin/roles/{id}", get(edit).post(update))
        .route("/admin/roles/{id}/delete", post(delete))
}

/// `GET /admin/roles`.
pub async fn list(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let roles = {
        let mut conn = state.store.read().await?;
        role_admin::list(&mut conn).await?.roles
    };
    let kind = |role_type: &str| match role_type {
        "root" => "Root role",
        "project" => "Project role",
        "root-custom" => "Custom root role",
        _ => "Custom project role",
    };
    let markup = who.shell().render(
        "Roles",
        html! {
            div.page-head {
                div {
                    h1 { "Roles" }
                    p.subtitle { "Root roles apply everywhere; project roles are given per project on a project's Access page." }
                }
                a.button.primary href=(who.link("/admin/roles/create")) { "New role" }
            }
            div.table-wrap {
                table {
                    thead { tr {
                        th scope="col" { "Name" }
                        th scope="col" { "Kind" }
                        th scope="col" { "Actions" }
                    } }
                    tbody {
                        @for role in &roles {
                            tr {
                                td.flag-name {
                                    strong { (role.name) }
                                    @if !role.description.is_empty() { p.desc { (role.description) } }
                                }
                                td { (kind(&role.role_type)) }
                                td {
                                    @if ProjectRole::is_predefined(role.id) {
                                        span.muted { "predefined" }
                                    } @else {
                                        a.button href=(who.link(&format!("/admin/roles/{}", role.id)))
                                            aria-label=(format!("Edit {}", role.name)) { "Edit" }
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

/// What the role form holds: `permissions` as `NAME` or `NAME@environment`.
struct RoleDraft {
    name: String,
    description: String,
    role_type: String,
    permissions: Vec<String>,
}

impl RoleDraft {
    fn from_form(form: &FormFields) -> RoleDraft {
        RoleDraft {
            name: form.text("name"),
            description: form.text("description"),
            role_type: form.text("type"),
            permissions: form
                .all("permission")
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }

    fn to_input(&self) -> RoleInput {
        let root = self.role_type == "root-custom";
        RoleInput {
            name: self.name.clone(),
            description: Some(self.description.clone()),
            role_type: Some(self.role_type.clone()),
            permissions: self
                .permissions
                .iter()
                .filter_map(|picked| {
                    let (name, environment) = match picked.split_once('@') {
                        Some((name, environment)) => (name, Some(environment.to_owned())),
                        None => (picked.as_str(), None),
                    };
                    let level = Permission::named(name)?.level();
                    // The form shows every level; only the chosen kind's permissions count.
                    ((level == Level::Root) == root).then(|| PermissionReference {
                        name: Some(name.to_owned()),
                        id: None,
                        environment,
                    })
                })
                .collect(),
        }
    }
}

fn role_form(
    who: &SignedIn,
    id: Option<i64>,
    draft: &RoleDraft,
    environments: &[String],
    error: Option<&ApiError>,
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[("name", "role-name"), ("type", "role-type")],
        "role-name",
    );
    let heading = if id.is_some() {
        "Edit role"
    } else {
        "New role"
    };
    let action = match id {
        Some(id) => who.link(&format!("/admin/roles/{id}")),
        None => who.link("/admin/roles/create"),
    };
    let picked = |value: &str| draft.permissions.iter().any(|p| p == value);
    let check = |value: String, label: &str| {
        let box_id = format!("perm-{}", value.replace('@', "-"));
        html! {
            div.check {
                input id=(box_id) type="checkbox" name="permission" value=(value) checked[picked(&value)];
                label for=(box_id) { (label) }
            }
        }
    };
    who.shell().render(
        heading,
        html! {
            div.page-head { div { h1 { (heading) } p.subtitle { a href=(who.link("/admin/roles")) { "← Roles" } } } }
            (errors.general())
            form method="post" action=(action) {
                input type="hidden" name="csrf" value=(who.csrf);
                div.form-narrow {
                    (field("role-name", "Name", errors.at("role-name"), None, html! {
                        input #role-name type="text" name="name" value=(draft.name) required maxlength="100"
                            aria-describedby="role-name-error";
                    }))
                    (field("role-description", "Description", None, None, html! {
                        textarea #role-description name="description" rows="2" { (draft.description) }
                    }))
                    (field("role-type", "Kind", errors.at("role-type"), Some("A project role is given per project; a root role applies everywhere"), html! {
                        select #role-type name="type" aria-describedby="role-type-hint role-type-error" {
                            option value="custom" selected[draft.role_type != "root-custom"] { "Project role" }
                            option value="root-custom" selected[draft.role_type == "root-custom"] { "Root role" }
                        }
                    }))
                }
                fieldset.permissions {
                    legend { "Project permissions (for a project role)" }
                    @for permission in Permission::at(Level::Project) {
                        (check(permission.name().to_owned(), permission.display_name()))
                    }
                }
                fieldset.permissions {
                    legend { "Permissions per environment (for a project role)" }
                    div.table-wrap {
                        table {
                            thead { tr {
                                th scope="col" { "Permission" }
                                @for environment in environments { th scope="col" { (environment) } }
                            } }
                            tbody {
                                @for permission in Permission::at(Level::Environment) {
                                    tr {
                                        th scope="row" { (permission.display_name()) }
                                        @for environment in environments {
                                            @let value = format!("{}@{environment}", permission.name());
                                            @let box_id = format!("perm-{}-{environment}", permission.name());
                                            td {
                                                input id=(box_id) type="checkbox" name="permission" value=(value) checked[picked(&value)]
                                                    aria-label=(format!("{} in {environment}", permission.display_name()));
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                fieldset.permissions {
                    legend { "Root permissions (for a root role)" }
                    @for permission in Permission::at(Level::Root) {
                        (check(permission.name().to_owned(), permission.display_name()))
                    }
                }
                div.actions {
                    button.primary type="submit" { "Save role" }
                    a href=(who.link("/admin/roles")) { "Cancel" }
                }
            }
            @if let Some(id) = id {
                form method="post" action=(who.link(&format!("/admin/roles/{id}/delete"))) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    button.danger type="submit" { "Delete role" }
                }
            }
        },
    )
}

async fn environments(state: &AppState) -> Result<Vec<String>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(crate::store::environments::list(&mut conn)
        .await?
        .into_iter()
        .map(|row| row.name)
        .collect())
}

/// `GET /admin/roles/create`.
pub async fn new_role(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let draft = RoleDraft {
        name: String::new(),
        description: String::new(),
        role_type: "custom".to_owned(),
        permissions: Vec::new(),
    };
    let markup = role_form(&who, None, &draft, &environments(&state).await?, None);
    Ok(Page::ok(markup).into_response())
}

/// `GET /admin/roles/<id>`.
pub async fn edit(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let role = {
        let mut conn = state.store.read().await?;
        role_admin::get(&mut conn, id).await?
    };
    let draft = RoleDraft {
        name: role.name,
        description: role.description,
        role_type: role.role_type,
        permissions: role
            .permissions
            .iter()
            .map(|p| match &p.environment {
                Some(environment) => format!("{}@{environment}", p.name),
                None => p.name.clone(),
            })
            .collect(),
    };
    let markup = role_form(&who, Some(id), &draft, &environments(&state).await?, None);
    Ok(Page::ok(markup).into_response())
}

async fn save(
    state: &AppState,
    who: &SignedIn,
    id: Option<i64>,
    form: &FormFields,
) -> Result<Response, UiError> {
    let draft = RoleDraft::from_form(form);
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let saved = match id {
            Some(id) => role_admin::update(&mut tx, id, draft.to_input()).await?,
            None => role_admin::create(&mut tx, draft.to_input()).await?,
        };
        state.commit(tx).await?;
        Ok(Done::to(
            who.link("/admin/roles"),
            format!("Role {} saved.", saved.roles.name),
        ))
    }
    .await;
    written(done, async |error| {
        let markup = role_form(who, id, &draft, &environments(state).await?, Some(error));
        Ok(Page::ok(markup).into_response())
    })
    .await
}

/// `POST /admin/roles/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    save(&state, &who, None, &form).await
}

/// `POST /admin/roles/<id>`.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    save(&state, &who, Some(id), &form).await
}

/// `POST /admin/roles/<id>/delete`: a role in use stays, and the page says why.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    role_admin::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(who.link("/admin/roles"), "Role deleted.").into_response())
}
