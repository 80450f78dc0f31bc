//! `vexil-edge edge` in front of a real Unleash 8.2 server, configured only by Unleash Edge's environment
//! variables, driven by the real Unleash SDKs. One Unleash serves every test of this binary (it takes about
//! half a minute to start); the tests run one at a time ([`unleash::SERIAL`]), since open-source Unleash
//! has one project. `vexil_upstream` puts the same edge in front of a Vexil control plane instead.

mod answers;
mod metrics;
mod persistence;
mod tokens;
mod unleash;
mod vexil_upstream;

/// The real control plane, as the end-to-end tests start it.
#[path = "../e2e/processes.rs"]
#[allow(dead_code)]
mod processes;
