//! The real binary over HTTP: the admin flow, bad input, crash safety and operations.

#[path = "../support/database.rs"]
mod database;
#[path = "../support/server.rs"]
mod server;

mod access;
mod admin_flow;
mod bad_input;
mod change_requests;
mod configuration;
mod crash;
mod dependencies;
mod hardening;
mod limits;
mod metrics;
mod operations;
mod playground;
mod publisher;
mod search;
mod tags;
