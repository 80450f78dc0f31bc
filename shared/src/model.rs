//! The Unleash client-API features document, `{version, features[], segments[]}`, as plain serde types.
//!
//! These are the wire types: what `GET /api/client/features` returns and what the engine compiles. Unknown
//! fields are ignored; `null` is read as "absent" for every optional field; a malformed document is rejected
//! with a [`DocumentError`] that names the JSON path of the bad field.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// A whole client-API features document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeaturesDocument {
    #[serde(default = "default_version", deserialize_with = "nullable")]
    pub version: u32,
    #[serde(default, deserialize_with = "nullable")]
    pub features: Vec<Feature>,
    #[serde(default, deserialize_with = "nullable")]
    pub segments: Vec<Segment>,
}

fn default_version() -> u32 {
    2
}

/// A feature flag as SDKs see it: its configuration in one environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Feature {
    pub name: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub feature_type: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default = "default_project", deserialize_with = "nullable_project")]
    pub project: String,
    pub enabled: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub stale: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub impression_data: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub strategies: Vec<FeatureStrategy>,
    #[serde(default, deserialize_with = "nullable")]
    pub variants: Vec<Variant>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub dependencies: Vec<FeatureDependency>,
    /// The flag's tags: not part of what SDKs receive (the client API filters by them and leaves them
    /// out), carried so that every server of the client API can answer `?tag=type:value`.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tags: Vec<FeatureTag>,
}

/// The project a flag belongs to when the document does not say.
pub const DEFAULT_PROJECT: &str = "default";

fn default_project() -> String {
    DEFAULT_PROJECT.to_owned()
}

fn nullable_project<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_else(default_project))
}

/// One activation strategy of a flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub disabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    #[serde(default, deserialize_with = "parameters")]
    pub parameters: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "nullable")]
    pub constraints: Vec<Constraint>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub segments: Vec<i64>,
    #[serde(default, deserialize_with = "nullable")]
    pub variants: Vec<Variant>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A condition on one context field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    pub context_name: String,
    pub operator: String,
    #[serde(default, deserialize_with = "nullable")]
    pub case_insensitive: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub inverted: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A variant of a flag or of a strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub weight: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stickiness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<VariantPayload>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub overrides: Vec<VariantOverride>,
}

/// The payload a variant carries: `type` is json, csv, string or number; `value` is always a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantPayload {
    #[serde(rename = "type")]
    pub payload_type: String,
    pub value: String,
}

/// Forces a variant for contexts whose field has one of the listed values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantOverride {
    pub context_name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub values: Vec<String>,
}

/// A tag on a flag: its type and value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FeatureTag {
    #[serde(rename = "type")]
    pub tag_type: String,
    pub value: String,
}

/// A flag's requirement on a parent flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureDependency {
    pub feature: String,
    #[serde(default = "default_true", deserialize_with = "nullable_true")]
    pub enabled: bool,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variants: Vec<String>,
}

fn default_true() -> bool {
    true
}

fn nullable_true<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(true))
}

/// A reusable, named list of constraints that strategies reference by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    pub id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub constraints: Vec<Constraint>,
}

/// Reads `null` as the type's default.
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Strategy parameters are strings on the wire, but documents written by hand often carry numbers or
/// booleans (`"rollout": 50`): those are kept as their JSON text; `null` values are dropped.
fn parameters<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Text(String),
        Number(serde_json::Number),
        Bool(bool),
        Null(()),
    }
    let raw = Option::<BTreeMap<String, Scalar>>::deserialize(d)?.unwrap_or_default();
    Ok(raw
        .into_iter()
        .filter_map(|(k, v)| match v {
            Scalar::Text(s) => Some((k, s)),
            Scalar::Number(n) => Some((k, n.to_string())),
            Scalar::Bool(b) => Some((k, b.to_string())),
            Scalar::Null(()) => None,
        })
        .collect())
}

