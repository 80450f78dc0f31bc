//! The admin web UI: server-rendered HTML (maud templates, compiled into the binary), served by the control
//! plane itself under the base path, on the API's port. URLs follow Unleash's UI (`/login`,
//! `/projects/<project>`, `/projects/<project>/features/<flag>`, `/segments`, `/archive`).
//!
//! Handlers are thin: an extractor for who is asking ([`session::SignedIn`]) or for a form write
//! ([`session::UiWrite`]: permission and CSRF), then the same domain functions as the admin API, then a page
//! or, after a write, [`scope::written`] (a redirect with a notice, or the form again with its field errors).
//! Errors go back with `?`; the layer of [`scope`] draws them in the caller's shell and sets the cookies. Every answer carries a Content-Security-Policy of `default-src 'self'`: the stylesheet and
//! the one small script module come from the binary ([`assets`]), nothing from elsewhere.

pub mod access_forms;
pub mod account_links;
pub mod action_set_form;
pub mod api_tokens;
pub mod applications;
pub mod archive;
pub mod assets;
pub mod banners;
pub mod change_preview;
pub mod change_request_schedule;
pub mod change_requests;
pub mod connect_sdk;
pub mod constraint_editor;
pub mod context_fields;
pub mod controls;
pub mod dashboard;
pub mod dependencies;
pub mod diff;
pub mod edges;
pub mod environments;
pub mod event_log;
pub mod event_sentence;
pub mod events;
pub mod favorites;
pub mod field_errors;
pub mod flag;
pub mod flag_copy;
pub mod flag_lifecycle;
pub mod flag_links;
pub mod flag_move;
pub mod flag_summary;
pub mod flag_tag_writes;
pub mod flag_tags;
pub mod flag_variants;
pub mod flags;
pub mod groups;
pub mod invite_links;
pub mod oidc_sign_in;
pub mod page;
pub mod paging;
pub mod playground;
pub mod profile;
pub mod project_access;
pub mod project_actions;
pub mod project_context_fields;
pub mod project_default_strategy;
pub mod project_overview;
pub mod projects;
pub mod release_plan_section;
pub mod release_template_strategies;
pub mod release_templates;
pub mod roles;
pub mod saml_sign_in;
pub mod scim_provisioning;
pub mod scope;
pub mod search;
pub mod segments;
pub mod service_accounts;
pub mod session;
pub mod settings;
pub mod sign_in;
pub mod signals;
pub mod single_sign_on;
pub mod single_sign_on_saml;
pub mod single_sign_out;
pub mod strategy_definitions;
pub mod strategy_form;
pub mod usage;
pub mod users;
pub mod variant_editor;
pub mod vocabulary;

use crate::domain::permissions::Permission::*;
use crate::http::route_permissions::{post, post_in, RoutePermission};
use crate::http::state::AppState;
use axum::http::header::{HeaderName, HeaderValue};
use axum::response::Response;
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

/// The UI's routes (under the base path, as the caller nests them): each module states its own, in its
/// `routes()`, grouped here as the navigation groups them.
pub fn router(state: &Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        // Signing in (and up with an invite link, and a password reset), the assets, flags and their strategies, segments,
        // release templates and plans, the archive.
        .merge(sign_in::routes())
        .merge(oidc_sign_in::routes())
        .merge(saml_sign_in::routes())
        .merge(single_sign_out::routes())
        .merge(account_links::routes())
        .merge(assets::routes())
        .merge(flags::routes())
        .merge(flag::routes())
        .merge(flag_variants::routes())
        .merge(connect_sdk::routes())
        .merge(flag_copy::routes())
        .merge(flag_move::routes())
        .merge(flag_tag_writes::routes())
        .merge(flag_links::routes())
        .merge(favorites::routes())
        .merge(flag_lifecycle::routes())
        .merge(strategy_form::routes())
        .merge(segments::routes())
        .merge(release_templates::routes())
        .merge(release_template_strategies::routes())
        .merge(release_plan_section::routes())
        .merge(archive::routes())
        .merge(search::routes())
        // Access: API tokens, users, groups, service accounts, invite links, the signed-in user's profile.
        .merge(api_tokens::routes())
        .merge(users::routes())
        .merge(groups::routes())
        .merge(roles::routes())
        .merge(service_accounts::routes())
        .merge(signals::routes())
        .merge(invite_links::routes())
        .merge(profile::routes())
        // Configuration: projects, environments, context fields, strategy definitions, settings.
        .merge(projects::routes())
        .merge(project_overview::routes())
        .merge(project_access::routes())
        .merge(project_actions::routes())
        .merge(dashboard::routes())
        .merge(project_context_fields::routes())
        .merge(action_set_form::routes())
        .merge(environments::routes())
        .merge(context_fields::routes())
        .merge(strategy_definitions::routes())
        .merge(settings::routes())
        .merge(banners::routes())
        .merge(single_sign_on::routes())
        .merge(scim_provisioning::routes())
        // Operations: change requests, the playground, usage, applications, edges, the event log.
        .merge(change_requests::routes())
        .merge(playground::routes())
        .merge(usage::routes())
        .merge(applications::routes())
        .merge(edges::routes())
        .merge(events::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            scope::ui_scope,
        ))
        .layer(axum::middleware::map_response(secure_headers))
}

