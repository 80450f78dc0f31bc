//! Maintenance mode (Unleash's `/api/admin/maintenance`): while it is on, every admin write but turning it
//! off and the caller's own account answers 503 (`http::extract::AdminCaller`), the UI says so and refuses its
//! forms the same way, and the SDK routes and edges keep serving. A setting of the store, so every replica
//! sees it at its next request.

use super::events::EventType;
use crate::store::{settings as settings_store, Store, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// The route that switches maintenance mode: the one admin change it never refuses.
pub const SWITCH_PATH: &str = "/api/admin/maintenance";

/// Unleash's maintenanceSchema and toggleMaintenanceSchema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Maintenance {
    pub enabled: bool,
}

/// Whether the background jobs (scheduled change requests, release-plan progressions, actions, the
/// potentially-stale job) wait: while maintenance mode is on they change nothing, as Unleash's scheduler
/// pauses; what fell due meanwhile runs once it is off. A store that cannot be read pauses nothing (the job
/// meets the same error itself and says so).
pub async fn pauses_jobs(store: &Store) -> bool {
    let Ok(mut conn) = store.read().await else {
        return false;
    };
    is_on(&mut conn).await.unwrap_or(false)
}

/// Whether maintenance mode is on.
pub async fn is_on(conn: &mut AnyConnection) -> Result<bool, ApiError> {
    Ok(settings_store::maintenance::<Maintenance>(conn)
        .await?
        .is_some_and(|stored| stored.enabled))
}

/// Turns maintenance mode on or off: `setting-created` the first time, `setting-updated` on a change after.
pub async fn set(tx: &mut WriteTx, input: Maintenance) -> Result<(), ApiError> {
    let before = settings_store::maintenance::<Maintenance>(tx.conn()).await?;
    if before == Some(input) {
        return Ok(());
    }
    settings_store::set_maintenance(tx.conn(), &input).await?;
    let data = |value: Maintenance| serde_json::json!({ "id": "maintenanceMode", "value": value });
    let event = match before {
        None => EventType::SettingCreated.instance_wide(Some(data(input)), None),
        Some(before) => {
            EventType::SettingUpdated.instance_wide(Some(data(input)), Some(data(before)))
        }
    };
    tx.record(event).await?;
    Ok(())
}

/// The answer to a change asked while maintenance mode is on.
pub fn refusal() -> ApiError {
    ApiError::new(
        ErrorKind::Unavailable,
        "Vexil is in maintenance mode: changes are paused until an Admin turns it off \
         (POST /api/admin/maintenance {\"enabled\": false}); flags are still served",
    )
}
