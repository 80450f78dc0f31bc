//! `/projects/<project>/access`: who has which role in a project — people and groups, their roles, a form to
//! give someone access, and per row a role to change or "Remove". Reading needs `PROJECT_USER_ACCESS_READ`,
//! changing `PROJECT_USER_ACCESS_WRITE` in the project (`ui::PERMISSIONS`): Admins and the project's
//! Owners; the same `domain::project_access` as the admin API.

use super::controls::field;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{SignedIn, UiWrite};
use super::users::display_name;
use crate::domain::access::Scope;
use crate::domain::permissions::Permission;
use crate::domain::project_access::{self, AddAccess, ProjectAccess};
use crate::domain::role_admin::RoleBody;
use crate::domain::{groups, users};
use crate::http::state::AppState;
use crate::store::roles::Subject;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's page and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects/{project}/access", get(page).post(add))
        .route(
            "/projects/{project}/access/{subject}/role",
            post(change_role),
        )
        .route("/projects/{project}/access/{subject}/remove", post(remove))
}

/// Everyone who could be given access: people and groups, as `user-<id>` / `group-<id>` with a label.
async fn candidates(state: &AppState) -> Result<Vec<(String, String)>, ApiError> {
    let mut conn = state.store.read().await?;
    let mut all: Vec<(String, String)> = users::list(&mut conn)
        .await?
        .users
        .iter()
        .map(|user| (format!("user-{}", user.id), display_name(user)))
        .collect();
    all.extend(groups::list(&mut conn).await?.groups.iter().map(|group| {
        (
            format!("group-{}", group.id),
            format!("{} (group)", group.name),
        )
    }));
    Ok(all)
}

fn role_options(roles: &[RoleBody], selected: Option<i64>) -> Markup {
    html! {
        @for role in roles {
            option value=(role.id) selected[Some(role.id) == selected] { (role.name) }
        }
    }
}

