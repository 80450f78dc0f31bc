//! Who is using the UI, and the guard of every state-changing request.
//!
//! - [`SignedIn`]: the caller of a UI page, from the session cookie the sign-in sets (the one the admin
//!   API's `POST /auth/simple/login` sets), or from the admin-token cookie of a sign-in with the first-start
//!   admin token (only possible while no user exists); not signed in → to `/login`. A page shows a form's
//!   control when [`SignedIn::may_submit`] says the form's post would be let in: the permission `ui::PERMISSIONS`
//!   declares for it, decided by [`access::authorize`], so a Viewer sees no edit controls.
//! - [`UiWrite`]: a POST of a form: signed in, allowed to change configuration (else 403 page) and carrying the
//!   CSRF token of its session (else 403 page), with the form's fields.
//!
//! The CSRF token is derived from the credential cookie's secret (SHA-256 of a label and the secret): it
//! changes with every session, cannot be computed without the HttpOnly cookie, and needs no storage. With
//! `--auth-type none` there is no credential, so a random `vexil-csrf` cookie is the secret; the sign-in
//! form, posted before any credential exists, carries the token of that cookie too (login CSRF).

use super::page::{Nav, Notice, Shell, UiError, MAINTENANCE_FORM};
use crate::domain::access::{self, Area, Caller, Credential, Grants, Need, Scope};
use crate::domain::banners::{self, Banner};
use crate::domain::maintenance;
use crate::domain::permissions::Permission;
use crate::http::extract::path_params;
use crate::http::extract::{is_https, SESSION_COOKIE};
use crate::http::route_permissions;
use crate::http::state::AppState;
use crate::store::Actor;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, OriginalUri, Request};
use axum::http::header::COOKIE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::response::{IntoResponse, Redirect, Response};
use cookie::{Cookie, SameSite};
use std::sync::{Arc, Mutex};
use vexil_shared::token::sha256_hex;
use vexil_shared::{ApiError, ErrorKind};

/// The cookie holding an admin token after a token sign-in (no user exists yet).
pub const TOKEN_COOKIE: &str = "vexil-admin-token";
/// The CSRF secret of a caller without a credential: the sign-in form, and every page with `--auth-type none`.
pub const CSRF_COOKIE: &str = "vexil-csrf";

/// The value of cookie `name`, if the request carries it.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == name)
        .map(|cookie| cookie.value().to_owned())
}

/// A cookie as the UI sets them: HttpOnly, SameSite=Lax, Path = the base path, Secure over https.
pub fn ui_cookie(
    name: &'static str,
    value: String,
    base: &str,
    https: bool,
    max_age: Option<cookie::time::Duration>,
) -> HeaderValue {
    let path = if base.is_empty() { "/" } else { base };
    let mut builder = Cookie::build((name, value))
        .path(path.to_owned())
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(https);
    if let Some(max_age) = max_age {
        builder = builder.max_age(max_age);
    }
    HeaderValue::from_str(&builder.build().to_string()).unwrap_or(HeaderValue::from_static(""))
}

/// The CSRF token of a credential secret.
pub fn csrf_of(secret: &str) -> String {
    sha256_hex(&format!("vexil-ui-csrf:{secret}"))
}

/// The CSRF secret of a caller who has no credential yet (the sign-in form; every page with
/// `--auth-type none`): the `vexil-csrf` cookie, or a new random one with the `Set-Cookie` that sends it.
pub fn anonymous_csrf_secret(
    headers: &HeaderMap,
    base: &str,
) -> Result<(String, Option<HeaderValue>), ApiError> {
    match cookie_value(headers, CSRF_COOKIE) {
        Some(secret) if secret.len() == 64 => Ok((secret, None)),
        _ => {
            let secret = crate::domain::tokens::random_hex(32)?;
            let cookie = ui_cookie(CSRF_COOKIE, secret.clone(), base, is_https(headers), None);
            Ok((secret, Some(cookie)))
        }
    }
}

