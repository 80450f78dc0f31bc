//! User groups: a name, SSO mappings, an optional root role given to every member, and members. `PUT`
//! replaces the details and the membership (spec endpoint 11); membership changes are audited member by
//! member (`group-user-added` / `group-user-removed`). A change of a group's root role, its deletion or a
//! member leaving it never leaves the instance without an active Admin (`domain::last_admin`).

use super::events::{payload, EventType};
use super::last_admin;
use super::roles::{RoleReference, RootRole};
use super::users::{self, User};
use crate::store::groups::{self as group_store, GroupRow, MemberRow};
use crate::store::users as user_store;
use crate::store::{Counter, NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// A member entry of a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupMember {
    pub joined_at: String,
    /// Who added the user.
    pub created_by: Option<String>,
    pub user: User,
}

/// A user group (groupSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    #[serde(rename = "mappingsSSO")]
    pub mappings_sso: Vec<String>,
    pub root_role: Option<i64>,
    pub created_by: Option<String>,
    pub created_at: Option<String>,
    pub users: Vec<GroupMember>,
    /// The projects where the group has a role, by id.
    pub projects: Vec<String>,
    pub user_count: i64,
    /// The SCIM id of a group an identity provider provisioned (`/scim/v2`); absent otherwise. Its name and
    /// members come from the provider: here only its root role can be changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scim_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GroupList {
    pub groups: Vec<Group>,
}

/// A member reference of a write: `{user: {id}}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct MemberReference {
    pub user: UserReference,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct UserReference {
    pub id: i64,
}

/// The body of `POST` and `PUT /api/admin/groups…` (createGroupSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteGroup {
    #[schema(pattern = r"^\s*\S(?:[\s\S]{0,98}\S)?\s*$")]
    pub name: String,
    pub description: Option<String>,
    #[serde(rename = "mappingsSSO")]
    pub mappings_sso: Option<Vec<String>>,
    /// 1, 2, 3 or null.
    pub root_role: Option<RoleReference>,
    pub users: Option<Vec<MemberReference>>,
}

/// Parses a `:groupId` path segment (400 if it is not an integer).
pub fn parse_id(text: &str) -> Result<i64, ApiError> {
    text.parse().map_err(|_| {
        ApiError::invalid_field(
            "groupId",
            format!("groupId must be an integer, not {text:?}"),
        )
    })
}

pub(crate) async fn view(conn: &mut AnyConnection, row: GroupRow) -> Result<Group, ApiError> {
    // The members' accounts in one statement, not one per member (SCIM and SSO groups hold hundreds).
    let mut accounts: BTreeMap<i64, _> = user_store::in_group(conn, row.id)
        .await?
        .into_iter()
        .map(|user| (user.id, user))
        .collect();
    let mut users = Vec::new();
    for member in group_store::members(conn, row.id).await? {
        let user = accounts.remove(&member.user_id).ok_or_else(|| {
            ApiError::not_found(format!("User {} does not exist", member.user_id))
        })?;
        users.push(GroupMember {
            joined_at: member.joined_at.to_string(),
            created_by: member.created_by,
            user: users::view(user),
        });
    }
    let projects = group_store::projects_of(conn, row.id).await?;
    Ok(Group {
        id: row.id,
        name: row.name,
        description: row.description,
        mappings_sso: row.mappings_sso,
        root_role: row.root_role,
        created_by: row.created_by,
        created_at: Some(row.created_at.to_string()),
        user_count: users.len() as i64,
        users,
        projects,
        scim_id: row.scim_id,
    })
}

/// Refuses (403) a change through the admin API or UI to a group SCIM manages; `what` says what was tried.
pub fn ensure_not_provisioned(row: &GroupRow, what: &str) -> Result<(), ApiError> {
    if row.scim_id.is_none() {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::NoAccess,
        format!(
            "Group {} is managed by SCIM: your identity provider provisions its name and members, so {what} \
             there (only its root role can be changed in Vexil)",
            row.name
        ),
    ))
}

pub(crate) async fn require(conn: &mut AnyConnection, id: i64) -> Result<GroupRow, ApiError> {
    group_store::get(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Group {id} does not exist")))
}

pub async fn list(conn: &mut AnyConnection) -> Result<GroupList, ApiError> {
    let mut groups = Vec::new();
    for row in group_store::list(conn).await? {
        groups.push(view(conn, row).await?);
    }
    Ok(GroupList { groups })
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Group, ApiError> {
    let row = require(conn, id).await?;
    view(conn, row).await
}

/// The validated parts of a write: details and the member ids (each an existing user).
struct Validated {
    name: String,
    description: Option<String>,
    mappings_sso: Vec<String>,
    root_role: Option<i64>,
    members: BTreeSet<i64>,
}

async fn validate(
    tx: &mut WriteTx,
    input: WriteGroup,
    except: Option<i64>,
) -> Result<Validated, ApiError> {
    let name = input.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::invalid_field(
            "name",
            "name must be 1 to 100 characters long",
        ));
    }
    let root_role = input
        .root_role
        .as_ref()
        .map(|reference| RootRole::from_reference("rootRole", reference).map(RootRole::id))
        .transpose()?;
    let mut members = BTreeSet::new();
    for (index, member) in input.users.unwrap_or_default().iter().enumerate() {
        let id = member.user.id;
        if user_store::get(tx.conn(), id).await?.is_none() {
            return Err(ApiError::invalid_field(
                format!("users[{index}].user.id"),
                format!("users[{index}].user.id: user {id} does not exist"),
            ));
        }
        members.insert(id);
    }
    if let Some(owner) = group_store::id_of_name(tx.conn(), &name).await? {
        if Some(owner) != except {
            return Err(ApiError::name_exists(format!(
                "A group named {name} already exists"
            )));
        }
    }
    Ok(Validated {
        name,
        description: input.description,
        mappings_sso: input.mappings_sso.unwrap_or_default(),
        root_role,
        members,
    })
}

