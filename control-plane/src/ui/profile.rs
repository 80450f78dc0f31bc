//! `/profile`: the signed-in user's own account (the admin API's `OwnAccount` area, every user, Viewers too):
//! name and effective root role, personal access tokens (create with a description and an expiry, the
//! secret shown once with a Copy button; revoke) and a password change (which ends every session, so the
//! next page is the sign-in). An admin-token sign-in or `--auth-type none` has no account: the page says so.

use super::controls::{field, last_used, secret_field, when};
use super::field_errors::FieldErrors;
use super::page::{Page, UiError};
use super::scope::Done;
use super::session::{FormFields, InOwnAccount, SignedIn, UiWrite};
use super::users::display_name;
use crate::domain::access::Credential;
use crate::domain::own_account::{self, ChangePassword, Profile};
use crate::domain::users::{self, CreatePat, Pat, SignInBounds, User};
use crate::http::extract::ClientAddress;
use crate::http::state::AppState;
use axum::extract::{Path, State};
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
        .route("/profile", get(page))
        .route("/profile/tokens", post(create_token))
        .route("/profile/tokens/{id}/revoke", post(revoke_token))
        .route("/profile/password", post(change_password))
}

/// What the page draws besides the account: a new token's secret, and a form sent back with its error.
#[derive(Default)]
struct ProfileView<'a> {
    created: Option<&'a Pat>,
    token_form: Option<(&'a FormFields, &'a ApiError)>,
    password_error: Option<&'a ApiError>,
}

async fn profile_page(
    state: &AppState,
    who: &SignedIn,
    view: ProfileView<'_>,
    status: StatusCode,
) -> Response {
    let shell = who.shell();
    if let Credential::Token(_) = who.credential {
        let markup = shell.render(
            "Profile",
            html! {
                div.page-head { div { h1 { "Profile" } } }
                div.empty {
                    p { "You are not signed in as a user, so there is no own account here: no personal access tokens and no password to change." }
                    p { "Sign in with a username and password to see your profile." }
                }
            },
        );
        return Page::ok(markup).into_response();
    }
    let loaded = async {
        let password_sign_in = state.password_sign_in().await?;
        let mut conn = state.store.read().await?;
        let user = users::current(&mut conn, &who.actor).await?.user;
        let profile = own_account::profile(&mut conn, &who.actor, password_sign_in).await?;
        let pats = users::pats(&mut conn, who.actor.user_id).await?.pats;
        Ok::<_, ApiError>((user, profile, pats))
    }
    .await;
    let (user, profile, pats) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return UiError::from(error).into_response(),
    };
    let markup = shell.render(
        "Profile",
        account_markup(who, &user, &profile, &pats, &view),
    );
    Page { status, markup }.into_response()
}

