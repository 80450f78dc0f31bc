//! A strategy as it is written: the body of `POST …/strategies` and `PUT …/strategies/:strategyId`, which a
//! change request also keeps, and the entries of `set-sort-order`.

use super::constraint::Constraint;
use super::variant::StrategyVariant;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// `POST …/strategies` and `PUT …/strategies/:strategyId` (a full replace). Absent fields are left out when
/// it is shown again (in a change request).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyInput {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 100)]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// Default: after the last strategy (add) or unchanged (replace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<Constraint>>,
    /// Values may be strings, numbers or booleans; they are stored as strings.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<serde_json::Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<StrategyVariant>>,
    /// Ids of existing segments; a project's segment only in that project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segments: Option<Vec<i64>>,
}

/// One entry of `POST …/strategies/set-sort-order`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategySortOrder {
    pub id: String,
    pub sort_order: i64,
}
