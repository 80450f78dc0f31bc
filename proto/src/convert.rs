//! Lossless conversions between the domain model (`vexil_shared::model`) and the wire messages.

use vexil_shared::model::{
    Constraint, Feature, FeatureDependency, FeatureStrategy, FeatureTag, FeaturesDocument, Segment,
    Variant, VariantOverride, VariantPayload,
};
use vexil_shared::token::TokenKind;

use crate::v1;

/// One environment's configuration as a wire message.
pub fn environment_state(environment: &str, doc: FeaturesDocument) -> v1::EnvironmentState {
    v1::EnvironmentState {
        environment: environment.to_owned(),
        features: doc.features.into_iter().map(Into::into).collect(),
        segments: doc.segments.into_iter().map(Into::into).collect(),
    }
}

/// The features document an environment's wire state describes.
pub fn document_of(state: v1::EnvironmentState) -> FeaturesDocument {
    FeaturesDocument {
        version: 2,
        features: state.features.into_iter().map(Into::into).collect(),
        segments: state.segments.into_iter().map(Into::into).collect(),
    }
}

impl From<TokenKind> for v1::TokenKind {
    fn from(kind: TokenKind) -> Self {
        match kind {
            TokenKind::Admin => v1::TokenKind::Admin,
            TokenKind::Client => v1::TokenKind::Client,
            TokenKind::Frontend => v1::TokenKind::Frontend,
            TokenKind::Edge => v1::TokenKind::Edge,
        }
    }
}

/// `Unspecified` is no kind.
impl TryFrom<v1::TokenKind> for TokenKind {
    type Error = v1::TokenKind;

    fn try_from(kind: v1::TokenKind) -> Result<Self, v1::TokenKind> {
        match kind {
            v1::TokenKind::Admin => Ok(TokenKind::Admin),
            v1::TokenKind::Client => Ok(TokenKind::Client),
            v1::TokenKind::Frontend => Ok(TokenKind::Frontend),
            v1::TokenKind::Edge => Ok(TokenKind::Edge),
            v1::TokenKind::Unspecified => Err(kind),
        }
    }
}

