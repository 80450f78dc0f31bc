//! The advanced playground (`POST /api/admin/playground/advanced`, Unleash's AdvancedPlaygroundRequestSchema
//! and ResponseSchema): several environments and several values per context field at once. Every text field
//! of the context (and of its `properties`) may hold comma-separated values; the contexts evaluated are the
//! cartesian product of those values, each in every environment asked, with the playground's engine and
//! explanations (`domain::playground::evaluate_contexts`). At most [`MAX_EVALUATIONS`] contexts ×
//! environments: a larger product is refused with 400 before anything is evaluated. A top-level field that
//! is not text is left out and named in `warnings.invalidContextProperties`, as Unleash does.

use super::playground::{self, CompiledDocuments, PlaygroundRequest, PlaygroundStrategies};
use crate::model::variant::FlagVariant;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The most contexts × environments one request may evaluate.
pub const MAX_EVALUATIONS: usize = 1_000;

/// Unleash's advancedPlaygroundRequestSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AdvancedPlaygroundRequest {
    /// The environments to evaluate in (at least one, each existing).
    #[schema(min_items = 1, inline, value_type = Vec<String>)]
    pub environments: Vec<String>,
    /// `"*"` (the default) or a list of project ids.
    #[schema(value_type = Object)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projects: Option<Value>,
    /// An Unleash context (`appName` required); a text field's comma-separated values are evaluated one by
    /// one, every combination of them (at most 1,000 contexts × environments).
    #[schema(value_type = Object)]
    pub context: Value,
}

/// Unleash's advancedPlaygroundEnvironmentFeatureSchema: one flag for one context in one environment.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedEnvironmentFeature {
    pub name: String,
    pub environment: String,
    /// The context evaluated (one value per field).
    #[schema(value_type = Object)]
    pub context: Value,
    pub project_id: String,
    pub strategies: PlaygroundStrategies,
    pub is_enabled_in_current_environment: bool,
    pub is_enabled: bool,
    #[schema(value_type = Object)]
    pub variant: Value,
    pub variants: Vec<FlagVariant>,
}

/// Unleash's advancedPlaygroundFeatureSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedPlaygroundFeature {
    pub name: String,
    pub project_id: String,
    /// By environment: one answer per context, in the order of the combinations.
    pub environments: BTreeMap<String, Vec<AdvancedEnvironmentFeature>>,
}

/// Unleash's advancedPlaygroundResponseSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AdvancedPlaygroundResponse {
    pub input: AdvancedPlaygroundRequest,
    pub features: Vec<AdvancedPlaygroundFeature>,
    /// Only when something was left out of the evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<AdvancedPlaygroundWarnings>,
}

/// What the evaluation left out of the request, as Unleash reports it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedPlaygroundWarnings {
    /// Top-level context fields that were not text (a number, a boolean, null, an array or an object other
    /// than `properties`): evaluated without them, as Unleash does, rather than refused.
    pub invalid_context_properties: Vec<String>,
}

/// The context without its top-level fields that are not text (`appName` and `properties` aside), and the
/// names of those left out.
fn without_invalid_fields(context: &Map<String, Value>) -> (Map<String, Value>, Vec<String>) {
    let mut kept = Map::new();
    let mut left_out = Vec::new();
    for (key, value) in context {
        if matches!(key.as_str(), "appName" | "properties") || value.is_string() {
            kept.insert(key.clone(), value.clone());
        } else {
            left_out.push(key.clone());
        }
    }
    (kept, left_out)
}

/// A field's values: a text's comma-separated, trimmed, non-empty pieces (the text itself when it has
/// none); anything else as it is.
fn values_of(value: &Value) -> Vec<Value> {
    match value {
        Value::String(text) => {
            let pieces: Vec<Value> = text
                .split(',')
                .map(str::trim)
                .filter(|piece| !piece.is_empty())
                .map(|piece| Value::String(piece.to_owned()))
                .collect();
            if pieces.is_empty() {
                vec![value.clone()]
            } else {
                pieces
            }
        }
        other => vec![other.clone()],
    }
}

/// Each (path, values) of the context: top-level fields, and `properties`' fields as `["properties", key]`.
fn fields(context: &Map<String, Value>) -> Vec<(Vec<String>, Vec<Value>)> {
    let mut fields = Vec::new();
    for (key, value) in context {
        match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                for (name, value) in properties {
                    fields.push((vec![key.clone(), name.clone()], values_of(value)));
                }
            }
            _ => fields.push((vec![key.clone()], values_of(value))),
        }
    }
    fields
}

/// Every combination of the fields' values, as contexts; refused when `environments` × their number is
/// over [`MAX_EVALUATIONS`].
fn combinations(context: &Map<String, Value>, environments: usize) -> Result<Vec<Value>, ApiError> {
    let fields = fields(context);
    let count = fields.iter().try_fold(1usize, |product, (_, values)| {
        product.checked_mul(values.len())
    });
    let total = count.and_then(|count| count.checked_mul(environments));
    match total {
        Some(total) if total <= MAX_EVALUATIONS => {}
        _ => {
            return Err(ApiError::invalid_field(
                "context",
                format!(
                    "context: the combinations of the context's comma-separated values in {environments} \
                     environment(s) come to {} evaluations; at most {MAX_EVALUATIONS} are allowed",
                    total.map_or_else(|| "too many".to_owned(), |total| total.to_string())
                ),
            ));
        }
    }
    let mut contexts = vec![Map::new()];
    for (path, values) in &fields {
        let mut next = Vec::with_capacity(contexts.len() * values.len());
        for context in &contexts {
            for value in values {
                let mut context = context.clone();
                match path.as_slice() {
                    [key] => {
                        context.insert(key.clone(), value.clone());
                    }
                    [key, name] => {
                        let properties = context
                            .entry(key.clone())
                            .or_insert_with(|| Value::Object(Map::new()));
                        if let Value::Object(properties) = properties {
                            properties.insert(name.clone(), value.clone());
                        }
                    }
                    _ => {}
                }
                next.push(context);
            }
        }
        contexts = next;
    }
    // An empty `properties` object is kept as sent.
    if let Some(Value::Object(properties)) = context.get("properties") {
        if properties.is_empty() {
            for combination in &mut contexts {
                combination.insert("properties".to_owned(), Value::Object(Map::new()));
            }
        }
    }
    Ok(contexts.into_iter().map(Value::Object).collect())
}

