//! The domain: validation and the rules of each resource, as plain functions over the store. No HTTP here:
//! every function takes a store connection or a [`WriteTx`](crate::store::WriteTx) and returns the body types
//! of the API or an [`ApiError`](vexil_shared::ApiError).

pub mod access;
pub mod change_request_gate;
pub mod change_requests;
pub mod client_document;
pub mod context_fields;
pub mod dependencies;
pub mod environments;
pub mod events;
pub mod feature_lookup;
pub mod feature_switch;
pub mod features;
pub mod first_start;
pub mod groups;
pub mod limits;
pub mod metrics;
pub mod passwords;
pub mod playground;
pub mod projects;
pub mod roles;
pub mod search;
pub mod segments;
pub mod sign_in_throttle;
pub mod strategies;
pub mod strategy_definitions;
pub mod tags;
pub mod tokens;
pub mod ui_config;
pub mod users;
pub mod variants;
