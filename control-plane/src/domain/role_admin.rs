//! Roles as the admin API manages them (`/api/admin/roles`): the predefined ones (root Admin, Editor, Viewer;
//! project Owner, Member) with their fixed permissions, and custom ones — custom root roles (`root-custom`,
//! root permissions) and custom project roles (`custom`, project permissions and environment permissions
//! each in a named environment). A role in use cannot be deleted.

use super::events::EventType;
use super::permissions::{Level, Permission, PermissionBody};
use super::roles::{ProjectRole, RoleReference, RootRole};
use crate::store::environments as environment_store;
use crate::store::roles::{self as role_store, RolePermissionRow, RoleRow, Subject};
use crate::store::users as user_store;
use crate::store::{Counter, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A role (Unleash's roleSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RoleBody {
    pub id: i64,
    /// `root`, `project`, `root-custom` or `custom`.
    #[serde(rename = "type")]
    pub role_type: String,
    pub name: String,
    pub description: String,
}

impl RoleBody {
    fn of(row: &RoleRow) -> RoleBody {
        RoleBody {
            id: row.id,
            role_type: row.role_type.clone(),
            name: row.name.clone(),
            description: row.description.clone(),
        }
    }
}

/// `GET /api/admin/roles` (rolesWithVersionSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RolesBody {
    pub version: i64,
    pub roles: Vec<RoleBody>,
}

/// A role with its permissions (roleWithPermissionsSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RoleWithPermissions {
    pub id: i64,
    #[serde(rename = "type")]
    pub role_type: String,
    pub name: String,
    pub description: String,
    pub permissions: Vec<PermissionBody>,
}

/// What `POST /api/admin/roles` and `PUT …/:id` answer (roleWithVersionSchema: `roles` is one role).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RoleWithVersion {
    pub version: i64,
    pub roles: RoleBody,
}

/// A permission as a role body names it: by name (or id), with its environment for an environment one.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
pub struct PermissionReference {
    /// A permission's name as `GET /api/admin/permissions` lists it.
    #[serde(default)]
    #[schema(pattern = r"^[A-Z][A-Z_]*$")]
    pub name: Option<String>,
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub environment: Option<String>,
}

/// The body of `POST /api/admin/roles`, `PUT …/:id` and `…/validate` (createRoleWithPermissionsSchema).
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
pub struct RoleInput {
    /// 1 to 100 characters once trimmed, unique among roles.
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// `root-custom` or `custom` (the default).
    #[serde(default, rename = "type")]
    #[schema(pattern = r"^(root-custom|custom)$")]
    pub role_type: Option<String>,
    #[serde(default)]
    pub permissions: Vec<PermissionReference>,
}

const CUSTOM_ROOT: &str = "root-custom";
const CUSTOM_PROJECT: &str = "custom";

pub async fn list(conn: &mut AnyConnection) -> Result<RolesBody, ApiError> {
    Ok(RolesBody {
        version: 1,
        roles: role_store::list(conn)
            .await?
            .iter()
            .map(RoleBody::of)
            .collect(),
    })
}

/// The project roles, as a project's access lists them (predefined first).
pub async fn project_roles(conn: &mut AnyConnection) -> Result<Vec<RoleBody>, ApiError> {
    Ok(role_store::list(conn)
        .await?
        .iter()
        .filter(|row| is_project_role(row))
        .map(RoleBody::of)
        .collect())
}

fn is_project_role(row: &RoleRow) -> bool {
    row.role_type == "project" || row.role_type == CUSTOM_PROJECT
}

async fn require(conn: &mut AnyConnection, id: i64) -> Result<RoleRow, ApiError> {
    role_store::get(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("No role with id {id}")))
}

