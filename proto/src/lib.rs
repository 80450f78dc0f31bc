//! The gRPC contract between the control plane and the edges (`vexil.v1`, in `proto/vexil.proto`), and the
//! conversions between its typed messages and the shared domain model.

mod convert;

/// Generated tonic + prost code of `vexil.v1`.
pub mod v1 {
    tonic::include_proto!("vexil.v1");
}

pub use convert::{document_of, environment_state};
