//! The configuration's plain values that the store keeps in structured columns: constraints, variants, a
//! strategy and a dependency as they are written, strategy-definition parameters, context-field legal values and change-request
//! changes and states, release-plan milestones' strategies, with the checks that need nothing but the value itself (names, operators, weights).
//! No I/O: [`crate::store`] decodes rows into these types and [`crate::domain`] applies the rules that need
//! the store.

pub mod action_set;
pub mod change_request;
pub mod constraint;
pub mod context_field;
pub mod dependency;
pub mod name;
pub mod release_plan;
pub mod segment;
pub mod strategy;
pub mod strategy_definition;
pub mod variant;
