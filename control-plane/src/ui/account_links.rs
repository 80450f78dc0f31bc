//! The pages of someone who is not signed in and holds a link, or needs one: `/new-user?invite=…` (sign up with
//! an invite link), `/new-user?token=…` (a new user's welcome link) and `/reset-password?token=…` (choose a
//! password), `/forgotten-password` (ask for a reset link by e-mail). Their forms carry the CSRF token of the
//! visitor's `vexil-csrf` cookie, as the sign-in form does; each ends on the sign-in page with a notice.

use super::controls::field;
use super::field_errors::FieldErrors;
use super::page::{Page, Shell, UiError};
use super::scope::{written, Done};
use super::session::{anonymous_csrf_matches, anonymous_csrf_secret, csrf_of, FormFields};
use crate::domain::invite_links::{self, SignUp};
use crate::domain::password_resets;
use crate::http::extract::ClientAddress;
use crate::http::state::AppState;
use crate::store::Actor;
use crate::time::Timestamp;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::{ApiError, ErrorKind};

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/new-user", get(new_user).post(sign_up))
        .route("/reset-password", get(reset_page).post(set_password))
        .route("/forgotten-password", get(forgotten).post(ask_for_link))
}

#[derive(Debug, Default, Deserialize)]
pub struct LinkQuery {
    invite: Option<String>,
    token: Option<String>,
}

fn shell(state: &AppState) -> Shell {
    Shell {
        base: state.base_path.clone(),
        ..Shell::default()
    }
}

/// The visitor's CSRF token, and the cookie that sets it on a first visit.
fn csrf(state: &AppState, headers: &HeaderMap) -> Result<(String, Option<HeaderValue>), ApiError> {
    let (secret, cookie) = anonymous_csrf_secret(headers, &state.base_path)?;
    Ok((csrf_of(&secret), cookie))
}

fn answer(page: Page, cookie: Option<HeaderValue>) -> Response {
    let mut response = page.into_response();
    if let Some(cookie) = cookie {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

/// The page of a link that cannot be used: why, and the ways on.
fn dead_link(shell: &Shell, title: &str, error: &ApiError) -> Page {
    let markup = shell.render(
        title,
        html! {
            section.sign-in.card aria-labelledby="link-title" {
                h1 #link-title { (title) }
                p.error-box role="alert" { (error.message) }
                p {
                    a href=(shell.link("/forgotten-password")) { "Ask for a new reset link" }
                    " · "
                    a href=(shell.link("/login")) { "Sign in" }
                }
            }
        },
    );
    Page {
        status: StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::BAD_REQUEST),
        markup,
    }
}

/// A form posted without a credential must carry the visitor's CSRF token.
fn check_csrf(headers: &HeaderMap, form: &FormFields) -> Result<(), ApiError> {
    form.refuse_nul()?;
    if !anonymous_csrf_matches(headers, form) {
        return Err(ApiError::new(
            ErrorKind::NoAccess,
            "This form is out of date or did not come from this site; open the link again",
        ));
    }
    Ok(())
}

fn sign_up_form(
    shell: &Shell,
    csrf: &str,
    invite: &str,
    form: &FormFields,
    error: Option<&ApiError>,
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("email", "signup-email"),
            ("name", "signup-name"),
            ("password", "signup-password"),
        ],
        "signup-email",
    );
    shell.render(
        "Sign up",
        html! {
            section.sign-in.card aria-labelledby="signup-title" {
                h1 #signup-title { "Join Vexil" }
                p.muted { "You were invited: choose how you sign in." }
                (errors.general())
                form method="post" action=(shell.link("/new-user")) {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="invite" value=(invite);
                    (field("signup-email", "Email", errors.at("signup-email"), None, html! {
                        input #signup-email type="email" name="email" autocomplete="email" value=(form.text("email"))
                            required aria-invalid=(errors.invalid("signup-email")) aria-describedby="signup-email-error";
                    }))
                    (field("signup-name", "Name", errors.at("signup-name"), None, html! {
                        input #signup-name type="text" name="name" autocomplete="name" value=(form.text("name"))
                            required aria-invalid=(errors.invalid("signup-name")) aria-describedby="signup-name-error";
                    }))
                    (field("signup-password", "Password", errors.at("signup-password"), Some("At least 8 characters"), html! {
                        input #signup-password type="password" name="password" autocomplete="new-password" required
                            minlength="8" aria-invalid=(errors.invalid("signup-password"))
                            aria-describedby="signup-password-hint signup-password-error";
                    }))
                    div.actions { button.primary type="submit" { "Create my account" } }
                }
            }
        },
    )
}

