//! `/admin/users`: the users (paged; a filter keeps only the inactive ones), a new user (username, name,
//! e-mail, root role, password), a user's page (details and root role, a password reset that ends their
//! sessions, a reset link the user follows themselves — e-mailed, or shown to pass on —, delete after a
//! confirmation). Admins only, as the admin API's `Access` area.

use super::access_forms::{role_name, role_options};
use super::controls::{field, when};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::paging::Paged;
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::password_resets::{self, LinkKind};
use crate::domain::roles::RoleReference;
use crate::domain::user_admin::{self, NewPassword};
use crate::domain::users::{self, CreateUser, UpdateUser, User};
use crate::http::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::ApiError;

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/users", get(list))
        .route("/admin/users/create", get(new_user).post(create))
        .route("/admin/users/{id}", get(edit).post(update))
        .route("/admin/users/{id}/password", post(reset_password))
        .route("/admin/users/{id}/reset-link", post(reset_link))
        .route("/admin/users/{id}/delete", get(confirm_delete).post(delete))
}

/// The list's query: a page, and a filter.
#[derive(Debug, Default, Deserialize)]
pub struct UsersQuery {
    pub page: Option<usize>,
    /// Only the inactive users (`GET /api/admin/user-admin/inactive`'s rule): any value but empty.
    #[serde(default)]
    pub inactive: String,
}

/// How a user is named on a page.
pub fn display_name(user: &User) -> String {
    user.name
        .clone()
        .or(user.username.clone())
        .or(user.email.clone())
        .unwrap_or_else(|| format!("User {}", user.id))
}

fn text_field(
    id: &str,
    label: &str,
    name: &str,
    value: &str,
    errors: &FieldErrors,
    kind: &str,
) -> Markup {
    field(
        id,
        label,
        errors.at(id),
        None,
        html! {
            input id=(id) type=(kind) name=(name) value=(value) aria-describedby=(format!("{id}-error"));
        },
    )
}

fn role_field(id: &str, current: Option<i64>, errors: &FieldErrors) -> Markup {
    field(
        id,
        "Root role",
        errors.at(id),
        None,
        html! {
            select id=(id) name="rootRole" aria-describedby=(format!("{id}-error")) { (role_options(current)) }
        },
    )
}

/// The marks of a user SCIM provisioned: "SCIM" (explained in its title and for screen readers), and
/// "deactivated" when the provider deactivated them.
pub fn provisioned_badges(user: &User) -> Markup {
    html! {
        @if user.scim_id.is_some() {
            " " span.badge title="Provisioned by your identity provider (SCIM): changed there; only the root role here" {
                "SCIM" span.sr-only { ": managed by your identity provider" }
            }
        }
        @if !user.active {
            " " span.badge.stale { "deactivated" }
        }
    }
}

