//! A flag's switch in one environment, as the last step of turning it on or off (after the strategies are
//! in order) and when its last enabled strategy goes: the row and its `feature-environment-enabled` /
//! `-disabled` event.

use super::events::EventType;
use crate::store::features::{self as feature_store, FeatureRow};
use crate::store::{NewEvent, WriteTx};
use vexil_shared::ApiError;

/// Sets the switch and records `feature-environment-enabled` / `-disabled`.
pub async fn switch(
    tx: &mut WriteTx,
    row: &FeatureRow,
    environment: &str,
    enabled: bool,
) -> Result<(), ApiError> {
    feature_store::set_enabled(tx.conn(), &row.name, environment, enabled).await?;
    let event_type = if enabled {
        EventType::FeatureEnvironmentEnabled
    } else {
        EventType::FeatureEnvironmentDisabled
    };
    tx.record(NewEvent {
        event_type: event_type.as_str(),
        project: Some(row.project_id.clone()),
        environment: Some(environment.to_owned()),
        feature_name: Some(row.name.clone()),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}
