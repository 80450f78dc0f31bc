//! Who has which role in a project (`/api/admin/projects/:p/access`, `…/users/:id/roles`,
//! `…/groups/:id/roles`): people (and service accounts) and groups, each with project roles (Owner, Member or
//! custom). Every change is one transaction with its event; `domain::access` reads the grants at the next
//! request.

use super::events::EventType;
use super::role_admin::{self, RoleBody};
use super::roles::ProjectRole;
use crate::store::groups as group_store;
use crate::store::projects as project_store;
use crate::store::roles::{self as role_store, ProjectRoleRow, Subject};
use crate::store::users::{self as user_store, Account};
use crate::store::{NewEvent, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// A person (or service account) with their roles in the project (userWithProjectRoleSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserWithProjectRoles {
    pub id: i64,
    pub name: Option<String>,
    pub email: Option<String>,
    pub username: Option<String>,
    pub added_at: String,
    /// The first of `roles`.
    pub role_id: i64,
    pub roles: Vec<i64>,
    /// `User` or `Service Account`.
    pub account_type: String,
}

/// A group with its roles in the project (groupWithProjectRoleSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupWithProjectRoles {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub added_at: String,
    pub role_id: i64,
    pub roles: Vec<i64>,
    pub user_count: i64,
}

/// `GET /api/admin/projects/:p/access` (projectAccessSchema).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ProjectAccess {
    pub users: Vec<UserWithProjectRoles>,
    pub groups: Vec<GroupWithProjectRoles>,
    /// The roles that can be given in a project.
    pub roles: Vec<RoleBody>,
}

/// `POST /api/admin/projects/:p/access` (projectAddAccessSchema): every role to every user and group listed.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
pub struct AddAccess {
    pub roles: Vec<i64>,
    #[serde(default)]
    pub groups: Vec<i64>,
    #[serde(default)]
    pub users: Vec<i64>,
}

/// One role with who has it (projectAccessConfigurationSchema's `roles[]`).
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
pub struct RoleAssignment {
    pub id: i64,
    #[serde(default)]
    pub groups: Vec<i64>,
    #[serde(default)]
    pub users: Vec<i64>,
}

/// `PUT /api/admin/projects/:p/access` (projectAccessConfigurationSchema): the whole access, replaced.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
pub struct SetAccess {
    pub roles: Vec<RoleAssignment>,
}

/// `PUT …/users/:id/roles` and `…/groups/:id/roles`: the subject's roles in the project, replaced.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
pub struct SetRoles {
    pub roles: Vec<i64>,
}

async fn require_project(conn: &mut AnyConnection, project: &str) -> Result<(), ApiError> {
    match project_store::get(conn, project).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(format!(
            "Project {project} does not exist"
        ))),
    }
}

/// The roles of each subject, in order of id, with when it was first given one.
fn by_subject(rows: Vec<ProjectRoleRow>) -> BTreeMap<i64, (String, Vec<i64>)> {
    let mut subjects: BTreeMap<i64, (String, Vec<i64>)> = BTreeMap::new();
    for row in rows {
        let entry = subjects
            .entry(row.subject_id)
            .or_insert_with(|| (row.created_at.to_string(), Vec::new()));
        if row.created_at.to_string() < entry.0 {
            entry.0 = row.created_at.to_string();
        }
        entry.1.push(row.role_id);
    }
    subjects
}

pub async fn get(conn: &mut AnyConnection, project: &str) -> Result<ProjectAccess, ApiError> {
    require_project(conn, project).await?;
    let mut users = Vec::new();
    for (id, (added_at, roles)) in
        by_subject(role_store::project_roles(conn, Subject::User, project).await?)
    {
        let (row, account) = match user_store::get_of(conn, id, Account::Person).await? {
            Some(row) => (row, "User"),
            None => match user_store::get_of(conn, id, Account::Service).await? {
                Some(row) => (row, "Service Account"),
                None => continue,
            },
        };
        users.push(UserWithProjectRoles {
            id,
            name: row.name,
            email: row.email,
            username: row.username,
            added_at,
            role_id: roles[0],
            roles,
            account_type: account.to_owned(),
        });
    }
    let mut groups = Vec::new();
    for (id, (added_at, roles)) in
        by_subject(role_store::project_roles(conn, Subject::Group, project).await?)
    {
        let Some(row) = group_store::get(conn, id).await? else {
            continue;
        };
        let user_count = group_store::members(conn, id).await?.len() as i64;
        groups.push(GroupWithProjectRoles {
            id,
            name: row.name,
            description: row.description,
            added_at,
            role_id: roles[0],
            roles,
            user_count,
        });
    }
    Ok(ProjectAccess {
        users,
        groups,
        roles: role_admin::project_roles(conn).await?,
    })
}

