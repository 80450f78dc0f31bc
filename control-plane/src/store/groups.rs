//! SQL of user groups and their members.

use super::encoding::{json, json_text};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub mappings_sso: Vec<String>,
    pub root_role: Option<i64>,
    pub created_by: Option<String>,
    pub created_at: Timestamp,
    /// The SCIM resource id of a group an identity provider provisioned (`/scim/v2/Groups`); `None`: not
    /// managed by SCIM.
    pub scim_id: Option<String>,
    /// The provider's own id of a provisioned group (SCIM `externalId`).
    pub scim_external_id: Option<String>,
}

impl FromRow<'_, AnyRow> for GroupRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(GroupRow {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            mappings_sso: json(row, "mappings_sso")?,
            root_role: row.try_get("root_role")?,
            created_by: row.try_get("created_by")?,
            created_at: row.try_get("created_at")?,
            scim_id: row.try_get("scim_id")?,
            scim_external_id: row.try_get("scim_external_id")?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct MemberRow {
    pub user_id: i64,
    pub joined_at: Timestamp,
    pub created_by: Option<String>,
}

const COLUMNS: &str =
    "id, name, description, mappings_sso, root_role, created_by, created_at, scim_id, \
                       scim_external_id";

pub async fn list(conn: &mut AnyConnection) -> Result<Vec<GroupRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM user_groups ORDER BY name, id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<GroupRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM user_groups WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

/// The id of the group named `name`, if any.
pub async fn id_of_name(conn: &mut AnyConnection, name: &str) -> Result<Option<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT id FROM user_groups WHERE name = $1")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn insert(conn: &mut AnyConnection, row: &GroupRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO user_groups (id, name, description, mappings_sso, root_role, created_by, created_at, \
         scim_id, scim_external_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(json_text(&row.mappings_sso)?)
    .bind(row.root_role)
    .bind(&row.created_by)
    .bind(row.created_at)
    .bind(&row.scim_id)
    .bind(&row.scim_external_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Updates name, description, SSO mappings, root role and SCIM `externalId`.
pub async fn update(conn: &mut AnyConnection, row: &GroupRow) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE user_groups SET name = $1, description = $2, mappings_sso = $3, root_role = $4, \
         scim_external_id = $5 WHERE id = $6",
    )
    .bind(&row.name)
    .bind(&row.description)
    .bind(json_text(&row.mappings_sso)?)
    .bind(row.root_role)
    .bind(&row.scim_external_id)
    .bind(row.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM user_groups WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The groups `user_id` belongs to, by name.
pub async fn groups_of(
    conn: &mut AnyConnection,
    user_id: i64,
) -> Result<Vec<GroupRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM user_groups WHERE id IN \
         (SELECT group_id FROM user_group_members WHERE user_id = $1) ORDER BY name, id"
    );
    Ok(sqlx::query_as(&sql).bind(user_id).fetch_all(conn).await?)
}

/// Members in the order they joined.
pub async fn members(
    conn: &mut AnyConnection,
    group_id: i64,
) -> Result<Vec<MemberRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT user_id, joined_at, created_by FROM user_group_members WHERE group_id = $1 \
         ORDER BY joined_at, user_id",
    )
    .bind(group_id)
    .fetch_all(conn)
    .await?)
}

/// The projects where the group has a role, by id.
pub async fn projects_of(
    conn: &mut AnyConnection,
    group_id: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT project_id FROM project_group_roles WHERE group_id = $1 ORDER BY project_id",
    )
    .bind(group_id)
    .fetch_all(conn)
    .await?)
}

pub async fn add_member(
    conn: &mut AnyConnection,
    group_id: i64,
    member: &MemberRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO user_group_members (group_id, user_id, joined_at, created_by) VALUES ($1, $2, $3, $4)",
    )
    .bind(group_id)
    .bind(member.user_id)
    .bind(member.joined_at)
    .bind(&member.created_by)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn remove_member(
    conn: &mut AnyConnection,
    group_id: i64,
    user_id: i64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2")
        .bind(group_id)
        .bind(user_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The groups provisioned through SCIM, by id.
pub async fn list_scim(conn: &mut AnyConnection) -> Result<Vec<GroupRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM user_groups WHERE scim_id IS NOT NULL ORDER BY id");
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The group with SCIM id `scim_id`.
pub async fn get_by_scim_id(
    conn: &mut AnyConnection,
    scim_id: &str,
) -> Result<Option<GroupRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM user_groups WHERE scim_id = $1");
    Ok(sqlx::query_as(&sql)
        .bind(scim_id)
        .fetch_optional(conn)
        .await?)
}
