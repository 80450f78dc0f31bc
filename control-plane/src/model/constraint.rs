//! A constraint as the admin API takes and stores it, and the check of its context name and operator (one of
//! the engine's [`OPERATORS`]).

use super::name;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::engine::OPERATORS;
use vexil_shared::ApiError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    pub context_name: String,
    pub operator: String,
    #[serde(default)]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
    #[serde(default)]
    pub inverted: bool,
}

/// Each constraint's context name follows the names rule and its operator is known; messages name
/// `constraints[i]`.
pub fn validate_constraints(constraints: &[Constraint]) -> Result<(), ApiError> {
    for (index, constraint) in constraints.iter().enumerate() {
        name::validate(
            &format!("constraints[{index}].contextName"),
            &constraint.context_name,
        )?;
        if !OPERATORS.contains(&constraint.operator.as_str()) {
            return Err(ApiError::validation(format!(
                "constraints[{index}].operator: unknown operator {:?}; expected one of {}",
                constraint.operator,
                OPERATORS.join(", ")
            )));
        }
    }
    Ok(())
}