/// A project's members, as Unleash counts them (`memberCount`, `members`, `currentMembers`): the distinct users
/// (people and service accounts) with a role in the project, directly or through a group that has one there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Members {
    pub count: i64,
    /// Those who became members at or after the time asked about (`projectMembersAddedCurrentWindow`): at
    /// their earliest grant there, a direct one's or the later of a group's grant and their joining it.
    pub added_since: i64,
}

/// The members of every project (`project`: `None`) or of `project` alone, with how many became members at
/// `since` or later: one statement, whatever the number of projects. A project where nobody has a role is
/// absent (its `Members` are the default, 0).
pub async fn members(
    conn: &mut AnyConnection,
    project: Option<&str>,
    since: Timestamp,
) -> Result<BTreeMap<String, Members>, ApiError> {
    Ok(role_store::member_counts(conn, project, since)
        .await?
        .into_iter()
        .map(|row| {
            let members = Members {
                count: row.members,
                added_since: row.added,
            };
            (row.project_id, members)
        })
        .collect())
}

/// 400 unless every id of `users` is a person or service account and every one of `groups` a group.
async fn require_subjects(
    conn: &mut AnyConnection,
    users: &[i64],
    groups: &[i64],
) -> Result<(), ApiError> {
    for id in users {
        if user_store::get_of(conn, *id, Account::Person)
            .await?
            .is_none()
            && user_store::get_of(conn, *id, Account::Service)
                .await?
                .is_none()
        {
            return Err(ApiError::invalid_field(
                "users",
                format!("users: no user with id {id}"),
            ));
        }
    }
    for id in groups {
        if group_store::get(conn, *id).await?.is_none() {
            return Err(ApiError::invalid_field(
                "groups",
                format!("groups: no group with id {id}"),
            ));
        }
    }
    Ok(())
}

async fn require_roles(conn: &mut AnyConnection, roles: &[i64]) -> Result<(), ApiError> {
    for id in roles {
        role_admin::require_project_role(conn, "roles", *id).await?;
    }
    Ok(())
}

fn event(
    kind: EventType,
    project: &str,
    data: serde_json::Value,
    pre: Option<serde_json::Value>,
) -> NewEvent {
    NewEvent {
        event_type: kind.as_str(),
        project: Some(project.to_owned()),
        data: Some(data),
        pre_data: pre,
        ..NewEvent::default()
    }
}

/// Every role of `roles` to every one of `users` and `groups` (roles already held stay).
pub async fn add(tx: &mut WriteTx, project: &str, input: AddAccess) -> Result<(), ApiError> {
    require_project(tx.conn(), project).await?;
    if input.roles.is_empty() {
        return Err(ApiError::invalid_field(
            "roles",
            "roles must name at least one role",
        ));
    }
    require_roles(tx.conn(), &input.roles).await?;
    require_subjects(tx.conn(), &input.users, &input.groups).await?;
    let now = tx.now();
    for role in &input.roles {
        for user in &input.users {
            role_store::grant(tx.conn(), Subject::User, project, *user, *role, now).await?;
        }
        for group in &input.groups {
            role_store::grant(tx.conn(), Subject::Group, project, *group, *role, now).await?;
        }
    }
    tx.record(event(
        EventType::ProjectAccessAdded,
        project,
        serde_json::json!({"roles": input.roles, "users": input.users, "groups": input.groups}),
        None,
    ))
    .await?;
    Ok(())
}

/// The whole access of `project` as `roles[]` lists it (everyone else loses theirs).
pub async fn set(tx: &mut WriteTx, project: &str, input: SetAccess) -> Result<(), ApiError> {
    require_project(tx.conn(), project).await?;
    for assignment in &input.roles {
        require_roles(tx.conn(), &[assignment.id]).await?;
        require_subjects(tx.conn(), &assignment.users, &assignment.groups).await?;
    }
    let before = get(tx.conn(), project).await?;
    role_store::revoke_project(tx.conn(), Subject::User, project).await?;
    role_store::revoke_project(tx.conn(), Subject::Group, project).await?;
    let now = tx.now();
    for assignment in &input.roles {
        for user in &assignment.users {
            role_store::grant(tx.conn(), Subject::User, project, *user, assignment.id, now).await?;
        }
        for group in &assignment.groups {
            role_store::grant(
                tx.conn(),
                Subject::Group,
                project,
                *group,
                assignment.id,
                now,
            )
            .await?;
        }
    }
    let summary = |access: &ProjectAccess| {
        serde_json::json!({
            "users": access.users.iter().map(|u| serde_json::json!({"id": u.id, "roles": u.roles})).collect::<Vec<_>>(),
            "groups": access.groups.iter().map(|g| serde_json::json!({"id": g.id, "roles": g.roles})).collect::<Vec<_>>(),
        })
    };
    let after = get(tx.conn(), project).await?;
    tx.record(event(
        EventType::ProjectAccessUpdated,
        project,
        summary(&after),
        Some(summary(&before)),
    ))
    .await?;
    Ok(())
}

