//! SQL of roles (predefined and custom), a custom role's permissions, and who has which role in which project
//! (people and groups).

use super::StoreError;
use crate::time::Timestamp;
use sqlx::AnyConnection;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct RoleRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub role_type: String,
    pub created_at: Timestamp,
}

/// A custom role's permission: `environment` is "" for a root or project permission.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, sqlx::FromRow)]
pub struct RolePermissionRow {
    pub role_id: i64,
    pub permission: String,
    pub environment: String,
}

/// A role someone has in a project (directly, or through a group: `group_id`).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ProjectRoleRow {
    pub project_id: String,
    pub role_id: i64,
    pub subject_id: i64,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, name, description, role_type, created_at";

pub async fn list(conn: &mut AnyConnection) -> Result<Vec<RoleRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM roles ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<RoleRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM roles WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

/// The id of the role named `name` (case-insensitively), if any.
pub async fn id_of_name(conn: &mut AnyConnection, name: &str) -> Result<Option<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT id FROM roles WHERE LOWER(name) = LOWER($1)")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn insert(conn: &mut AnyConnection, row: &RoleRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO roles (id, name, description, role_type, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.role_type)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut AnyConnection, row: &RoleRow) -> Result<(), StoreError> {
    sqlx::query("UPDATE roles SET name = $2, description = $3, role_type = $4 WHERE id = $1")
        .bind(row.id)
        .bind(&row.name)
        .bind(&row.description)
        .bind(&row.role_type)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM roles WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The permissions of the roles `ids` (custom roles; predefined ones have none stored).
pub async fn permissions(
    conn: &mut AnyConnection,
    ids: &[i64],
) -> Result<Vec<RolePermissionRow>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
    let sql = format!(
        "SELECT role_id, permission, environment FROM role_permissions WHERE role_id IN ({}) \
         ORDER BY role_id, permission, environment",
        placeholders.join(", ")
    );
    let mut query = sqlx::query_as(&sql);
    for id in ids {
        query = query.bind(*id);
    }
    Ok(query.fetch_all(conn).await?)
}

/// Replaces the permissions of role `id`.
pub async fn set_permissions(
    conn: &mut AnyConnection,
    id: i64,
    permissions: &[RolePermissionRow],
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM role_permissions WHERE role_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    for permission in permissions {
        sqlx::query(
            "INSERT INTO role_permissions (role_id, permission, environment) VALUES ($1, $2, $3)",
        )
        .bind(id)
        .bind(&permission.permission)
        .bind(&permission.environment)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Who may be granted a role in a project: a person (or service account), or a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    User,
    Group,
}

impl Subject {
    fn table(self) -> &'static str {
        match self {
            Subject::User => "project_user_roles",
            Subject::Group => "project_group_roles",
        }
    }

    fn column(self) -> &'static str {
        match self {
            Subject::User => "user_id",
            Subject::Group => "group_id",
        }
    }
}

/// Every role of `subject`s in `project`, by subject then role.
pub async fn project_roles(
    conn: &mut AnyConnection,
    subject: Subject,
    project: &str,
) -> Result<Vec<ProjectRoleRow>, StoreError> {
    let sql = format!(
        "SELECT project_id, role_id, {column} AS subject_id, created_at FROM {table} \
         WHERE project_id = $1 ORDER BY {column}, role_id",
        column = subject.column(),
        table = subject.table()
    );
    Ok(sqlx::query_as(&sql).bind(project).fetch_all(conn).await?)
}

/// Every grant of `role` in any project, of `subject`s.
pub async fn grants_of_role(
    conn: &mut AnyConnection,
    subject: Subject,
    role: i64,
) -> Result<Vec<ProjectRoleRow>, StoreError> {
    let sql = format!(
        "SELECT project_id, role_id, {column} AS subject_id, created_at FROM {table} \
         WHERE role_id = $1 ORDER BY project_id, {column}",
        column = subject.column(),
        table = subject.table()
    );
    Ok(sqlx::query_as(&sql).bind(role).fetch_all(conn).await?)
}

