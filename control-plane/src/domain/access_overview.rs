//! What people may do, read back: one user's permissions in a project and environment
//! (`GET /api/admin/user-admin/:id/permissions`), and everyone's root role, groups and projects
//! (`GET /api/admin/access/overview`). Both ask `domain::access` itself, so they show what it decides.

use super::access::{self, Scope};
use super::permissions::{Level, Permission};
use super::role_admin::RoleBody;
use super::roles::RootRole;
use super::users::{self, User};
use crate::store::groups as group_store;
use crate::store::roles as role_store;
use crate::store::users::{self as user_store, Account, UserRow};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::{IntoParams, ToSchema};
use vexil_shared::ApiError;

/// One permission and whether the user holds it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldPermission {
    pub id: i64,
    pub name: String,
    pub display_name: String,
    #[serde(rename = "type")]
    pub permission_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    pub has_permission: bool,
}

/// The permissions at each level, each held or not.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HeldPermissions {
    pub root: Vec<HeldPermission>,
    pub project: Vec<HeldPermission>,
    pub environment: Vec<HeldPermission>,
}

/// `GET /api/admin/user-admin/:id/permissions` (userAccessOverviewSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserAccess {
    pub overview: HeldPermissions,
    pub user: User,
    pub root_role: RoleBody,
    /// The roles the user has in the project asked about (directly or through a group).
    pub project_roles: Vec<RoleBody>,
}

/// Where to look: a project (default `default`) and an environment (default: the first of the instance).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
pub struct Where {
    pub project: Option<String>,
    pub environment: Option<String>,
}

async fn require_user(conn: &mut AnyConnection, id: i64) -> Result<UserRow, ApiError> {
    match user_store::get_of(conn, id, Account::Person).await? {
        Some(row) => Ok(row),
        None => user_store::get_of(conn, id, Account::Service)
            .await?
            .ok_or_else(|| ApiError::not_found(format!("No user with id {id}"))),
    }
}

async fn root_role_body(conn: &mut AnyConnection, id: i64) -> Result<RoleBody, ApiError> {
    let row = role_store::get(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("No role with id {id}")))?;
    Ok(RoleBody {
        id: row.id,
        role_type: row.role_type,
        name: row.name,
        description: row.description,
    })
}

pub async fn of_user(conn: &mut AnyConnection, id: i64, at: Where) -> Result<UserAccess, ApiError> {
    let row = require_user(conn, id).await?;
    let grants = access::caller(conn, row.clone()).await?.grants;
    let project = at.project.unwrap_or_else(|| "default".to_owned());
    let environment = match at.environment {
        Some(environment) => environment,
        None => crate::store::environments::list(conn)
            .await?
            .into_iter()
            .next()
            .map(|row| row.name)
            .unwrap_or_default(),
    };
    let scope = Scope::environment(&project, &environment);
    let held = |level: Level| {
        Permission::at(level)
            .map(|permission| HeldPermission {
                id: permission.id(),
                name: permission.name().to_owned(),
                display_name: permission.display_name().to_owned(),
                permission_type: match level {
                    Level::Root => "root",
                    Level::Project => "project",
                    Level::Environment => "environment",
                }
                .to_owned(),
                environment: (level == Level::Environment).then(|| environment.clone()),
                has_permission: grants.allows(permission, &scope),
            })
            .collect()
    };
    let overview = HeldPermissions {
        root: held(Level::Root),
        project: held(Level::Project),
        environment: held(Level::Environment),
    };
    let mut project_roles = Vec::new();
    let mut role_ids: Vec<i64> = role_store::of_user(conn, row.id)
        .await?
        .into_iter()
        .filter(|(in_project, _)| *in_project == project)
        .map(|(_, role)| role)
        .collect();
    role_ids.sort_unstable();
    role_ids.dedup();
    for role in role_ids {
        project_roles.push(root_role_body(conn, role).await?);
    }
    let root_role = root_role_body(conn, row.root_role).await?;
    Ok(UserAccess {
        overview,
        user: users::view(row),
        root_role,
        project_roles,
    })
}

/// One person's access (userAccessSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonAccess {
    pub user_id: i64,
    pub created_at: Option<String>,
    pub user_name: Option<String>,
    pub last_seen: Option<String>,
    pub accessible_projects: Vec<String>,
    pub groups: Vec<String>,
    /// The root role's name.
    pub root_role: String,
    pub user_email: String,
}

/// `GET /api/admin/access/overview` (accessOverviewSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AccessOverview {
    pub overview: Vec<PersonAccess>,
}

pub async fn overview(conn: &mut AnyConnection) -> Result<AccessOverview, ApiError> {
    let all_projects: Vec<String> = crate::store::projects::list(conn)
        .await?
        .into_iter()
        .map(|row| row.id)
        .collect();
    let mut overview = Vec::new();
    for row in user_store::list(conn).await? {
        let own = RootRole::from_id(row.root_role).unwrap_or(RootRole::Viewer);
        let grants = access::caller(conn, row.clone()).await?.grants;
        let accessible_projects = match grants.projects() {
            None => all_projects.clone(),
            Some(projects) => projects.into_iter().collect(),
        };
        let groups = group_store::groups_of(conn, row.id)
            .await?
            .into_iter()
            .map(|group| group.name)
            .collect();
        let root_role = role_store::get(conn, row.root_role)
            .await?
            .map_or_else(|| own.name().to_owned(), |role| role.name);
        overview.push(PersonAccess {
            user_id: row.id,
            created_at: Some(row.created_at.to_string()),
            user_name: row.name.clone().or(row.username.clone()),
            last_seen: row.seen_at.map(|at| at.to_string()),
            accessible_projects,
            groups,
            root_role,
            user_email: row.email.unwrap_or_default(),
        });
    }
    Ok(AccessOverview { overview })
}
