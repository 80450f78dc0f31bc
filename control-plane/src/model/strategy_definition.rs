//! The parameters a strategy definition declares.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ParameterType {
    String,
    Percentage,
    List,
    Number,
    Boolean,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StrategyParameter {
    pub name: String,
    #[serde(rename = "type")]
    pub parameter_type: ParameterType,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
}

/// A flag strategy's parameter values against what its definition declares: a percentage is a whole number
/// from 0 to 100 and a number a number (when given; an empty value is left to the strategy's defaults);
/// messages name `parameters.<name>`.
pub fn check_values(
    declared: &[StrategyParameter],
    values: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    for parameter in declared {
        let Some(value) = values
            .get(&parameter.name)
            .map(|value| value.trim())
            .filter(|value| !value.is_empty())
        else {
            continue;
        };
        let fits = match parameter.parameter_type {
            ParameterType::Percentage => value.parse::<u8>().is_ok_and(|percent| percent <= 100),
            ParameterType::Number => value.parse::<f64>().is_ok_and(f64::is_finite),
            ParameterType::String | ParameterType::List | ParameterType::Boolean => true,
        };
        if !fits {
            let expected = match parameter.parameter_type {
                ParameterType::Percentage => "a whole number from 0 to 100",
                _ => "a number",
            };
            return Err(ApiError::invalid_field(
                format!("parameters.{}", parameter.name),
                format!("parameters.{}: {value:?} is not {expected}", parameter.name),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_and_numbers_are_checked_by_their_declared_type() {
        let declared = [
            StrategyParameter {
                name: "rollout".to_owned(),
                parameter_type: ParameterType::Percentage,
                description: String::new(),
                required: false,
            },
            StrategyParameter {
                name: "limit".to_owned(),
                parameter_type: ParameterType::Number,
                description: String::new(),
                required: false,
            },
        ];
        let values = |rollout: &str, limit: &str| {
            BTreeMap::from([
                ("rollout".to_owned(), rollout.to_owned()),
                ("limit".to_owned(), limit.to_owned()),
            ])
        };
        assert!(check_values(&declared, &values("50", "1.5")).is_ok());
        assert!(check_values(&declared, &values("", "")).is_ok());
        let refused = check_values(&declared, &values("150", "1")).unwrap_err();
        assert!(refused.message.starts_with("parameters.rollout: "));
        let refused = check_values(&declared, &values("5", "many")).unwrap_err();
        assert!(refused.message.starts_with("parameters.limit: "));
    }
}