/// A project role by id, or 400 naming `field`.
pub async fn require_project_role(
    conn: &mut AnyConnection,
    field: &str,
    id: i64,
) -> Result<RoleRow, ApiError> {
    match role_store::get(conn, id).await? {
        Some(row) if is_project_role(&row) => Ok(row),
        Some(row) => Err(ApiError::invalid_field(
            field,
            format!(
                "{field}: {} is a root role; a project's access takes project roles (4 Owner, 5 Member or a custom project role)",
                row.name
            ),
        )),
        None => Err(ApiError::invalid_field(
            field,
            format!("{field}: no role with id {id}"),
        )),
    }
}

/// A body's `rootRole` as a role id: a predefined root role (id or name) or a custom root role (id or name).
pub async fn root_role_id(
    conn: &mut AnyConnection,
    field: &str,
    reference: &RoleReference,
) -> Result<i64, ApiError> {
    if let Ok(role) = RootRole::from_reference(field, reference) {
        return Ok(role.id());
    }
    let id = match reference {
        RoleReference::Id(id) => Some(*id),
        RoleReference::Name(name) => role_store::id_of_name(conn, name).await?,
    };
    match id {
        Some(id) => match role_store::get(conn, id).await? {
            Some(row) if row.role_type == CUSTOM_ROOT => Ok(row.id),
            _ => Err(not_a_root_role(field)),
        },
        None => Err(not_a_root_role(field)),
    }
}

fn not_a_root_role(field: &str) -> ApiError {
    ApiError::invalid_field(
        field,
        format!("{field} must be 1 (Admin), 2 (Editor), 3 (Viewer) or a custom root role"),
    )
}

/// The permissions role `row` holds, each environment permission once per environment it names (the
/// predefined ones: every environment, listed without one).
pub async fn permissions_of(
    conn: &mut AnyConnection,
    row: &RoleRow,
) -> Result<Vec<PermissionBody>, ApiError> {
    let fixed: Option<Vec<Permission>> =
        match (RootRole::from_id(row.id), ProjectRole::from_id(row.id)) {
            (Some(RootRole::Admin), _) => Some(Permission::ALL.to_vec()),
            (Some(RootRole::Editor), _) => Some(
                Permission::ALL
                    .iter()
                    .copied()
                    .filter(|permission| {
                        permission.of_editor_root() || permission.of_editor_everywhere()
                    })
                    .collect(),
            ),
            (Some(RootRole::Viewer), _) => Some(Vec::new()),
            (None, Some(role)) => Some(role.permissions().collect()),
            (None, None) => None,
        };
    if let Some(fixed) = fixed {
        return Ok(fixed
            .into_iter()
            .map(|permission| PermissionBody::of(permission, None))
            .collect());
    }
    Ok(role_store::permissions(conn, &[row.id])
        .await?
        .iter()
        .filter_map(|stored| {
            let permission = Permission::named(&stored.permission)?;
            let environment =
                (!stored.environment.is_empty()).then_some(stored.environment.as_str());
            Some(PermissionBody::of(permission, environment))
        })
        .collect())
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<RoleWithPermissions, ApiError> {
    let row = require(conn, id).await?;
    Ok(RoleWithPermissions {
        id: row.id,
        role_type: row.role_type.clone(),
        name: row.name.clone(),
        description: row.description.clone(),
        permissions: permissions_of(conn, &row).await?,
    })
}

/// A role body checked: its name, type and permissions (each known, at the type's levels, an environment
/// one in an environment that exists), as rows.
struct CheckedRole {
    name: String,
    description: String,
    role_type: &'static str,
    permissions: Vec<RolePermissionRow>,
}

async fn check(
    conn: &mut AnyConnection,
    input: RoleInput,
    id: Option<i64>,
) -> Result<CheckedRole, ApiError> {
    let name = input.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::invalid_field(
            "name",
            "name must be 1 to 100 characters",
        ));
    }
    if let Some(existing) = role_store::id_of_name(conn, &name).await? {
        if Some(existing) != id {
            return Err(ApiError::name_exists(format!(
                "A role named {name} already exists"
            )));
        }
    }
    let role_type = match input.role_type.as_deref() {
        None | Some(CUSTOM_PROJECT) => CUSTOM_PROJECT,
        Some(CUSTOM_ROOT) => CUSTOM_ROOT,
        Some(other) => {
            return Err(ApiError::invalid_field(
                "type",
                format!("type must be root-custom or custom, not {other}"),
            ))
        }
    };
    let environments: Vec<String> = environment_store::list(conn)
        .await?
        .into_iter()
        .map(|row| row.name)
        .collect();
    let mut permissions = Vec::new();
    for (index, reference) in input.permissions.iter().enumerate() {
        let field = format!("permissions[{index}]");
        let permission = match (&reference.name, reference.id) {
            (Some(name), _) => Permission::named(name),
            (None, Some(id)) => Permission::from_id(id),
            (None, None) => {
                return Err(ApiError::invalid_field(
                    &field,
                    format!("{field} must name a permission (name or id)"),
                ))
            }
        }
        .ok_or_else(|| {
            ApiError::invalid_field(
                &field,
                format!("{field}: no such permission (GET /api/admin/permissions lists them)"),
            )
        })?;
        let fits = match role_type {
            CUSTOM_ROOT => permission.level() == Level::Root,
            _ => permission.level() != Level::Root,
        };
        if !fits {
            return Err(ApiError::invalid_field(
                &field,
                format!(
                    "{field}: {} is a {} permission; a {role_type} role takes {} permissions",
                    permission.name(),
                    if permission.level() == Level::Root {
                        "root"
                    } else {
                        "project"
                    },
                    if role_type == CUSTOM_ROOT {
                        "root"
                    } else {
                        "project and environment"
                    }
                ),
            ));
        }
        let environment = match (permission.level(), reference.environment.as_deref()) {
            (Level::Environment, Some(environment))
                if environments.iter().any(|e| e == environment) =>
            {
                environment.to_owned()
            }
            (Level::Environment, Some(environment)) => {
                return Err(ApiError::invalid_field(
                    &field,
                    format!("{field}: environment {environment} does not exist"),
                ))
            }
            (Level::Environment, None) => {
                return Err(ApiError::invalid_field(
                    &field,
                    format!(
                        "{field}: {} needs the environment it applies in",
                        permission.name()
                    ),
                ))
            }
            _ => String::new(),
        };
        permissions.push(RolePermissionRow {
            role_id: id.unwrap_or_default(),
            permission: permission.name().to_owned(),
            environment,
        });
    }
    permissions.sort();
    permissions.dedup();
    Ok(CheckedRole {
        name,
        description: input.description.unwrap_or_default(),
        role_type,
        permissions,
    })
}