/// Whether a form without a credential (the sign-in form) carries the CSRF token of the request's
/// `vexil-csrf` cookie: a page of another site can neither read nor set that cookie, so it cannot sign a
/// visitor in to an account of its choosing.
pub fn anonymous_csrf_matches(headers: &HeaderMap, form: &FormFields) -> bool {
    cookie_value(headers, CSRF_COOKIE)
        .filter(|secret| secret.len() == 64)
        .is_some_and(|secret| same_token(form.get("csrf").unwrap_or_default(), &csrf_of(&secret)))
}

/// Equal, in time independent of where they differ.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

/// The cookie carrying a notice from a write to the page shown after it.
pub const NOTICE_COOKIE: &str = "vexil-notice";

/// What the layer learns while the handler runs: filled by the extractors, read on the way out.
#[derive(Clone, Default)]
pub struct UiScope(Arc<Mutex<ScopeState>>);

#[derive(Default)]
pub(super) struct ScopeState {
    /// The signed-in caller's shell (current entry and project from the path).
    pub(super) shell: Option<Shell>,
    /// `Set-Cookie` values to add to the answer.
    pub(super) cookies: Vec<HeaderValue>,
}

impl UiScope {
    pub(super) fn with<T>(&self, f: impl FnOnce(&mut ScopeState) -> T) -> T {
        let mut state = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut state)
    }

    /// Records who the page is for (the shell an error is drawn in).
    pub fn signed_in(&self, shell: &Shell) {
        self.with(|state| state.shell = Some(shell.clone()));
    }

    /// Adds a `Set-Cookie` to the answer.
    pub fn set_cookie(&self, cookie: HeaderValue) {
        self.with(|state| state.cookies.push(cookie));
    }
}

/// The notice a request carries from the write before it (its cookie), if any.
pub fn carried_notice(headers: &axum::http::HeaderMap) -> Option<Notice> {
    let value = cookie_value(headers, NOTICE_COOKIE)?;
    let text: String = url::form_urlencoded::parse(format!("n={value}").as_bytes())
        .next()
        .map(|(_, text)| text.into_owned())?;
    // At most a line: a notice is set by this binary only, but a cookie is the browser's.
    let text: String = text.chars().filter(|c| !c.is_control()).take(300).collect();
    (!text.is_empty()).then_some(Notice::Success(text))
}

/// The signed-in caller of a UI page.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub actor: Actor,
    pub credential: Credential,
    /// The token every form of this session carries.
    pub csrf: String,
    /// What the caller holds (`domain::access`).
    pub grants: Grants,
    /// "" or "/x".
    pub base: String,
    /// The navigation entry of the page asked for, and the project its Flags entry links to (from the path).
    pub current: Nav,
    pub project: String,
    /// What the write before this request did (shown on the page drawn).
    pub notice: Option<Notice>,
    /// Sign-in is off (`--auth-type none`): everyone is the admin, the CSRF secret is a cookie of its own.
    pub sign_in_off: bool,
    /// Maintenance mode is on (`domain::maintenance`): pages say so, forms that change something are off.
    pub maintenance: bool,
    /// The enabled banners (`domain::banners`), shown on every page.
    pub banners: Vec<Banner>,
}

impl SignedIn {
    /// The page shell for this caller: the navigation with the path's entry current, and the notice of the
    /// write before.
    pub fn shell(&self) -> Shell {
        Shell {
            base: self.base.clone(),
            who: Some(match self.credential {
                Credential::User(_) | Credential::ServiceAccount(_) | Credential::Scim => {
                    self.actor.name.clone()
                }
                Credential::Token(_) if self.sign_in_off => {
                    "Sign-in off (--auth-type none)".to_owned()
                }
                Credential::Token(_) => format!("Admin token {}", self.actor.name),
            }),
            csrf: Some(self.csrf.clone()),
            current: self.current,
            project: self.project.clone(),
            credential: Some(self.credential),
            notice: self.notice.clone(),
            maintenance: self.maintenance,
            banners: self.banners.clone(),
        }
    }

