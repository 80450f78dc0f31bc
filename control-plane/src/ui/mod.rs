//! The admin web UI: server-rendered HTML (maud templates, compiled into the binary), served by the control
//! plane itself under the base path, on the API's port. URLs follow Unleash's UI (`/login`,
//! `/projects/<project>`, `/projects/<project>/features/<flag>`, `/segments`, `/archive`).
//!
//! Handlers are thin: an extractor for who is asking ([`session::SignedIn`]) or for a form write
//! ([`session::UiWrite`]: permission and CSRF), then the same domain functions as the admin API, then a page
//! or a redirect. Every answer carries a Content-Security-Policy of `default-src 'self'`: the stylesheet and
//! the one small script module come from the binary ([`assets`]), nothing from elsewhere.

pub mod access_forms;
pub mod api_tokens;
pub mod applications;
pub mod assets;
pub mod change_requests;
pub mod context_fields;
pub mod controls;
pub mod dependencies;
pub mod diff;
pub mod edges;
pub mod environments;
pub mod event_log;
pub mod events;
pub mod field_errors;
pub mod flag;
pub mod flags;
pub mod groups;
pub mod lists;
pub mod page;
pub mod paging;
pub mod playground;
pub mod profile;
pub mod projects;
pub mod session;
pub mod settings;
pub mod sign_in;
pub mod strategies;
pub mod strategy_form;
pub mod usage;
pub mod users;
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
            "/projects/{project}/features/{feature}/dependencies",
            post(flag::add_dependency),
        )
        .route(
            "/projects/{project}/features/{feature}/dependencies/remove",
            post(flag::remove_dependency),
        )
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
        .route("/admin/api", get(api_tokens::list).post(api_tokens::create))
        .route(
            "/admin/api/{hash}/revoke",
            get(api_tokens::confirm_revoke).post(api_tokens::revoke),
        )
        .route("/admin/users", get(users::list))
        .route(
            "/admin/users/create",
            get(users::new_user).post(users::create),
        )
        .route("/admin/users/{id}", get(users::edit).post(users::update))
        .route("/admin/users/{id}/password", post(users::reset_password))
        .route(
            "/admin/users/{id}/delete",
            get(users::confirm_delete).post(users::delete),
        )
        .route("/admin/groups", get(groups::list))
        .route(
            "/admin/groups/create",
            get(groups::new_group).post(groups::create),
        )
        .route("/admin/groups/{id}", get(groups::edit).post(groups::update))
        .route(
            "/admin/groups/{id}/delete",
            get(groups::confirm_delete).post(groups::delete),
        )
        .route("/profile", get(profile::page))
        .route("/profile/tokens", post(profile::create_token))
        .route("/profile/tokens/{id}/revoke", post(profile::revoke_token))
        .route("/profile/password", post(profile::change_password))
}

/// Part 2, configuration: projects, environments, context fields, strategy definitions, settings.
fn configuration_router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/projects", get(projects::list).post(projects::create))
        .route(
            "/projects/{project}/settings",
            get(projects::settings).post(projects::save_settings),
        )
        .route(
            "/projects/{project}/environments/{environment}/switch",
            post(projects::set_environment),
        )
        .route(
            "/projects/{project}/environments/{environment}/change-requests",
            post(projects::configure_change_requests),
        )
        .route(
            "/projects/{project}/delete",
            get(projects::confirm_delete).post(projects::delete),
        )
        .route(
            "/environments",
            get(environments::list).post(environments::create),
        )
        .route(
            "/environments/edit/{name}",
            get(environments::edit).post(environments::update),
        )
        .route(
            "/environments/{name}/switch",
            post(environments::set_enabled),
        )
        .route(
            "/environments/{name}/delete",
            get(environments::confirm_delete).post(environments::delete),
        )
        .route("/context", get(context_fields::list))
        .route(
            "/context/create",
            get(context_fields::new_field).post(context_fields::create),
        )
        .route(
            "/context/edit/{name}",
            get(context_fields::edit_field).post(context_fields::update),
        )
        .route("/context/{name}/delete", post(context_fields::delete))
        .route("/strategies", get(strategies::list))
        .route(
            "/strategies/create",
            get(strategies::new_definition).post(strategies::create),
        )
        .route(
            "/strategies/edit/{name}",
            get(strategies::edit_definition).post(strategies::update),
        )
        .route("/strategies/{name}/deprecate", post(strategies::deprecate))
        .route(
            "/strategies/{name}/reactivate",
            post(strategies::reactivate),
        )
        .route("/strategies/{name}/delete", post(strategies::delete))
        .route("/admin/settings", get(settings::page))
        .route("/admin/settings/origins", post(settings::save_origins))
}

/// Part 2, operations: change requests, playground, applications, edges, usage charts, the event log.
fn operations_router() -> Router<Arc<AppState>> {
    Router::new()
        // change requests, playground
        .route(
            "/projects/{project}/change-requests",
            get(change_requests::list),
        )
        .route(
            "/projects/{project}/change-requests/{id}",
            get(change_requests::page),
        )
        .route(
            "/projects/{project}/change-requests/{id}/state",
            post(change_requests::change_state),
        )
        .route(
            "/projects/{project}/change-requests/{id}/comments",
            post(change_requests::comment),
        )
        .route(
            "/projects/{project}/change-requests/{id}/changes/{change}/discard",
            post(change_requests::discard_change),
        )
        .route("/playground", get(playground::page))
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
