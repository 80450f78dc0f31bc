//! The gRPC contract between the control plane and the edges (`vexil.v1`); filled in with the snapshot stream.
