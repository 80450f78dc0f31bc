//! The one place for what every UI answer needs besides its handler's page: one layer around every UI route.
//!
//! - **Who the page is for.** [`super::session::SignedIn`] writes the caller's shell into the request's
//!   [`UiScope`] when it is extracted, so an error a handler returns with `?` ([`UiError`], from any
//!   [`ApiError`]) is drawn in the caller's own shell (navigation, sign-out) by this layer, not by the handler.
//! - **Cookies set on the way out.** The CSRF cookie a first visit creates (`--auth-type none`), and the flash
//!   notice below.
//! - **The notice after a write.** A successful form write answers [`written`]: a 303 to the page to show
//!   next, with its notice ("Environment staging created") in a short-lived cookie; the next page drawn takes
//!   it into its shell (a `role="status"` line above the page) and this layer clears the cookie. A refusal the
//!   form can show (400, 409) is the form again with its field errors; any other error is the error page.

use super::controls::with_notice;
use super::page::{see_other, PendingError, Shell, UiError};
use super::session::{cookie_value, ui_cookie, UiScope, NOTICE_COOKIE};
use crate::domain::change_requests::Outcome;
use crate::http::extract::is_https;
use crate::http::state::AppState;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, SET_COOKIE};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use vexil_shared::ApiError;

/// An error's status as the page is sent with.
fn status_of(error: &ApiError) -> StatusCode {
    StatusCode::from_u16(error.kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// The layer around every UI route (see the module's documentation).
pub async fn ui_scope(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let scope = UiScope::default();
    let had_notice = cookie_value(request.headers(), NOTICE_COOKIE).is_some();
    let https = is_https(request.headers());
    request.extensions_mut().insert(scope.clone());
    let mut response = next.run(request).await;
    let (shell, cookies) =
        scope.with(|scope| (scope.shell.take(), std::mem::take(&mut scope.cookies)));
    if let Some(PendingError(error)) = response.extensions_mut().remove::<PendingError>() {
        // The caller's shell (its navigation entry already the path's), or, before anyone is known, the bare one.
        let mut shell = shell.unwrap_or_else(|| Shell {
            base: state.base_path.clone(),
            ..Shell::default()
        });
        shell.notice = None;
        let status = status_of(&error);
        response = super::page::error_page(&shell, &error, status).into_response();
    }
    for cookie in cookies {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    // A page was drawn (so its notice shown): the notice is spent.
    let drawn = response.status().is_success()
        && response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|kind| kind.as_bytes().starts_with(b"text/html"));
    if let Some(PendingNotice(notice)) = response.extensions_mut().remove::<PendingNotice>() {
        let value: String = url::form_urlencoded::byte_serialize(notice.as_bytes()).collect();
        let max_age = Some(cookie::time::Duration::seconds(60));
        let cookie = ui_cookie(NOTICE_COOKIE, value, &state.base_path, https, max_age);
        response.headers_mut().append(SET_COOKIE, cookie);
    } else if had_notice && drawn {
        let expired = ui_cookie(
            NOTICE_COOKIE,
            String::new(),
            &state.base_path,
            https,
            Some(cookie::time::Duration::ZERO),
        );
        response.headers_mut().append(SET_COOKIE, expired);
    }
    response
}

/// A notice on its way to the layer, which sends it in its cookie.
#[derive(Clone)]
struct PendingNotice(String);

/// Where a successful form write goes next (a path under the base path, as
/// [`super::session::SignedIn::link`] makes it), and the notice shown there.
pub struct Done {
    location: String,
    notice: Option<String>,
}

impl Done {
    /// To `location`, showing `notice` there.
    pub fn to(location: String, notice: impl Into<String>) -> Done {
        Done {
            location,
            notice: Some(notice.into()),
        }
    }

    /// After a change that change requests may hold back: to `page` with `made` as the notice, or, when the
    /// change joined a draft instead, to `page` with that change request's notice (a link to it).
    pub fn after_change(page: String, outcome: Outcome, made: impl Into<String>) -> Done {
        match outcome {
            Outcome::Made => Done::to(page, made),
            Outcome::Proposed(id) => Done {
                location: with_notice(&page, &format!("proposed-{id}")),
                notice: None,
            },
        }
    }
}

impl IntoResponse for Done {
    fn into_response(self) -> Response {
        let mut response = see_other(&self.location);
        if let Some(notice) = self.notice {
            response.extensions_mut().insert(PendingNotice(notice));
        }
        response
    }
}

/// The answer to a form write: on success a 303 with its notice ([`Done`]); a refusal the form can show (400
/// or 409) is the form again, drawn by `redraw` with the refusal placed on its fields and sent with the
/// refusal's status; any other refusal is the error page.
pub async fn written(
    done: Result<Done, ApiError>,
    redraw: impl AsyncFnOnce(&ApiError) -> Result<Response, UiError>,
) -> Result<Response, UiError> {
    match done {
        Ok(done) => Ok(done.into_response()),
        Err(error) if matches!(error.kind.status(), 400 | 409) => {
            let mut page = redraw(&error).await?;
            *page.status_mut() = status_of(&error);
            Ok(page)
        }
        Err(error) => Err(error.into()),
    }
}
