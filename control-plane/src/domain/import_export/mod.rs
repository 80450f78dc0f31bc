//! Export and import in Unleash's format (`/api/admin/features-batch/*`, `vexil-control-plane import`):
//! the bodies ([`bodies`]), the export ([`export`]), the checks ([`validate`]) and the all-or-nothing write
//! ([`write`]), which the HTTP routes and the command line share.

pub mod bodies;
pub mod export;
pub mod validate;
pub mod write;
