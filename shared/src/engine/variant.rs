//! Variant selection: overrides first, then a weighted bucket of the stickiness value.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::constraint::CompiledConstraint;
use super::eval::Eval;
use super::field::Stickiness;
use super::hash::{random_bucket, text_hash, HashGroup, VARIANT_SEED};
use super::slots::{EvalSlots, TRUE};
use crate::model::{Variant, VariantPayload};

/// A variant ready to hand out.
#[derive(Debug)]
pub(crate) struct CompiledVariant {
    pub(crate) name: Box<str>,
    /// The frontend API's variant object, serialized once.
    pub(crate) json: Box<str>,
    /// [`text_hash`] of `json`.
    pub(crate) json_hash: u64,
    weight: u32,
    pub(crate) payload: Option<VariantPayload>,
    /// The constraint slots of its overrides: each is a set lookup (`<field> IN <values>`), worked out for
    /// each context up front.
    overrides: Box<[u32]>,
    /// Its flag's OFREP answer when it is chosen, after a comma, and the answer's hash: serialized on first
    /// use (`ofrep`).
    pub(crate) ofrep_answer: std::sync::OnceLock<(Box<str>, u64)>,
}

/// The variants of a flag or of a strategy, with how to pick one.
#[derive(Debug)]
pub(crate) struct VariantSet {
    variants: Box<[CompiledVariant]>,
    total_weight: u32,
    has_overrides: bool,
    stickiness: Stickiness,
    group: HashGroup,
}

impl VariantSet {
    /// The length of the longest variant object this set can hand out.
    pub(crate) fn longest_json(&self) -> usize {
        self.variants
            .iter()
            .map(|v| v.json.len())
            .max()
            .unwrap_or(0)
    }

    /// How many constraint slots its overrides use.
    pub(crate) fn override_slots(&self) -> usize {
        self.variants.iter().map(|v| v.overrides.len()).sum()
    }

    /// `None` when there is nothing to pick from.
    pub(crate) fn compile(
        variants: &[Variant],
        stickiness: Stickiness,
        group: &str,
        properties: &mut EvalSlots,
    ) -> Option<Self> {
        if variants.is_empty() {
            return None;
        }
        let variants: Box<[CompiledVariant]> = variants
            .iter()
            .map(|v| {
                let json: Box<str> = serde_json::to_string(&VariantView {
                    name: &v.name,
                    payload: v.payload.as_ref(),
                    enabled: true,
                    feature_enabled: true,
                })
                .unwrap_or_default()
                .into();
                (v, json)
            })
            .map(|(v, json)| CompiledVariant {
                name: v.name.as_str().into(),
                json_hash: text_hash(&json),
                json,
                weight: v.weight,
                payload: v.payload.clone(),
                overrides: v
                    .overrides
                    .iter()
                    .map(|o| {
                        CompiledConstraint::set_lookup(&o.context_name, &o.values, properties)
                            .slot()
                    })
                    .collect(),
                ofrep_answer: std::sync::OnceLock::new(),
            })
            .collect();
        let total_weight = variants.iter().map(|v| v.weight).sum();
        Some(VariantSet {
            total_weight,
            has_overrides: variants.iter().any(|v| !v.overrides.is_empty()),
            variants,
            stickiness,
            group: HashGroup::new(group, VARIANT_SEED, total_weight),
        })
    }

    pub(crate) fn select(&self, e: &Eval<'_>) -> Option<&CompiledVariant> {
        if self.has_overrides {
            let forced = self.variants.iter().find(|v| {
                v.overrides
                    .iter()
                    .any(|&slot| e.constraint_result(slot) == TRUE)
            });
            if forced.is_some() {
                return forced;
            }
        }
        if self.total_weight == 0 {
            return None;
        }
        let value = match &self.stickiness {
            Stickiness::Default => e.ctx.user_id.as_deref().or(e.ctx.session_id.as_deref()),
            Stickiness::Random => None,
            Stickiness::Field(field) => e.value(field),
        };
        let target = match value {
            Some(v) => self.group.bucket(v),
            None => random_bucket(self.total_weight),
        };
        let mut cumulative = 0;
        self.variants.iter().find(|v| {
            cumulative += v.weight;
            cumulative >= target
        })
    }
}

/// The variant a context gets for a flag: a real one, or the `disabled` placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantView<'s> {
    /// The chosen variant's name, or `disabled`.
    pub name: &'s str,
    pub payload: Option<&'s VariantPayload>,
    /// Whether a real variant was chosen.
    pub enabled: bool,
    /// Whether the flag itself is enabled.
    pub feature_enabled: bool,
}

/// What [`VariantView::of`]`(None)` serializes to.
pub(crate) const DISABLED_VARIANT_OF_ENABLED_FLAG_JSON: &str =
    r#"{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true}"#;

impl<'s> VariantView<'s> {
    pub(crate) fn disabled(feature_enabled: bool) -> Self {
        VariantView {
            name: "disabled",
            payload: None,
            enabled: false,
            feature_enabled,
        }
    }

    /// The view of an enabled flag's variant: the chosen one, or `disabled` when there is none.
    pub(crate) fn of(chosen: Option<&'s CompiledVariant>) -> Self {
        match chosen {
            Some(v) => VariantView {
                name: &v.name,
                payload: v.payload.as_ref(),
                enabled: true,
                feature_enabled: true,
            },
            None => VariantView::disabled(true),
        }
    }
}

impl Serialize for VariantView<'_> {
    /// `{name, enabled, payload?, feature_enabled, featureEnabled}`, as the frontend API answers.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Variant", 5)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("enabled", &self.enabled)?;
        if let Some(p) = self.payload {
            st.serialize_field("payload", p)?;
        } else {
            st.skip_field("payload")?;
        }
        st.serialize_field("feature_enabled", &self.feature_enabled)?;
        st.serialize_field("featureEnabled", &self.feature_enabled)?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disabled_constant_is_what_serde_writes() {
        assert_eq!(
            serde_json::to_string(&VariantView::of(None)).unwrap(),
            DISABLED_VARIANT_OF_ENABLED_FLAG_JSON
        );
    }
}
