//! Vexil's shared crate: the Unleash client-API domain model, the evaluation context and the evaluation
//! engine. The control plane and the edge both evaluate with this code, so there is one implementation.
//! Also [`token`]: how both read and hash API token secrets; [`time`]: the wall clock in Unix milliseconds.

pub mod context;
pub mod engine;
pub mod error;
pub mod model;
pub mod time;
pub mod token;

pub use context::Context;
pub use engine::{CompileError, CompileOptions, EvaluatedToggle, Projects, Snapshot, VariantView};
pub use error::{ApiError, ErrorBody, ErrorKind};
pub use model::{DeltaDocument, DeltaEvent, DocumentError, FeaturesDocument};