/// `GET /admin/users`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Query(query): Query<UsersQuery>,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let shell = who.shell();
    let only_inactive = !query.inactive.is_empty();
    let all = async {
        let mut conn = state.store.read().await?;
        let mut all = users::list(&mut conn).await?.users;
        if only_inactive {
            let inactive: std::collections::HashSet<i64> =
                user_admin::inactive(&mut conn, (state.clock)())
                    .await?
                    .inactive_users
                    .iter()
                    .map(|user| user.id)
                    .collect();
            all.retain(|user| inactive.contains(&user.id));
        }
        Ok::<_, ApiError>(all)
    }
    .await?;
    let paged = Paged::new(query.page, all.len());
    let filter = if only_inactive { "&inactive=1" } else { "" };
    let markup = shell.render(
        "Users",
        html! {
            div.page-head {
                div {
                    h1 { "Users" }
                    p.subtitle { "People who sign in, with their root role (a group may give a higher one)." }
                }
                a.button.primary href=(who.link("/admin/users/create")) { "New user" }
            }
            form.filters method="get" action=(who.link("/admin/users")) role="search" aria-label="Filter users" {
                label.check {
                    input type="checkbox" name="inactive" value="1" checked[only_inactive];
                    "Inactive (not seen for 180 days)"
                }
                button type="submit" { "Filter" }
            }
            @if all.is_empty() && only_inactive {
                div.empty { p { "No user has been inactive for 180 days." } }
            } @else if all.is_empty() {
                div.empty { p { "No users yet: the instance is used with tokens only." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th.hide-narrow scope="col" { "Username" }
                            th.hide-narrow scope="col" { "Email" }
                            th scope="col" { "Root role" }
                            th.hide-narrow scope="col" { "Last sign-in" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for user in paged.slice(&all) {
                                @let name = display_name(user);
                                tr {
                                    td.flag-name {
                                        strong { (name) }
                                        (provisioned_badges(user))
                                    }
                                    td.hide-narrow { (user.username.as_deref().unwrap_or_default()) }
                                    td.hide-narrow { (user.email.as_deref().unwrap_or_default()) }
                                    td { (role_name(user.root_role)) }
                                    td.hide-narrow {
                                        @match &user.seen_at {
                                            Some(at) => { (when(at)) }
                                            None => { span.muted { "never" } }
                                        }
                                    }
                                    td {
                                        a.button href=(who.link(&format!("/admin/users/{}", user.id)))
                                            aria-label=(format!("Edit {name}")) { "Edit" }
                                    }
                                }
                            }
                        }
                    }
                }
                (paged.pager(|page| who.link(&format!("/admin/users?page={page}{filter}"))))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn new_user_page(who: &SignedIn, form: &FormFields, error: Option<&ApiError>) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("username", "user-username"),
            ("email", "user-email"),
            ("rootRole", "user-role"),
            ("password", "user-password"),
        ],
        "user-username",
    );
    let role = form
        .get("rootRole")
        .and_then(|id| id.parse().ok())
        .or(Some(3));
    who.shell().render(
        "New user",
        html! {
            div.page-head { div { h1 { "New user" } p.subtitle { a href=(who.link("/admin/users")) { "← Users" } } } }
            (errors.general())
            form.form-narrow method="post" action=(who.link("/admin/users/create")) {
                input type="hidden" name="csrf" value=(who.csrf);
                (text_field("user-username", "Username", "username", &form.text("username"), &errors, "text"))
                (text_field("user-name", "Name", "name", &form.text("name"), &errors, "text"))
                (text_field("user-email", "Email", "email", &form.text("email"), &errors, "email"))
                (role_field("user-role", role, &errors))
                (field("user-password", "Password", errors.at("user-password"),
                    Some("At least 8 characters; empty: the user gets a welcome link where they choose one"), html! {
                    input #user-password type="password" name="password" autocomplete="new-password"
                        aria-describedby="user-password-hint user-password-error";
                }))
                div.actions {
                    button.primary type="submit" { "Create user" }
                    a href=(who.link("/admin/users")) { "Cancel" }
                }
            }
        },
    )
}

/// `GET /admin/users/create`.
pub async fn new_user(who: SignedIn) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let markup = new_user_page(&who, &FormFields::default(), None);
    Ok(Page::ok(markup).into_response())
}

fn role_of(form: &FormFields) -> RoleReference {
    match form.text("rootRole").parse() {
        Ok(id) => RoleReference::Id(id),
        Err(_) => RoleReference::Name(form.text("rootRole")),
    }
}

fn optional(form: &FormFields, name: &str) -> Option<String> {
    Some(form.text(name)).filter(|text| !text.trim().is_empty())
}

/// `POST /admin/users/create`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = CreateUser {
        username: optional(&form, "username"),
        email: optional(&form, "email"),
        name: optional(&form, "name"),
        password: None,
        root_role: role_of(&form),
        send_email: None,
    };
    let done = async {
        // Hashing is slow on purpose: done before the write starts, as the API does.
        let password_hash = match optional(&form, "password") {
            Some(password) => Some(users::hash_password(&state.password_work, password).await?),
            None => None,
        };
        let without_password = password_hash.is_none();
        let mut tx = state.store.begin_write(&who.actor).await?;
        let created = users::create(&mut tx, input, password_hash).await?;
        state.commit(tx).await?;
        Ok((created, without_password))
    }
    .await;
    let (created, without_password) = match done {
        Ok(done) => done,
        Err(error) => {
            return written(Err(error), async |error| {
                Ok(Page::ok(new_user_page(&who, &form, Some(error))).into_response())
            })
            .await
        }
    };
    if !without_password {
        return Ok(Done::to(
            who.link("/admin/users"),
            format!("User {} created", display_name(&created)),
        )
        .into_response());
    }
    // Without a password: their welcome link, e-mailed or shown here to pass on (never in a URL).
    let row = {
        let mut conn = state.store.read().await?;
        users::require(&mut conn, created.id).await?
    };
    let issued = {
        let mut conn = state.store.bookkeeping().await?;
        password_resets::issue(&mut conn, row, LinkKind::Welcome, &state.site(&headers)).await?
    };
    let mailed = state
        .mail_link(&issued.user, LinkKind::Welcome, &issued.url)
        .await;
    let page = UserPageState {
        details: None,
        password_error: None,
        email_enabled: state.mailer.is_some(),
        reset_link: Some((&issued.url, mailed, LinkKind::Welcome)),
    };
    Ok(Page {
        status: StatusCode::CREATED,
        markup: user_page(&who, &created, page),
    }
    .into_response())
}

