//! The admin API (`/api/admin/…`) and sign-in: one module per resource, each stating its routes once
//! (`#[utoipa::path]`, utoipa-axum). Here each router is mounted in its permission area, which the
//! `AdminActor` extractor checks; an unknown path never reaches one (404 before any check).

pub mod addons;
pub mod change_requests;
pub mod context_fields;
pub mod dependencies;
pub mod environments;
pub mod events;
pub mod favorites;
pub mod feature_batches;
pub mod features;
pub mod groups;
pub mod import_export;
pub mod instance;
pub mod invite_links;
pub mod metrics;
pub mod own_account;
pub mod password_resets;
pub mod personal_dashboard;
pub mod playground;
pub mod project_overview;
pub mod project_tokens;
pub mod projects;
pub mod scim_settings;
pub mod search;
pub mod segments;
pub mod service_accounts;
pub mod sso;
pub mod strategies;
pub mod strategy_definitions;
pub mod tags;
pub mod tokens;
pub mod ui_config;
pub mod user_admin;
pub mod users;
pub mod variants;

use super::extract::area;
use super::AppState;
use crate::domain::access::Area::{
    Access, ChangeRequestConfiguration, Configuration, ConfigurationQuery, OwnAccount, Settings,
};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

/// Every admin route in its area, and sign-in, invite links and reset links (no area: they take no
/// credential).
pub fn routes() -> OpenApiRouter<Arc<AppState>> {
    users::sign_in_router()
        .merge(invite_links::public_router())
        .merge(password_resets::public_router())
        .merge(area(OwnAccount, users::account_router()))
        .merge(area(OwnAccount, own_account::router()))
        .merge(area(OwnAccount, favorites::router()))
        .merge(area(Access, users::router()))
        .merge(area(Access, user_admin::router()))
        .merge(area(Access, password_resets::router()))
        .merge(area(Access, invite_links::router()))
        .merge(area(Access, groups::router()))
        .merge(area(Access, tokens::router()))
        .merge(area(Access, service_accounts::router()))
        .merge(area(Access, sso::router()))
        .merge(area(Access, scim_settings::router()))
        .merge(area(Settings, ui_config::router()))
        .merge(area(Settings, addons::router()))
        .merge(area(Configuration, projects::router()))
        .merge(area(Configuration, project_overview::router()))
        .merge(area(Configuration, personal_dashboard::router()))
        .merge(area(Configuration, project_tokens::router()))
        .merge(area(Configuration, environments::router()))
        .merge(area(Configuration, features::router()))
        .merge(area(Configuration, feature_batches::router()))
        .merge(area(Configuration, strategies::router()))
        .merge(area(Configuration, variants::router()))
        .merge(area(Configuration, segments::router()))
        .merge(area(Configuration, strategy_definitions::router()))
        .merge(area(Configuration, context_fields::router()))
        .merge(area(Configuration, playground::router()))
        .merge(area(Configuration, events::router()))
        .merge(area(Configuration, search::router()))
        .merge(area(Configuration, metrics::router()))
        .merge(area(Configuration, instance::router()))
        .merge(area(Configuration, change_requests::router()))
        .merge(area(
            ChangeRequestConfiguration,
            change_requests::configuration_router(),
        ))
        .merge(area(ConfigurationQuery, import_export::router_reads()))
        .merge(area(Configuration, import_export::router()))
        .merge(area(Configuration, tags::router()))
        .merge(area(Configuration, dependencies::router()))
}
