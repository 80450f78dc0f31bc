//! A dependency on a parent flag as it is written: the body of the dependency route and the payloads of the
//! `addDependency` and `deleteDependency` changes of a change request.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /api/admin/projects/:p/features/:child/dependencies` (createDependentFeatureSchema), and the
/// payload of `addDependency`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CreateDependency {
    /// The parent flag.
    pub feature: String,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Default none (any variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<String>>,
}

/// The payload of `deleteDependency`: the parent whose dependency goes; none (Unleash's `{}`): every
/// dependency of the flag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RemoveDependency {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
}
