//! The flag types (`GET /api/admin/feature-types`): Unleash's five and sunset, each with its expected
//! lifetime in days (after which a flag is potentially stale; none for the permanent kinds), which an Admin
//! changes (`PUT /api/admin/feature-types/:id/lifetime`, `feature-type-updated`); kept in
//! `feature_type_lifetimes`.

use super::events::EventType;
use super::features::{FeatureType, FEATURE_TYPES};
use crate::store::lifecycle as store;
use crate::store::WriteTx;
use crate::time::Timestamp;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::json;
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureTypeInfo {
    pub id: String,
    pub name: String,
    pub description: String,
    #[schema(minimum = 0)]
    pub lifetime_days: Option<u32>,
}

/// `PUT /api/admin/feature-types/:id/lifetime` (Unleash's updateFeatureTypeLifetimeSchema): days, or `null`
/// or `0` for never potentially stale. The field is required.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateFeatureTypeLifetime {
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, required = true, minimum = 0, maximum = 2147483647)]
    pub lifetime_days: Option<Option<i64>>,
}

/// A field that is there, null or not (a missing one stays `None`).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<i64>>, D::Error> {
    Option::<i64>::deserialize(deserializer).map(Some)
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FeatureTypes {
    pub version: u32,
    pub types: Vec<FeatureTypeInfo>,
}

fn info(feature_type: FeatureType, lifetimes: &[(String, Option<i64>)]) -> FeatureTypeInfo {
    let (name, description) = match feature_type {
        FeatureType::Release => (
            "Release",
            "Ships new code dark and turns it on gradually; removed once the release is done.",
        ),
        FeatureType::Experiment => (
            "Experiment",
            "Compares variants (A/B or multivariate tests); removed when the experiment ends.",
        ),
        FeatureType::Operational => (
            "Operational",
            "Controls operational aspects of the system, such as a migration or a new backend.",
        ),
        FeatureType::KillSwitch => (
            "Kill switch",
            "Turns a feature off gracefully when the system degrades; usually long-lived.",
        ),
        FeatureType::Permission => (
            "Permission",
            "Gives some users access to a feature; usually long-lived.",
        ),
        FeatureType::Sunset => (
            "Sunset",
            "Keeps an old behaviour for the clients that still need it until it is removed.",
        ),
    };
    let lifetime_days = lifetimes
        .iter()
        .find(|(id, _)| id == feature_type.as_str())
        .and_then(|(_, days)| u32::try_from((*days)?).ok());
    FeatureTypeInfo {
        id: feature_type.as_str().to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        lifetime_days,
    }
}

pub async fn list(conn: &mut AnyConnection) -> Result<FeatureTypes, ApiError> {
    let lifetimes = store::lifetimes(conn).await?;
    Ok(FeatureTypes {
        version: 1,
        types: FEATURE_TYPES
            .into_iter()
            .map(|feature_type| info(feature_type, &lifetimes))
            .collect(),
    })
}

/// The creation time before which a flag of each type with a lifetime is potentially stale at `now_ms`.
pub async fn stale_cutoffs(
    conn: &mut AnyConnection,
    now_ms: i64,
) -> Result<Vec<(String, Timestamp)>, ApiError> {
    const DAY_MS: i64 = 24 * 60 * 60 * 1000;
    Ok(list(conn)
        .await?
        .types
        .into_iter()
        .filter_map(|info| {
            let before =
                now_ms.saturating_sub(i64::from(info.lifetime_days?).saturating_mul(DAY_MS));
            Some((
                info.id,
                Timestamp::from_millis(before).unwrap_or(Timestamp::EPOCH),
            ))
        })
        .collect())
}

/// Sets a flag type's lifetime (`0` or `null`: never potentially stale) with `feature-type-updated`; 404 for
/// an unknown type, 400 for a missing, negative or too large lifetime. Setting the one it has changes
/// nothing.
pub async fn set_lifetime(
    tx: &mut WriteTx,
    id: &str,
    input: &UpdateFeatureTypeLifetime,
) -> Result<FeatureTypeInfo, ApiError> {
    let Some(days) = input.lifetime_days else {
        return Err(ApiError::invalid_field(
            "lifetimeDays",
            "lifetimeDays is required",
        ));
    };
    if days.is_some_and(|days| !(0..=i64::from(i32::MAX)).contains(&days)) {
        return Err(ApiError::invalid_field(
            "lifetimeDays",
            "lifetimeDays must be an integer from 0 to 2147483647 (or null)",
        ));
    }
    let Some(feature_type) = FeatureType::from_stored(id) else {
        return Err(ApiError::not_found(format!(
            "There is no flag type named {id}"
        )));
    };
    let days = days.filter(|days| *days > 0);
    let before = list(tx.conn()).await?;
    if store::set_lifetime(tx.conn(), id, days).await? {
        let after = info(feature_type, &store::lifetimes(tx.conn()).await?);
        let pre = before.types.into_iter().find(|info| info.id == id);
        tx.record(
            EventType::FeatureTypeUpdated
                .instance_wide(Some(json!(after)), pre.map(|pre| json!(pre))),
        )
        .await?;
        return Ok(after);
    }
    Ok(info(feature_type, &store::lifetimes(tx.conn()).await?))
}