/// The roles of user or group `id` in `project`, replaced (none: removed).
pub async fn set_roles(
    tx: &mut WriteTx,
    project: &str,
    subject: Subject,
    id: i64,
    roles: &[i64],
) -> Result<(), ApiError> {
    require_project(tx.conn(), project).await?;
    require_roles(tx.conn(), roles).await?;
    match subject {
        Subject::User => require_subjects(tx.conn(), &[id], &[]).await,
        Subject::Group => require_subjects(tx.conn(), &[], &[id]).await,
    }
    .map_err(|error| ApiError::not_found(error.message))?;
    let before: Vec<i64> = role_store::project_roles(tx.conn(), subject, project)
        .await?
        .into_iter()
        .filter(|row| row.subject_id == id)
        .map(|row| row.role_id)
        .collect();
    role_store::revoke_all(tx.conn(), subject, project, id).await?;
    let now = tx.now();
    for role in roles {
        role_store::grant(tx.conn(), subject, project, id, *role, now).await?;
    }
    let (kind, key) = match (subject, roles.is_empty()) {
        (Subject::User, false) => (EventType::ProjectAccessUserRolesUpdated, "userId"),
        (Subject::User, true) => (EventType::ProjectAccessUserRolesDeleted, "userId"),
        (Subject::Group, false) => (EventType::ProjectAccessGroupRolesUpdated, "groupId"),
        (Subject::Group, true) => (EventType::ProjectAccessGroupRolesDeleted, "groupId"),
    };
    tx.record(event(
        kind,
        project,
        serde_json::json!({key: id, "roles": roles}),
        Some(serde_json::json!({key: id, "roles": before})),
    ))
    .await?;
    Ok(())
}

/// A new project's creator becomes its Owner (a user; an admin token has no account to give it to).
pub async fn creator_becomes_owner(tx: &mut WriteTx, project: &str) -> Result<(), ApiError> {
    let user = tx.actor().user_id;
    if user <= 0 {
        return Ok(());
    }
    let now = tx.now();
    let owner = ProjectRole::Owner.id();
    role_store::grant(tx.conn(), Subject::User, project, user, owner, now).await?;
    tx.record(event(
        EventType::ProjectAccessAdded,
        project,
        serde_json::json!({"roles": [owner], "users": [user], "groups": []}),
        None,
    ))
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{groups, projects, users};
    use crate::store::{Actor, Store};
    use serde_json::json;

    fn body<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    /// Each project's members: users with a role there, their own or a group's, each once; nobody where no one
    /// has a role; those who got theirs since a time apart.
    #[tokio::test]
    async fn members_are_the_distinct_users_with_a_role_there() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("vexil.db").display());
        let store = Store::connect(&url).await.unwrap();
        let mut tx = store.begin_write(&Actor::system()).await.unwrap();
        let user = async |tx: &mut WriteTx, name: &str| {
            let input = body(json!({"username": name, "rootRole": "Viewer"}));
            users::create(tx, input, None).await.unwrap().id
        };
        let (ann, ben, cat) = (
            user(&mut tx, "ann").await,
            user(&mut tx, "ben").await,
            user(&mut tx, "cat").await,
        );
        let members_json = json!([{"user": {"id": ann}}, {"user": {"id": cat}}]);
        let team = groups::create(
            &mut tx,
            body(json!({"name": "team", "users": members_json})),
        )
        .await
        .unwrap()
        .id;
        for id in ["shop", "lab", "quiet"] {
            let input = body(json!({"id": id, "name": id}));
            projects::create(&mut tx, input, &Default::default())
                .await
                .unwrap();
        }
        let access = |roles: &[i64], users: &[i64], groups: &[i64]| AddAccess {
            roles: roles.to_vec(),
            users: users.to_vec(),
            groups: groups.to_vec(),
        };
        add(&mut tx, "shop", access(&[4, 5], &[ann, ben], &[team]))
            .await
            .unwrap();
        add(&mut tx, "lab", access(&[5], &[], &[team]))
            .await
            .unwrap();
        let later = Timestamp::from_millis(tx.now().millis() + 1).unwrap();
        let counted = members(tx.conn(), None, Timestamp::EPOCH).await.unwrap();
        let count = |project: &str| counted.get(project).map(|one| one.count);
        assert_eq!(
            (count("shop"), count("lab"), count("quiet")),
            (Some(3), Some(2), None)
        );
        assert_eq!(counted["shop"].added_since, 3);
        // One project alone, and nobody became a member after now.
        let shop = members(tx.conn(), Some("shop"), later).await.unwrap();
        let only: Vec<_> = shop.into_iter().collect();
        assert_eq!(
            only,
            [(
                "shop".to_owned(),
                Members {
                    count: 3,
                    added_since: 0
                }
            )]
        );
        tx.commit().await.unwrap();
    }
}