    /// `path` under the base path.
    pub fn link(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Whether [`UiWrite`] would let this caller post the form `form` (its route template in
    /// `ui::PERMISSIONS`, without the base path) where `scope` says: the page shows the form's control only
    /// then. A form the table does not list is for Admins only, as [`UiWrite`] decides.
    pub fn may_submit(&self, form: &str, scope: &Scope) -> bool {
        match route_permissions::declared(super::PERMISSIONS, &Method::POST, form, "") {
            Some(declared) => self.may(declared.permission, scope),
            None => access::authorize(
                self.credential,
                &self.grants,
                &Need::area(false, Area::Configuration),
            )
            .is_ok(),
        }
    }

    /// 403 (as a page) unless the caller may post `form` where `scope` says ([`SignedIn::may_submit`]): the
    /// page holding that form is not drawn for others.
    pub fn ensure_may_submit(&self, form: &str, scope: &Scope) -> Result<(), ApiError> {
        if self.may_submit(form, scope) {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorKind::NoAccess,
            "You may read this but not change it; an Admin or the project's Owner can give you access",
        ))
    }

    /// 403 (as a page) unless the admin API's rule lets the caller read (`read`) or change `area`.
    pub fn authorize(&self, read: bool, area: Area) -> Result<(), ApiError> {
        access::authorize(self.credential, &self.grants, &Need::area(read, area))
    }

    /// Whether the caller holds `permission` where `scope` says: a page shows the control that needs it.
    pub fn may(&self, permission: Permission, scope: &Scope) -> bool {
        access::authorize(
            self.credential,
            &self.grants,
            &Need::permission(permission, scope.clone()),
        )
        .is_ok()
    }
}

/// Why a UI request has no [`SignedIn`] caller: not signed in (→ the sign-in page), or an error page.
pub enum NotSignedIn {
    ToSignIn(String),
    Error(UiError),
}

impl IntoResponse for NotSignedIn {
    fn into_response(self) -> Response {
        match self {
            NotSignedIn::ToSignIn(location) => Redirect::to(&location).into_response(),
            NotSignedIn::Error(error) => error.into_response(),
        }
    }
}

impl From<ApiError> for NotSignedIn {
    fn from(error: ApiError) -> Self {
        NotSignedIn::Error(error.into())
    }
}

impl From<UiError> for NotSignedIn {
    fn from(error: UiError) -> Self {
        NotSignedIn::Error(error)
    }
}

impl FromRequestParts<Arc<AppState>> for SignedIn {
    type Rejection = NotSignedIn;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, NotSignedIn> {
        let mut who = Self::identify(parts, state).await?;
        {
            let mut conn = state.store.read().await.map_err(ApiError::from)?;
            who.maintenance = maintenance::is_on(&mut conn).await?;
            who.banners = banners::shown(&mut conn).await?;
        }
        if let Some(scope) = parts.extensions.get::<UiScope>() {
            scope.signed_in(&who.shell());
        }
        Ok(who)
    }
}

impl SignedIn {
    /// Who asks, from the request's cookies.
    async fn identify(parts: &mut Parts, state: &Arc<AppState>) -> Result<SignedIn, NotSignedIn> {
        let base = state.base_path.clone();
        let (current, project) = Nav::of_path(parts.uri.path());
        let notice = carried_notice(&parts.headers);
        let to_sign_in = || {
            // The whole path, base path included (the router nested under it sees the rest only).
            let next = parts
                .extensions
                .get::<OriginalUri>()
                .map_or(&parts.uri, |OriginalUri(uri)| uri)
                .path_and_query()
                .map(|path| path.as_str())
                .unwrap_or("/");
            let next: String = url::form_urlencoded::byte_serialize(next.as_bytes()).collect();
            NotSignedIn::ToSignIn(format!("{base}/login?next={next}"))
        };
        if !state.auth_enabled {
            let caller = Caller::unauthenticated_admin();
            let (secret, set_csrf_cookie) = anonymous_csrf_secret(&parts.headers, &state.base_path)
                .map_err(|error| NotSignedIn::Error(error.into()))?;
            if let (Some(cookie), Some(scope)) =
                (set_csrf_cookie, parts.extensions.get::<UiScope>())
            {
                scope.set_cookie(cookie);
            }
            return Ok(SignedIn {
                actor: caller.actor,
                credential: caller.credential,
                csrf: csrf_of(&secret),
                grants: caller.grants,
                base,
                current,
                project,
                notice,
                sign_in_off: true,
                maintenance: false,
                banners: Vec::new(),
            });
        }
        let session = cookie_value(&parts.headers, SESSION_COOKIE);
        let token = cookie_value(&parts.headers, TOKEN_COOKIE);
        let (caller, secret) = {
            let mut conn = state
                .store
                .read()
                .await
                .map_err(|error| NotSignedIn::Error(UiError::from(error)))?;
            let attempt = match (&session, &token) {
                (Some(session), _) => access::authenticate(&mut conn, None, Some(session))
                    .await
                    .map(|caller| (caller, session.clone())),
                (None, Some(token)) => access::authenticate(&mut conn, Some(token), None)
                    .await
                    .map(|caller| (caller, token.clone())),
                (None, None) => return Err(to_sign_in()),
            };
            match attempt {
                Ok(found) => found,
                Err(error) if error.kind == ErrorKind::AuthenticationRequired => {
                    return Err(to_sign_in())
                }
                Err(error) => return Err(NotSignedIn::Error(error.into())),
            }
        };
        // A service account is not a person: it never signs in to the UI, whatever cookie carries its token.
        if matches!(caller.credential, Credential::ServiceAccount(_)) {
            return Err(to_sign_in());
        }
        // The UI reads configuration: a credential the admin API refuses that is refused here too.
        access::authorize(
            caller.credential,
            &caller.grants,
            &Need::area(true, Area::Configuration),
        )
        .map_err(|error| NotSignedIn::Error(error.into()))?;
        if let Some(hash) = &caller.token {
            state.token_sightings.record(hash, (state.clock)());
        }
        Ok(SignedIn {
            grants: caller.grants,
            actor: caller.actor,
            credential: caller.credential,
            csrf: csrf_of(&secret),
            base,
            current,
            project,
            notice,
            sign_in_off: false,
            maintenance: false,
            banners: Vec::new(),
        })
    }
}

/// The fields of a submitted form, in order (names may repeat).
#[derive(Debug, Clone, Default)]
pub struct FormFields(pub Vec<(String, String)>);

impl FormFields {
    pub fn parse(body: &[u8]) -> FormFields {
        FormFields(
            url::form_urlencoded::parse(body)
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect(),
        )
    }