/// `POST /api/admin/roles/validate`: the body would create a role (its checks, nothing stored).
pub async fn validate(conn: &mut AnyConnection, input: RoleInput) -> Result<(), ApiError> {
    check(conn, input, None).await.map(|_| ())
}

fn event_data(row: &RoleRow, permissions: &[RolePermissionRow]) -> serde_json::Value {
    serde_json::json!({
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "type": row.role_type,
        "permissions": permissions
            .iter()
            .map(|p| serde_json::json!({"name": p.permission, "environment": (!p.environment.is_empty()).then_some(&p.environment)}))
            .collect::<Vec<_>>(),
    })
}

pub async fn create(tx: &mut WriteTx, input: RoleInput) -> Result<RoleWithVersion, ApiError> {
    let checked = check(tx.conn(), input, None).await?;
    let id = tx.next_id(Counter::Role).await?;
    let row = RoleRow {
        id,
        name: checked.name,
        description: checked.description,
        role_type: checked.role_type.to_owned(),
        created_at: tx.now(),
    };
    role_store::insert(tx.conn(), &row).await?;
    role_store::set_permissions(tx.conn(), id, &checked.permissions).await?;
    tx.record(
        EventType::RoleCreated.instance_wide(Some(event_data(&row, &checked.permissions)), None),
    )
    .await?;
    Ok(RoleWithVersion {
        version: 1,
        roles: RoleBody::of(&row),
    })
}