/// What a user's page shows besides the user: the form just sent and its error, and which form it was.
struct UserPageState<'a> {
    details: Option<(&'a FormFields, Option<&'a ApiError>)>,
    password_error: Option<&'a ApiError>,
    /// The instance sends e-mail (`--smtp-url`): a reset link goes to the user, else the Admin passes it on.
    email_enabled: bool,
    /// A reset or welcome link just made: its address, whether it was e-mailed, which.
    reset_link: Option<(&'a str, bool, LinkKind)>,
}

fn user_page(who: &SignedIn, user: &User, page: UserPageState<'_>) -> Markup {
    let name = display_name(user);
    let (details, details_error) = match page.details {
        Some((form, error)) => (
            (
                form.text("name"),
                form.text("email"),
                form.get("rootRole").and_then(|id| id.parse().ok()),
            ),
            error,
        ),
        None => (
            (
                user.name.clone().unwrap_or_default(),
                user.email.clone().unwrap_or_default(),
                Some(user.root_role),
            ),
            None,
        ),
    };
    let errors = FieldErrors::of(
        details_error,
        &[("email", "user-email"), ("rootRole", "user-role")],
        "user-email",
    );
    let password_errors = FieldErrors::of(
        page.password_error,
        &[
            ("password", "reset-password"),
            ("confirmPassword", "reset-confirm"),
        ],
        "reset-password",
    );
    let base = who.link(&format!("/admin/users/{}", user.id));
    let provisioned = user.scim_id.is_some();
    who.shell().render(
        &name,
        html! {
            div.page-head {
                div {
                    h1 { (name) }
                    p.subtitle {
                        a href=(who.link("/admin/users")) { "← Users" }
                        @if let Some(username) = &user.username { " · username " strong { (username) } }
                        (provisioned_badges(user))
                    }
                }
            }
            section.card.access aria-labelledby="details-title" {
                h2 #details-title { "Details and root role" }
                (errors.general())
                @if provisioned {
                    p.notice #scim-managed role="note" {
                        "Managed by SCIM: your identity provider provisions this user, so their name and e-mail are changed there, and they are deprovisioned there. Only their root role can be changed here."
                    }
                }
                form.form-narrow method="post" action=(base) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    fieldset.plain disabled[provisioned] {
                        (text_field("user-name", "Name", "name", &details.0, &errors, "text"))
                        (text_field("user-email", "Email", "email", &details.1, &errors, "email"))
                    }
                    (role_field("user-role", details.2, &errors))
                    div.actions { button.primary type="submit" { (if provisioned { "Save root role" } else { "Save user" }) } }
                }
            }
            @if !provisioned {
            section.card.access aria-labelledby="reset-title" {
                h2 #reset-title { "Reset password" }
                p.muted { "Sets a new password and ends every session of the user." }
                (password_errors.general())
                form.form-narrow method="post" action=(format!("{base}/password")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    (field("reset-password", "New password", password_errors.at("reset-password"), None, html! {
                        input #reset-password type="password" name="password" autocomplete="new-password" required
                            aria-describedby="reset-password-error";
                    }))
                    (field("reset-confirm", "Confirm password", password_errors.at("reset-confirm"), None, html! {
                        input #reset-confirm type="password" name="confirmPassword" autocomplete="new-password" required
                            aria-describedby="reset-confirm-error";
                    }))
                    div.actions { button type="submit" { "Set password" } }
                }
            }
            section.card.access aria-labelledby="reset-link-title" {
                h2 #reset-link-title { "Reset link" }
                @if let Some((url, mailed, kind)) = page.reset_link {
                    @let (what, how_long) = match kind {
                        LinkKind::Reset => ("reset link", format!("{} hours", password_resets::RESET_HOURS)),
                        LinkKind::Welcome => ("welcome link", format!("{} days", password_resets::WELCOME_HOURS / 24)),
                    };
                    div.card.token-created role="status" {
                        @if kind == LinkKind::Welcome {
                            p { strong { "User " (name) " created without a password." } }
                        }
                        @if mailed {
                            p { strong { "A " (what) " was e-mailed to " (user.email.clone().unwrap_or_default()) "." } }
                        } @else {
                            p { strong { "Pass this " (what) " on to " (name) "." } " They choose their password there: it works once, for "
                                (how_long) ", and is not shown again." }
                            div.field {
                                label for="reset-url" { (if kind == LinkKind::Welcome { "Welcome link" } else { "Reset link" }) }
                                div.secret-line {
                                    input #reset-url type="text" readonly value=(url) spellcheck="false" autocomplete="off";
                                    button type="button" data-copy="reset-url" { "Copy" }
                                }
                                p.hint.copy-status aria-live="polite" {}
                            }
                        }
                    }
                }
                p.muted {
                    @if page.email_enabled && user.email.is_some() {
                        "E-mails the user a link where they choose a new password themselves (it works once, for "
                        (password_resets::RESET_HOURS) " hours). Their password and sessions stay until they use it."
                    } @else {
                        "Makes a link where the user chooses a new password themselves (it works once, for "
                        (password_resets::RESET_HOURS) " hours): this instance does not e-mail it, so you pass it on."
                    }
                }
                form method="post" action=(format!("{base}/reset-link")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions { button type="submit" {
                        @if page.email_enabled && user.email.is_some() { "E-mail a reset link" } @else { "Create a reset link" }
                    } }
                }
            }
            section.card.access aria-labelledby="delete-title" {
                h2 #delete-title { "Delete user" }
                p.muted { "Deletes the user with their sessions, personal access tokens and group memberships." }
                a.button.danger href=(format!("{base}/delete")) { "Delete user" }
            }
            }
        },
    )
}

