//! The flag types (`GET /api/admin/feature-types`): Unleash's five, each with its expected lifetime in days
//! (after which Unleash's UI calls a flag potentially stale; none for the permanent kinds).

use super::features::{FeatureType, FEATURE_TYPES};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureTypeInfo {
    pub id: String,
    pub name: String,
    pub description: String,
    pub lifetime_days: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FeatureTypes {
    pub version: u32,
    pub types: Vec<FeatureTypeInfo>,
}

fn info(feature_type: FeatureType) -> FeatureTypeInfo {
    let (name, description, lifetime_days) = match feature_type {
        FeatureType::Release => (
            "Release",
            "Ships new code dark and turns it on gradually; removed once the release is done.",
            Some(40),
        ),
        FeatureType::Experiment => (
            "Experiment",
            "Compares variants (A/B or multivariate tests); removed when the experiment ends.",
            Some(40),
        ),
        FeatureType::Operational => (
            "Operational",
            "Controls operational aspects of the system, such as a migration or a new backend.",
            Some(7),
        ),
        FeatureType::KillSwitch => (
            "Kill switch",
            "Turns a feature off gracefully when the system degrades; usually long-lived.",
            None,
        ),
        FeatureType::Permission => (
            "Permission",
            "Gives some users access to a feature; usually long-lived.",
            None,
        ),
        FeatureType::Sunset => (
            "Sunset",
            "Keeps an old behaviour for the clients that still need it until it is removed.",
            None,
        ),
    };
    FeatureTypeInfo {
        id: feature_type.as_str().to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        lifetime_days,
    }
}

pub fn list() -> FeatureTypes {
    FeatureTypes {
        version: 1,
        types: FEATURE_TYPES.into_iter().map(info).collect(),
    }
}
