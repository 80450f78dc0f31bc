//! The admin API (`/api/admin/…`) and sign-in: one module per resource, each stating its routes once
//! (`#[utoipa::path]`, utoipa-axum). Here each router is mounted in its permission area, and every
//! configuration write states the permission it needs ([`PERMISSIONS`]), which the `AdminActor` extractor
//! checks; an unknown path never reaches one (404 before any check).

pub mod action_sets;
pub mod addons;
pub mod banners;
pub mod change_requests;
pub mod context_fields;
pub mod dependencies;
pub mod edge_tokens;
pub mod environments;
pub mod events;
pub mod favorites;
pub mod feature_batches;
pub mod feature_links;
pub mod features;
pub mod groups;
pub mod import_export;
pub mod instance;
pub mod invite_links;
pub mod lifecycle;
pub mod maintenance;
pub mod metrics;
pub mod own_account;
pub mod password_resets;
pub mod personal_dashboard;
pub mod playground;
pub mod project_access;
pub mod project_admin;
pub mod project_context_fields;
pub mod project_overview;
pub mod project_tokens;
pub mod projects;
pub mod release_plan_templates;
pub mod release_plans;
pub mod reports;
pub mod roles;
pub mod scim_settings;
pub mod search;
pub mod segments;
pub mod service_accounts;
pub mod signal_endpoints;
pub mod sso;
pub mod strategies;
pub mod strategy_definitions;
pub mod tags;
pub mod tokens;
pub mod ui_config;
pub mod unleash_ui;
pub mod user_admin;
pub mod users;
pub mod variants;

use super::extract::area;
use super::route_permissions::{delete, get, patch, post, put, PermissionTable, RoutePermission};
use super::AppState;
use crate::domain::access::Area::{
    Access, Configuration, ConfigurationQuery, OwnAccount, Settings,
};
use crate::domain::permissions::Permission::*;
use axum::Extension;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

/// Every admin route in its area, and sign-in, invite links and reset links (no area: they take no
/// credential).
pub fn routes() -> OpenApiRouter<Arc<AppState>> {
    mounted().route_layer(Extension(PermissionTable(PERMISSIONS)))
}

fn mounted() -> OpenApiRouter<Arc<AppState>> {
    users::sign_in_router()
        .merge(invite_links::public_router())
        .merge(password_resets::public_router())
        .merge(signal_endpoints::receiver_router())
        .merge(area(OwnAccount, users::account_router()))
        .merge(area(OwnAccount, own_account::router()))
        .merge(area(OwnAccount, favorites::router()))
        .merge(area(OwnAccount, unleash_ui::router()))
        .merge(area(Access, users::router()))
        .merge(area(Access, user_admin::router()))
        .merge(area(Access, password_resets::router()))
        .merge(area(Access, invite_links::router()))
        .merge(area(Access, groups::router()))
        .merge(area(Access, tokens::router()))
        .merge(area(Access, service_accounts::router()))
        // Signals and actions: Admins only, as Unleash's ADMIN permission (an action set acts with its
        // service account's permissions, which only an Admin hands out).
        .merge(area(Access, signal_endpoints::router()))
        .merge(area(Access, action_sets::router()))
        .merge(area(Access, sso::router()))
        // The instance statistics as CSV: Admins only (Unleash's ADMIN).
        .merge(area(Access, reports::admin_router()))
        // Unleash Edge asking for client tokens: who may create API tokens (Admins, admin tokens).
        .merge(area(Access, edge_tokens::router()))
        .merge(area(Access, scim_settings::router()))
        .merge(area(Access, roles::admin_router()))
        .merge(area(Configuration, roles::read_router()))
        .merge(area(Configuration, project_access::router()))
        .merge(area(Settings, ui_config::router()))
        .merge(area(Settings, addons::router()))
        // Banners: everyone signed in reads them, Admins write them (Unleash's ADMIN).
        .merge(area(Settings, banners::router()))
        .merge(area(Configuration, projects::router()))
        .merge(area(Configuration, project_admin::router()))
        .merge(area(ConfigurationQuery, project_admin::query_router()))
        .merge(area(Configuration, project_overview::router()))
        .merge(area(Configuration, personal_dashboard::router()))
        .merge(area(Configuration, project_tokens::router()))
        .merge(area(Configuration, environments::router()))
        .merge(area(Configuration, features::router()))
        .merge(area(Configuration, feature_links::router()))
        .merge(area(Configuration, lifecycle::router()))
        .merge(area(Configuration, feature_batches::router()))
        .merge(area(Configuration, strategies::router()))
        .merge(area(Configuration, variants::router()))
        .merge(area(Configuration, segments::router()))
        .merge(area(Configuration, strategy_definitions::router()))
        .merge(area(Configuration, context_fields::router()))
        .merge(area(Configuration, project_context_fields::router()))
        .merge(area(ConfigurationQuery, playground::router()))
        .merge(area(Configuration, events::router()))
        .merge(area(Configuration, search::router()))
        .merge(area(Configuration, metrics::router()))
        .merge(area(Configuration, reports::router()))
        .merge(area(Configuration, instance::router()))
        .merge(area(Configuration, maintenance::router()))
        .merge(area(Configuration, change_requests::router()))
        .merge(area(Configuration, change_requests::configuration_router()))
        .merge(area(ConfigurationQuery, import_export::router_reads()))
        .merge(area(Configuration, import_export::router()))
        .merge(area(Configuration, tags::router()))
        .merge(area(Configuration, dependencies::router()))
        .merge(area(Configuration, release_plan_templates::router()))
        .merge(area(Configuration, release_plans::router()))
}

