//! Variants: the shape strategy variants and flag-level variants share, and their weights (API.md §7): `fix`
//! variants keep their weight, `variable` ones share what is left of 1000. Flag-level variants add overrides.

use super::name;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::ApiError;

const PAYLOAD_TYPES: [&str; 4] = ["json", "csv", "string", "number"];
const TOTAL_WEIGHT: u32 = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VariantPayload {
    #[serde(rename = "type")]
    #[schema(pattern = r"^(json|csv|string|number)$")]
    pub payload_type: String,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum WeightType {
    Variable,
    Fix,
}

impl WeightType {
    pub fn as_str(self) -> &'static str {
        match self {
            WeightType::Variable => "variable",
            WeightType::Fix => "fix",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyVariant {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    /// 0 to 1000; `variable` weights are recomputed on write.
    #[serde(default)]
    #[schema(maximum = 1000)]
    pub weight: u32,
    /// Default `variable`.
    #[serde(default = "variable")]
    pub weight_type: WeightType,
    /// Default `default`.
    #[serde(default = "default_stickiness")]
    pub stickiness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<VariantPayload>,
}

fn variable() -> WeightType {
    WeightType::Variable
}

/// The stickiness a variant, a strategy or a project has when none is given.
pub fn default_stickiness() -> String {
    "default".to_owned()
}

/// Context values that force a variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantOverride {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub context_name: String,
    pub values: Vec<String>,
}

/// A flag-level variant: the fields of a strategy variant plus overrides. (Spelled out rather than
/// `#[serde(flatten)]`, which would lose the path of a bad field in error messages.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagVariant {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub name: String,
    /// 0 to 1000; `variable` weights are recomputed on write.
    #[serde(default)]
    #[schema(maximum = 1000)]
    pub weight: u32,
    /// Default `variable`.
    #[serde(default = "variable")]
    pub weight_type: WeightType,
    /// Default `default`.
    #[serde(default = "default_stickiness")]
    pub stickiness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<VariantPayload>,
    #[serde(default)]
    pub overrides: Vec<VariantOverride>,
}

impl FlagVariant {
    /// Splits into the strategy-variant part (normalised the same way) and the overrides.
    fn split(self) -> (StrategyVariant, Vec<VariantOverride>) {
        let variant = StrategyVariant {
            name: self.name,
            weight: self.weight,
            weight_type: self.weight_type,
            stickiness: self.stickiness,
            payload: self.payload,
        };
        (variant, self.overrides)
    }

    fn join(variant: StrategyVariant, overrides: Vec<VariantOverride>) -> FlagVariant {
        FlagVariant {
            name: variant.name,
            weight: variant.weight,
            weight_type: variant.weight_type,
            stickiness: variant.stickiness,
            payload: variant.payload,
            overrides,
        }
    }
}

/// A `json` payload parses as JSON and a `number` payload as a number.
fn check_payload_value(index: usize, payload: &VariantPayload) -> Result<(), ApiError> {
    let problem = match payload.payload_type.as_str() {
        "json" => serde_json::from_str::<serde_json::Value>(&payload.value)
            .err()
            .map(|error| format!("not valid JSON ({error})")),
        "number" => (!payload
            .value
            .trim()
            .parse::<f64>()
            .is_ok_and(f64::is_finite))
        .then(|| "not a number".to_owned()),
        _ => None,
    };
    match problem {
        Some(problem) => Err(ApiError::invalid_field(
            format!("variants[{index}].payload.value"),
            format!("variants[{index}].payload.value: {problem}"),
        )),
        None => Ok(()),
    }
}

/// Checks payloads and weights, then spreads `1000 − Σfix` over the `variable` variants (the remainder one by
/// one to the first ones).
pub fn normalize_variants(
    mut variants: Vec<StrategyVariant>,
) -> Result<Vec<StrategyVariant>, ApiError> {
    if variants.is_empty() {
        return Ok(variants);
    }
    let mut fixed_total: u32 = 0;
    for (index, variant) in variants.iter().enumerate() {
        name::validate(&format!("variants[{index}].name"), &variant.name)?;
        if variants[..index]
            .iter()
            .any(|other| other.name == variant.name)
        {
            return Err(ApiError::invalid_field(
                format!("variants[{index}].name"),
                format!("variants[{index}].name: {} is used twice", variant.name),
            ));
        }
        if let Some(payload) = &variant.payload {
            if !PAYLOAD_TYPES.contains(&payload.payload_type.as_str()) {
                return Err(ApiError::invalid_field(
                    format!("variants[{index}].payload.type"),
                    format!(
                        "variants[{index}].payload.type must be one of {}",
                        PAYLOAD_TYPES.join(", ")
                    ),
                ));
            }
            check_payload_value(index, payload)?;
        }
        if variant.weight > TOTAL_WEIGHT {
            return Err(ApiError::invalid_field(
                format!("variants[{index}].weight"),
                format!("variants[{index}].weight must be 0 to {TOTAL_WEIGHT}"),
            ));
        }
        if variant.weight_type == WeightType::Fix {
            fixed_total = fixed_total.saturating_add(variant.weight);
        }
    }
    if fixed_total > TOTAL_WEIGHT {
        return Err(ApiError::invalid_field(
            "variants",
            format!("variants: the fixed weights add up to more than {TOTAL_WEIGHT}"),
        ));
    }
    let variable_count = variants
        .iter()
        .filter(|variant| variant.weight_type == WeightType::Variable)
        .count();
    let variable_count = u32::try_from(variable_count).unwrap_or(u32::MAX);
    if variable_count == 0 {
        if fixed_total != TOTAL_WEIGHT {
            return Err(ApiError::invalid_field(
                "variants",
                format!("variants: with only fixed weights they must add up to {TOTAL_WEIGHT}"),
            ));
        }
        return Ok(variants);
    }
    let share = (TOTAL_WEIGHT - fixed_total) / variable_count;
    let mut remainder = (TOTAL_WEIGHT - fixed_total) % variable_count;
    for variant in variants
        .iter_mut()
        .filter(|variant| variant.weight_type == WeightType::Variable)
    {
        variant.weight = share + u32::from(remainder > 0);
        remainder = remainder.saturating_sub(1);
    }
    Ok(variants)
}

/// As [`normalize_variants`], except that weights which already add up to 1000 are kept: an import keeps the
/// split its source made (Unleash may give a remainder to other variants than Vexil would).
pub fn normalize_variants_keeping_weights(
    variants: Vec<StrategyVariant>,
) -> Result<Vec<StrategyVariant>, ApiError> {
    let total = variants
        .iter()
        .fold(0u32, |total, variant| total.saturating_add(variant.weight));
    let normalized = normalize_variants(variants.clone())?;
    Ok(if total == TOTAL_WEIGHT {
        variants
    } else {
        normalized
    })
}

/// Flag-level variants sorted by name, their weights normalised as strategy variants' are, their overrides'
/// context names checked.
pub fn normalize_flag_variants(variants: Vec<FlagVariant>) -> Result<Vec<FlagVariant>, ApiError> {
    normalize_flag_variants_with(variants, normalize_variants)
}

/// As [`normalize_flag_variants`], keeping weights that already add up to 1000
/// ([`normalize_variants_keeping_weights`]).
pub fn normalize_flag_variants_keeping_weights(
    variants: Vec<FlagVariant>,
) -> Result<Vec<FlagVariant>, ApiError> {
    normalize_flag_variants_with(variants, normalize_variants_keeping_weights)
}

fn normalize_flag_variants_with(
    mut variants: Vec<FlagVariant>,
    normalize: fn(Vec<StrategyVariant>) -> Result<Vec<StrategyVariant>, ApiError>,
) -> Result<Vec<FlagVariant>, ApiError> {
    for (index, variant) in variants.iter().enumerate() {
        for (position, override_) in variant.overrides.iter().enumerate() {
            name::validate(
                &format!("variants[{index}].overrides[{position}].contextName"),
                &override_.context_name,
            )?;
        }
    }
    // Checked in the order given, so a message's `variants[i]` is the i-th variant sent; then sorted, so the
    // weights' remainder goes by name.
    normalize(
        variants
            .iter()
            .cloned()
            .map(|variant| variant.split().0)
            .collect(),
    )?;
    variants.sort_by(|a, b| a.name.cmp(&b.name));
    let (plain, overrides): (Vec<StrategyVariant>, Vec<Vec<VariantOverride>>) =
        variants.into_iter().map(FlagVariant::split).unzip();
    Ok(normalize(plain)?
        .into_iter()
        .zip(overrides)
        .map(|(variant, overrides)| FlagVariant::join(variant, overrides))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(name: &str, weight: u32, weight_type: WeightType) -> StrategyVariant {
        StrategyVariant {
            name: name.to_owned(),
            weight,
            weight_type,
            stickiness: "default".to_owned(),
            payload: None,
        }
    }

    #[test]
    fn variable_weights_share_what_fixed_ones_leave() {
        let variants = normalize_variants(vec![
            variant("a", 0, WeightType::Variable),
            variant("b", 100, WeightType::Fix),
            variant("c", 0, WeightType::Variable),
            variant("d", 0, WeightType::Variable),
        ])
        .unwrap();
        let weights: Vec<u32> = variants.iter().map(|v| v.weight).collect();
        assert_eq!(weights, vec![300, 100, 300, 300]);
        let variants = normalize_variants(vec![
            variant("a", 0, WeightType::Variable),
            variant("b", 0, WeightType::Variable),
            variant("c", 0, WeightType::Variable),
        ])
        .unwrap();
        let weights: Vec<u32> = variants.iter().map(|v| v.weight).collect();
        assert_eq!(weights, vec![334, 333, 333]);
    }

    /// deploy/local/run.sh's welcome-banner: a 70/30 split is stored only when the 700 is `fix`; two
    /// `variable` weights are shared equally whatever they say (as Unleash does).
    #[test]
    fn only_a_fix_weight_keeps_a_split() {
        let weights = |variants: Vec<StrategyVariant>| -> Vec<u32> {
            normalize_flag_variants(
                variants
                    .into_iter()
                    .map(|v| FlagVariant::join(v, Vec::new()))
                    .collect(),
            )
            .unwrap()
            .iter()
            .map(|v| v.weight)
            .collect()
        };
        assert_eq!(
            weights(vec![
                variant("hello", 700, WeightType::Fix),
                variant("welcome", 300, WeightType::Variable),
            ]),
            vec![700, 300]
        );
        assert_eq!(
            weights(vec![
                variant("hello", 700, WeightType::Variable),
                variant("welcome", 300, WeightType::Variable),
            ]),
            vec![500, 500]
        );
    }

    #[test]
    fn an_import_keeps_weights_that_add_up() {
        let given = vec![
            variant("a", 333, WeightType::Variable),
            variant("b", 333, WeightType::Variable),
            variant("c", 334, WeightType::Variable),
        ];
        assert_eq!(
            normalize_variants_keeping_weights(given.clone()).unwrap(),
            given
        );
        let weights: Vec<u32> = normalize_variants(given)
            .unwrap()
            .iter()
            .map(|v| v.weight)
            .collect();
        assert_eq!(weights, vec![334, 333, 333]);
        let short = vec![variant("a", 10, WeightType::Variable)];
        assert_eq!(
            normalize_variants_keeping_weights(short).unwrap()[0].weight,
            1000
        );
    }

    #[test]
    fn impossible_weights_are_rejected() {
        assert!(normalize_variants(vec![
            variant("a", 600, WeightType::Fix),
            variant("b", 600, WeightType::Fix)
        ])
        .is_err());
        assert!(normalize_variants(vec![variant("a", 500, WeightType::Fix)]).is_err());
        assert!(normalize_variants(vec![variant("a", 1000, WeightType::Fix)]).is_ok());
    }
}
