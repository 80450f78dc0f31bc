//! A constraint as the admin API takes and stores it, and the check of its context name and operator.

use super::name;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The constraint operators: the spec's 15 and Vexil's four extras.
pub const OPERATORS: [&str; 19] = [
    "IN",
    "NOT_IN",
    "STR_STARTS_WITH",
    "STR_ENDS_WITH",
    "STR_CONTAINS",
    "NUM_EQ",
    "NUM_GT",
    "NUM_GTE",
    "NUM_LT",
    "NUM_LTE",
    "DATE_AFTER",
    "DATE_BEFORE",
    "SEMVER_EQ",
    "SEMVER_GT",
    "SEMVER_LT",
    "SEMVER_GTE",
    "SEMVER_LTE",
    "REGEX",
    "IN_CIDR",
];

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
