//! `vexil-edge edge` in front of a real Unleash 8.2 server, configured only by Unleash Edge's environment
//! variables, driven by the real Unleash SDKs. One Unleash serves every test of this binary (it takes about
//! half a minute to start); the tests run one at a time ([`unleash::SERIAL`]), since open-source Unleash
//! has one project.

mod answers;
mod metrics;
mod persistence;
mod tokens;
mod unleash;
