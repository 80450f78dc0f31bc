//! The bodies of `/api/admin/features-batch/*`, field for field Unleash 8.2's `exportQuerySchema`,
//! `exportResultSchema`, `importTogglesSchema` and `importTogglesValidateSchema`. Reading is lenient where
//! Unleash's own exports are (absent lists are empty, unknown fields are ignored); writing gives every list.

use crate::model::constraint::Constraint;
use crate::model::context_field::LegalValue;
use crate::model::variant::{FlagVariant, StrategyVariant};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// `POST /api/admin/features-batch/export` (`exportQuerySchema`): the flags named in `features` (all of
/// them when the list is empty), else those tagged `tag` (`type:value`), else those of `project`; their
/// configuration in `environment`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportQuery {
    pub environment: String,
    /// Accepted for compatibility: the export is always answered as JSON.
    pub download_file: Option<bool>,
    pub features: Option<Vec<String>>,
    pub tag: Option<String>,
    pub project: Option<String>,
}

/// A flag of an export (`featureSchema`'s fields that an export carries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportFeature {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Default `release`.
    #[serde(rename = "type", default)]
    pub feature_type: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
    #[serde(default)]
    pub stale: Option<bool>,
    #[serde(default)]
    pub impression_data: Option<bool>,
    #[serde(default)]
    pub archived: Option<bool>,
}

/// A strategy of an export (`featureStrategySchema`). Unleash's exports carry no `sortOrder`; Vexil's do.
/// An import orders a flag's strategies by `sortOrder`, then by creation as Unleash's ULID ids tell it
/// (those without `sortOrder` last), then as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportStrategy {
    pub name: String,
    #[serde(default)]
    pub id: Option<String>,
    /// Required on import.
    #[serde(default)]
    pub feature_name: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[schema(value_type = Object)]
    #[serde(default)]
    pub parameters: serde_json::Map<String, Value>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    #[serde(default)]
    pub variants: Vec<StrategyVariant>,
    #[serde(default)]
    pub disabled: Option<bool>,
    /// Ids of the export's `segments`.
    #[serde(default)]
    pub segments: Vec<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
}

/// A flag's switch and flag-level variants in the exported environment (`featureEnvironmentSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportFeatureEnvironment {
    pub enabled: bool,
    /// The flag (Unleash also repeats it as `name`).
    #[serde(default)]
    pub feature_name: Option<String>,
    #[serde(default)]
    pub environment: Option<String>,
    #[serde(default)]
    pub variants: Vec<FlagVariant>,
    /// The flag's name, as Unleash writes it.
    #[serde(default)]
    pub name: Option<String>,
}

/// A context field the exported strategies use (`contextFieldSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportContextField {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub stickiness: Option<bool>,
    #[serde(default)]
    pub sort_order: Option<i64>,
    #[serde(default)]
    pub legal_values: Vec<LegalValue>,
    /// The project that owns the field (a project's field, usable only by its flags); absent for the
    /// instance's. An import creates such a field, when missing, in the project it imports into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A tag of an exported flag (`featureTagSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportFeatureTag {
    pub feature_name: String,
    /// Default `simple`.
    #[serde(default)]
    pub tag_type: Option<String>,
    pub tag_value: String,
}

/// A segment the exported strategies use: by id and name only, as Unleash exports it; an import matches it
/// by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExportSegment {
    pub id: i64,
    pub name: String,
}

/// A tag type of the exported tags (`tagTypeSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExportTagType {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub icon: Option<String>,
    #[serde(default)]
    pub color: Option<String>,
}

/// A flag's parents (`featureDependenciesSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExportDependencies {
    pub feature: String,
    pub dependencies: Vec<ExportDependency>,
}

/// One parent (`dependentFeatureSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExportDependency {
    pub feature: String,
    /// Default true.
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub variants: Vec<String>,
}

/// `exportResultSchema`: what an export answers and what an import reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportResult {
    pub features: Vec<ExportFeature>,
    pub feature_strategies: Vec<ExportStrategy>,
    #[serde(default)]
    pub feature_environments: Vec<ExportFeatureEnvironment>,
    #[serde(default)]
    pub context_fields: Vec<ExportContextField>,
    #[serde(default)]
    pub feature_tags: Vec<ExportFeatureTag>,
    #[serde(default)]
    pub segments: Vec<ExportSegment>,
    #[serde(default)]
    pub tag_types: Vec<ExportTagType>,
    #[serde(default)]
    pub dependencies: Vec<ExportDependencies>,
}

/// `POST /api/admin/features-batch/validate` and `…/import` (`importTogglesSchema`): an export's `data`,
/// imported into `project` and `environment` (whatever project and environment it was exported from).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ImportToggles {
    pub project: String,
    pub environment: String,
    pub data: ExportResult,
}

/// One finding of a validation (`importTogglesValidateItemSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationItem {
    pub message: String,
    pub affected_items: Vec<String>,
}

/// `importTogglesValidateSchema`: errors stop an import; warnings do not. `permissions` lists what the
/// caller would lack: always empty here, since whoever may call the route may import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportValidation {
    pub errors: Vec<ValidationItem>,
    pub warnings: Vec<ValidationItem>,
    pub permissions: Vec<ValidationItem>,
}

/// What an import changed, by name (the command line prints it; the HTTP route answers no body).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub created_features: Vec<String>,
    pub updated_features: Vec<String>,
    pub created_context_fields: Vec<String>,
    pub created_tag_types: Vec<String>,
    /// Flags whose strategies, switch or variants in the environment changed.
    pub changed_configurations: Vec<String>,
    pub warnings: Vec<ValidationItem>,
}
