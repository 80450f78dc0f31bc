//! Vexil control plane: admin API over a store on SQLite or Postgres, the snapshot publisher the edges
//! subscribe to ([`publisher`]), and the SDK-facing API of `vexil-serving` for single-binary installs.
//!
//! Layers: [`http`] (router, extractors, thin handlers) → [`domain`] (rules and body types, no HTTP) →
//! [`store`] (SQL, transactions, revision and audit events, rows decoded) → [`model`] (the stored values).
//! [`server`] wires them; [`config`] reads flags; [`time`] is the timestamp and the clock; [`edge_auth`]
//! admits edges to the gRPC channel by their edge tokens; [`import_command`] is `vexil-control-plane import`;
//! [`ui`] is the admin web UI (server-rendered pages over the same domain functions); [`mail`] sends reset and
//! welcome links by e-mail when an SMTP server is configured; [`scheduler`] applies scheduled change requests
//! at their time.

pub mod actions;
pub mod config;
pub mod domain;
pub mod edge_auth;
pub mod http;
pub mod import_command;
pub mod ingest;
pub mod mail;
pub mod model;
pub mod oidc;
pub mod publisher;
pub mod saml;
pub mod saml_logout;
pub mod scheduler;
pub mod server;
pub mod stale_marker;
pub mod store;
pub mod time;
pub mod ui;
pub mod webhooks;
