//! Projects and the environments each uses. `default` always exists.

use super::events::{payload, EventType};
use super::limits::{self, Limits};
use super::project_access;
use crate::model::name;
use crate::model::strategy::StrategyInput;
use crate::store::environments as environment_store;
use crate::store::favorites::{self as favorite_store, Favorite};
use crate::store::projects::{self as project_store, ProjectRow};
use crate::store::segments as segment_store;
use crate::store::{NewEvent, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

pub const DEFAULT_PROJECT: &str = "default";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProjectMode {
    Open,
    Protected,
    Private,
}

impl ProjectMode {
    fn as_str(self) -> &'static str {
        match self {
            ProjectMode::Open => "open",
            ProjectMode::Protected => "protected",
            ProjectMode::Private => "private",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub mode: String,
    pub default_stickiness: String,
    /// Environments the project uses, in environment order.
    pub environments: Vec<String>,
    /// Live (not archived) flags.
    pub feature_count: i64,
    pub created_at: String,
    pub updated_at: Option<String>,
    /// When the project was archived (`POST /api/admin/projects/archive/:projectId`); absent while active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    /// True when the caller marked it a favourite (in the list; never for an API token, which has no user);
    /// absent otherwise, so that the events' project payloads do not carry it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub favorite: bool,
    /// The users with a role in the project, directly or through a group (`project_access::members`, Unleash's
    /// `memberCount`): in the list only, absent elsewhere (the events' project payloads do not carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_count: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProjectList {
    pub version: u32,
    pub projects: Vec<Project>,
}

/// `POST /api/admin/projects`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProject {
    /// Defaults to `name`.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[A-Za-z0-9._~!*'()-]*[A-Za-z0-9_~!*'()-][A-Za-z0-9._~!*'()-]*$"
    )]
    pub id: Option<String>,
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub name: String,
    pub description: Option<String>,
    pub mode: Option<ProjectMode>,
    pub default_stickiness: Option<String>,
    /// Environments to use; default: every environment.
    pub environments: Option<Vec<String>>,
}

/// `PUT /api/admin/projects/:projectId`: absent optional fields keep their value.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProject {
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub name: String,
    pub description: Option<String>,
    pub mode: Option<ProjectMode>,
    pub default_stickiness: Option<String>,
}

/// `POST /api/admin/projects/:projectId/environments`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddProjectEnvironment {
    pub environment: String,
    /// Accepted for compatibility; change requests come in a later version.
    pub change_requests_enabled: Option<bool>,
    /// The environment's default strategy in this project (`project_admin::add_environment` sets it).
    #[serde(default)]
    pub default_strategy: Option<StrategyInput>,
}

fn validate_display_name(name: &str) -> Result<(), ApiError> {
    let length = name.trim().chars().count();
    if length == 0 || length > 100 {
        return Err(ApiError::invalid_field(
            "name",
            "name must be 1 to 100 characters long",
        ));
    }
    Ok(())
}

async fn view(conn: &mut AnyConnection, row: ProjectRow) -> Result<Project, ApiError> {
    let environments = project_store::environments(conn, &row.id).await?;
    let feature_count = project_store::feature_count(conn, &row.id, false).await?;
    Ok(project_of(row, environments, feature_count))
}

/// A project's view from its row, its environments and its count of live flags.
fn project_of(row: ProjectRow, environments: Vec<String>, feature_count: i64) -> Project {
    Project {
        id: row.id,
        name: row.name,
        description: row.description,
        mode: row.mode,
        default_stickiness: row.default_stickiness,
        environments,
        feature_count,
        created_at: row.created_at.to_string(),
        updated_at: row.updated_at.map(|at| at.to_string()),
        archived_at: row.archived_at.map(|at| at.to_string()),
        favorite: false,
        member_count: None,
    }
}