fn role_names(roles: &[RoleBody], ids: &[i64]) -> String {
    ids.iter()
        .map(|id| {
            roles
                .iter()
                .find(|role| role.id == *id)
                .map_or_else(|| format!("role {id}"), |role| role.name.clone())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

async fn draw(
    state: &AppState,
    who: &SignedIn,
    project: &str,
    error: Option<&ApiError>,
) -> Result<Response, UiError> {
    if !who.may(Permission::ProjectUserAccessRead, &Scope::project(project)) {
        return Err(ApiError::new(
            vexil_shared::ErrorKind::NoAccess,
            "You need the PROJECT_USER_ACCESS_READ permission in this project to see who has access",
        )
        .into());
    }
    let access: ProjectAccess = {
        let mut conn = state.store.read().await?;
        project_access::get(&mut conn, project).await?
    };
    let may_change = who.may(Permission::ProjectUserAccessWrite, &Scope::project(project));
    let everyone = candidates(state).await?;
    let base = who.link(&format!("/projects/{project}/access"));
    let rows: Vec<(String, String, &str, &[i64])> = access
        .users
        .iter()
        .map(|user| {
            let name = user
                .name
                .clone()
                .or(user.username.clone())
                .or(user.email.clone())
                .unwrap_or_else(|| format!("User {}", user.id));
            let kind = if user.account_type == "User" {
                "Person"
            } else {
                "Service account"
            };
            (
                format!("user-{}", user.id),
                name,
                kind,
                user.roles.as_slice(),
            )
        })
        .chain(access.groups.iter().map(|group| {
            (
                format!("group-{}", group.id),
                group.name.clone(),
                "Group",
                group.roles.as_slice(),
            )
        }))
        .collect();
    let status = error.map_or(StatusCode::OK, |error| {
        StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::BAD_REQUEST)
    });
    let markup = who.shell().render(
        &format!("Access to {project}"),
        html! {
            div.page-head {
                div.page-title {
                    h1 { "Access to " (project) }
                    p.subtitle { "Who may work in this project, and with which role. Admins and Editors may work in every project; the Owner role also gives access and sets change requests." }
                }
                div.actions {
                    a.button href=(who.link(&format!("/projects/{project}/overview"))) { "Overview" }
                    a.button href=(who.link(&format!("/projects/{project}/settings"))) { "Settings" }
                }
            }
            @if let Some(error) = error {
                div.notice.error role="alert" { (error.message) }
            }
            @if may_change {
                section.card aria-labelledby="give-title" {
                    h2 #give-title { "Give access" }
                    form.inline-form method="post" action=(base) {
                        input type="hidden" name="csrf" value=(who.csrf);
                        (field("subject", "Person or group", None, None, html! {
                            select #subject name="subject" required {
                                @for (value, label) in &everyone {
                                    option value=(value) { (label) }
                                }
                            }
                        }))
                        (field("role", "Role", None, None, html! {
                            select #role name="role" { (role_options(&access.roles, Some(5))) }
                        }))
                        div.actions { button.primary type="submit" { "Give access" } }
                    }
                }
            }
            @if rows.is_empty() {
                div.empty { p { "No one has a role in this project yet: only Admins and Editors work here." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Roles" }
                            @if may_change { th scope="col" { "Actions" } }
                        } }
                        tbody {
                            @for (subject, name, kind, roles) in &rows {
                                tr {
                                    td.flag-name { strong { (name) } p.desc { (kind) } }
                                    td { (role_names(&access.roles, roles)) }
                                    @if may_change {
                                        td.row-actions.access-actions {
                                            form.inline-form method="post" action=(format!("{base}/{subject}/role")) {
                                                input type="hidden" name="csrf" value=(who.csrf);
                                                label.sr-only for=(format!("role-{subject}")) { "Role of " (name) }
                                                select id=(format!("role-{subject}")) name="role" {
                                                    (role_options(&access.roles, roles.first().copied()))
                                                }
                                                button type="submit" aria-label=(format!("Change the role of {name}")) { "Change" }
                                            }
                                            form method="post" action=(format!("{base}/{subject}/remove")) {
                                                input type="hidden" name="csrf" value=(who.csrf);
                                                button.danger type="submit" aria-label=(format!("Remove {name}")) { "Remove" }
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
    Ok(Page { status, markup }.into_response())
}

/// `GET /projects/<project>/access`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(project): Path<String>,
) -> Result<Response, UiError> {
    draw(&state, &who, &project, None).await
}

/// `user-3` → (user, 3), `group-2` → (group, 2).
fn subject_of(text: &str) -> Result<(Subject, i64), ApiError> {
    let parsed = match text.split_once('-') {
        Some(("user", id)) => id.parse().ok().map(|id| (Subject::User, id)),
        Some(("group", id)) => id.parse().ok().map(|id| (Subject::Group, id)),
        _ => None,
    };
    parsed.ok_or_else(|| ApiError::invalid_field("subject", "Choose a person or a group"))
}

fn role_of(text: &str) -> Result<i64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::invalid_field("role", "Choose a role"))
}

/// `POST /projects/<project>/access` (`subject`, `role`).
pub async fn add(
    State(state): State<Arc<AppState>>,
    Path(project): Path<String>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let done = async {
        let (subject, id) = subject_of(&form.text("subject"))?;
        let role = role_of(&form.text("role"))?;
        let input = match subject {
            Subject::User => AddAccess {
                roles: vec![role],
                users: vec![id],
                groups: vec![],
            },
            Subject::Group => AddAccess {
                roles: vec![role],
                users: vec![],
                groups: vec![id],
            },
        };
        let mut tx = state.store.begin_write(&who.actor).await?;
        project_access::add(&mut tx, &project, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{project}/access")),
            "Access given.",
        ))
    }
    .await;
    written(done, async |error| {
        draw(&state, &who, &project, Some(error)).await
    })
    .await
}

async fn set_roles(
    state: &AppState,
    who: &SignedIn,
    project: &str,
    subject: &str,
    roles: Vec<i64>,
    notice: &str,
) -> Result<Response, UiError> {
    let done = async {
        let (kind, id) = subject_of(subject)?;
        let mut tx = state.store.begin_write(&who.actor).await?;
        project_access::set_roles(&mut tx, project, kind, id, &roles).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/projects/{project}/access")),
            notice,
        ))
    }
    .await;
    written(done, async |error| {
        draw(state, who, project, Some(error)).await
    })
    .await
}

/// `POST /projects/<project>/access/<subject>/role` (`role`): that one role instead of theirs.
pub async fn change_role(
    State(state): State<Arc<AppState>>,
    Path((project, subject)): Path<(String, String)>,
    UiWrite { who, form, .. }: UiWrite,
) -> Result<Response, UiError> {
    let role = role_of(&form.text("role"))?;
    set_roles(
        &state,
        &who,
        &project,
        &subject,
        vec![role],
        "Role changed.",
    )
    .await
}

/// `POST /projects/<project>/access/<subject>/remove`.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path((project, subject)): Path<(String, String)>,
    UiWrite { who, .. }: UiWrite,
) -> Result<Response, UiError> {
    set_roles(&state, &who, &project, &subject, vec![], "Access removed.").await
}