/// One event of the Unleash delta API (`/api/client/delta`): how a features document changes between revisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum DeltaEvent {
    /// The whole state: replaces every flag and segment.
    #[serde(rename_all = "camelCase")]
    Hydration {
        #[serde(default)]
        event_id: u64,
        #[serde(default, deserialize_with = "nullable")]
        features: Vec<Feature>,
        #[serde(default, deserialize_with = "nullable")]
        segments: Vec<Segment>,
    },
    /// A flag was created or changed.
    #[serde(rename_all = "camelCase")]
    FeatureUpdated {
        #[serde(default)]
        event_id: u64,
        feature: Feature,
    },
    /// A flag left the document (archived, deleted or moved out of scope).
    #[serde(rename_all = "camelCase")]
    FeatureRemoved {
        #[serde(default)]
        event_id: u64,
        feature_name: String,
        #[serde(default)]
        project: Option<String>,
    },
    /// A segment was created or changed.
    #[serde(rename_all = "camelCase")]
    SegmentUpdated {
        #[serde(default)]
        event_id: u64,
        segment: Segment,
    },
    /// A segment was deleted.
    #[serde(rename_all = "camelCase")]
    SegmentRemoved {
        #[serde(default)]
        event_id: u64,
        segment_id: i64,
    },
}

/// A list of delta events, as the delta API sends them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeltaDocument {
    pub events: Vec<DeltaEvent>,
}

impl FeaturesDocument {
    /// Applies one delta event in place: flags and segments are replaced by name and id.
    pub fn apply(&mut self, event: DeltaEvent) {
        match event {
            DeltaEvent::Hydration {
                features, segments, ..
            } => {
                self.features = features;
                self.segments = segments;
            }
            DeltaEvent::FeatureUpdated { feature, .. } => {
                match self.features.iter_mut().find(|f| f.name == feature.name) {
                    Some(slot) => *slot = feature,
                    None => self.features.push(feature),
                }
            }
            DeltaEvent::FeatureRemoved { feature_name, .. } => {
                self.features.retain(|f| f.name != feature_name);
            }
            DeltaEvent::SegmentUpdated { segment, .. } => {
                match self.segments.iter_mut().find(|s| s.id == segment.id) {
                    Some(slot) => *slot = segment,
                    None => self.segments.push(segment),
                }
            }
            DeltaEvent::SegmentRemoved { segment_id, .. } => {
                self.segments.retain(|s| s.id != segment_id);
            }
        }
    }
}

/// A document that could not be read, with the JSON path of the offending field.
#[derive(Debug)]
pub struct DocumentError {
    /// Where the bad value is (`features[1].strategies[0]`); empty when the text is not JSON at all.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for DocumentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path.as_str() {
            "" | "." => f.write_str(&self.message),
            path => write!(f, "invalid value at `{path}`: {}", self.message),
        }
    }
}

impl std::error::Error for DocumentError {}

impl FeaturesDocument {
    /// Parses a document from JSON text.
    pub fn from_json(text: &str) -> Result<Self, DocumentError> {
        from_json_path(text)
    }
}

/// Deserializes any value, naming the JSON path of the first bad field on failure.
pub fn from_json_path<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, DocumentError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            DocumentError {
                path: String::new(),
                message: format!("not valid JSON: {inner}"),
            }
        } else {
            DocumentError {
                path,
                message: inner.to_string(),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_minimal_document_with_defaults() {
        let doc = FeaturesDocument::from_json(
            r#"{"features":[{"name":"a","enabled":true,"description":null,"strategies":[{"name":"default","parameters":{"rollout":50,"x":null}}],"whatever":1}]}"#,
        )
        .unwrap();
        assert_eq!(doc.version, 2);
        let f = &doc.features[0];
        assert_eq!(f.project, "default");
        assert!(!f.impression_data);
        assert_eq!(
            f.strategies[0]
                .parameters
                .get("rollout")
                .map(String::as_str),
            Some("50")
        );
        assert!(!f.strategies[0].parameters.contains_key("x"));
    }

    #[test]
    fn names_the_path_of_a_bad_field() {
        let err = FeaturesDocument::from_json(
            r#"{"features":[{"name":"a","enabled":true},{"name":"b","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"x","operator":"IN","values":[1]}]}]}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.path,
            "features[1].strategies[0].constraints[0].values[0]"
        );
        assert!(
            err.to_string().contains("features[1].strategies[0]"),
            "{err}"
        );
    }

    #[test]
    fn rejects_a_missing_required_field() {
        let err = FeaturesDocument::from_json(r#"{"features":[{"enabled":true}]}"#).unwrap_err();
        assert_eq!(err.path, "features[0]");
        assert!(err.message.contains("name"), "{}", err.message);
    }
}