fn password_form(
    shell: &Shell,
    csrf: &str,
    token: &str,
    who: &str,
    welcome: bool,
    error: Option<&ApiError>,
) -> Markup {
    let errors = FieldErrors::of(
        error,
        &[
            ("password", "new-password"),
            ("confirmPassword", "confirm-password"),
        ],
        "new-password",
    );
    let title = if welcome {
        "Welcome to Vexil"
    } else {
        "Choose a new password"
    };
    shell.render(
        title,
        html! {
            section.sign-in.card aria-labelledby="password-title" {
                h1 #password-title { (title) }
                p.muted { "For " strong { (who) } ". The link works once." }
                (errors.general())
                form method="post" action=(shell.link("/reset-password")) {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="token" value=(token);
                    @if welcome { input type="hidden" name="welcome" value="1"; }
                    (field("new-password", "New password", errors.at("new-password"), Some("At least 8 characters"), html! {
                        input #new-password type="password" name="password" autocomplete="new-password" required
                            minlength="8" aria-invalid=(errors.invalid("new-password"))
                            aria-describedby="new-password-hint new-password-error";
                    }))
                    (field("confirm-password", "Confirm password", errors.at("confirm-password"), None, html! {
                        input #confirm-password type="password" name="confirmPassword" autocomplete="new-password" required
                            aria-invalid=(errors.invalid("confirm-password")) aria-describedby="confirm-password-error";
                    }))
                    div.actions { button.primary type="submit" { "Set password" } }
                }
            }
        },
    )
}

/// `GET /new-user`: the sign-up form of an invite link, or a welcome link's password form.
pub async fn new_user(
    State(state): State<Arc<AppState>>,
    Query(query): Query<LinkQuery>,
    headers: HeaderMap,
) -> Result<Response, UiError> {
    if query.invite.is_none() {
        return password_page(&state, &query.token.unwrap_or_default(), true, &headers).await;
    }
    let shell = shell(&state);
    let (csrf, cookie) = csrf(&state, &headers)?;
    let invite = query.invite.unwrap_or_default();
    let usable = {
        let mut conn = state.store.read().await?;
        invite_links::usable(&mut conn, &invite, Timestamp::now()).await
    };
    let page = match usable {
        Ok(_) => Page::ok(sign_up_form(
            &shell,
            &csrf,
            &invite,
            &FormFields::default(),
            None,
        )),
        Err(error) => dead_link(&shell, "This invite link does not work", &error),
    };
    Ok(answer(page, cookie))
}

/// `POST /new-user`: the account, then the sign-in page.
pub async fn sign_up(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, UiError> {
    let form = FormFields::parse(&body);
    check_csrf(&headers, &form)?;
    let shell = shell(&state);
    let (csrf, _) = csrf(&state, &headers)?;
    let invite = form.text("invite");
    let input = SignUp {
        username: None,
        email: form.text("email"),
        name: form.text("name"),
        password: form.text("password"),
    };
    let done = async {
        state.require_password_sign_in().await?;
        let name = {
            let mut conn = state.store.read().await?;
            invite_links::usable(&mut conn, &invite, Timestamp::now())
                .await?
                .name
        };
        invite_links::check_sign_up(&input)?;
        password_resets::check_password(&input.password)?;
        let hash = state
            .password_work
            .hash_anonymous(input.password.clone())
            .await?;
        let mut tx = state
            .store
            .begin_write(&Actor::token(&format!("invite link {name}")))
            .await?;
        let user = invite_links::sign_up(&mut tx, &invite, input, hash).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            shell.link("/login"),
            format!(
                "Your account was created: sign in as {}",
                user.email.unwrap_or_default()
            ),
        ))
    }
    .await;
    written(done, async |error| {
        if error.field.is_none() && error.kind == ErrorKind::Validation {
            return Ok(dead_link(&shell, "This invite link does not work", error).into_response());
        }
        Ok(Page::ok(sign_up_form(&shell, &csrf, &invite, &form, Some(error))).into_response())
    })
    .await
}

/// `GET /reset-password`: the new-password form of a usable link.
pub async fn reset_page(
    State(state): State<Arc<AppState>>,
    Query(query): Query<LinkQuery>,
    headers: HeaderMap,
) -> Result<Response, UiError> {
    password_page(&state, &query.token.unwrap_or_default(), false, &headers).await
}