    /// A form holding a NUL character anywhere is refused as a whole (400): no database stores NUL in text, and
    /// the admin API refuses it the same way (`http::extract`).
    pub fn refuse_nul(&self) -> Result<(), ApiError> {
        if self
            .0
            .iter()
            .any(|(name, value)| name.contains('\0') || value.contains('\0'))
        {
            return Err(ApiError::validation(
                "The form holds a NUL character (%00), which no value may contain",
            ));
        }
        Ok(())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }

    /// The first value of `name`, or "".
    pub fn text(&self, name: &str) -> String {
        self.get(name).unwrap_or_default().to_owned()
    }

    /// Whether a checkbox `name` was ticked.
    pub fn checked(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }
}

/// A form POST by a signed-in caller carrying their session's CSRF token (sign-out takes it: a Viewer may
/// sign out).
pub struct UiForm {
    pub who: SignedIn,
    pub form: FormFields,
}

impl FromRequest<Arc<AppState>> for UiForm {
    type Rejection = NotSignedIn;

    async fn from_request(request: Request, state: &Arc<AppState>) -> Result<Self, NotSignedIn> {
        let (mut parts, body) = request.into_parts();
        let who = SignedIn::from_request_parts(&mut parts, state).await?;
        let request = Request::from_parts(parts, body);
        let bytes = Bytes::from_request(request, state).await.map_err(|_| {
            UiError::from(ApiError::new(
                ErrorKind::PayloadTooLarge,
                "The form could not be read (is it larger than the configured limit?)",
            ))
        })?;
        let form = FormFields::parse(&bytes);
        form.refuse_nul()?;
        let given = form.get("csrf").unwrap_or_default();
        if !same_token(given, &who.csrf) {
            return Err(UiError::from(ApiError::new(
                ErrorKind::NoAccess,
                "This form is out of date or did not come from this site (its CSRF token is \
                 missing or wrong); reload the page and try again",
            ))
            .into());
        }
        Ok(UiForm { who, form })
    }
}

/// The admin API's permission area a UI form changes, as a type: [`UiWrite`] checks it before its handler
/// runs, so no handler can skip the check.
pub trait WriteArea {
    const AREA: Area;
}

/// Flags, projects, environments, segments, strategies, context fields… (Editors and Admins).
pub struct InConfiguration;
/// Users, groups, API tokens (Admins).
pub struct InAccess;
/// Instance settings (Admins).
pub struct InSettings;
/// The caller's own account: password, personal access tokens (every user).
pub struct InOwnAccount;

impl WriteArea for InConfiguration {
    const AREA: Area = Area::Configuration;
}
impl WriteArea for InAccess {
    const AREA: Area = Area::Access;
}
impl WriteArea for InSettings {
    const AREA: Area = Area::Settings;
}
impl WriteArea for InOwnAccount {
    const AREA: Area = Area::OwnAccount;
}

/// A state-changing UI request: a [`UiForm`] by a caller whom the admin API's rule lets change `A` (a
/// Viewer's forged POST → 403). Every UI write handler takes it, so none can skip a check.
pub struct UiWrite<A: WriteArea = InConfiguration> {
    pub who: SignedIn,
    pub form: FormFields,
    pub area: std::marker::PhantomData<A>,
}

impl<A: WriteArea> FromRequest<Arc<AppState>> for UiWrite<A> {
    type Rejection = NotSignedIn;

