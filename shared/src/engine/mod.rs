//! The evaluation engine: a features document compiled into an immutable [`Snapshot`] that evaluates
//! contexts without locks, without mutation, and without allocating for flags that do not match.
//!
//! Its modules, leaves first; each imports the others by their own path, and none imports this module:
//! `operator` (the constraint operators and their names), `hash` (bucketing, text hashes), `slots` (the
//! slots of an evaluation's tables), `field` (context fields, stickiness), `eval` (one evaluation's tables
//! and field readings), `constraint`, `variant`, `strategy`, `snapshot` (the compiled data), `evaluate` (the
//! walk over flags, dependencies), `toggles` (the frontend API's `toggles` JSON), `ofrep` (OFREP's answers), `compile`
//! (`Snapshot::compile*`, `Snapshot::update`), and `explain` (for the playground).

mod compile;
mod constraint;
mod eval;
mod evaluate;
pub mod explain;
mod field;
mod hash;
mod ofrep;
mod operator;
mod slots;
mod snapshot;
mod strategy;
mod toggles;
mod variant;

#[cfg(test)]
mod differences;
#[cfg(test)]
mod tests;

pub use compile::CompileOptions;
pub use constraint::{check as check_constraint, CompileError};
pub use evaluate::{EvaluatedToggle, Projects};
pub use ofrep::OfrepFlag;
pub use operator::{Operator, OPERATORS};
pub use snapshot::Snapshot;
pub use variant::VariantView;
