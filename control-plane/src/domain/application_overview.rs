//! `GET /api/admin/metrics/applications/:appName/overview`: what an application's registrations and usage
//! say, per environment of its instances. What Vexil does not know is left empty rather than guessed: the
//! frontend SDKs (their register posts are checked, not stored, so every stored instance is a backend SDK)
//! and outdated SDKs (Vexil keeps no table of SDK versions). The flags an application reported are kept
//! per application, not per environment, so each environment lists the same missing flags.

use crate::store::applications as sql;
use crate::store::features as feature_store;
use crate::store::strategy_definitions as definition_store;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The environment an instance that named none is counted under (Unleash's default).
const DEFAULT_ENVIRONMENT: &str = "default";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentIssues {
    /// Flags the application reported that do not exist.
    pub missing_features: Vec<String>,
    pub outdated_sdks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewEnvironment {
    pub name: String,
    pub instance_count: usize,
    /// Distinct `sdkVersion`s of the instances (`name:version`), sorted.
    pub sdks: Vec<String>,
    pub frontend_sdks: Vec<String>,
    pub backend_sdks: Vec<String>,
    pub last_seen: Option<String>,
    pub issues: EnvironmentIssues,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewIssues {
    /// Strategies the application registered that are not defined.
    pub missing_strategies: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationOverview {
    /// The projects of the existing flags the application reported.
    pub projects: Vec<String>,
    /// How many flag names the application reported.
    pub feature_count: usize,
    pub environments: Vec<OverviewEnvironment>,
    pub issues: OverviewIssues,
}

/// Unknown application → 404.
pub async fn overview(store: &Store, app_name: &str) -> Result<ApplicationOverview, ApiError> {
    let mut conn = store.read().await?;
    if sql::application(&mut conn, app_name).await?.is_none() {
        return Err(ApiError::not_found(format!(
            "No application named {app_name}"
        )));
    }
    let seen = sql::seen_toggles(&mut conn, app_name).await?;
    let mut projects = BTreeSet::new();
    let mut missing_features = Vec::new();
    for name in &seen {
        match feature_store::get(&mut conn, name).await? {
            Some(row) => {
                projects.insert(row.project_id);
            }
            None => missing_features.push(name.clone()),
        }
    }
    let mut missing_strategies = BTreeSet::new();
    for strategy in sql::registrations(&mut conn, app_name)
        .await?
        .into_iter()
        .flatten()
    {
        if definition_store::get(&mut conn, &strategy).await?.is_none() {
            missing_strategies.insert(strategy);
        }
    }
    let mut by_environment: BTreeMap<String, Vec<sql::InstanceRow>> = BTreeMap::new();
    for instance in sql::instances(&mut conn, app_name).await? {
        let environment = instance
            .environment
            .clone()
            .unwrap_or_else(|| DEFAULT_ENVIRONMENT.to_owned());
        by_environment
            .entry(environment)
            .or_default()
            .push(instance);
    }
    let environments = by_environment
        .into_iter()
        .map(|(name, instances)| {
            let sdks: Vec<String> = instances
                .iter()
                .filter_map(|instance| instance.sdk_version.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            OverviewEnvironment {
                name,
                instance_count: instances.len(),
                frontend_sdks: Vec::new(),
                backend_sdks: sdks.clone(),
                sdks,
                last_seen: instances
                    .iter()
                    .map(|instance| instance.last_seen)
                    .max()
                    .map(|at| at.to_string()),
                issues: EnvironmentIssues {
                    missing_features: missing_features.clone(),
                    outdated_sdks: Vec::new(),
                },
            }
        })
        .collect();
    Ok(ApplicationOverview {
        projects: projects.into_iter().collect(),
        feature_count: seen.len(),
        environments,
        issues: OverviewIssues {
            missing_strategies: missing_strategies.into_iter().collect(),
        },
    })
}