/// The permission each form of the configuration needs (the admin API's table is
/// `http::admin::PERMISSIONS`), in the project and environment its path — or its `environment` field —
/// names. [`session::UiWrite`] checks it before the handler runs; a configuration form missing here is
/// refused to everyone but Admins.
pub static PERMISSIONS: &[RoutePermission] = &[
    post(page::MAINTENANCE_FORM, UpdateMaintenanceMode),
    post("/projects", CreateProject),
    post("/projects/{project}/settings", UpdateProject),
    post("/projects/{project}/delete", DeleteProject),
    post("/projects/{project}/access", ProjectUserAccessWrite),
    post(
        "/projects/{project}/access/{subject}/role",
        ProjectUserAccessWrite,
    ),
    post(
        "/projects/{project}/access/{subject}/remove",
        ProjectUserAccessWrite,
    ),
    post(
        "/projects/{project}/environments/{environment}/switch",
        UpdateProject,
    ),
    post(
        "/projects/{project}/environments/{environment}/change-requests",
        ProjectChangeRequestWrite,
    ),
    post(
        "/projects/{project}/environments/{environment}/default-strategy",
        UpdateProject,
    ),
    post("/projects/{project}/create-flag", CreateFeature),
    post(
        "/projects/{project}/features/{feature}/clone",
        CreateFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/settings",
        UpdateFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/archive",
        DeleteFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/move",
        MoveFeatureToggle,
    ),
    post(
        "/projects/{project}/features/{feature}/lifecycle/complete",
        UpdateFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/lifecycle/uncomplete",
        UpdateFeature,
    ),
    post("/projects/{project}/features/{feature}/tags", UpdateFeature),
    post(flag_links::ADD_FORM, UpdateFeature),
    post(
        "/projects/{project}/features/{feature}/links/{id}",
        UpdateFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/links/{id}/remove",
        UpdateFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/tags/remove",
        UpdateFeature,
    ),
    post(
        "/projects/{project}/features/{feature}/dependencies",
        UpdateFeatureDependency,
    ),
    post(
        "/projects/{project}/features/{feature}/dependencies/remove",
        UpdateFeatureDependency,
    ),
    post(
        "/projects/{project}/features/{feature}/environments/{environment}/switch",
        UpdateFeatureEnvironment,
    ),
    post(
        "/projects/{project}/features/{feature}/strategies/create",
        CreateFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/strategies/edit",
        UpdateFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/strategies/delete",
        DeleteFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/strategies/move",
        UpdateFeatureStrategy,
    ),
    post_in(
        "/projects/{project}/features/{feature}/strategies/copy",
        CreateFeatureStrategy,
        "to",
    ),
    post(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan",
        CreateFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan/start",
        UpdateFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan/resume",
        UpdateFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/environments/{environment}/release-plan/remove",
        DeleteFeatureStrategy,
    ),
    post(
        "/projects/{project}/features/{feature}/variants",
        UpdateFeatureEnvironmentVariants,
    ),
    post(
        "/projects/{project}/change-requests/{id}/state",
        UpdateFeatureEnvironment,
    ),
    post(
        "/projects/{project}/change-requests/{id}/schedule",
        UpdateFeatureEnvironment,
    ),
    post(
        "/projects/{project}/change-requests/{id}/comments",
        UpdateFeatureEnvironment,
    ),
    post(
        "/projects/{project}/change-requests/{id}/changes/{change}/discard",
        UpdateFeatureEnvironment,
    ),
    post("/archive/{feature}/revive", UpdateFeature),
    post("/archive/{feature}/delete", DeleteFeature),
    post("/segments/create", CreateSegment),
    post("/segments/edit/{id}", UpdateSegment),
    post("/segments/{id}/delete", DeleteSegment),
    post("/context/create", CreateContextField),
    post("/context/edit/{name}", UpdateContextField),
    post("/context/{name}/delete", DeleteContextField),
    post("/projects/{project}/context/create", UpdateProject),
    post("/projects/{project}/context/edit/{name}", UpdateProject),
    post("/projects/{project}/context/{name}/delete", UpdateProject),
    post("/strategies/create", CreateStrategy),
    post("/strategies/edit/{name}", UpdateStrategy),
    post("/strategies/{name}/deprecate", UpdateStrategy),
    post("/strategies/{name}/reactivate", UpdateStrategy),
    post("/strategies/{name}/delete", DeleteStrategy),
    post("/environments", CreateEnvironment),
    post("/environments/edit/{name}", UpdateEnvironment),
    post("/environments/{name}/switch", UpdateEnvironment),
    post("/environments/{name}/delete", DeleteEnvironment),
];