    async fn from_request(request: Request, state: &Arc<AppState>) -> Result<Self, NotSignedIn> {
        let (mut parts, body) = request.into_parts();
        let declared =
            route_permissions::declared_for(&parts, super::PERMISSIONS, &state.base_path);
        let params = path_params(&mut parts, state).await;
        let request = Request::from_parts(parts, body);
        let UiForm { who, form } = UiForm::from_request(request, state).await?;
        // Maintenance mode pauses every change but the caller's own account and switching it off.
        let switching = declared.is_some_and(|declared| declared.path == MAINTENANCE_FORM);
        if who.maintenance && A::AREA != Area::OwnAccount && !switching {
            return Err(maintenance::refusal().into());
        }
        let need = match declared {
            Some(declared) if A::AREA == Area::Configuration => {
                let mut conn = state.store.read().await.map_err(ApiError::from)?;
                let scope = route_permissions::scope_of(
                    &mut conn,
                    &params,
                    form.get(declared.environment_field),
                )
                .await?;
                Need::permission(declared.permission, scope)
            }
            _ => Need::area(false, A::AREA),
        };
        access::authorize(who.credential, &who.grants, &need)?;
        Ok(UiWrite {
            who,
            form,
            area: std::marker::PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "ab"));
        assert!(!same_token("", "a"));
        assert_ne!(csrf_of("one"), csrf_of("two"));
    }

    #[test]
    fn forms_keep_repeated_fields_in_order() {
        let form = FormFields::parse(b"a=1&b=x+y&a=2&c=%3Cscript%3E");
        assert_eq!(form.all("a"), ["1", "2"]);
        assert_eq!(form.text("b"), "x y");
        assert_eq!(form.text("c"), "<script>");
        assert!(!form.checked("d"));
    }
}
