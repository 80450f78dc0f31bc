//! `/admin/groups`: the user groups (name, root role, members), a new group, a group's page (details, root
//! role given to every member, members as checkboxes) and delete after a confirmation. Admins only, as the
//! admin API's `Access` area.

use super::access_forms::role_name;
use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use super::users::display_name;
use crate::domain::access::Area;
use crate::domain::groups::{self, Group, MemberReference, UserReference, WriteGroup};
use crate::domain::projects;
use crate::domain::roles::{RoleReference, RootRole};
use crate::domain::users::{self, User};
use crate::http::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use std::collections::BTreeMap;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/groups", get(list))
        .route("/admin/groups/create", get(new_group).post(create))
        .route("/admin/groups/{id}", get(edit).post(update))
        .route(
            "/admin/groups/{id}/delete",
            get(confirm_delete).post(delete),
        )
}

/// `GET /admin/groups`.
pub async fn list(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let (all, project_names) = async {
        let mut conn = state.store.read().await?;
        let all = groups::list(&mut conn).await?.groups;
        // Projects by name where a group has a role (ids as the API gives them).
        let mut names = BTreeMap::new();
        if all.iter().any(|group| !group.projects.is_empty()) {
            for project in projects::list(&mut conn).await?.projects {
                names.insert(project.id, project.name);
            }
        }
        Ok::<_, ApiError>((all, names))
    }
    .await?;
    let markup = who.shell().render(
        "Groups",
        html! {
            div.page-head {
                div {
                    h1 { "Groups" }
                    p.subtitle { "Sets of users; a group's root role applies to every member (the highest role wins)." }
                }
                a.button.primary href=(who.link("/admin/groups/create")) { "New group" }
            }
            @if all.is_empty() {
                div.empty { p { "No groups yet." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "Root role" }
                            th scope="col" { "Members" }
                            th scope="col" { "Projects" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for group in &all {
                                tr {
                                    td.flag-name {
                                        strong { (group.name) }
                                        @if group.scim_id.is_some() {
                                            " " span.badge title="Provisioned by your identity provider (SCIM): its name and members are changed there; only its root role here" {
                                                "SCIM" span.sr-only { ": managed by your identity provider" }
                                            }
                                        }
                                        @if let Some(description) = group.description.as_deref().filter(|d| !d.is_empty()) {
                                            p.desc { (description) }
                                        }
                                    }
                                    td {
                                        @match group.root_role {
                                            Some(role) => { (role_name(role)) }
                                            None => { span.muted { "none" } }
                                        }
                                    }
                                    td {
                                        @if group.users.is_empty() {
                                            span.muted { "no members" }
                                        } @else {
                                            (group.users.iter().map(|member| display_name(&member.user)).collect::<Vec<_>>().join(", "))
                                        }
                                    }
                                    td {
                                        @if group.projects.is_empty() {
                                            span.muted { "none" }
                                        }
                                        @for (i, project) in group.projects.iter().enumerate() {
                                            @let name = project_names.get(project).unwrap_or(project);
                                            @if i > 0 { ", " }
                                            a href=(who.link(&format!("/projects/{project}/access")))
                                                aria-label=(format!("{name}: who has access")) { (name) }
                                        }
                                    }
                                    td {
                                        a.button href=(who.link(&format!("/admin/groups/{}", group.id)))
                                            aria-label=(format!("Edit {}", group.name)) { "Edit" }
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

/// What the group form holds.
struct GroupDraft {
    name: String,
    description: String,
    root_role: Option<i64>,
    members: Vec<i64>,
}

impl GroupDraft {
    fn of(group: &Group) -> GroupDraft {
        GroupDraft {
            name: group.name.clone(),
            description: group.description.clone().unwrap_or_default(),
            root_role: group.root_role,
            members: group.users.iter().map(|member| member.user.id).collect(),
        }
    }

    fn from_form(form: &FormFields) -> GroupDraft {
        GroupDraft {
            name: form.text("name"),
            description: form.text("description"),
            root_role: form.text("rootRole").parse().ok(),
            members: form
                .all("member")
                .into_iter()
                .filter_map(|id| id.parse().ok())
                .collect(),
        }
    }

    /// The API's body, keeping `mappings_sso` (the UI does not edit them).
    fn to_write(&self, mappings_sso: Vec<String>) -> WriteGroup {
        WriteGroup {
            name: self.name.clone(),
            description: Some(self.description.clone()).filter(|text| !text.trim().is_empty()),
            mappings_sso: Some(mappings_sso),
            root_role: self.root_role.map(RoleReference::Id),
            users: Some(
                self.members
                    .iter()
                    .map(|&id| MemberReference {
                        user: UserReference { id },
                    })
                    .collect(),
            ),
        }
    }
}

/// The group's form; a provisioned group's name, description and members are shown disabled (the provider
/// owns them), its root role can be changed.
fn group_form(
    who: &SignedIn,
    id: Option<i64>,
    draft: &GroupDraft,
    all_users: &[User],
    error: Option<&ApiError>,
    provisioned: bool,
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("name", "group-name"),
            ("rootRole", "group-role"),
            ("users", "group-members"),
        ],
        "group-name",
    );
    let heading = if id.is_some() {
        "Edit group"
    } else {
        "New group"
    };
    let action = match id {
        Some(id) => who.link(&format!("/admin/groups/{id}")),
        None => who.link("/admin/groups/create"),
    };
    who.shell().render(
        heading,
        html! {
            div.page-head { div { h1 { (heading) } p.subtitle { a href=(who.link("/admin/groups")) { "← Groups" } } } }
            (errors.general())
            @if provisioned {
                p.notice #scim-managed role="note" {
                    "Managed by SCIM: your identity provider provisions this group, so its name and members are changed there, and it is deleted there. Only the root role it gives its members can be changed here."
                }
            }
            form.form-narrow method="post" action=(action) {
                input type="hidden" name="csrf" value=(who.csrf);
                fieldset.plain disabled[provisioned] {
                (field("group-name", "Name", errors.at("group-name"), None, html! {
                    input #group-name type="text" name="name" value=(draft.name) required maxlength="100"
                        aria-describedby="group-name-error";
                }))
                (field("group-description", "Description", None, None, html! {
                    textarea #group-description name="description" rows="2" { (draft.description) }
                }))
                }
                (field("group-role", "Root role", errors.at("group-role"), Some("Given to every member; none: members keep their own"), html! {
                    select #group-role name="rootRole" aria-describedby="group-role-hint group-role-error" {
                        option value="" selected[draft.root_role.is_none()] { "None" }
                        @for role in RootRole::ALL {
                            option value=(role.id()) selected[draft.root_role == Some(role.id())] { (role.name()) }
                        }
                    }
                }))
                fieldset.members #group-members disabled[provisioned] {
                    legend { "Members" }
                    @if all_users.is_empty() {
                        p.muted { "No users yet." }
                    }
                    @for user in all_users {
                        @let box_id = format!("member-{}", user.id);
                        div.check {
                            input id=(box_id) type="checkbox" name="member" value=(user.id)
                                checked[draft.members.contains(&user.id)];
                            label for=(box_id) { (display_name(user)) }
                        }
                    }
                    p.field-error aria-live="polite" { @if let Some(message) = errors.at("group-members") { (message) } }
                }
                div.actions {
                    button.primary type="submit" { (if provisioned { "Save root role" } else { "Save group" }) }
                    a href=(who.link("/admin/groups")) { "Cancel" }
                    @if let Some(id) = id.filter(|_| !provisioned) {
                        a.button.danger href=(who.link(&format!("/admin/groups/{id}/delete"))) { "Delete group" }
                    }
                }
            }
        },
    )
}

async fn all_users(state: &AppState) -> Result<Vec<User>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(users::list(&mut conn).await?.users)
}

/// `GET /admin/groups/create`.
pub async fn new_group(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let everyone = all_users(&state).await?;
    let draft = GroupDraft {
        name: String::new(),
        description: String::new(),
        root_role: None,
        members: Vec::new(),
    };
    let markup = group_form(&who, None, &draft, &everyone, None, false);
    Ok(Page::ok(markup).into_response())
}

/// `GET /admin/groups/<id>`.
pub async fn edit(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let (group, everyone) = async {
        let mut conn = state.store.read().await?;
        let group = groups::get(&mut conn, id).await?;
        Ok::<_, ApiError>((group, users::list(&mut conn).await?.users))
    }
    .await?;
    let provisioned = group.scim_id.is_some();
    let markup = group_form(
        &who,
        Some(id),
        &GroupDraft::of(&group),
        &everyone,
        None,
        provisioned,
    );
    Ok(Page::ok(markup).into_response())
}

async fn save(
    state: &AppState,
    who: &SignedIn,
    id: Option<i64>,
    form: &FormFields,
) -> Result<Response, UiError> {
    let mut draft = GroupDraft::from_form(form);
    // A provisioned group's form sends only the root role (the rest is disabled): the rest stays as stored.
    let stored = match id {
        Some(id) => {
            let mut conn = state.store.read().await?;
            Some(groups::get(&mut conn, id).await?)
        }
        None => None,
    };
    let provisioned = stored.as_ref().is_some_and(|group| group.scim_id.is_some());
    if let Some(group) = stored.as_ref().filter(|_| provisioned) {
        draft = GroupDraft {
            root_role: draft.root_role,
            ..GroupDraft::of(group)
        };
    }
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        match id {
            Some(id) => {
                let mappings = groups::get(tx.conn(), id).await?.mappings_sso;
                groups::replace(&mut tx, id, draft.to_write(mappings)).await?;
            }
            None => drop(groups::create(&mut tx, draft.to_write(Vec::new())).await?),
        }
        state.commit(tx).await?;
        let done = if id.is_some() { "saved" } else { "created" };
        Ok(Done::to(
            who.link("/admin/groups"),
            format!("Group {} {done}.", draft.name.trim()),
        ))
    }
    .await;
    written(done, async |error| {
        let everyone = all_users(state).await?;
        let markup = group_form(who, id, &draft, &everyone, Some(error), provisioned);
        Ok(Page::ok(markup).into_response())
    })
    .await
}

/// `POST /admin/groups/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    save(&state, &who, None, &form).await
}

/// `POST /admin/groups/<id>`.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    save(&state, &who, Some(id), &form).await
}

/// `GET /admin/groups/<id>/delete`: a confirmation.
pub async fn confirm_delete(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let group = async {
        let mut conn = state.store.read().await?;
        groups::get(&mut conn, id).await
    }
    .await?;
    let back = who.link(&format!("/admin/groups/{id}"));
    let markup = who.shell().render(
        "Delete group",
        html! {
            section.card.form-narrow aria-labelledby="delete-title" {
                h1 #delete-title { "Delete " (group.name) "?" }
                p { "Its " (group.user_count) " members leave it and lose the root role it gave them. This cannot be undone." }
                form method="post" action=(format!("{back}/delete")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions {
                        button.primary.danger type="submit" { "Confirm delete" }
                        a href=(back) { "Cancel" }
                    }
                }
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/groups/<id>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    groups::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link("/admin/groups"),
        "The group was deleted; its members keep their own root roles.",
    )
    .into_response())
}