/// Gives `subject` `id` the role `role` in `project` (nothing if it has it).
pub async fn grant(
    conn: &mut AnyConnection,
    subject: Subject,
    project: &str,
    id: i64,
    role: i64,
    now: Timestamp,
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO {table} (project_id, {column}, role_id, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT DO NOTHING",
        column = subject.column(),
        table = subject.table()
    );
    sqlx::query(&sql)
        .bind(project)
        .bind(id)
        .bind(role)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(())
}

/// Takes every role of `subject` `id` in `project` away.
pub async fn revoke_all(
    conn: &mut AnyConnection,
    subject: Subject,
    project: &str,
    id: i64,
) -> Result<u64, StoreError> {
    let sql = format!(
        "DELETE FROM {table} WHERE project_id = $1 AND {column} = $2",
        column = subject.column(),
        table = subject.table()
    );
    Ok(sqlx::query(&sql)
        .bind(project)
        .bind(id)
        .execute(conn)
        .await?
        .rows_affected())
}

/// Takes every role of every subject in `project` away.
pub async fn revoke_project(
    conn: &mut AnyConnection,
    subject: Subject,
    project: &str,
) -> Result<(), StoreError> {
    let sql = format!("DELETE FROM {} WHERE project_id = $1", subject.table());
    sqlx::query(&sql).bind(project).execute(conn).await?;
    Ok(())
}

/// How many grants (people's and groups') use `role`, and how many users have it as their root role.
pub async fn uses(conn: &mut AnyConnection, role: i64) -> Result<i64, StoreError> {
    let count: i64 = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM project_user_roles WHERE role_id = $1) \
         + (SELECT COUNT(*) FROM project_group_roles WHERE role_id = $1) \
         + (SELECT COUNT(*) FROM users WHERE root_role = $1) \
         + (SELECT COUNT(*) FROM user_groups WHERE root_role = $1)",
    )
    .bind(role)
    .fetch_one(conn)
    .await?;
    Ok(count)
}

/// A project's members: the distinct users (people and service accounts) with a role there, directly or through
/// a group that has one, and how many of them became members at or after a given time.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct MemberCountRow {
    pub project_id: String,
    pub members: i64,
    pub added: i64,
}

/// The members of every project that has any (`project`: `None`), or of `project`, with how many became members
/// at `since` or later: one statement, grouped by project. A user became a member at their earliest grant there:
/// a direct one's creation, or the later of a group's grant and their joining that group.
pub async fn member_counts(
    conn: &mut AnyConnection,
    project: Option<&str>,
    since: Timestamp,
) -> Result<Vec<MemberCountRow>, StoreError> {
    let (direct, grouped) = match project {
        Some(_) => ("WHERE project_id = $2", "WHERE g.project_id = $2"),
        None => ("", ""),
    };
    let sql = format!(
        "SELECT project_id, COUNT(*) AS members, \
         CAST(COALESCE(SUM(CASE WHEN member_since >= $1 THEN 1 ELSE 0 END), 0) AS BIGINT) AS added \
         FROM (SELECT project_id, user_id, MIN(granted_at) AS member_since FROM ( \
           SELECT project_id, user_id, created_at AS granted_at FROM project_user_roles {direct} \
           UNION ALL \
           SELECT g.project_id, m.user_id, \
             CASE WHEN m.joined_at > g.created_at THEN m.joined_at ELSE g.created_at END \
           FROM project_group_roles g JOIN user_group_members m ON m.group_id = g.group_id {grouped} \
         ) grants GROUP BY project_id, user_id) memberships \
         GROUP BY project_id ORDER BY project_id"
    );
    let mut query = sqlx::query_as(&sql).bind(since);
    if let Some(project) = project {
        query = query.bind(project);
    }
    Ok(query.fetch_all(conn).await?)
}

/// The project roles user `user` has, directly or through a group, with the project: what `domain::access`
/// grants from.
pub async fn of_user(
    conn: &mut AnyConnection,
    user: i64,
) -> Result<Vec<(String, i64)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT project_id, role_id FROM project_user_roles WHERE user_id = $1 \
         UNION SELECT g.project_id, g.role_id FROM project_group_roles g \
         JOIN user_group_members m ON m.group_id = g.group_id WHERE m.user_id = $1",
    )
    .bind(user)
    .fetch_all(conn)
    .await?)
}
