//! More of the applications view: one environment's instances of an application
//! (`GET /api/admin/metrics/instances/:appName/environment/:environment`), forgetting an application
//! (`DELETE /api/admin/metrics/applications/:appName`) and the flag names applications count that no flag
//! has (`GET /api/admin/metrics/unknown-flags`), and the applications of a project
//! (`GET /api/admin/projects/:projectId/applications`). Usage data, not configuration: no revision, no event.

use crate::store::applications as sql;
use crate::store::projects as project_store;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use utoipa::IntoParams;
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

/// The largest `offset` (the events' bound: a 32-bit integer).
const MAX_OFFSET: usize = 2_147_483_647;

/// An SDK of a project's application, with the versions its instances report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProjectApplicationSdk {
    pub name: String,
    pub versions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProjectApplication {
    pub name: String,
    /// The environments its instances reported.
    pub environments: Vec<String>,
    /// Its instance ids.
    pub instances: Vec<String>,
    pub sdks: Vec<ProjectApplicationSdk>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProjectApplications {
    /// How many match `query`, before `offset` and `limit`.
    pub total: usize,
    pub applications: Vec<ProjectApplication>,
}

/// Paging and filtering of `GET /api/admin/projects/:projectId/applications` (strings, as Unleash takes them).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProjectApplicationsQuery {
    /// Part of the application name (case-insensitive).
    pub query: Option<String>,
    /// Default 0.
    pub offset: Option<String>,
    /// Default 50, at most 1000.
    pub limit: Option<String>,
    /// Only `name` (the default) is supported.
    pub sort_by: Option<String>,
    /// `asc` (default) or `desc`.
    pub sort_order: Option<String>,
}

fn number(field: &str, text: Option<&str>, default: usize, max: usize) -> Result<usize, ApiError> {
    let Some(text) = text else {
        return Ok(default);
    };
    match text.trim().parse::<usize>() {
        Ok(value) if value <= max => Ok(value),
        _ => Err(ApiError::invalid_field(
            field,
            format!("{field} must be a whole number from 0 to {max}"),
        )),
    }
}

/// The applications that reported a flag of the project; 404 for an unknown project.
pub async fn of_project(
    store: &Store,
    project: &str,
    query: ProjectApplicationsQuery,
) -> Result<ProjectApplications, ApiError> {
    let offset = number("offset", query.offset.as_deref(), 0, MAX_OFFSET)?;
    let limit = number("limit", query.limit.as_deref(), 50, 1000)?;
    if query.sort_by.as_deref().is_some_and(|by| by != "name") {
        return Err(ApiError::invalid_field(
            "sortBy",
            "sortBy: only name is supported",
        ));
    }
    let descending = match query.sort_order.as_deref() {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(_) => {
            return Err(ApiError::invalid_field(
                "sortOrder",
                "sortOrder must be asc or desc",
            ))
        }
    };
    let mut conn = store.read().await?;
    if project_store::get(&mut conn, project).await?.is_none() {
        return Err(ApiError::not_found(format!(
            "Project {project} does not exist"
        )));
    }
    let needle = query.query.unwrap_or_default().to_lowercase();
    let mut names: Vec<String> = sql::applications_of_project(&mut conn, project)
        .await?
        .into_iter()
        .filter(|name| name.to_lowercase().contains(&needle))
        .collect();
    if descending {
        names.reverse();
    }
    let total = names.len();
    let mut applications = Vec::new();
    for name in names.into_iter().skip(offset).take(limit) {
        let instances = sql::instances(&mut conn, &name).await?;
        let environments: BTreeSet<String> = instances
            .iter()
            .filter_map(|instance| instance.environment.clone())
            .collect();
        let mut sdks: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for sdk in instances
            .iter()
            .filter_map(|instance| instance.sdk_version.as_deref())
        {
            let (sdk_name, version) = sdk.split_once(':').unwrap_or((sdk, ""));
            let versions = sdks.entry(sdk_name.to_owned()).or_default();
            if !version.is_empty() {
                versions.insert(version.to_owned());
            }
        }
        applications.push(ProjectApplication {
            name,
            environments: environments.into_iter().collect(),
            instances: instances
                .into_iter()
                .map(|instance| instance.instance_id)
                .collect(),
            sdks: sdks
                .into_iter()
                .map(|(name, versions)| ProjectApplicationSdk {
                    name,
                    versions: versions.into_iter().collect(),
                })
                .collect(),
        });
    }
    Ok(ProjectApplications {
        total,
        applications,
    })
}
