//! `/login` (username and password, or an admin API token: offered at once while no user exists, behind
//! "Sign in with an admin token" afterwards, so the operator can always get in) and `/logout`.

use super::controls::local_path;
use super::page::{see_other, Page, Shell, UiError};
use super::scope::Done;
use super::single_sign_out;

use super::session::{
    anonymous_csrf_matches, anonymous_csrf_secret, carried_notice, cookie_value, csrf_of,
    ui_cookie, FormFields, UiForm, TOKEN_COOKIE,
};
use crate::domain::access::{self, Credential};
use crate::domain::users::{self, Login, SignInBounds, SESSION_HOURS};
use crate::http::extract::{is_https, ClientAddress, SESSION_COOKIE};
use crate::http::state::AppState;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use serde::Deserialize;
use std::sync::Arc;
use vexil_shared::token::TokenKind;
use vexil_shared::{ApiError, ErrorKind};

#[derive(Debug, Default, Deserialize)]
pub struct Next {
    next: Option<String>,
}

struct SignInForm<'a> {
    username: &'a str,
    next: &'a str,
    /// The CSRF token of the visitor's `vexil-csrf` cookie.
    csrf: &'a str,
    error: Option<&'a str>,
    offered: Offered,
}

/// What the sign-in page offers.
#[derive(Debug, Clone, Copy)]
struct Offered {
    /// The admin token at once (no user exists yet).
    token: bool,
    /// Password sign-in is on (`sso_settings::password_sign_in`).
    password: bool,
    /// An OpenID Connect sign-in is configured: its button shows.
    oidc: bool,
    /// A SAML 2.0 sign-in is configured: its button shows.
    saml: bool,
}

fn render(shell: &Shell, form: SignInForm<'_>, status: StatusCode) -> Page {
    let markup = shell.render(
        "Sign in",
        html! {
            section.sign-in.card aria-labelledby="sign-in-title" {
                h1 #sign-in-title { "Sign in to Vexil" }
                @if let Some(error) = form.error {
                    p.error-box role="alert" { (error) }
                }
                @if form.offered.oidc {
                    p.sso-sign-in {
                        a.button.primary href=(sso_link(shell, "oidc", form.next)) { "Sign in with OpenID Connect" }
                    }
                }
                @if form.offered.saml {
                    p.sso-sign-in {
                        a.button.primary href=(sso_link(shell, "saml", form.next)) { "Sign in with SAML 2.0" }
                    }
                }
                @if !form.offered.password && !form.offered.token {
                    p.muted { "Password sign-in is switched off on this instance." }
                }
                @if form.offered.password || form.offered.token {
                    form method="post" action=(shell.link("/login")) {
                        input type="hidden" name="next" value=(form.next);
                        input type="hidden" name="csrf" value=(form.csrf);
                        @if form.offered.password {
                            div.field {
                                label for="username" { "Username" }
                                input #username type="text" name="username" autocomplete="username"
                                    value=(form.username) required[!form.offered.token];
                            }
                            div.field {
                                label for="password" { "Password" }
                                input #password type="password" name="password" autocomplete="current-password"
                                    required[!form.offered.token];
                            }
                        }
                        @if form.offered.token {
                            div.field {
                                label for="token" { "Admin token" }
                                span.hint #token-hint {
                                    "No user exists yet: sign in with the admin token the control plane printed at its first start."
                                }
                                input #token type="password" name="token" autocomplete="off" aria-describedby="token-hint";
                            }
                        }
                        div.actions { button.primary type="submit" { "Sign in" } }
                    }
                    @if form.offered.password {
                        p.forgot-password { a href=(shell.link("/forgotten-password")) { "Forgot password?" } }
                    }
                }
                @if !form.offered.token {
                    details.admin-token-sign-in {
                        summary { "Sign in with an admin token" }
                        form method="post" action=(shell.link("/login")) {
                            input type="hidden" name="next" value=(form.next);
                            input type="hidden" name="csrf" value=(form.csrf);
                            div.field {
                                label for="admin-token" { "Admin token" }
                                span.hint #admin-token-hint {
                                    "For the instance's operator: an admin API token, such as the one the control plane printed at its first start."
                                }
                                input #admin-token type="password" name="token" autocomplete="off"
                                    aria-describedby="admin-token-hint" required;
                            }
                            div.actions { button type="submit" { "Sign in with the token" } }
                        }
                    }
                }
            }
        },
    );
    Page { status, markup }
}

/// `/auth/<protocol>/login` with the page to go to after.
fn sso_link(shell: &Shell, protocol: &str, next: &str) -> String {
    let next: String = url::form_urlencoded::byte_serialize(next.as_bytes()).collect();
    shell.link(&format!("/auth/{protocol}/login?next={next}"))
}

/// What the sign-in page offers now.
async fn offered(state: &AppState) -> Result<Offered, ApiError> {
    let password = state.password_sign_in().await?;
    let oidc = state.oidc_settings().await?.usable();
    let saml = state.saml_settings().await?.usable();
    let mut conn = state.store.read().await?;
    Ok(Offered {
        token: !users::any_user(&mut conn).await?,
        password,
        oidc,
        saml,
    })
}

/// `GET /login`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    Query(next): Query<Next>,
    headers: HeaderMap,
) -> Result<Response, UiError> {
    // A notice from the write before (a password change that ended every session) shows here too.
    let shell = Shell {
        base: state.base_path.clone(),
        notice: carried_notice(&headers),
        ..Shell::default()
    };
    let next = local_path(&state.base_path, next.next.as_deref());
    let (secret, set_cookie) = anonymous_csrf_secret(&headers, &state.base_path)?;
    let form = SignInForm {
        username: "",
        next: &next,
        csrf: &csrf_of(&secret),
        error: None,
        offered: offered(&state).await?,
    };
    Ok(with_cookie(
        render(&shell, form, StatusCode::OK),
        set_cookie,
    ))
}