/// The project row or 404.
pub async fn require(conn: &mut AnyConnection, id: &str) -> Result<ProjectRow, ApiError> {
    project_store::get(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Project {id} does not exist")))
}

/// 400 while the project is archived: it takes no new flags (created, revived or moved in).
pub fn ensure_active(row: &ProjectRow) -> Result<(), ApiError> {
    if row.archived_at.is_some() {
        return Err(ApiError::validation(format!(
            "Project {} is archived; revive it first (POST /api/admin/projects/revive/{})",
            row.id, row.id
        )));
    }
    Ok(())
}

/// Every project, with its environments and flag count read for all projects at once (three statements,
/// whatever their number).
pub async fn list(conn: &mut AnyConnection) -> Result<ProjectList, ApiError> {
    let rows = project_store::list(conn).await?;
    let mut environments = project_store::environments_of_all(conn).await?;
    let counts = project_store::feature_counts(conn).await?;
    let projects = rows
        .into_iter()
        .map(|row| {
            let used = environments.remove(&row.id).unwrap_or_default();
            let count = counts.get(&row.id).copied().unwrap_or(0);
            project_of(row, used, count)
        })
        .collect();
    Ok(ProjectList {
        version: 1,
        projects,
    })
}

/// The projects as the user `user_id` sees them, each with its member count: their favourites marked and
/// first, each part in the list's order (a negative id, an API token: none).
pub async fn list_for(conn: &mut AnyConnection, user_id: i64) -> Result<ProjectList, ApiError> {
    let mut list = list(conn).await?;
    let favorites = if user_id < 0 {
        Default::default()
    } else {
        favorite_store::of_user(conn, Favorite::Project, user_id).await?
    };
    let members = project_access::members(conn, None, Timestamp::EPOCH).await?;
    for project in &mut list.projects {
        project.favorite = favorites.contains(&project.id);
        project.member_count = Some(members.get(&project.id).map_or(0, |members| members.count));
    }
    list.projects.sort_by_key(|project| !project.favorite);
    Ok(list)
}

pub async fn get(conn: &mut AnyConnection, id: &str) -> Result<Project, ApiError> {
    let row = require(conn, id).await?;
    view(conn, row).await
}

pub async fn create(
    tx: &mut WriteTx,
    input: CreateProject,
    limits: &Limits,
) -> Result<Project, ApiError> {
    let id = input.id.unwrap_or_else(|| input.name.clone());
    name::validate("id", &id)?;
    validate_display_name(&input.name)?;
    let count = project_store::count_all(tx.conn()).await?;
    limits::ensure_within("projects", "projects", to_count(count) + 1, limits.projects)?;
    if project_store::get(tx.conn(), &id).await?.is_some() {
        return Err(ApiError::name_exists(format!(
            "A project with id {id} already exists"
        )));
    }
    let environments = match input.environments {
        Some(environments) => {
            for environment in &environments {
                if environment_store::get(tx.conn(), environment)
                    .await?
                    .is_none()
                {
                    return Err(ApiError::invalid_field(
                        "environments",
                        format!("environments: {environment} does not exist"),
                    ));
                }
            }
            environments
        }
        None => environment_store::list(tx.conn())
            .await?
            .into_iter()
            .map(|row| row.name)
            .collect(),
    };
    let row = ProjectRow {
        id: id.clone(),
        name: input.name,
        description: input.description,
        mode: input.mode.unwrap_or(ProjectMode::Open).as_str().to_owned(),
        default_stickiness: input
            .default_stickiness
            .unwrap_or_else(|| "default".to_owned()),
        created_at: tx.now(),
        updated_at: None,
        archived_at: None,
    };
    project_store::insert(tx.conn(), &row).await?;
    for environment in environments {
        if !project_store::has_environment(tx.conn(), &id, &environment).await? {
            project_store::add_environment(tx.conn(), &id, &environment).await?;
        }
    }
    let project = view(tx.conn(), row).await?;
    tx.record(NewEvent {
        event_type: EventType::ProjectCreated.as_str(),
        project: Some(id.clone()),
        data: Some(payload(&project)),
        ..NewEvent::default()
    })
    .await?;
    super::project_access::creator_becomes_owner(tx, &id).await?;
    Ok(project)
}

pub async fn update(tx: &mut WriteTx, id: &str, input: UpdateProject) -> Result<Project, ApiError> {
    validate_display_name(&input.name)?;
    let before_row = require(tx.conn(), id).await?;
    let before = view(tx.conn(), before_row.clone()).await?;
    let row = ProjectRow {
        name: input.name,
        description: input.description.or(before_row.description.clone()),
        mode: input
            .mode
            .map(|mode| mode.as_str().to_owned())
            .unwrap_or(before_row.mode.clone()),
        default_stickiness: input
            .default_stickiness
            .unwrap_or(before_row.default_stickiness.clone()),
        updated_at: Some(tx.now()),
        ..before_row
    };
    project_store::update(tx.conn(), &row).await?;
    let project = view(tx.conn(), row).await?;
    tx.record(NewEvent {
        event_type: EventType::ProjectUpdated.as_str(),
        project: Some(id.to_owned()),
        data: Some(payload(&project)),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(project)
}

/// Deletes a project that holds no flags (archived ones included) and owns no segments; `default` cannot be
/// deleted.
pub async fn delete(tx: &mut WriteTx, id: &str) -> Result<(), ApiError> {
    if id == DEFAULT_PROJECT {
        return Err(ApiError::validation(
            "The default project cannot be deleted",
        ));
    }
    let row = require(tx.conn(), id).await?;
    if project_store::feature_count(tx.conn(), id, true).await? > 0 {
        return Err(ApiError::validation(format!(
            "Project {id} still holds flags; archive and delete them first"
        )));
    }
    if segment_store::count_in_project(tx.conn(), id).await? > 0 {
        return Err(ApiError::validation(format!(
            "Project {id} still owns segments; delete them or make them global first"
        )));
    }
    if crate::store::context_fields::count_in_project(tx.conn(), id).await? > 0 {
        return Err(ApiError::validation(format!(
            "Project {id} still owns context fields; delete them first"
        )));
    }
    let before = view(tx.conn(), row).await?;
    crate::store::change_requests::delete_of_project(tx.conn(), id).await?;
    project_store::delete(tx.conn(), id).await?;
    tx.record(NewEvent {
        event_type: EventType::ProjectDeleted.as_str(),
        project: Some(id.to_owned()),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

pub async fn add_environment(
    tx: &mut WriteTx,
    id: &str,
    input: AddProjectEnvironment,
) -> Result<(), ApiError> {
    require(tx.conn(), id).await?;
    let environment = input.environment;
    if environment_store::get(tx.conn(), &environment)
        .await?
        .is_none()
    {
        return Err(ApiError::not_found(format!(
            "Environment {environment} does not exist"
        )));
    }
    if project_store::has_environment(tx.conn(), id, &environment).await? {
        return Err(ApiError::name_exists(format!(
            "Environment {environment} is already in project {id}"
        )));
    }
    project_store::add_environment(tx.conn(), id, &environment).await?;
    tx.record(NewEvent {
        event_type: EventType::ProjectEnvironmentAdded.as_str(),
        project: Some(id.to_owned()),
        environment: Some(environment.clone()),
        data: Some(serde_json::json!({ "environment": environment })),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// Removes an environment from a project; the flags' settings there are kept for when it comes back.
pub async fn remove_environment(
    tx: &mut WriteTx,
    id: &str,
    environment: &str,
) -> Result<(), ApiError> {
    require(tx.conn(), id).await?;
    if !project_store::has_environment(tx.conn(), id, environment).await? {
        return Err(ApiError::not_found(format!(
            "Environment {environment} is not in project {id}"
        )));
    }
    project_store::remove_environment(tx.conn(), id, environment).await?;
    tx.record(NewEvent {
        event_type: EventType::ProjectEnvironmentRemoved.as_str(),
        project: Some(id.to_owned()),
        environment: Some(environment.to_owned()),
        pre_data: Some(serde_json::json!({ "environment": environment })),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// A SQL count as a `usize`.
pub(crate) fn to_count(count: i64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}
