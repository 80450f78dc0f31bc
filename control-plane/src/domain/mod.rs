//! The domain: validation and the rules of each resource, as plain functions over the store. No HTTP here:
//! every function takes a store connection or a [`WriteTx`](crate::store::WriteTx) and returns the body types
//! of the API or an [`ApiError`](vexil_shared::ApiError).

pub mod access;
pub mod addons;
pub mod application_admin;
pub mod application_overview;
pub mod change_request_gate;
pub mod change_requests;
pub mod client_document;
pub mod context_fields;
pub mod dependencies;
pub mod environments;
pub mod events;
pub mod feature_batches;
pub mod feature_clone;
pub mod feature_lookup;
pub mod feature_switch;
pub mod feature_types;
pub mod features;
pub mod first_start;
pub mod groups;
pub mod import_export;
pub mod instance;
pub mod limits;
pub mod metrics;
pub mod own_account;
pub mod passwords;
pub mod playground;
pub mod project_environments;
pub mod project_tokens;
pub mod projects;
pub mod roles;
pub mod search;
pub mod segments;
pub mod sign_in_throttle;
pub mod strategies;
pub mod strategy_definitions;
pub mod strategy_usage;
pub mod tags;
pub mod tokens;
pub mod ui_config;
pub mod unleash_edges;
pub mod user_admin;
pub mod users;
pub mod variants;
pub mod webhook_targets;
