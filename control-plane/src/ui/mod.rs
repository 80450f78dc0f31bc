//! The admin web UI: server-rendered HTML (maud templates, compiled into the binary), served by the control
//! plane itself under the base path, on the API's port. URLs follow Unleash's UI (`/login`,
//! `/projects/<project>`, `/projects/<project>/features/<flag>`, `/segments`, `/archive`).
//!
//! Handlers are thin: an extractor for who is asking ([`session::SignedIn`]) or for a form write
//! ([`session::UiWrite`]: permission and CSRF), then the same domain functions as the admin API, then a page
//! or a redirect. Every answer carries a Content-Security-Policy of `default-src 'self'`: the stylesheet and
//! the one small script module come from the binary ([`assets`]), nothing from elsewhere.

pub mod applications;
pub mod assets;
pub mod controls;
pub mod edges;
pub mod event_log;
pub mod events;
pub mod flag;
pub mod flags;
pub mod lists;
pub mod page;
pub mod session;
pub mod sign_in;
pub mod strategy_form;
pub mod usage;
pub mod variant_editor;

use crate::http::state::AppState;
use axum::http::header::{HeaderName, HeaderValue};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;

/// The policy every UI answer carries: only this origin, no framing, forms post here only.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "same-origin"),
        ("x-frame-options", "DENY"),
    ] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    response
}

/// The UI's routes (under the base path, as the caller nests them).
pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(flags::home))
        .route("/login", get(sign_in::page).post(sign_in::sign_in))
        .route("/logout", post(sign_in::sign_out))
        .route("/ui-assets/vexil.css", get(assets::stylesheet))
        .route("/ui-assets/vexil.js", get(assets::script))
        .route("/ui-assets/favicon.svg", get(assets::icon))
        .route("/projects", get(flags::pick_project))
        .route("/projects/{project}", get(flags::list))
        .route(
            "/projects/{project}/create-flag",
            get(flags::new_flag).post(flags::create_flag),
        )
        .route(
            "/projects/{project}/create-flag/validate",
            get(flags::validate_name),
        )
        .route(
            "/projects/{project}/features/{feature}/environments/{environment}/switch",
            post(flags::set_switch),
        )
        .route("/projects/{project}/features/{feature}", get(flag::page))
        .route(
            "/projects/{project}/features/{feature}/settings",
            post(flag::save_settings),
        )
        .route(
            "/projects/{project}/features/{feature}/archive",
            get(flag::confirm_archive).post(flag::archive),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/create",
            get(strategy_form::create_page).post(strategy_form::create),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/edit",
            get(strategy_form::edit_page).post(strategy_form::edit),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/delete",
            post(strategy_form::delete),
        )
        .route(
            "/projects/{project}/features/{feature}/strategies/move",
            post(strategy_form::move_strategy),
        )
        .route(
            "/projects/{project}/features/{feature}/variants",
            get(flag::variants_page).post(flag::save_variants),
        )
        .route("/segments", get(lists::segments))
        .route(
            "/segments/create",
            get(lists::new_segment).post(lists::create_segment),
        )
        .route(
            "/segments/edit/{id}",
            get(lists::edit_segment).post(lists::update_segment),
        )
        .route("/segments/{id}/delete", post(lists::delete_segment))
        .route("/archive", get(lists::archive))
        .route("/archive/{feature}/revive", post(lists::revive))
        .route("/archive/{feature}/delete", post(lists::delete))
        .merge(access_router())
        .merge(configuration_router())
        .merge(operations_router())
        .layer(axum::middleware::map_response(secure_headers))
}

/// Part 2, access: API tokens, users, groups, the signed-in user's profile.
fn access_router() -> Router<Arc<AppState>> {
    Router::new()
}

/// Part 2, configuration: projects, environments, context fields, strategy definitions, settings.
fn configuration_router() -> Router<Arc<AppState>> {
    Router::new()
}

/// Part 2, operations: change requests, playground, applications, edges, usage charts, the event log.
fn operations_router() -> Router<Arc<AppState>> {
    Router::new()
        // usage, applications, edges, events
        .route(
            "/projects/{project}/features/{feature}/metrics",
            get(usage::page),
        )
        .route("/applications", get(applications::list))
        .route("/applications/{app}", get(applications::page))
        .route("/edges", get(edges::list))
        .route("/history", get(events::log))
}
