//! End to end: the real control plane and real edges, connected over gRPC.

#[allow(dead_code)] // shared with the control plane's tests
#[path = "../../../control-plane/tests/support/database.rs"]
mod database;
#[allow(dead_code)] // shared with the offline tests
mod processes;
#[allow(dead_code)] // shared with the control plane's tests
#[path = "../../../control-plane/tests/support/smtp.rs"]
mod smtp;

mod alertmanager;
mod changes;
mod channel;
mod metrics;
mod propagation;
mod release_plans;
mod replicas;
mod resume;
mod sdk;
mod token_seen;
mod ui;
mod ui_access;
mod ui_account_links;
mod ui_changes;
mod ui_config;
mod ui_enhance;
mod ui_event_log;
mod ui_firefox;
mod ui_flag_list;
mod ui_narrow;
mod ui_oidc;
mod ui_overview;
mod ui_project_access;
mod ui_readme;
mod ui_release_plans;
mod ui_saml;
mod ui_schedule;
mod ui_scim;
mod ui_service_accounts;
mod ui_signals;
mod ui_usage;
mod ui_vocabulary;
mod unleash_edge_reports;
mod usage_proxy;
