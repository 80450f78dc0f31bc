//! The gRPC contract between the control plane and the edges (`vexil.v1`, in `proto/vexil.proto`), and the
//! conversions between its typed messages and the shared domain model.

mod convert;

/// Generated tonic + prost code of `vexil.v1`.
pub mod v1 {
    tonic::include_proto!("vexil.v1");
}

pub use convert::{document_of, environment_state};

/// The largest encoded `UsageBatch`, in bytes: the control plane's `Usage` server decodes no larger message
/// and an edge encodes none, cutting a larger batch into several (each with its own batch id). Tonic's own
/// default, so an edge also reports to a control plane that does not set it, and a batch of this size is
/// about fifteen thousand rows, one transaction of a few seconds at most.
pub const MAX_USAGE_BATCH_BYTES: usize = 4 * 1024 * 1024;