fn environment_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '~' | '_' | '.' | '-'))
}

/// Evaluates every flag in scope for every combination of the context's values in every environment.
pub async fn evaluate(
    conn: &mut AnyConnection,
    documents: &CompiledDocuments,
    request: AdvancedPlaygroundRequest,
) -> Result<AdvancedPlaygroundResponse, ApiError> {
    if request.environments.is_empty() {
        return Err(ApiError::invalid_field(
            "environments",
            "environments must name at least one environment",
        ));
    }
    let mut environments: Vec<String> = Vec::new();
    for name in &request.environments {
        if !environment_name_ok(name) {
            return Err(ApiError::invalid_field(
                "environments",
                format!(
                    "environments: {name:?} is not an environment name (letters, digits, ~ _ . -)"
                ),
            ));
        }
        if !environments.contains(name) {
            environments.push(name.clone());
        }
    }
    let context = request
        .context
        .as_object()
        .ok_or_else(|| ApiError::invalid_field("context", "context must be an object"))?;
    let (context, invalid_context_properties) = without_invalid_fields(context);
    let contexts = combinations(&context, environments.len())?;
    for environment in &environments {
        if crate::store::environments::get(conn, environment)
            .await?
            .is_none()
        {
            return Err(ApiError::invalid_field(
                "environments",
                format!("environments: environment {environment} does not exist"),
            ));
        }
    }
    let mut features: BTreeMap<String, AdvancedPlaygroundFeature> = BTreeMap::new();
    for environment in &environments {
        let one = PlaygroundRequest {
            environment: environment.clone(),
            projects: request.projects.clone(),
            context: Value::Object(Map::new()),
        };
        let answers = playground::evaluate_contexts(conn, documents, &one, &contexts).await?;
        for (context, answer) in contexts.iter().zip(answers) {
            for feature in answer {
                let entry = features.entry(feature.name.clone()).or_insert_with(|| {
                    AdvancedPlaygroundFeature {
                        name: feature.name.clone(),
                        project_id: feature.project_id.clone(),
                        environments: BTreeMap::new(),
                    }
                });
                entry
                    .environments
                    .entry(environment.clone())
                    .or_default()
                    .push(AdvancedEnvironmentFeature {
                        name: feature.name,
                        environment: environment.clone(),
                        context: context.clone(),
                        project_id: feature.project_id,
                        strategies: feature.strategies,
                        is_enabled_in_current_environment: feature
                            .is_enabled_in_current_environment,
                        is_enabled: feature.is_enabled,
                        variant: feature.variant,
                        variants: feature.variants,
                    });
            }
        }
    }
    Ok(AdvancedPlaygroundResponse {
        input: request,
        features: features.into_values().collect(),
        warnings: (!invalid_context_properties.is_empty()).then_some(AdvancedPlaygroundWarnings {
            invalid_context_properties,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::{combinations, without_invalid_fields, MAX_EVALUATIONS};
    use serde_json::json;

    #[test]
    fn fields_that_are_not_text_are_left_out_and_named() {
        let context = json!({"appName": "a", "userId": "1", "age": 5, "beta": true, "gone": null,
            "list": ["x"], "nested": {"a": "b"}, "properties": {"tier": "gold"}});
        let (kept, mut left_out) = without_invalid_fields(context.as_object().unwrap());
        left_out.sort();
        assert_eq!(left_out, ["age", "beta", "gone", "list", "nested"]);
        assert_eq!(
            serde_json::Value::Object(kept),
            json!({"appName": "a", "userId": "1", "properties": {"tier": "gold"}})
        );
    }

    #[test]
    fn the_product_of_comma_separated_values() {
        let context =
            json!({"appName": "a", "userId": "1, 2,3", "properties": {"tier": "gold,silver"}});
        let contexts = combinations(context.as_object().unwrap(), 2).unwrap();
        assert_eq!(contexts.len(), 6);
        assert_eq!(
            contexts[0],
            json!({"appName": "a", "userId": "1", "properties": {"tier": "gold"}})
        );
        assert_eq!(
            contexts[5],
            json!({"appName": "a", "userId": "3", "properties": {"tier": "silver"}})
        );
    }

    #[test]
    fn a_product_over_the_bound_is_refused() {
        let many: Vec<String> = (0..MAX_EVALUATIONS).map(|n| n.to_string()).collect();
        let context = json!({"appName": "a", "userId": many.join(",")});
        assert!(combinations(context.as_object().unwrap(), 1).is_ok());
        let error = combinations(context.as_object().unwrap(), 2).unwrap_err();
        assert!(
            error.message.contains("2000 evaluations"),
            "{}",
            error.message
        );
    }
}
