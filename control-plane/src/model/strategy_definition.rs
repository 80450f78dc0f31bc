//! The parameters a strategy definition declares.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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
