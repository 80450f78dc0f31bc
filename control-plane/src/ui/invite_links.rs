//! `/admin/invite-links`: the invite links (name, role, expiry, state, who signed up with it, Disable), a new
//! link (name, root role, expiry day) whose address is shown once with a Copy button, and disabling a link.
//! Admins only, as the admin API's `Access` area. Whoever opens a link signs up on `/new-user`
//! (`ui::account_links`).

use super::access_forms::{role_name, role_options};
use super::controls::{field, when};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::profile::expiry_of;
use super::scope::{written, Done};
use super::session::{FormFields, InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::invite_links::{
    self, CreateInviteLink, InviteLink, InviteLinkEntry, LinkState, UpdateInviteLink,
};
use crate::domain::roles::RoleReference;
use crate::http::state::AppState;
use crate::time::Timestamp;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use std::sync::Arc;
use vexil_shared::ApiError;

const LIST: &str = "/admin/invite-links";

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(LIST, get(list).post(create))
        .route("/admin/invite-links/create", get(new_link))
        .route("/admin/invite-links/{id}/disable", post(disable))
}

fn state_words(state: LinkState) -> &'static str {
    match state {
        LinkState::Usable => "Open",
        LinkState::Used => "Used",
        LinkState::Expired => "Expired",
        LinkState::Disabled => "Disabled",
    }
}

/// `GET /admin/invite-links`.
pub async fn list(State(state): State<Arc<AppState>>, who: SignedIn) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let entries = {
        let mut conn = state.store.read().await?;
        invite_links::entries(&mut conn, Timestamp::now()).await?
    };
    let markup = who.shell().render(
        "Invite links",
        html! {
            div.page-head {
                div {
                    h1 { "Invite links" }
                    p.subtitle { "A link lets one person sign up with the root role you choose, until it expires. Send each person their own." }
                }
                a.button.primary href=(who.link("/admin/invite-links/create")) { "New invite link" }
            }
            @if entries.is_empty() {
                div.empty {
                    p { "No invite links yet." }
                    p { "Create one, copy it, and send it to the person who should join." }
                }
            } @else {
                (table(&who, &entries))
            }
        },
    );
    Ok(Page::ok(markup).into_response())
}

fn table(who: &SignedIn, entries: &[InviteLinkEntry]) -> Markup {
    html! {
        div.table-wrap {
            table {
                thead { tr {
                    th scope="col" { "Name" }
                    th scope="col" { "Root role" }
                    th.hide-narrow scope="col" { "Expires" }
                    th scope="col" { "State" }
                    th.hide-narrow scope="col" { "Signed up" }
                    th scope="col" { "Actions" }
                } }
                tbody {
                    @for entry in entries {
                        tr {
                            td.flag-name { strong { (entry.link.name) } }
                            td { (role_name(entry.link.role.id)) }
                            td.hide-narrow { (when(&entry.link.expires_at)) }
                            td { span.badge { (state_words(entry.state)) } }
                            td.hide-narrow {
                                @for user in entry.link.users.iter().flatten() {
                                    a href=(who.link(&format!("/admin/users/{}", user.id))) {
                                        (user.email.clone().or(user.username.clone()).unwrap_or_default())
                                    }
                                }
                            }
                            td {
                                @if entry.state == LinkState::Usable {
                                    form.inline method="post"
                                        action=(who.link(&format!("{LIST}/{}/disable", entry.id))) {
                                        input type="hidden" name="csrf" value=(who.csrf);
                                        button.danger type="submit" aria-label=(format!("Disable {}", entry.link.name)) { "Disable" }
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

fn new_link_page(
    who: &SignedIn,
    form: &FormFields,
    error: Option<&ApiError>,
    created: Option<&InviteLink>,
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("name", "link-name"),
            ("expiresAt", "link-expiry"),
            ("rootRole", "link-role"),
        ],
        "link-name",
    );
    let role = form
        .get("rootRole")
        .and_then(|id| id.parse().ok())
        .or(Some(3));
    who.shell().render(
        "New invite link",
        html! {
            div.page-head { div {
                h1 { "New invite link" }
                p.subtitle { a href=(who.link(LIST)) { "← Invite links" } }
            } }
            @if let Some(created) = created {
                section.card.token-created aria-labelledby="created-title" {
                    h2 #created-title { "Invite link “" (created.name) "” created" }
                    p { "Copy it now and send it to the person who should join: it is not shown again. It works once, until "
                        (when(&created.expires_at)) "." }
                    div.field {
                        label for="invite-url" { "Invite link" }
                        div.secret-line {
                            input #invite-url type="text" readonly value=(created.url.clone().unwrap_or_default())
                                spellcheck="false" autocomplete="off";
                            button type="button" data-copy="invite-url" { "Copy" }
                        }
                        p.hint.copy-status aria-live="polite" {}
                    }
                }
            }
            (errors.general())
            form.form-narrow method="post" action=(who.link(LIST)) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("link-name", "Name", errors.at("link-name"),
                    Some("For you: who or what the link is for"), html! {
                    input #link-name type="text" name="name" value=(form.text("name"))
                        required maxlength="100" aria-invalid=(errors.invalid("link-name"))
                        aria-describedby="link-name-hint link-name-error";
                }))
                (field("link-role", "Root role", errors.at("link-role"), None, html! {
                    select #link-role name="rootRole" aria-describedby="link-role-error" { (role_options(role)) }
                }))
                (field("link-expiry", "Expires on", errors.at("link-expiry"),
                    Some("The link stops working at the start of this day (UTC)"), html! {
                    input #link-expiry type="date" name="expires" value=(form.text("expires")) required
                        aria-invalid=(errors.invalid("link-expiry"))
                        aria-describedby="link-expiry-hint link-expiry-error";
                }))
                div.actions {
                    button.primary type="submit" { "Create invite link" }
                    a href=(who.link(LIST)) { "Cancel" }
                }
            }
        },
    )
}

/// `GET /admin/invite-links/create`.
pub async fn new_link(who: SignedIn) -> Result<Response, UiError> {
    who.authorize(false, Area::Access)?;
    let markup = new_link_page(&who, &FormFields::default(), None, None);
    Ok(Page::ok(markup).into_response())
}

/// `POST /admin/invite-links`: the page answers with the new link (never in a URL, so no redirect); a refusal
/// draws the form again with it.
pub async fn create(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = CreateInviteLink {
        name: form.text("name"),
        expires_at: expiry_of(&form.text("expires")),
        root_role: Some(RoleReference::Id(
            form.text("rootRole").parse().unwrap_or(0),
        )),
    };
    let site = state.site(&headers);
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let link = invite_links::create(&mut tx, input, &site).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(link)
    }
    .await;
    match done {
        Ok(link) => {
            let markup = new_link_page(&who, &FormFields::default(), None, Some(&link));
            Ok(Page {
                status: StatusCode::CREATED,
                markup,
            }
            .into_response())
        }
        Err(error) => {
            written(Err(error), async |error| {
                let markup = new_link_page(&who, &form, Some(error), None);
                Ok(Page {
                    status: StatusCode::BAD_REQUEST,
                    markup,
                }
                .into_response())
            })
            .await
        }
    }
}

/// `POST /admin/invite-links/<id>/disable`: the link stops working at once.
pub async fn disable(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    let link = invite_links::update_by_id(
        &mut tx,
        id,
        UpdateInviteLink {
            enabled: Some(false),
            ..UpdateInviteLink::default()
        },
    )
    .await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link(LIST),
        format!(
            "The invite link “{}” was disabled: it no longer works.",
            link.name
        ),
    )
    .into_response())
}