fn with_cookie(page: Page, cookie: Option<axum::http::HeaderValue>) -> Response {
    let mut response = page.into_response();
    if let Some(cookie) = cookie {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

/// `POST /login`: a session cookie (as `POST /auth/simple/login` sets it, Secure over https) or an admin
/// token in an HttpOnly cookie; then to the page asked for.
pub async fn sign_in(
    State(state): State<Arc<AppState>>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = FormFields::parse(&body);
    let shell = Shell {
        base: state.base_path.clone(),
        ..Shell::default()
    };
    if let Err(error) = form.refuse_nul() {
        return UiError::from(error).into_response();
    }
    let next = local_path(&state.base_path, form.get("next"));
    let username = form.text("username");
    let https = is_https(&headers);
    let offered = match offered(&state).await {
        Ok(offered) => offered,
        Err(error) => return UiError::from(error).into_response(),
    };
    let (secret, set_cookie) = match anonymous_csrf_secret(&headers, &state.base_path) {
        Ok(secret) => secret,
        Err(error) => return UiError::from(error).into_response(),
    };
    let csrf = csrf_of(&secret);
    let refuse = |message: &str, status: StatusCode| {
        let form = SignInForm {
            username: &username,
            next: &next,
            csrf: &csrf,
            error: Some(message),
            offered,
        };
        with_cookie(render(&shell, form, status), set_cookie.clone())
    };
    if !anonymous_csrf_matches(&headers, &form) {
        return refuse(
            "This sign-in form is out of date or did not come from this site; sign in again",
            StatusCode::FORBIDDEN,
        );
    }
    let token = form.text("token");
    if !token.trim().is_empty() {
        let caller = match state.store.read().await {
            Ok(mut conn) => access::authenticate(&mut conn, Some(token.trim()), None).await,
            Err(error) => Err(ApiError::from(error)),
        };
        return match caller {
            Ok(caller) if caller.credential == Credential::Token(TokenKind::Admin) => {
                let cookie = ui_cookie(
                    TOKEN_COOKIE,
                    token.trim().to_owned(),
                    &state.base_path,
                    https,
                    Some(cookie::time::Duration::hours(SESSION_HOURS)),
                );
                let mut response = see_other(&next);
                response.headers_mut().append(SET_COOKIE, cookie);
                response
            }
            Ok(_) => refuse("Only an admin token can sign in", StatusCode::UNAUTHORIZED),
            Err(error) if error.kind == ErrorKind::AuthenticationRequired => {
                refuse("That admin token is not valid", StatusCode::UNAUTHORIZED)
            }
            Err(error) => UiError::from(error).into_response(),
        };
    }
    if !offered.password {
        return refuse("Password sign-in is disabled", StatusCode::NOT_FOUND);
    }
    let bounds = SignInBounds {
        throttle: &state.sign_in,
        work: &state.password_work,
    };
    let login = Login {
        username: username.clone(),
        password: form.text("password"),
    };
    match users::login(&state.store, bounds, client, login).await {
        Ok((_, session)) => {
            let cookie = ui_cookie(
                SESSION_COOKIE,
                session,
                &state.base_path,
                https,
                Some(cookie::time::Duration::hours(SESSION_HOURS)),
            );
            let mut response = see_other(&next);
            response.headers_mut().append(SET_COOKIE, cookie);
            response
        }
        Err(error) => {
            let status = StatusCode::from_u16(error.kind.status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            match error.kind {
                ErrorKind::AuthenticationRequired
                | ErrorKind::RateLimit
                | ErrorKind::Validation => refuse(&error.message, status),
                _ => UiError::from(error).into_response(),
            }
        }
    }
}

/// `POST /logout`: the session ends (in the store too) and both credential cookies are cleared; then, for a
/// single sign-on whose provider's sign-out is configured, to the identity provider
/// (`single_sign_out::at_provider`), else to the sign-in page.
pub async fn sign_out(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    _: UiForm,
) -> Response {
    let https = is_https(&headers);
    let mut provider = None;
    if let Some(session) = cookie_value(&headers, SESSION_COOKIE) {
        match users::sign_out(&state.store, &session).await {
            Ok(ended) => provider = ended,
            Err(error) => return UiError::from(error).into_response(),
        }
    }
    let sign_in_page = format!("{}/login", state.base_path);
    let departure = match provider {
        Some(provider) => single_sign_out::at_provider(&state, &headers, provider).await,
        None => Ok(None),
    };
    let mut response = match departure {
        Ok(Some(provider_url)) => single_sign_out::leaving(&state, &provider_url),
        Ok(None) => see_other(&sign_in_page),
        Err(error) => {
            tracing::warn!(error = %error.message, "single sign-out could not be started");
            let notice = format!(
                "You are signed out of Vexil, but not at the identity provider: {}",
                error.message
            );
            Done::to(sign_in_page, notice).into_response()
        }
    };
    for name in [SESSION_COOKIE, TOKEN_COOKIE] {
        let cookie = ui_cookie(
            name,
            String::new(),
            &state.base_path,
            https,
            Some(cookie::time::Duration::ZERO),
        );
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

/// This module's pages and form posts.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/login", get(page).post(sign_in))
        .route("/logout", post(sign_out))
}