/// The permission every configuration write (and every configuration read not open to all) needs, by method
/// and route, in the project and environment the path names (`http::route_permissions::scope_of`). A
/// configuration write missing here is refused to everyone but Admins (a test checks none is missing).
pub static PERMISSIONS: &[RoutePermission] = &[
    // Not here, so Admins only: the banners' writes (Settings area), `/edge/issue-token` and
    // `/api/admin/instance-admin/statistics/csv` (Access area).
    // Maintenance mode.
    post("/api/admin/maintenance", UpdateMaintenanceMode),
    // Projects.
    post("/api/admin/projects", CreateProject),
    put("/api/admin/projects/{projectId}", UpdateProject),
    delete("/api/admin/projects/{projectId}", DeleteProject),
    post("/api/admin/projects/{projectId}/environments", UpdateProject),
    delete("/api/admin/projects/{projectId}/environments/{environment}", UpdateProject),
    post("/api/admin/projects/{projectId}/environments/{environment}/default-strategy", UpdateProject),
    post("/api/admin/projects/archive/{projectId}", DeleteProject),
    post("/api/admin/projects/revive/{projectId}", DeleteProject),
    put("/api/admin/projects/{projectId}/tags", UpdateFeature),
    // The target project's MOVE_FEATURE_TOGGLE is checked by the handler.
    post("/api/admin/projects/{projectId}/features/{featureName}/changeProject", MoveFeatureToggle),
    // Project access.
    get("/api/admin/projects/{projectId}/access", ProjectUserAccessRead),
    post("/api/admin/projects/{projectId}/access", ProjectUserAccessWrite),
    put("/api/admin/projects/{projectId}/access", ProjectUserAccessWrite),
    put("/api/admin/projects/{projectId}/users/{userId}/roles", ProjectUserAccessWrite),
    delete("/api/admin/projects/{projectId}/users/{userId}/roles", ProjectUserAccessWrite),
    put("/api/admin/projects/{projectId}/groups/{groupId}/roles", ProjectUserAccessWrite),
    delete("/api/admin/projects/{projectId}/groups/{groupId}/roles", ProjectUserAccessWrite),
    // Flags.
    post("/api/admin/projects/{projectId}/features", CreateFeature),
    put("/api/admin/projects/{projectId}/features/{featureName}", UpdateFeature),
    patch("/api/admin/projects/{projectId}/features/{featureName}", UpdateFeature),
    delete("/api/admin/projects/{projectId}/features/{featureName}", DeleteFeature),
    post("/api/admin/projects/{projectId}/archive", DeleteFeature),
    post("/api/admin/projects/{projectId}/features/{featureName}/clone", CreateFeature),
    post("/api/admin/projects/{projectId}/features/{featureName}/link", UpdateFeature),
    put("/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}", UpdateFeature),
    delete("/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}", UpdateFeature),
    post("/api/admin/features/validate", CreateFeature),
    post("/api/admin/archive/revive/{featureName}", UpdateFeature),
    delete("/api/admin/archive/{featureName}", DeleteFeature),
    post("/api/admin/projects/{projectId}/revive", UpdateFeature),
    post("/api/admin/projects/{projectId}/delete", DeleteFeature),
    post("/api/admin/projects/{projectId}/stale", UpdateFeature),
    post("/api/admin/features/{featureName}/tags", UpdateFeature),
    put("/api/admin/features/{featureName}/tags", UpdateFeature),
    delete("/api/admin/features/{featureName}/tags/{type}/{value}", UpdateFeature),
    post("/api/admin/features-batch/validate", UpdateFeature),
    post("/api/admin/features-batch/import", UpdateFeature),
    post("/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete", UpdateFeature),
    post("/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete", UpdateFeature),
    // Not here, so Admins only (Unleash's ADMIN): PUT /api/admin/feature-types/{id}/lifetime.
    // Dependencies.
    post("/api/admin/projects/{projectId}/features/{featureName}/dependencies", UpdateFeatureDependency),
    delete(
        "/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}",
        UpdateFeatureDependency,
    ),
    delete("/api/admin/projects/{projectId}/features/{featureName}/dependencies", UpdateFeatureDependency),
    // Per environment.
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on",
        UpdateFeatureEnvironment,
    ),
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
        UpdateFeatureEnvironment,
    ),
    post("/api/admin/projects/{projectId}/bulk_features/environments/{environment}/on", UpdateFeatureEnvironment),
    post("/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off", UpdateFeatureEnvironment),
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
        CreateFeatureStrategy,
    ),
    put(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
        UpdateFeatureStrategy,
    ),
    patch(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
        UpdateFeatureStrategy,
    ),
    delete(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
        DeleteFeatureStrategy,
    ),
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order",
        UpdateFeatureStrategy,
    ),
    put(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
        UpdateFeatureEnvironmentVariants,
    ),
    patch(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
        UpdateFeatureEnvironmentVariants,
    ),
    put("/api/admin/projects/{projectId}/features/{featureName}/variants-batch", UpdateFeatureVariants),
    post("/api/admin/segments/strategies", UpdateFeatureStrategy),
    // Release plans (release templates have no row: only Admins write them).
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans",
        CreateFeatureStrategy,
    ),
    delete(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans/{planId}",
        DeleteFeatureStrategy,
    ),
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release-plans/{planId}/milestones/{milestoneId}/start",
        UpdateFeatureStrategy,
    ),
    put(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/progressions/{id}",
        UpdateFeatureStrategy,
    ),
    delete(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/progressions/{id}",
        UpdateFeatureStrategy,
    ),
    post(
        "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/progressions/{id}/resume",
        UpdateFeatureStrategy,
    ),
    // Change requests: the routes without an environment ask for the permission in any environment of
    // the project; approving and applying are checked again in the request's own (domain).
    put(
        "/api/admin/projects/{projectId}/environments/{environment}/change-requests/config",
        ProjectChangeRequestWrite,
    ),
    post(
        "/api/admin/projects/{projectId}/environments/{environment}/change-requests",
        UpdateFeatureEnvironment,
    ),
    delete("/api/admin/projects/{projectId}/change-requests/{id}", UpdateFeatureEnvironment),
    put(
        "/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}",
        UpdateFeatureEnvironment,
    ),
    delete(
        "/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}",
        UpdateFeatureEnvironment,
    ),
    put("/api/admin/projects/{projectId}/change-requests/{id}/state", UpdateFeatureEnvironment),
    post("/api/admin/projects/{projectId}/change-requests/{id}/comments", UpdateFeatureEnvironment),
    // A project's own context fields: UPDATE_PROJECT in the project (Unleash takes its UPDATE_PROJECT_CONTEXT,
    // which Vexil has not, or the root context-field permission; UPDATE_PROJECT is what a project's owner holds).
    post("/api/admin/projects/{projectId}/context", UpdateProject),
    put("/api/admin/projects/{projectId}/context/{contextField}", UpdateProject),
    delete("/api/admin/projects/{projectId}/context/{contextField}", UpdateProject),
    post("/api/admin/projects/{projectId}/context/validate", UpdateProject),
    post("/api/admin/projects/{projectId}/context/{contextField}/legal-values", UpdateProject),
    delete(
        "/api/admin/projects/{projectId}/context/{contextField}/legal-values/{legalValue}",
        UpdateProject,
    ),
    // Project API tokens.
    post("/api/admin/projects/{projectId}/api-tokens", CreateProjectApiToken),
    delete("/api/admin/projects/{projectId}/api-tokens/{token}", DeleteProjectApiToken),
    // The instance's shared configuration.
    post("/api/admin/context", CreateContextField),
    put("/api/admin/context/{contextField}", UpdateContextField),
    delete("/api/admin/context/{contextField}", DeleteContextField),
    post("/api/admin/context/validate", CreateContextField),
    post("/api/admin/constraints/validate", UpdateFeatureStrategy),
    post("/api/admin/context/{contextField}/legal-values", UpdateContextField),
    delete("/api/admin/context/{contextField}/legal-values/{legalValue}", UpdateContextField),
    post("/api/admin/segments", CreateSegment),
    put("/api/admin/segments/{id}", UpdateSegment),
    delete("/api/admin/segments/{id}", DeleteSegment),
    post("/api/admin/segments/validate", CreateSegment),
    post("/api/admin/strategies", CreateStrategy),
    put("/api/admin/strategies/{strategyName}", UpdateStrategy),
    delete("/api/admin/strategies/{strategyName}", DeleteStrategy),
    post("/api/admin/strategies/{strategyName}/deprecate", UpdateStrategy),
    post("/api/admin/strategies/{strategyName}/reactivate", UpdateStrategy),
    post("/api/admin/tag-types", CreateTagType),
    post("/api/admin/tag-types/validate", CreateTagType),
    put("/api/admin/tag-types/{name}", UpdateTagType),
    delete("/api/admin/tag-types/{name}", DeleteTagType),
    post("/api/admin/tags", UpdateTagType),
    delete("/api/admin/tags/{type}/{value}", UpdateTagType),
    post("/api/admin/environments", CreateEnvironment),
    put("/api/admin/environments/update/{name}", UpdateEnvironment),
    delete("/api/admin/environments/{name}", DeleteEnvironment),
    post("/api/admin/environments/{name}/on", UpdateEnvironment),
    post("/api/admin/environments/{name}/off", UpdateEnvironment),
    put("/api/admin/environments/sort-order", UpdateEnvironment),
    post("/api/admin/metrics/applications/{appName}", UpdateApplication),
    delete("/api/admin/metrics/applications/{appName}", UpdateApplication),
];
