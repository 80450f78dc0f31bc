//! More of the applications view: one environment's instances of an application
//! (`GET /api/admin/metrics/instances/:appName/environment/:environment`), forgetting an application
//! (`DELETE /api/admin/metrics/applications/:appName`) and the flag names applications count that no flag
//! has (`GET /api/admin/metrics/unknown-flags`). Usage data, not configuration: no revision, no event.

use crate::store::metrics as sql;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vexil_shared::ApiError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentInstance {
    pub instance_id: String,
    pub sdk_version: Option<String>,
    pub client_ip: Option<String>,
    pub last_seen: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EnvironmentInstances {
    pub instances: Vec<EnvironmentInstance>,
}

/// Where an application counted an unknown flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlagEnvironment {
    pub environment: String,
    pub seen_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlagReport {
    pub app_name: String,
    pub environments: Vec<UnknownFlagEnvironment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlag {
    pub name: String,
    /// The last minute (or, after the roll-up, hour) it was counted in.
    pub last_seen_at: String,
    /// Vexil keeps no events of flags that never existed: null.
    pub last_event_at: Option<String>,
    pub reports: Vec<UnknownFlagReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlags {
    pub unknown_flags: Vec<UnknownFlag>,
}

/// The instances of an application that reported this environment, most recently seen first; 404 for an
/// unknown application.
pub async fn instances(
    store: &Store,
    app_name: &str,
    environment: &str,
) -> Result<EnvironmentInstances, ApiError> {
    let mut conn = store.read().await?;
    if sql::application(&mut conn, app_name).await?.is_none() {
        return Err(ApiError::not_found(format!(
            "No application named {app_name}"
        )));
    }
    let instances = sql::instances(&mut conn, app_name)
        .await?
        .into_iter()
        .filter(|instance| instance.environment.as_deref() == Some(environment))
        .map(|instance| EnvironmentInstance {
            instance_id: instance.instance_id,
            sdk_version: instance.sdk_version,
            client_ip: instance.client_ip,
            last_seen: instance.last_seen.to_string(),
        })
        .collect();
    Ok(EnvironmentInstances { instances })
}

/// Forgets an application (unknown: nothing to do); it comes back when it registers again.
pub async fn delete(store: &Store, app_name: &str) -> Result<(), ApiError> {
    let mut conn = store.bookkeeping().await?;
    sql::delete_application(&mut conn, app_name).await?;
    Ok(())
}

pub async fn unknown_flags(store: &Store) -> Result<UnknownFlags, ApiError> {
    let mut conn = store.read().await?;
    let mut unknown_flags: Vec<UnknownFlag> = Vec::new();
    for row in sql::unknown_flags(&mut conn).await? {
        let seen_at = row.last_seen.to_string();
        let environment = UnknownFlagEnvironment {
            environment: row.environment,
            seen_at: seen_at.clone(),
        };
        let flag = match unknown_flags.last_mut() {
            Some(flag) if flag.name == row.feature_name => flag,
            _ => {
                unknown_flags.push(UnknownFlag {
                    name: row.feature_name,
                    last_seen_at: seen_at.clone(),
                    last_event_at: None,
                    reports: Vec::new(),
                });
                unknown_flags.last_mut().ok_or_else(ApiError::internal)?
            }
        };
        if seen_at > flag.last_seen_at {
            flag.last_seen_at = seen_at;
        }
        match flag.reports.last_mut() {
            Some(report) if report.app_name == row.app_name => {
                report.environments.push(environment)
            }
            _ => flag.reports.push(UnknownFlagReport {
                app_name: row.app_name,
                environments: vec![environment],
            }),
        }
    }
    Ok(UnknownFlags { unknown_flags })
}
