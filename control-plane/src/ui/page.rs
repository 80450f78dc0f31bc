//! The page shell every UI page is drawn in (head, navigation, main), the error page, and the answer types
//! of UI handlers: [`Page`] (200 HTML), [`UiError`] (an [`ApiError`] drawn as a page with its status).

use crate::domain::access::{self, Area, Credential};
use crate::domain::banners::{self, Banner};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use vexil_shared::{ApiError, ErrorKind};

/// What the shell needs to know about the request: the base path (links), who is signed in (the header) and
/// which navigation entry is current.
#[derive(Debug, Clone, Default)]
pub struct Shell {
    /// "" or "/x".
    pub base: String,
    /// Who is signed in, as the header names them (a user's name, "Admin token <name>"), when someone is.
    pub who: Option<String>,
    /// The CSRF token for the sign-out form.
    pub csrf: Option<String>,
    /// The current navigation entry.
    pub current: Nav,
    /// The project the Flags entry links to.
    pub project: String,
    /// The signed-in caller's credential: the navigation shows only what it may read.
    pub credential: Option<Credential>,
    /// What the write before this page did, shown above it.
    pub notice: Option<Notice>,
    /// Maintenance mode is on: a banner says so and the page's forms that change something are disabled.
    pub maintenance: bool,
    /// The enabled banners (`domain::banners`), above every page's content.
    pub banners: Vec<Banner>,
}

/// A line above a page saying what just happened, one style per kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A write went through ("Environment staging created").
    Success(String),
}

/// The navigation entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Nav {
    #[default]
    None,
    Dashboard,
    Flags,
    Segments,
    ReleaseTemplates,
    Archive,
    ChangeRequests,
    Actions,
    Playground,
    Applications,
    Edges,
    Events,
    ApiTokens,
    Users,
    Groups,
    Roles,
    ServiceAccounts,
    Signals,
    InviteLinks,
    Projects,
    Environments,
    ContextFields,
    Strategies,
    Settings,
    SingleSignOn,
    Scim,
    Profile,
}

impl Nav {
    /// The entry a UI path (below the base path) belongs to, and the project its Flags entry links to: the
    /// one in the path, else `default`.
    pub fn of_path(path: &str) -> (Nav, String) {
        let mut parts = path.trim_start_matches('/').split('/');
        let first = parts.next().unwrap_or_default();
        let second = parts.next().filter(|part| !part.is_empty());
        let third = parts.next().unwrap_or_default();
        let nav = match (first, second) {
            ("" | "personal" | "login" | "auth", _) => Nav::Dashboard,
            ("projects", None) | ("create-project", _) => Nav::Projects,
            ("projects", Some(_)) => match third {
                "change-requests" => Nav::ChangeRequests,
                "actions" => Nav::Actions,
                "overview" | "settings" | "environments" | "delete" | "access" | "context" => {
                    Nav::Projects
                }
                _ => Nav::Flags,
            },
            ("segments", _) => Nav::Segments,
            ("release-templates", _) => Nav::ReleaseTemplates,
            ("archive", _) => Nav::Archive,
            ("playground", _) => Nav::Playground,
            ("applications", _) => Nav::Applications,
            ("edges", _) => Nav::Edges,
            ("history", _) => Nav::Events,
            ("environments", _) => Nav::Environments,
            ("context", _) => Nav::ContextFields,
            ("strategies", _) => Nav::Strategies,
            ("profile", _) => Nav::Profile,
            ("admin", Some("api")) => Nav::ApiTokens,
            ("admin", Some("users")) => Nav::Users,
            ("admin", Some("groups")) => Nav::Groups,
            ("admin", Some("roles")) => Nav::Roles,
            ("admin", Some("service-accounts")) => Nav::ServiceAccounts,
            ("admin", Some("signals")) => Nav::Signals,
            ("admin", Some("invite-links")) => Nav::InviteLinks,
            ("admin", Some("settings")) => Nav::Settings,
            ("admin", Some("auth")) => Nav::SingleSignOn,
            ("admin", Some("scim")) => Nav::Scim,
            _ => Nav::None,
        };
        let project = match (first, second) {
            ("projects", Some(project)) => percent_decoded(project),
            _ => "default".to_owned(),
        };
        (nav, project)
    }
}

