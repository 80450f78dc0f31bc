//! A constraint as the admin API takes and stores it, and the check of its context name and operator (one of
//! the engine's [`OPERATORS`]).

use super::name;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::engine::{check_constraint, OPERATORS};
use vexil_shared::ApiError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub context_name: String,
    #[schema(
        pattern = r"^(IN|NOT_IN|STR_STARTS_WITH|STR_ENDS_WITH|STR_CONTAINS|NUM_EQ|NUM_GT|NUM_GTE|NUM_LT|NUM_LTE|DATE_AFTER|DATE_BEFORE|SEMVER_EQ|SEMVER_GT|SEMVER_LT|SEMVER_GTE|SEMVER_LTE|REGEX|IN_CIDR)$"
    )]
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

/// Each constraint's context name follows the names rule, its operator is known and its value reads as the
/// engine reads it (a number, date, semver, regex or networks where the operator needs one); messages name
/// `constraints[i].<field>`.
pub fn validate_constraints(constraints: &[Constraint]) -> Result<(), ApiError> {
    for (index, constraint) in constraints.iter().enumerate() {
        validate_constraint(&format!("constraints[{index}]."), constraint)?;
    }
    Ok(())
}

/// One constraint's checks as [`validate_constraints`]; messages start with `path` then the field
/// (`contextName`, `operator`, `value` or `values`).
pub fn validate_constraint(path: &str, constraint: &Constraint) -> Result<(), ApiError> {
    name::validate(&format!("{path}contextName"), &constraint.context_name)?;
    if !OPERATORS.contains(&constraint.operator.as_str()) {
        return Err(ApiError::invalid_field(
            format!("{path}operator"),
            format!(
                "{path}operator: unknown operator {:?}; expected one of {}",
                constraint.operator,
                OPERATORS.join(", ")
            ),
        ));
    }
    let engine_form = vexil_shared::model::Constraint {
        context_name: constraint.context_name.clone(),
        operator: constraint.operator.clone(),
        case_insensitive: constraint.case_insensitive,
        inverted: constraint.inverted,
        values: constraint.values.clone(),
        value: constraint.value.clone(),
    };
    check_constraint(&engine_form).map_err(|error| {
        let field = if constraint.operator == "IN_CIDR" {
            "values"
        } else {
            "value"
        };
        ApiError::invalid_field(format!("{path}{field}"), format!("{path}{field}: {error}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constraint(operator: &str, value: &str) -> Constraint {
        Constraint {
            context_name: "age".to_owned(),
            operator: operator.to_owned(),
            values: Vec::new(),
            value: Some(value.to_owned()),
            case_insensitive: false,
            inverted: false,
        }
    }

    #[test]
    fn messages_name_the_field_of_the_constraint() {
        let good = constraint("NUM_EQ", "18");
        let bad = constraint("NUM_EQ", "abc");
        let refused = validate_constraints(&[good, bad]).unwrap_err();
        assert!(
            refused.message.starts_with("constraints[1].value: "),
            "{}",
            refused.message
        );
        let semver = validate_constraint("", &constraint("SEMVER_EQ", "1.x")).unwrap_err();
        assert!(semver.message.starts_with("value: "), "{}", semver.message);
        let unknown = validate_constraint("", &constraint("LIKE", "x")).unwrap_err();
        assert!(unknown.message.starts_with("operator: "));
    }
}
