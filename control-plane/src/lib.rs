//! Vexil control plane: admin API over a store on SQLite or Postgres, the snapshot publisher the edges
//! subscribe to ([`publisher`]), and the SDK-facing API of `vexil-serving` for single-binary installs.
//!
//! Layers: [`http`] (router, extractors, thin handlers) → [`domain`] (rules and body types, no HTTP) →
//! [`store`] (SQL, transactions, revision and audit events). [`server`] wires them; [`config`] reads flags.

pub mod config;
pub mod domain;
pub mod http;
pub mod ingest;
pub mod publisher;
pub mod server;
pub mod store;