fn account_markup(
    who: &SignedIn,
    user: &User,
    profile: &Profile,
    pats: &[Pat],
    view: &ProfileView<'_>,
) -> Markup {
    let empty = FormFields::default();
    let (token_fields, token_error) = match view.token_form {
        Some((form, error)) => (form, Some(error)),
        None => (&empty, None),
    };
    let token_errors = FieldErrors::of(
        token_error,
        &[
            ("description", "pat-description"),
            ("expiresAt", "pat-expiry"),
        ],
        "pat-description",
    );
    let password_errors = FieldErrors::of(
        view.password_error,
        &[
            ("password", "new-password"),
            ("confirmPassword", "confirm-password"),
            ("oldPassword", "old-password"),
        ],
        "new-password",
    );
    let old_password_error = password_errors.at("old-password");
    html! {
        div.page-head {
            div {
                h1 { "Profile" }
                p.subtitle { (display_name(user)) " · " strong { (profile.root_role.name) } }
            }
        }
        section.card.access aria-labelledby="account-title" {
            h2 #account-title { "Account" }
            dl.meta {
                dt { "Name" } dd { (user.name.as_deref().unwrap_or("—")) }
                dt { "Username" } dd { (user.username.as_deref().unwrap_or("—")) }
                dt { "Email" } dd { (user.email.as_deref().unwrap_or("—")) }
                dt { "Root role" } dd { (profile.root_role.name) " — " span.muted { (profile.root_role.description) } }
                dt { "Groups" } dd {
                    @if profile.groups.is_empty() { span.muted { "none" } }
                    @else { (profile.groups.iter().map(|group| group.name.as_str()).collect::<Vec<_>>().join(", ")) }
                }
            }
        }
        section.card.access aria-labelledby="pats-title" {
            h2 #pats-title { "Personal access tokens" }
            p.muted { "A token acts as you in the admin API, with your role, until it expires or is revoked." }
            @if let Some(created) = view.created {
                div.card.token-created {
                    h3 { "Token " (created.description) " created" }
                    p { "Copy the secret now: it is not shown again." }
                    (secret_field(created.secret.as_deref().unwrap_or_default()))
                }
            }
            @if pats.is_empty() {
                div.empty { p { "No personal access tokens." } }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr {
                            th scope="col" { "Description" }
                            th.hide-narrow scope="col" { "Created" }
                            th scope="col" { "Expires" }
                            th.hide-narrow scope="col" { "Last used" }
                            th scope="col" { "Actions" }
                        } }
                        tbody {
                            @for pat in pats {
                                tr {
                                    td.flag-name { strong { (pat.description) } }
                                    td.hide-narrow { (when(&pat.created_at)) }
                                    td { (when(&pat.expires_at)) }
                                    td.hide-narrow { (last_used(pat.seen_at.as_deref())) }
                                    td {
                                        form.inline method="post" action=(who.link(&format!("/profile/tokens/{}/revoke", pat.id))) {
                                            input type="hidden" name="csrf" value=(who.csrf);
                                            button.danger type="submit" aria-label=(format!("Revoke {}", pat.description)) { "Revoke" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            h3 { "New personal access token" }
            (token_errors.general())
            form.form-narrow method="post" action=(who.link("/profile/tokens")) {
                input type="hidden" name="csrf" value=(who.csrf);
                (field("pat-description", "Description", token_errors.at("pat-description"), None, html! {
                    input #pat-description type="text" name="description" value=(token_fields.text("description"))
                        required maxlength="100" aria-describedby="pat-description-error";
                }))
                (field("pat-expiry", "Expires on", token_errors.at("pat-expiry"), Some("The token stops working at the start of this day (UTC)"), html! {
                    input #pat-expiry type="date" name="expires" value=(token_fields.text("expires")) required
                        aria-describedby="pat-expiry-hint pat-expiry-error";
                }))
                div.actions { button.primary type="submit" { "Create personal access token" } }
            }
        }
        section.card.access aria-labelledby="password-title" {
            h2 #password-title { "Change password" }
            @if profile.can_change_password {
                p.muted { "Every session of yours ends: you sign in again with the new password." }
                (password_errors.general())
                form.form-narrow method="post" action=(who.link("/profile/password")) {
                    input type="hidden" name="csrf" value=(who.csrf);
                    (field("old-password", "Current password", old_password_error, None, html! {
                        input #old-password type="password" name="oldPassword" autocomplete="current-password" required
                            aria-describedby="old-password-error";
                    }))
                    (field("new-password", "New password", password_errors.at("new-password"), Some("At least 8 characters"), html! {
                        input #new-password type="password" name="password" autocomplete="new-password" required
                            aria-describedby="new-password-hint new-password-error";
                    }))
                    (field("confirm-password", "Confirm new password", password_errors.at("confirm-password"), None, html! {
                        input #confirm-password type="password" name="confirmPassword" autocomplete="new-password" required
                            aria-describedby="confirm-password-error";
                    }))
                    div.actions { button.primary type="submit" { "Change password" } }
                }
            } @else {
                p { "Your account has no password to change (or password sign-in is off on this instance)." }
            }
        }
    }
}

/// `GET /profile`.
pub async fn page(State(state): State<Arc<AppState>>, who: SignedIn) -> Response {
    profile_page(&state, &who, ProfileView::default(), StatusCode::OK).await
}

/// A date from the form (`YYYY-MM-DD`) as the API's `expiresAt` (the start of that day, UTC); anything
/// else is passed on for the domain to refuse with its message.
pub(super) fn expiry_of(date: &str) -> String {
    match chrono::NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d") {
        Ok(day) => format!("{}T00:00:00.000Z", day.format("%Y-%m-%d")),
        Err(_) => date.to_owned(),
    }
}

/// `POST /profile/tokens`: the token is created and the page answers with its secret.
pub async fn create_token(
    State(state): State<Arc<AppState>>,
    UiWrite { who, form, .. }: UiWrite<InOwnAccount>,
) -> Response {
    let input = CreatePat {
        description: form.text("description"),
        expires_at: expiry_of(&form.text("expires")),
    };
    let done = async {
        let mut tx = state.store.begin_write(&who.actor).await?;
        let pat = users::create_pat(&mut tx, who.actor.user_id, input).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(pat)
    }
    .await;
    match done {
        Ok(pat) => {
            let view = ProfileView {
                created: Some(&pat),
                ..ProfileView::default()
            };
            profile_page(&state, &who, view, StatusCode::CREATED).await
        }
        Err(error) if error.kind.status() == 400 => {
            let view = ProfileView {
                token_form: Some((&form, &error)),
                ..ProfileView::default()
            };
            profile_page(&state, &who, view, StatusCode::BAD_REQUEST).await
        }
        Err(error) => UiError::from(error).into_response(),
    }
}

/// `POST /profile/tokens/<id>/revoke`.
pub async fn revoke_token(
    State(state): State<Arc<AppState>>,
    Path(id): Path<i64>,
    UiWrite { who, .. }: UiWrite<InOwnAccount>,
) -> Result<Response, UiError> {
    let mut tx = state.store.begin_write(&who.actor).await?;
    users::delete_pat(&mut tx, who.actor.user_id, id).await?;
    state.commit(tx).await?;
    Ok(Done::to(
        who.link("/profile"),
        "The personal access token was revoked.",
    )
    .into_response())
}

/// `POST /profile/password`: the API's change (the old password checked and throttled as a sign-in); every
/// session ends, so the answer is the sign-in page.
pub async fn change_password(
    State(state): State<Arc<AppState>>,
    ClientAddress(client): ClientAddress,
    UiWrite { who, form, .. }: UiWrite<InOwnAccount>,
) -> Response {
    let input = ChangePassword {
        password: form.text("password"),
        old_password: Some(form.text("oldPassword")),
        confirm_password: Some(form.text("confirmPassword")),
    };
    let done = async {
        let bounds = SignInBounds {
            throttle: &state.sign_in,
            work: &state.password_work,
        };
        let hash =
            own_account::new_password_hash(&state.store, bounds, client, &who.actor, input).await?;
        let mut tx = state.store.begin_write(&who.actor).await?;
        own_account::set_password(&mut tx, who.actor.user_id, &hash).await?;
        state.commit(tx).await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match done {
        Ok(()) => Done::to(
            who.link("/login?next=%2Fprofile"),
            "Your password was changed and every session ended: sign in with the new password.",
        )
        .into_response(),
        Err(error) if matches!(error.kind.status(), 400 | 401) => {
            let status =
                StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::BAD_REQUEST);
            let view = ProfileView {
                password_error: Some(&error),
                ..ProfileView::default()
            };
            profile_page(&state, &who, view, status).await
        }
        Err(error) => UiError::from(error).into_response(),
    }
}