impl From<Feature> for v1::Feature {
    fn from(f: Feature) -> Self {
        v1::Feature {
            name: f.name,
            r#type: f.feature_type,
            description: f.description,
            project: f.project,
            enabled: f.enabled,
            stale: f.stale,
            impression_data: f.impression_data,
            strategies: f.strategies.into_iter().map(Into::into).collect(),
            variants: f.variants.into_iter().map(Into::into).collect(),
            dependencies: f.dependencies.into_iter().map(Into::into).collect(),
            tags: f.tags.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<v1::Feature> for Feature {
    fn from(f: v1::Feature) -> Self {
        Feature {
            name: f.name,
            feature_type: f.r#type,
            description: f.description,
            project: f.project,
            enabled: f.enabled,
            stale: f.stale,
            impression_data: f.impression_data,
            strategies: f.strategies.into_iter().map(Into::into).collect(),
            variants: f.variants.into_iter().map(Into::into).collect(),
            dependencies: f.dependencies.into_iter().map(Into::into).collect(),
            tags: f.tags.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<FeatureStrategy> for v1::Strategy {
    fn from(s: FeatureStrategy) -> Self {
        v1::Strategy {
            id: s.id,
            name: s.name,
            title: s.title,
            disabled: s.disabled,
            sort_order: s.sort_order,
            parameters: s.parameters.into_iter().collect(),
            constraints: s.constraints.into_iter().map(Into::into).collect(),
            segments: s.segments,
            variants: s.variants.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<v1::Strategy> for FeatureStrategy {
    fn from(s: v1::Strategy) -> Self {
        FeatureStrategy {
            id: s.id,
            name: s.name,
            title: s.title,
            disabled: s.disabled,
            sort_order: s.sort_order,
            parameters: s.parameters.into_iter().collect(),
            constraints: s.constraints.into_iter().map(Into::into).collect(),
            segments: s.segments,
            variants: s.variants.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<Constraint> for v1::Constraint {
    fn from(c: Constraint) -> Self {
        v1::Constraint {
            context_name: c.context_name,
            operator: c.operator,
            case_insensitive: c.case_insensitive,
            inverted: c.inverted,
            values: c.values,
            value: c.value,
        }
    }
}

impl From<v1::Constraint> for Constraint {
    fn from(c: v1::Constraint) -> Self {
        Constraint {
            context_name: c.context_name,
            operator: c.operator,
            case_insensitive: c.case_insensitive,
            inverted: c.inverted,
            values: c.values,
            value: c.value,
        }
    }
}

impl From<Variant> for v1::Variant {
    fn from(v: Variant) -> Self {
        v1::Variant {
            name: v.name,
            weight: v.weight,
            weight_type: v.weight_type,
            stickiness: v.stickiness,
            payload: v.payload.map(|p| v1::Payload {
                r#type: p.payload_type,
                value: p.value,
            }),
            overrides: v
                .overrides
                .into_iter()
                .map(|o| v1::Override {
                    context_name: o.context_name,
                    values: o.values,
                })
                .collect(),
        }
    }
}

impl From<v1::Variant> for Variant {
    fn from(v: v1::Variant) -> Self {
        Variant {
            name: v.name,
            weight: v.weight,
            weight_type: v.weight_type,
            stickiness: v.stickiness,
            payload: v.payload.map(|p| VariantPayload {
                payload_type: p.r#type,
                value: p.value,
            }),
            overrides: v
                .overrides
                .into_iter()
                .map(|o| VariantOverride {
                    context_name: o.context_name,
                    values: o.values,
                })
                .collect(),
        }
    }
}

impl From<FeatureDependency> for v1::Dependency {
    fn from(d: FeatureDependency) -> Self {
        v1::Dependency {
            feature: d.feature,
            enabled: d.enabled,
            variants: d.variants,
        }
    }
}

impl From<v1::Dependency> for FeatureDependency {
    fn from(d: v1::Dependency) -> Self {
        FeatureDependency {
            feature: d.feature,
            enabled: d.enabled,
            variants: d.variants,
        }
    }
}

impl From<FeatureTag> for v1::Tag {
    fn from(t: FeatureTag) -> Self {
        v1::Tag {
            r#type: t.tag_type,
            value: t.value,
        }
    }
}

impl From<v1::Tag> for FeatureTag {
    fn from(t: v1::Tag) -> Self {
        FeatureTag {
            tag_type: t.r#type,
            value: t.value,
        }
    }
}

impl From<Segment> for v1::Segment {
    fn from(s: Segment) -> Self {
        v1::Segment {
            id: s.id,
            name: s.name,
            constraints: s.constraints.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<v1::Segment> for Segment {
    fn from(s: v1::Segment) -> Self {
        Segment {
            id: s.id,
            name: s.name,
            constraints: s.constraints.into_iter().map(Into::into).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    /// The example document survives model → wire bytes → model unchanged.
    #[test]
    fn round_trips_the_example_document_through_protobuf_bytes() {
        let text = include_str!("../../examples/features.json");
        let doc = FeaturesDocument::from_json(text).expect("example document");
        let bytes = environment_state("development", doc.clone()).encode_to_vec();
        let back = document_of(v1::EnvironmentState::decode(&bytes[..]).expect("decode"));
        assert_eq!(back, doc);
    }

    #[test]
    fn round_trips_every_optional_field() {
        let doc = FeaturesDocument::from_json(
            r#"{"features":[{"name":"f","type":"release","description":"d","project":"p","enabled":true,
                "stale":true,"impressionData":true,
                "strategies":[{"id":"s1","name":"flexibleRollout","title":"t","disabled":true,"sortOrder":-3,
                    "parameters":{"rollout":"50","groupId":"g"},
                    "constraints":[{"contextName":"userId","operator":"IN","caseInsensitive":true,"inverted":true,"values":["a","b"],"value":"v"}],
                    "segments":[1,7],
                    "variants":[{"name":"x","weight":1000,"weightType":"fix","stickiness":"userId","payload":{"type":"json","value":"{}"}}]}],
                "variants":[{"name":"y","weight":500,"overrides":[{"contextName":"userId","values":["1"]}]}],
                "dependencies":[{"feature":"parent","enabled":false,"variants":["a"]}],
                "tags":[{"type":"simple","value":"foo"}]}],
              "segments":[{"id":7,"name":"seg","constraints":[{"contextName":"appName","operator":"STR_STARTS_WITH","values":["w"]}]}]}"#,
        )
        .expect("document");
        let bytes = environment_state("production", doc.clone()).encode_to_vec();
        let state = v1::EnvironmentState::decode(&bytes[..]).expect("decode");
        assert_eq!(state.environment, "production");
        assert_eq!(state.features[0].tags[0].value, "foo");
        assert_eq!(document_of(state), doc);
    }
}
