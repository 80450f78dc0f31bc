//! `/admin/scim`, "SCIM provisioning" (Admins only, as `/api/admin/scim-settings`): the switch, the SCIM base
//! URL to give the identity provider, and a new token, shown once with a Copy button (a new one replaces the
//! old at once). How many users and groups the provider has provisioned, with where they are.

use super::controls::secret_field;
use super::page::{Page, UiError};
use super::scope::Done;
use super::session::{InAccess, SignedIn, UiWrite};
use crate::domain::access::Area;
use crate::domain::scim_settings::{self, ScimToken, SetScimSettings};
use crate::domain::{groups, users};
use crate::http::admin::ui_config::request_origin;
use crate::http::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use std::sync::Arc;

/// This module's page and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/admin/scim", get(page))
        .route("/admin/scim/settings", post(save))
        .route("/admin/scim/token", post(new_token))
}

/// The SCIM base URL an identity provider is given: `<origin><base path>/scim/v2`.
pub fn base_url(headers: &HeaderMap, base_path: &str) -> String {
    format!("{}{base_path}/scim/v2", request_origin(headers))
}

async fn draw(
    state: &AppState,
    who: &SignedIn,
    headers: &HeaderMap,
    created: Option<&ScimToken>,
) -> Result<Response, UiError> {
    who.authorize(true, Area::Access)?;
    let (settings, provisioned_users, provisioned_groups) = {
        let mut conn = state.store.read().await?;
        let settings = scim_settings::get(&mut conn).await?;
        let users = users::list(&mut conn).await?.users;
        let groups = groups::list(&mut conn).await?.groups;
        (
            settings,
            users.iter().filter(|user| user.scim_id.is_some()).count(),
            groups
                .iter()
                .filter(|group| group.scim_id.is_some())
                .count(),
        )
    };
    let url = base_url(headers, &state.base_path);
    let markup = who.shell().render(
        "SCIM provisioning",
        html! {
            div.page-head { div {
                h1 { "SCIM provisioning" }
                p.subtitle { "Let your identity provider (Okta, Entra ID…) create, update and remove Vexil users and groups." }
            } }
            section.card aria-labelledby="scim-connect-title" {
                h2 #scim-connect-title { "Connect your identity provider" }
                dl.meta.scim-facts {
                    dt { "SCIM base URL" } dd { code #scim-base-url { (url) } }
                    dt { "Authentication" } dd { "HTTP header: Authorization: Bearer " i { "token" } }
                    dt { "Unique identifier" } dd { code { "userName" } " (the Vexil username; an e-mail address does)" }
                }
                p #scim-state {
                    "Provisioning is " strong { (if settings.enabled { "on" } else { "off" }) } ". "
                    @if settings.has_token { "A token is set (it is never shown again)." } @else { "No token yet." }
                }
                form.form-narrow method="post" action=(who.link("/admin/scim/settings")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.field {
                        label.check { input #scim-enabled type="checkbox" name="enabled" value="true" checked[settings.enabled]; "Enable SCIM provisioning" }
                    }
                    div.actions { button.primary type="submit" { "Save" } }
                }
            }
            section.card aria-labelledby="scim-token-title" {
                h2 #scim-token-title { "Token" }
                @if let Some(created) = created {
                    div.card.token-created {
                        p { strong { "New SCIM token created." } " Copy it into your identity provider now: it is not shown again." }
                        (secret_field(&created.token))
                    }
                }
                p.muted { "A new token replaces the current one at once: the provider stops working until it has the new one." }
                form method="post" action=(who.link("/admin/scim/token")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    div.actions { button type="submit" { (if settings.has_token { "Generate a new token" } else { "Generate a token" }) } }
                }
            }
            section.card aria-labelledby="scim-provisioned-title" {
                h2 #scim-provisioned-title { "Provisioned" }
                p #scim-provisioned {
                    a href=(who.link("/admin/users")) { (provisioned_users) " " (if provisioned_users == 1 { "user" } else { "users" }) }
                    " and "
                    a href=(who.link("/admin/groups")) { (provisioned_groups) " " (if provisioned_groups == 1 { "group" } else { "groups" }) }
                    " come from your identity provider (marked SCIM there). Their details and memberships are changed at the provider; here, only the root role they have or give."
                }
            }
        },
    );
    let status = if created.is_some() {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Page { status, markup }.into_response())
}

/// `GET /admin/scim`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    who: SignedIn,
) -> Result<Response, UiError> {
    draw(&state, &who, &headers, None).await
}

/// `POST /admin/scim/settings`.
pub async fn save(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let input = SetScimSettings {
        enabled: form.checked("enabled"),
    };
    let mut tx = state.store.begin_write(&who.actor).await?;
    scim_settings::set(&mut tx, input).await?;
    state.commit(tx).await?;
    let notice = if input.enabled {
        "SCIM provisioning is on."
    } else {
        "SCIM provisioning is off: the identity provider's requests are refused."
    };
    Ok(Done::to(who.link("/admin/scim"), notice).into_response())
}

/// `POST /admin/scim/token`: the page answers with the new token (never in a URL, so no redirect).
pub async fn new_token(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UiWrite { who, .. }: UiWrite<InAccess>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    let token = scim_settings::generate_token(&mut tx).await?;
    state.commit(tx).await?;
    draw(&state, &who, &headers, Some(&token)).await
}