async fn load_user(state: &AppState, id: i64) -> Result<User, UiError> {
    let mut conn = state.store.read().await?;
    Ok(users::get(&mut conn, id).await?)
}

/// `GET /admin/users/<id>`.
pub async fn edit(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let user = load_user(&state, id).await?;
    let page = UserPageState {
        details: None,
        password_error: None,
        email_enabled: state.mailer.is_some(),
        reset_link: None,
    };
    let markup = user_page(&who, &user, page);
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/users/<id>`: name, e-mail and root role.
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    // A provisioned user's form sends no name or e-mail (those controls are disabled): they stay.
    let input = UpdateUser {
        name: form.get("name").map(str::to_owned),
        email: form.get("email").map(str::to_owned),
        root_role: Some(role_of(&form)),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        users::update(&mut tx, id, input).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/admin/users/{id}")),
            "The user was saved.",
        ))
    }
    .await;
    written(done, async |error| {
        let user = load_user(&state, id).await?;
        let page = UserPageState {
            details: Some((&form, Some(error))),
            password_error: None,
            email_enabled: state.mailer.is_some(),
            reset_link: None,
        };
        Ok(Page::ok(user_page(&who, &user, page)).into_response())
    })
    .await
}

/// `POST /admin/users/<id>/password`: the API's reset (`…/user-admin/<id>/change-password`).
pub async fn reset_password(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = NewPassword {
        password: form.text("password"),
        confirm_password: Some(form.text("confirmPassword")),
    };
    let done = async {
        user_admin::validate_password(&input)?;
        let hash = users::hash_password(&state.password_work, input.password).await?;
        let mut tx = state.store.begin_write(&who.actor).await?;
        user_admin::set_password(&mut tx, id, &hash).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            who.link(&format!("/admin/users/{id}")),
            "The password was set; every session of the user has ended.",
        ))
    }
    .await;
    written(done, async |error| {
        let user = load_user(&state, id).await?;
        let page = UserPageState {
            details: None,
            password_error: Some(error),
            email_enabled: state.mailer.is_some(),
            reset_link: None,
        };
        Ok(Page::ok(user_page(&who, &user, page)).into_response())
    })
    .await
}

/// `POST /admin/users/<id>/reset-link`: a new reset link of the user (their earlier one stops working), e-mailed
/// when the instance sends e-mail, else shown here to pass on (never in a URL, so no redirect).
pub async fn reset_link(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    headers: HeaderMap,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let row = {
        let mut conn = state.store.read().await?;
        users::require(&mut conn, id).await?
    };
    let issued = {
        let mut conn = state.store.bookkeeping().await?;
        password_resets::issue(&mut conn, row, LinkKind::Reset, &state.site(&headers)).await?
    };
    let mailed = state
        .mail_link(&issued.user, LinkKind::Reset, &issued.url)
        .await;
    let user = users::view(issued.user.clone());
    let page = UserPageState {
        details: None,
        password_error: None,
        email_enabled: state.mailer.is_some(),
        reset_link: Some((&issued.url, mailed, LinkKind::Reset)),
    };
    Ok(Page::ok(user_page(&who, &user, page)).into_response())
}

/// `GET /admin/users/<id>/delete`: a confirmation.
pub async fn confirm_delete(
    State(state): State<Arc<AppState>>,
    who: SignedIn,
    Path(id): Path<i64>,
) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let user = load_user(&state, id).await?;
    let name = display_name(&user);
    let back = who.link(&format!("/admin/users/{id}"));
    let markup = who.shell().render(
        "Delete user",
        html! {
            section.card.form-narrow aria-labelledby="delete-title" {
                h1 #delete-title { "Delete " (name) "?" }
                p { "Their sessions, personal access tokens and group memberships go with them. This cannot be undone." }
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

/// `POST /admin/users/<id>/delete`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    users::delete(&mut tx, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link("/admin/users"),
        "The user was deleted, with their sessions and personal access tokens.",
    )
    .into_response())
}