/// The new-password form of a usable link (`welcome`: a new user's, worded so), else why it does not work.
async fn password_page(
    state: &AppState,
    token: &str,
    welcome: bool,
    headers: &HeaderMap,
) -> Result<Response, UiError> {
    let shell = shell(state);
    let (csrf, cookie) = csrf(state, headers)?;
    let validated = {
        let mut conn = state.store.read().await?;
        password_resets::validate(&mut conn, token, Timestamp::now()).await
    };
    let page = match validated {
        Ok(user) => Page::ok(password_form(
            &shell,
            &csrf,
            token,
            &user.email,
            welcome,
            None,
        )),
        Err(error) => dead_link(&shell, "This link does not work", &error),
    };
    Ok(answer(page, cookie))
}

/// `POST /reset-password`: the password is set, the link used up; then the sign-in page.
pub async fn set_password(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, UiError> {
    let form = FormFields::parse(&body);
    check_csrf(&headers, &form)?;
    let shell = shell(&state);
    let (csrf, _) = csrf(&state, &headers)?;
    let token = form.text("token");
    let welcome = form.checked("welcome");
    let user = {
        let mut conn = state.store.read().await?;
        match password_resets::validate(&mut conn, &token, Timestamp::now()).await {
            Ok(user) => user,
            Err(error) => {
                return Ok(dead_link(&shell, "This link does not work", &error).into_response())
            }
        }
    };
    let done = async {
        state.require_password_sign_in().await?;
        let password = form.text("password");
        if form.text("confirmPassword") != password {
            return Err(ApiError::invalid_field(
                "confirmPassword",
                "confirmPassword does not match password",
            ));
        }
        password_resets::check_password(&password)?;
        let hash = state.password_work.hash_anonymous(password).await?;
        let mut tx = state
            .store
            .begin_write(&Actor::user(&user.email, user.id))
            .await?;
        password_resets::use_link(&mut tx, &token, &hash).await?;
        state.commit(tx).await?;
        Ok(Done::to(
            shell.link("/login"),
            "Your password was set: sign in with it",
        ))
    }
    .await;
    if let Err(error) = &done {
        if error.kind == ErrorKind::AuthenticationRequired {
            return Ok(dead_link(&shell, "This link does not work", error).into_response());
        }
    }
    written(done, async |error| {
        Ok(Page::ok(password_form(
            &shell,
            &csrf,
            &token,
            &user.email,
            welcome,
            Some(error),
        ))
        .into_response())
    })
    .await
}

fn forgotten_page(
    shell: &Shell,
    csrf: &str,
    email_enabled: bool,
    form: &FormFields,
    error: Option<&ApiError>,
) -> Markup {
    let errors = FieldErrors::of(error, &[("email", "forgot-email")], "forgot-email");
    shell.render(
        "Forgot password",
        html! {
            section.sign-in.card aria-labelledby="forgot-title" {
                h1 #forgot-title { "Forgot your password?" }
                @if email_enabled {
                    p.muted { "Give the e-mail of your account: we send it a link to choose a new password." }
                    (errors.general())
                    form method="post" action=(shell.link("/forgotten-password")) {
                        input type="hidden" name="csrf" value=(csrf);
                        (field("forgot-email", "Email", errors.at("forgot-email"), None, html! {
                            input #forgot-email type="email" name="email" autocomplete="email" value=(form.text("email"))
                                required aria-invalid=(errors.invalid("forgot-email")) aria-describedby="forgot-email-error";
                        }))
                        div.actions { button.primary type="submit" { "Send me a link" } }
                    }
                } @else {
                    p { "This instance does not send e-mail: ask an administrator for a reset link (on your user's page, “Reset password”)." }
                }
                p { a href=(shell.link("/login")) { "Back to sign in" } }
            }
        },
    )
}

/// `GET /forgotten-password`.
pub async fn forgotten(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, UiError> {
    let shell = shell(&state);
    let (csrf, cookie) = csrf(&state, &headers)?;
    let page = Page::ok(forgotten_page(
        &shell,
        &csrf,
        state.mailer.is_some(),
        &FormFields::default(),
        None,
    ));
    Ok(answer(page, cookie))
}

/// `POST /forgotten-password`: the same answer whether or not the address has an account.
pub async fn ask_for_link(
    State(state): State<Arc<AppState>>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, UiError> {
    let form = FormFields::parse(&body);
    check_csrf(&headers, &form)?;
    let shell = shell(&state);
    let (csrf, _) = csrf(&state, &headers)?;
    let email = form.text("email");
    state.require_password_sign_in().await?;
    let done = state.request_reset_mail(&email, client).map(|()| {
        Done::to(
            shell.link("/login"),
            format!(
                "If an account has the e-mail {}, a link to choose a new password is on its way.",
                email.trim()
            ),
        )
    });
    written(done, async |error| {
        Ok(Page::ok(forgotten_page(
            &shell,
            &csrf,
            state.mailer.is_some(),
            &form,
            Some(error),
        ))
        .into_response())
    })
    .await
}
