//! The variant editor the variants page (flag-level variants, with overrides) and the strategy form (strategy
//! variants) share: each variant's name, weight (percent; empty shares what fixed weights leave), stickiness,
//! payload type and payload, and overrides; "Add" and "Remove" post the form back.

use super::controls::{field, row_focus};
use super::field_errors::FieldErrors;
use super::session::FormFields;
use crate::model::variant::{
    FlagVariant, StrategyVariant, VariantOverride, VariantPayload, WeightType,
};
use maud::{html, Markup};
use vexil_shared::ApiError;

/// One variant as typed: weight in percent (empty: shares what fixed ones leave).
#[derive(Debug, Clone, Default)]
pub struct VariantDraft {
    pub name: String,
    pub weight: String,
    pub stickiness: String,
    pub payload_type: String,
    pub payload: String,
    pub overrides: String,
}

impl VariantDraft {
    pub fn of_flag(variant: &FlagVariant) -> VariantDraft {
        VariantDraft {
            name: variant.name.clone(),
            weight: match variant.weight_type {
                WeightType::Fix => format!("{}", f64::from(variant.weight) / 10.0),
                WeightType::Variable => String::new(),
            },
            stickiness: variant.stickiness.clone(),
            payload_type: variant
                .payload
                .as_ref()
                .map(|payload| payload.payload_type.clone())
                .unwrap_or_default(),
            payload: variant
                .payload
                .as_ref()
                .map(|payload| payload.value.clone())
                .unwrap_or_default(),
            overrides: variant
                .overrides
                .iter()
                .map(|o| format!("{}: {}", o.context_name, o.values.join(", ")))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    pub fn to_flag_variant(&self, index: usize) -> Result<FlagVariant, ApiError> {
        let weight = self.weight.trim();
        let (weight, weight_type) = if weight.is_empty() {
            (0, WeightType::Variable)
        } else {
            let percent: f64 = weight.parse().map_err(|_| {
                ApiError::invalid_field(
                    format!("variants[{index}].weight"),
                    format!("variants[{index}].weight: \"{weight}\" is not a percentage"),
                )
            })?;
            if !(0.0..=100.0).contains(&percent) {
                return Err(ApiError::invalid_field(
                    format!("variants[{index}].weight"),
                    format!("variants[{index}].weight: must be 0 to 100 %"),
                ));
            }
            ((percent * 10.0).round() as u32, WeightType::Fix)
        };
        let overrides = self
            .overrides
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let (context, values) = line.split_once(':').ok_or_else(|| {
                    ApiError::invalid_field(
                        format!("variants[{index}].overrides"),
                        format!("variants[{index}].overrides: write each as context: value, value"),
                    )
                })?;
                Ok(VariantOverride {
                    context_name: context.trim().to_owned(),
                    values: values
                        .split(',')
                        .map(str::trim)
                        .filter(|value| !value.is_empty())
                        .map(str::to_owned)
                        .collect(),
                })
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        Ok(FlagVariant {
            name: self.name.trim().to_owned(),
            weight,
            weight_type,
            stickiness: Some(self.stickiness.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default".to_owned()),
            payload: Some(self.payload_type.clone())
                .filter(|kind| !kind.is_empty())
                .map(|payload_type| VariantPayload {
                    payload_type,
                    value: self.payload.clone(),
                }),
            overrides,
        })
    }

    pub fn of_strategy(variant: &StrategyVariant) -> VariantDraft {
        VariantDraft::of_flag(&FlagVariant {
            name: variant.name.clone(),
            weight: variant.weight,
            weight_type: variant.weight_type,
            stickiness: variant.stickiness.clone(),
            payload: variant.payload.clone(),
            overrides: Vec::new(),
        })
    }

    pub fn to_strategy_variant(&self, index: usize) -> Result<StrategyVariant, ApiError> {
        let variant = self.to_flag_variant(index)?;
        Ok(StrategyVariant {
            name: variant.name,
            weight: variant.weight,
            weight_type: variant.weight_type,
            stickiness: variant.stickiness,
            payload: variant.payload,
        })
    }
}

/// The variants of a posted form: `<prefix>Count`, then `<prefix><i>.name`, `.weight`, ….
pub fn drafts_of(form: &FormFields, prefix: &str) -> Vec<VariantDraft> {
    let count: usize = form
        .get(&format!("{prefix}Count"))
        .and_then(|count| count.parse().ok())
        .unwrap_or(0)
        .min(100);
    (0..count)
        .map(|index| {
            let key = |name: &str| format!("{prefix}{index}.{name}");
            VariantDraft {
                name: form.text(&key("name")),
                weight: form.text(&key("weight")),
                stickiness: form.text(&key("stickiness")),
                payload_type: form.text(&key("payloadType")),
                payload: form.text(&key("payload")),
                overrides: form.text(&key("overrides")),
            }
        })
        .collect()
}

/// `add-<prefix>` or `remove-<prefix>-<i>` applied to `drafts`; false for any other intent.
pub fn edit_variants(intent: &str, prefix: &str, drafts: &mut Vec<VariantDraft>) -> bool {
    if intent == format!("add-{prefix}") {
        drafts.push(VariantDraft {
            stickiness: "default".to_owned(),
            ..VariantDraft::default()
        });
        return true;
    }
    if let Some(index) = intent
        .strip_prefix(&format!("remove-{prefix}-"))
        .and_then(|index| index.parse::<usize>().ok())
    {
        if index < drafts.len() {
            drafts.remove(index);
        }
        return true;
    }
    false
}

/// Where the focus goes after `intent` redrew the form: the added variant's name, or the one in the removed
/// one's place ([`row_focus`]).
pub fn variant_focus(intent: &str, prefix: &str, drafts: &[VariantDraft]) -> Option<String> {
    row_focus(intent, prefix, drafts.len(), |index| {
        format!("{prefix}{index}-name")
    })
}

/// Where the editor's controls are, for [`FieldErrors`]: `variants[i].<field>` → variant `i`'s control
/// (`payload.type` its payload type, any other `payload` its payload); `variants` and `variants[i]` → the
/// editor as a whole (a message about the weights together, for one, is shown there and describes every
/// weight).
pub fn variant_fields(
    prefix: &str,
    drafts: &[VariantDraft],
    with_overrides: bool,
) -> Vec<(String, String)> {
    let group = format!("{prefix}-variants");
    let mut fields = vec![("variants".to_owned(), group.clone())];
    for index in 0..drafts.len() {
        let id = |name: &str| format!("{prefix}{index}-{name}");
        fields.extend([
            (format!("variants[{index}]"), group.clone()),
            (format!("variants[{index}].name"), id("name")),
            (format!("variants[{index}].weight"), id("weight")),
            (format!("variants[{index}].stickiness"), id("stickiness")),
            (format!("variants[{index}].payload"), id("payload")),
            (
                format!("variants[{index}].payload.type"),
                id("payload-type"),
            ),
        ]);
        if with_overrides {
            fields.push((format!("variants[{index}].overrides"), id("overrides")));
        }
    }
    fields
}

/// The rows of the editor (the "Add" button is the caller's, which knows its wording), a refusal beside
/// the control it names ([`variant_fields`]).
/// `focus` is the id of the control that takes the focus ([`variant_focus`]); the caller's "Add" button has
/// the id `add-<prefix>`.
pub fn variant_rows(
    editable: bool,
    prefix: &str,
    drafts: &[VariantDraft],
    (with_overrides, focus): (bool, Option<&str>),
    errors: &FieldErrors,
) -> Markup {
    let group = format!("{prefix}-variants");
    html! {
        input type="hidden" name=(format!("{prefix}Count")) value=(drafts.len());
        p.field-error id=(format!("{group}-error")) aria-live="polite" { @if let Some(error) = errors.at(&group) { (error) } }
        @if drafts.is_empty() {
            p.muted { "No variants." }
        }
        @for (index, draft) in drafts.iter().enumerate() {
            @let key = |name: &str| format!("{prefix}{index}.{name}");
            @let id = |name: &str| format!("{prefix}{index}-{name}");
            @let described = |name: &str| format!("{}-error", id(name));
            fieldset id=(format!("{prefix}{index}")) {
                legend { "Variant " (index + 1) }
                (field(&id("name"), "Variant name", errors.at(&id("name")), None, html! {
                    input id=(id("name")) type="text" name=(key("name")) value=(draft.name) disabled[!editable]
                        autofocus[focus == Some(id("name").as_str())]
                        aria-describedby=(described("name")) aria-invalid=(errors.invalid(&id("name")));
                }))
                (field(&id("weight"), "Weight", errors.at(&id("weight")), Some("Percent; leave empty to share what the fixed weights leave"), html! {
                    input id=(id("weight")) type="number" name=(key("weight")) min="0" max="100" step="0.1" value=(draft.weight)
                        aria-describedby=(format!("{}-hint {} {group}-error", id("weight"), described("weight")))
                        aria-invalid=(if errors.at(&id("weight")).or(errors.at(&group)).is_some() { "true" } else { "false" })
                        disabled[!editable];
                }))
                (field(&id("stickiness"), "Stickiness", errors.at(&id("stickiness")), None, html! {
                    select id=(id("stickiness")) name=(key("stickiness")) disabled[!editable]
                        aria-describedby=(described("stickiness")) aria-invalid=(errors.invalid(&id("stickiness"))) {
                        @for option in ["default", "userId", "sessionId", "random"] {
                            option value=(option) selected[option == draft.stickiness] { (option) }
                        }
                    }
                }))
                (field(&id("payload-type"), "Payload type", errors.at(&id("payload-type")), None, html! {
                    select id=(id("payload-type")) name=(key("payloadType")) disabled[!editable]
                        aria-describedby=(described("payload-type")) aria-invalid=(errors.invalid(&id("payload-type"))) {
                        @for (value, text) in [("", "No payload"), ("string", "string"), ("json", "json"), ("csv", "csv"), ("number", "number")] {
                            option value=(value) selected[value == draft.payload_type] { (text) }
                        }
                    }
                }))
                (field(&id("payload"), "Payload", errors.at(&id("payload")), None, html! {
                    textarea id=(id("payload")) name=(key("payload")) rows="3" disabled[!editable]
                        aria-describedby=(described("payload")) aria-invalid=(errors.invalid(&id("payload"))) { (draft.payload) }
                }))
                @if with_overrides {
                    (field(&id("overrides"), "Overrides", errors.at(&id("overrides")), Some("One per line: context field: value, value"), html! {
                        textarea id=(id("overrides")) name=(key("overrides")) rows="2"
                            aria-describedby=(format!("{}-hint {}", id("overrides"), described("overrides")))
                            aria-invalid=(errors.invalid(&id("overrides"))) disabled[!editable] { (draft.overrides) }
                    }))
                }
                @if editable {
                    button type="submit" formnovalidate name="intent" value=(format!("remove-{prefix}-{index}"))
                        aria-label=(format!("Remove variant {}", index + 1)) { "Remove" }
                }
            }
        }
    }
}
