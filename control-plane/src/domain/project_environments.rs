//! `GET /api/admin/environments/project/:projectId`: the environments a project uses, each with what the
//! project has there: its API tokens for that environment, its live flags that are on, and the approvals
//! its change requests need (null when change requests are off there).

use super::{project_admin, projects};
use crate::model::strategy::StrategyInput;
use crate::store::change_requests as change_request_store;
use crate::store::environments as environment_store;
use crate::store::features as feature_store;
use crate::store::projects as project_store;
use crate::store::tokens as token_store;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::BTreeSet;
use utoipa::ToSchema;
use vexil_shared::ApiError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectEnvironment {
    pub name: String,
    #[serde(rename = "type")]
    pub environment_type: String,
    pub enabled: bool,
    pub protected: bool,
    pub sort_order: i64,
    /// API tokens of this project (alone or among others) for this environment.
    pub project_api_token_count: usize,
    /// Live flags of the project that are on in this environment.
    pub project_enabled_toggle_count: usize,
    pub required_approvals: Option<i64>,
    /// What a flag without strategies here gets when switched on; absent: `flexibleRollout` at 100 %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_strategy: Option<StrategyInput>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProjectEnvironments {
    pub version: u32,
    pub environments: Vec<ProjectEnvironment>,
}

pub async fn list(
    conn: &mut AnyConnection,
    project: &str,
) -> Result<ProjectEnvironments, ApiError> {
    projects::require(conn, project).await?;
    let live: BTreeSet<String> = feature_store::list_live(conn, project)
        .await?
        .into_iter()
        .map(|row| row.name)
        .collect();
    let tokens = token_store::list(conn).await?;
    let mut environments = Vec::new();
    for name in project_store::environments(conn, project).await? {
        let Some(row) = environment_store::get(conn, &name).await? else {
            continue;
        };
        let enabled_flags = feature_store::enabled_in(conn, &name)
            .await?
            .into_iter()
            .filter(|flag| live.contains(flag))
            .count();
        let token_count = tokens
            .iter()
            .filter(|token| {
                token.environment == name && token.projects.iter().any(|one| one == project)
            })
            .count();
        let required_approvals = change_request_store::setting(conn, project, &name)
            .await?
            .filter(|setting| setting.enabled)
            .map(|setting| setting.required_approvals);
        environments.push(ProjectEnvironment {
            name: row.name,
            environment_type: row.environment_type,
            enabled: row.enabled,
            protected: row.protected,
            sort_order: row.sort_order,
            project_api_token_count: token_count,
            project_enabled_toggle_count: enabled_flags,
            required_approvals,
            default_strategy: project_admin::default_strategy(conn, project, &name).await?,
        });
    }
    environments.sort_by(|a, b| (a.sort_order, &a.name).cmp(&(b.sort_order, &b.name)));
    Ok(ProjectEnvironments {
        version: 1,
        environments,
    })
}