/// A path segment with its `%XX` escapes decoded.
fn percent_decoded(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// A navigation entry: (entry, path, link text, the area it reads).
type NavEntry = (Nav, &'static str, &'static str, Area);

/// The navigation, in groups: (group heading, entries as (entry, path, link text, the area it reads)).
/// `{project}` in a path is the current project, filled in by [`Shell::render`]. The paths are Unleash's UI's
/// where it has the page, so bookmarks keep working.
const NAVIGATION: &[(Option<&str>, &[NavEntry])] = &[
    (
        None,
        &[
            (
                Nav::Dashboard,
                "/personal",
                "Dashboard",
                Area::Configuration,
            ),
            (
                Nav::Flags,
                "/projects/{project}",
                "Flags",
                Area::Configuration,
            ),
            (Nav::Segments, "/segments", "Segments", Area::Configuration),
            (
                Nav::ReleaseTemplates,
                "/release-templates",
                "Release templates",
                Area::Configuration,
            ),
            (Nav::Archive, "/archive", "Archive", Area::Configuration),
            (
                Nav::ChangeRequests,
                "/projects/{project}/change-requests",
                "Change requests",
                Area::Configuration,
            ),
            (
                Nav::Actions,
                "/projects/{project}/actions",
                "Actions",
                Area::Access,
            ),
            (
                Nav::Playground,
                "/playground",
                "Playground",
                Area::ConfigurationQuery,
            ),
        ],
    ),
    (
        Some("Usage"),
        &[
            (
                Nav::Applications,
                "/applications",
                "Applications",
                Area::Configuration,
            ),
            (Nav::Edges, "/edges", "Edges", Area::Configuration),
            (Nav::Events, "/history", "Events", Area::Configuration),
        ],
    ),
    (
        Some("Admin"),
        &[
            (Nav::ApiTokens, "/admin/api", "API tokens", Area::Access),
            (Nav::Users, "/admin/users", "Users", Area::Access),
            (Nav::Groups, "/admin/groups", "Groups", Area::Access),
            (Nav::Roles, "/admin/roles", "Roles", Area::Access),
            (
                Nav::ServiceAccounts,
                "/admin/service-accounts",
                "Service accounts",
                Area::Access,
            ),
            (Nav::Signals, "/admin/signals", "Signals", Area::Access),
            (
                Nav::InviteLinks,
                "/admin/invite-links",
                "Invite links",
                Area::Access,
            ),
            (Nav::Projects, "/projects", "Projects", Area::Configuration),
            (
                Nav::Environments,
                "/environments",
                "Environments",
                Area::Configuration,
            ),
            (
                Nav::ContextFields,
                "/context",
                "Context fields",
                Area::Configuration,
            ),
            (
                Nav::Strategies,
                "/strategies",
                "Strategies",
                Area::Configuration,
            ),
            (Nav::Settings, "/admin/settings", "Settings", Area::Settings),
            (
                Nav::SingleSignOn,
                "/admin/auth",
                "Single sign-on",
                Area::Access,
            ),
            (Nav::Scim, "/admin/scim", "SCIM provisioning", Area::Access),
        ],
    ),
];

impl Shell {
    /// `path` under the base path.
    pub fn link(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Whether the signed-in caller may read `area` (the admin API's rule): its navigation entries show.
    fn may_read(&self, area: Area) -> bool {
        self.credential.is_some_and(|credential| {
            access::authorize(
                credential,
                &access::Grants::default(),
                &access::Need::area(true, area),
            )
            .is_ok()
        })
    }

    /// The whole page: `title` in the head and as the main heading's text is the caller's.
    pub fn render(&self, title: &str, main: Markup) -> Markup {
        let nav_link = |entry: Nav, href: String, text: &str| {
            html! {
                @if self.current == entry {
                    a href=(href) aria-current="page" { (text) }
                } @else {
                    a href=(href) { (text) }
                }
            }
        };

        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    meta name="color-scheme" content="light dark";
                    title { (title) " · Vexil" }
                    link rel="icon" type="image/svg+xml" href=(self.link("/ui-assets/favicon.svg"));
                    link rel="stylesheet" href=(self.link("/ui-assets/vexil.css"));
                    script type="module" src=(self.link("/ui-assets/vexil.js")) {}
                }
                body {
                    a.skip href="#main" { "Skip to content" }
                    header.top {
                        a.brand href=(self.link("/")) { "Vexil" }
                        @if self.who.is_some() {
                            // Narrow screens, with JavaScript: the navigation folds behind this button (vexil.js
                            // shows it). Without JavaScript the navigation stays open, wrapped in rows.
                            button.menu-toggle type="button" aria-expanded="false" aria-controls="main-nav" hidden { "Menu" }
                            // One search from every page; "/" focuses it (vexil.js).
                            form.global-search method="get" action=(self.link("/search")) role="search" {
                                input #global-search type="search" name="q" aria-label="Search everything"
                                    placeholder="Search  (press /)" autocomplete="off" aria-keyshortcuts="/";
                            }
                        }
                        @if let Some(who) = &self.who {
                            form.signout method="post" action=(self.link("/logout")) {
                                @if let Some(csrf) = &self.csrf {
                                    input type="hidden" name="csrf" value=(csrf);
                                }
                                span.who { (who) }
                                // Signed in with a token: no account, so no profile to open.
                                @if self.may_read(Area::OwnAccount) && !matches!(self.credential, Some(Credential::Token(_))) {
                                    (nav_link(Nav::Profile, self.link("/profile"), "Profile"))
                                }
                                button.link type="submit" { "Sign out" }
                            }
                        }
                    }
                    div.layout {
                        @if self.who.is_some() {
                            nav.side #main-nav aria-label="Main" {
                                @for (heading, entries) in NAVIGATION {
                                    @let shown: Vec<_> = entries.iter().filter(|entry| self.may_read(entry.3)).collect();
                                    @if !shown.is_empty() {
                                        div.nav-group {
                                            @if let Some(heading) = heading {
                                                span.nav-heading aria-hidden="true" { (heading) }
                                            }
                                            @for (entry, path, text, _) in shown {
                                                (nav_link(*entry, self.link(&path.replace("{project}", &self.project)), text))
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        main #main {
                            (self.banners_shown())
                            @if self.maintenance {
                                p.notice.maintenance role="status" {
                                    strong { "Maintenance mode is on." }
                                    " Changes are paused until an Admin turns it off in Settings; flags are still served."
                                }
                            }
                            @if let Some(Notice::Success(text)) = &self.notice {
                                p.notice.success role="status" { (text) }
                            }
                            @if self.maintenance { (paused_forms(main)) } @else { (main) }
                        }
                    }
                }
            }
        }
    }
}

impl Shell {
    /// The enabled banners: a labelled region of status notices, each message as plain text, its link only
    /// when safe (`domain::banners::is_safe_link`: an instance path gets the base path; an address opens
    /// without referrer), `dialog` as a disclosure holding the dialog's text.
    fn banners_shown(&self) -> Markup {
        html! {
            @if !self.banners.is_empty() {
                section.banners aria-label="Announcements" {
                    @for banner in &self.banners {
                        @let class = format!(
                            "notice banner-{}{}",
                            banner.variant,
                            if banner.sticky { " banner-sticky" } else { "" }
                        );
                        @let link_text = banner.link_text.as_deref().unwrap_or("More info");
                        div class=(class) role="status" data-banner=(banner.id) {
                            span.banner-kind { (banner_kind(&banner.variant)) }
                            span.banner-message { (banner.message) }
                            @match banner.link.as_deref() {
                                Some("dialog") => {
                                    details {
                                        summary { (banner.dialog_title.as_deref().unwrap_or(link_text)) }
                                        p { (banner.dialog.as_deref().unwrap_or("")) }
                                    }
                                }
                                Some(link) if banners::is_safe_link(link) => {
                                    @if link.starts_with('/') {
                                        a.banner-link href=(self.link(link)) { (link_text) }
                                    } @else {
                                        a.banner-link href=(link) rel="noopener noreferrer" { (link_text) }
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The word before a banner's message, so its kind is not told by colour alone.
fn banner_kind(variant: &str) -> &'static str {
    match variant {
        "warning" => "Warning:",
        "error" => "Important:",
        "success" => "Done:",
        _ => "Note:",
    }
}

/// `main` with each form that posts (a change) disabled — its controls inside a disabled fieldset — but the
/// one that switches maintenance mode off ([`MAINTENANCE_FORM`]). Forms never nest, so each `<form …
/// method="post"…>` closes at the next `</form>`.
fn paused_forms(main: Markup) -> Markup {
    let html = main.into_string();
    let mut out = String::with_capacity(html.len() + 256);
    let mut rest = html.as_str();
    while let Some(at) = rest.find("<form") {
        let Some(end) = rest[at..].find('>').map(|end| at + end + 1) else {
            break;
        };
        let tag = &rest[at..end];
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        if tag.contains("method=\"post\"") && !tag.contains(MAINTENANCE_FORM) {
            if let Some(close) = rest.find("</form>") {
                out.push_str("<fieldset class=\"paused\" disabled>");
                out.push_str(&rest[..close]);
                out.push_str("</fieldset>");
                rest = &rest[close..];
            }
        }
    }
    out.push_str(rest);
    PreEscaped(out)
}

/// The path of the settings form that switches maintenance mode.
pub const MAINTENANCE_FORM: &str = "/admin/settings/maintenance";

/// A whole HTML page, answered 200 unless a status is given.
pub struct Page {
    pub status: StatusCode,
    pub markup: Markup,
}

impl Page {
    pub fn ok(markup: Markup) -> Page {
        Page {
            status: StatusCode::OK,
            markup,
        }
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.markup.into_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        // Pages show live configuration and carry CSRF tokens: never stored.
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// A redirect after a successful write (303: the browser follows with a GET).
pub fn see_other(location: &str) -> Response {
    Redirect::to(location).into_response()
}

/// An error answered as a page: the same `{id, name, message}` as the API's JSON, with its status, drawn by
/// the UI's layer ([`super::scope`]) in the shell of whoever asked, so handlers return any [`ApiError`] with
/// `?`.
pub struct UiError {
    pub error: ApiError,
}

/// An error on its way to the layer, which draws it in the caller's shell.
#[derive(Clone)]
pub struct PendingError(pub ApiError);

impl From<ApiError> for UiError {
    fn from(error: ApiError) -> UiError {
        UiError { error }
    }
}

impl From<crate::store::StoreError> for UiError {
    fn from(error: crate::store::StoreError) -> UiError {
        UiError::from(ApiError::from(error))
    }
}

impl IntoResponse for UiError {
    fn into_response(self) -> Response {
        let mut response = StatusCode::INTERNAL_SERVER_ERROR.into_response();
        response.extensions_mut().insert(PendingError(self.error));
        response
    }
}

/// What a person reads as the heading of an error page.
fn heading(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "Not found",
        ErrorKind::NoAccess => "Not allowed",
        ErrorKind::AuthenticationRequired => "Sign in required",
        ErrorKind::Validation | ErrorKind::ExceedsLimit => "Cannot do that",
        ErrorKind::NameExists => "Already exists",
        ErrorKind::RateLimit => "Too many attempts",
        _ => "Something went wrong",
    }
}

/// The page of an error, drawn in `shell`.
pub fn error_page(shell: &Shell, error: &ApiError, status: StatusCode) -> Page {
    let body = error.body();
    let title = heading(error.kind);
    let markup = shell.render(
        title,
        html! {
            section.error-page aria-labelledby="error-title" {
                p.status { (status.as_u16()) }
                h1 #error-title { (title) }
                p.message { (body.message) }
                dl.error-details {
                    dt { "name" } dd { code { (body.name) } }
                    dt { "id" } dd { code { (body.id) } }
                }
                p { a href=(shell.link("/")) { "Back to the flags" } }
            }
        },
    );
    Page { status, markup }
}