fn refuse_predefined(row: &RoleRow, verb: &str) -> Result<(), ApiError> {
    if ProjectRole::is_predefined(row.id) {
        return Err(ApiError::validation(format!(
            "{} is a predefined role and cannot be {verb}; create a custom role instead",
            row.name
        )));
    }
    Ok(())
}

pub async fn update(
    tx: &mut WriteTx,
    id: i64,
    input: RoleInput,
) -> Result<RoleWithVersion, ApiError> {
    let before = require(tx.conn(), id).await?;
    refuse_predefined(&before, "changed")?;
    let checked = check(tx.conn(), input, Some(id)).await?;
    if checked.role_type != before.role_type && role_store::uses(tx.conn(), id).await? > 0 {
        return Err(ApiError::validation(format!(
            "The role {} is in use; its type cannot change from {} to {}",
            before.name, before.role_type, checked.role_type
        )));
    }
    let before_permissions = role_store::permissions(tx.conn(), &[id]).await?;
    let row = RoleRow {
        name: checked.name,
        description: checked.description,
        role_type: checked.role_type.to_owned(),
        ..before.clone()
    };
    role_store::update(tx.conn(), &row).await?;
    role_store::set_permissions(tx.conn(), id, &checked.permissions).await?;
    tx.record(EventType::RoleUpdated.instance_wide(
        Some(event_data(&row, &checked.permissions)),
        Some(event_data(&before, &before_permissions)),
    ))
    .await?;
    Ok(RoleWithVersion {
        version: 1,
        roles: RoleBody::of(&row),
    })
}

pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let before = require(tx.conn(), id).await?;
    refuse_predefined(&before, "deleted")?;
    let uses = role_store::uses(tx.conn(), id).await?;
    if uses > 0 {
        return Err(ApiError::validation(format!(
            "The role {} is in use ({uses} grant{}: people, groups or root roles); take it away \
             from them first",
            before.name,
            if uses == 1 { "" } else { "s" }
        )));
    }
    let before_permissions = role_store::permissions(tx.conn(), &[id]).await?;
    role_store::delete(tx.conn(), id).await?;
    tx.record(
        EventType::RoleDeleted.instance_wide(None, Some(event_data(&before, &before_permissions))),
    )
    .await?;
    Ok(())
}

/// How a role is used in one project (projectRoleSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRoleUsage {
    pub project: String,
    pub role: i64,
    pub user_count: i64,
    pub service_account_count: i64,
    pub group_count: i64,
}

/// `GET /api/admin/projects/roles/:roleId/access` (projectRoleUsageSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RoleUsage {
    pub projects: Vec<ProjectRoleUsage>,
}

/// The usage of role `role` in `project`, counted from nothing the first time.
fn usage_in<'a>(
    projects: &'a mut BTreeMap<String, ProjectRoleUsage>,
    project: &str,
    role: i64,
) -> &'a mut ProjectRoleUsage {
    projects
        .entry(project.to_owned())
        .or_insert_with(|| ProjectRoleUsage {
            project: project.to_owned(),
            role,
            user_count: 0,
            service_account_count: 0,
            group_count: 0,
        })
}

pub async fn usage(conn: &mut AnyConnection, id: i64) -> Result<RoleUsage, ApiError> {
    require(conn, id).await?;
    let mut projects: BTreeMap<String, ProjectRoleUsage> = BTreeMap::new();
    for grant in role_store::grants_of_role(conn, Subject::User, id).await? {
        let service = user_store::get(conn, grant.subject_id).await?.is_none();
        let usage = usage_in(&mut projects, &grant.project_id, id);
        if service {
            usage.service_account_count += 1;
        } else {
            usage.user_count += 1;
        }
    }
    for grant in role_store::grants_of_role(conn, Subject::Group, id).await? {
        usage_in(&mut projects, &grant.project_id, id).group_count += 1;
    }
    Ok(RoleUsage {
        projects: projects.into_values().collect(),
    })
}