/// Adds and removes members so that the group holds exactly `wanted`, one event per change. A caller that may
/// remove someone checks the last-Admin rule (`last_admin::keep_an_admin`) after it.
pub(crate) async fn set_members(
    tx: &mut WriteTx,
    group_id: i64,
    wanted: &BTreeSet<i64>,
) -> Result<(), ApiError> {
    let current: BTreeSet<i64> = group_store::members(tx.conn(), group_id)
        .await?
        .into_iter()
        .map(|member| member.user_id)
        .collect();
    for &user_id in current.difference(wanted) {
        group_store::remove_member(tx.conn(), group_id, user_id).await?;
        tx.record(NewEvent {
            event_type: EventType::GroupUserRemoved.as_str(),
            pre_data: Some(serde_json::json!({ "groupId": group_id, "userId": user_id })),
            ..NewEvent::default()
        })
        .await?;
    }
    for &user_id in wanted.difference(&current) {
        let member = MemberRow {
            user_id,
            joined_at: tx.now(),
            created_by: Some(tx.actor().name.clone()),
        };
        group_store::add_member(tx.conn(), group_id, &member).await?;
        tx.record(NewEvent {
            event_type: EventType::GroupUserAdded.as_str(),
            data: Some(serde_json::json!({ "groupId": group_id, "userId": user_id })),
            ..NewEvent::default()
        })
        .await?;
    }
    Ok(())
}

pub async fn create(tx: &mut WriteTx, input: WriteGroup) -> Result<Group, ApiError> {
    let valid = validate(tx, input, None).await?;
    let row = GroupRow {
        id: tx.next_id(Counter::Group).await?,
        name: valid.name,
        description: valid.description,
        mappings_sso: valid.mappings_sso,
        root_role: valid.root_role,
        created_by: Some(tx.actor().name.clone()),
        created_at: tx.now(),
        scim_id: None,
        scim_external_id: None,
    };
    group_store::insert(tx.conn(), &row).await?;
    let id = row.id;
    let created = view(tx.conn(), row).await?;
    tx.record(NewEvent {
        event_type: EventType::GroupCreated.as_str(),
        data: Some(payload(&created)),
        ..NewEvent::default()
    })
    .await?;
    set_members(tx, id, &valid.members).await?;
    get(tx.conn(), id).await
}

/// Replaces the details and membership of a group (members who stay keep their `joinedAt`).
pub async fn replace(tx: &mut WriteTx, id: i64, input: WriteGroup) -> Result<Group, ApiError> {
    let before_row = require(tx.conn(), id).await?;
    let valid = validate(tx, input, Some(id)).await?;
    let before = view(tx.conn(), before_row.clone()).await?;
    if before_row.scim_id.is_some() {
        let members: BTreeSet<i64> = before.users.iter().map(|member| member.user.id).collect();
        if valid.name != before_row.name
            || valid.description != before_row.description
            || valid.mappings_sso != before_row.mappings_sso
            || valid.members != members
        {
            ensure_not_provisioned(
                &before_row,
                "change its name, description, SSO mappings or members",
            )?;
        }
    }
    let refusal = losing_admins(&before_row, valid.root_role);
    let row = GroupRow {
        name: valid.name,
        description: valid.description,
        mappings_sso: valid.mappings_sso,
        root_role: valid.root_role,
        ..before_row
    };
    let admins = last_admin::before(tx.conn()).await?;
    group_store::update(tx.conn(), &row).await?;
    set_members(tx, id, &valid.members).await?;
    last_admin::keep_an_admin(tx.conn(), admins, &refusal).await?;
    let after = get(tx.conn(), id).await?;
    tx.record(NewEvent {
        event_type: EventType::GroupUpdated.as_str(),
        data: Some(payload(&after)),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(after)
}

pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let row = require(tx.conn(), id).await?;
    ensure_not_provisioned(
        &row,
        "remove it at the provider (or delete every provisioned group with DELETE /api/admin/groups/scim-groups)",
    )?;
    remove(tx, row).await
}

/// Deletes a group SCIM provisioned (the SCIM route, and the admin API's delete of every provisioned group).
pub async fn delete_provisioned(tx: &mut WriteTx, row: GroupRow) -> Result<(), ApiError> {
    remove(tx, row).await
}

/// Why a change of group `before` to root role `root_role` would be refused by the last-Admin rule: it takes
/// the Admin root role away from its members, or (the role kept) some members leave.
fn losing_admins(before: &GroupRow, root_role: Option<i64>) -> String {
    let admin = Some(RootRole::Admin.id());
    if before.root_role == admin && root_role != admin {
        format!(
            "rootRole: group {} gives the last active Admin user the Admin root role",
            before.name
        )
    } else {
        leaving(&before.name, "users")
    }
}

/// The last-Admin rule's refusal when members leave group `name` (`field`: where the members are listed).
pub(crate) fn leaving(name: &str, field: &str) -> String {
    format!(
        "{field}: the last active Admin user has the Admin root role through group {name}, which they would leave"
    )
}

async fn remove(tx: &mut WriteTx, row: GroupRow) -> Result<(), ApiError> {
    let id = row.id;
    let refusal = format!(
        "Group {} cannot be deleted: it gives the last active Admin user the Admin root role",
        row.name
    );
    let admins = last_admin::before(tx.conn()).await?;
    let before = view(tx.conn(), row).await?;
    group_store::delete(tx.conn(), id).await?;
    last_admin::keep_an_admin(tx.conn(), admins, &refusal).await?;
    tx.record(NewEvent {
        event_type: EventType::GroupDeleted.as_str(),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}
