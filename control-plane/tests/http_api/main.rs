//! The real binary over HTTP: the admin flow, bad input, crash safety and operations.

#[path = "../support/database.rs"]
mod database;
#[path = "../support/server.rs"]
mod server;
#[path = "../support/smtp.rs"]
mod smtp;

mod access;
mod addons;
mod admin_flow;
mod admin_more;
mod auth_hardening;
mod bad_input;
mod change_request_security;
mod change_requests;
mod configuration;
mod crash;
mod dependencies;
mod email;
mod favorites;
mod flag_lifecycle;
mod hardening;
mod import_command;
mod import_export;
mod invite_links;
mod last_admin;
mod lifecycle_stages;
mod limits;
mod metrics;
mod operations;
mod outage;
mod password_resets;
mod playground;
mod project_access;
mod project_overview;
mod publisher;
mod saml_settings;
mod scheduled_change_requests;
mod scim;
mod scim_conformance;
mod scim_groups;
mod search;
mod service_accounts;
mod sso_settings;
mod strategy_order;
mod tags;
mod token_seen;
mod ui;
mod ui_access;
mod ui_account_links;
mod ui_browser;
mod ui_changes;
mod ui_config;
mod ui_enhance;
mod ui_event_log;
mod ui_flag_list;
mod ui_forms;
mod ui_lifecycle;
mod ui_overview;
mod ui_permissions;
mod ui_scim;
mod ui_service_accounts;
mod ui_usage;
mod ui_vocabulary;
mod unleash_edge_api;
mod unleash_operations;
