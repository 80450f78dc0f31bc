//! The upstream's delta (`GET /api/client/delta`, the client specification's delta format, served by Vexil's
//! control plane and edges and by Unleash servers that have it; open-source Unleash 8.2 answers 404): its
//! events, and how they bring the document a startup token reads up to date.

use std::collections::BTreeMap;

use serde::Deserialize;
use vexil_shared::model::{Feature, Segment};
use vexil_shared::FeaturesDocument;

/// One event of a delta answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum DeltaEvent {
    /// The whole state: the first answer, or one after a revision the upstream no longer keeps.
    Hydration {
        #[serde(default)]
        features: Vec<Feature>,
        #[serde(default)]
        segments: Vec<Segment>,
    },
    FeatureUpdated {
        feature: Feature,
    },
    FeatureRemoved {
        feature_name: String,
    },
    SegmentUpdated {
        segment: Segment,
    },
    SegmentRemoved {
        segment_id: i64,
    },
}

/// `{"events": […]}`.
#[derive(Debug, Clone, Deserialize)]
pub struct DeltaBody {
    pub events: Vec<DeltaEvent>,
}

/// `document` (none before the first hydration) with `events` applied in order; an error when there is no
/// document to change and the events do not start with a hydration.
pub fn apply(
    document: Option<&FeaturesDocument>,
    events: Vec<DeltaEvent>,
) -> Result<FeaturesDocument, &'static str> {
    let mut features: Option<BTreeMap<String, Feature>> = document.map(|d| {
        d.features
            .iter()
            .map(|f| (f.name.clone(), f.clone()))
            .collect()
    });
    let mut segments: BTreeMap<i64, Segment> = document
        .map(|d| d.segments.iter().map(|s| (s.id, s.clone())).collect())
        .unwrap_or_default();
    for event in events {
        if let DeltaEvent::Hydration {
            features: all,
            segments: all_segments,
        } = event
        {
            features = Some(all.into_iter().map(|f| (f.name.clone(), f)).collect());
            segments = all_segments.into_iter().map(|s| (s.id, s)).collect();
            continue;
        }
        let held = features
            .as_mut()
            .ok_or("a change before any hydration, with no document to change")?;
        match event {
            DeltaEvent::Hydration { .. } => {}
            DeltaEvent::FeatureUpdated { feature } => {
                held.insert(feature.name.clone(), feature);
            }
            DeltaEvent::FeatureRemoved { feature_name } => {
                held.remove(&feature_name);
            }
            DeltaEvent::SegmentUpdated { segment } => {
                segments.insert(segment.id, segment);
            }
            DeltaEvent::SegmentRemoved { segment_id } => {
                segments.remove(&segment_id);
            }
        }
    }
    let features = features.ok_or("no hydration and no document")?;
    Ok(FeaturesDocument {
        version: 2,
        features: features.into_values().collect(),
        segments: segments.into_values().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: serde_json::Value) -> Vec<DeltaEvent> {
        serde_json::from_value::<DeltaBody>(json).unwrap().events
    }

    fn names(document: &FeaturesDocument) -> Vec<&str> {
        document.features.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn a_hydration_then_changes_make_the_document() {
        let feature = |name: &str, enabled: bool| serde_json::json!({"name": name, "enabled": enabled, "strategies": [], "project": "default"});
        let first = apply(
            None,
            body(
                serde_json::json!({"events": [{"type": "hydration", "eventId": 3,
                "features": [feature("a", true), feature("b", true)],
                "segments": [{"id": 1, "constraints": []}]}]}),
            ),
        )
        .unwrap();
        assert_eq!(names(&first), ["a", "b"]);
        assert_eq!(first.segments.len(), 1);
        let next = apply(
            Some(&first),
            body(serde_json::json!({"events": [
                {"type": "segment-removed", "eventId": 4, "segmentId": 1},
                {"type": "feature-updated", "eventId": 4, "feature": feature("c", false)},
                {"type": "feature-updated", "eventId": 4, "feature": feature("a", false)},
                {"type": "feature-removed", "eventId": 4, "featureName": "b", "project": "default"}
            ]})),
        )
        .unwrap();
        assert_eq!(names(&next), ["a", "c"]);
        assert!(!next.features[0].enabled);
        assert!(next.segments.is_empty());
        assert!(apply(
            None,
            body(serde_json::json!({"events": [{"type": "feature-removed", "eventId": 1, "featureName": "b"}]}))
        )
        .is_err());
    }
}
