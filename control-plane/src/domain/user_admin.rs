//! User administration beyond the user CRUD: search, the count of admins, a password check and an admin
//! setting a user's password (`/api/admin/user-admin/…`), and the caller's roles (`GET /api/admin/user/roles`).

use super::access::{self, Credential};
use super::groups::{self, Group};
use super::own_account;
use super::roles::{root_roles, Role, RootRole};
use super::users::{self, User, MIN_PASSWORD_LENGTH};
use crate::store::users::{self as user_store, Account, UserRow};
use crate::store::{Actor, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// `GET /api/admin/user-admin/access` (usersGroupsBaseSchema): every group and every user.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UsersAndGroups {
    pub groups: Vec<Group>,
    pub users: Vec<User>,
}

/// At most this many users answer a search.
const SEARCH_LIMIT: usize = 100;
/// A user not seen for this long (neither signed in nor used a personal access token; never: created that
/// long ago) is inactive.
const INACTIVE_MS: i64 = 180 * 24 * 3_600_000;

/// `GET /api/admin/user-admin/inactive` (inactiveUserSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InactiveUser {
    pub id: i64,
    pub name: Option<String>,
    pub email: Option<String>,
    pub username: Option<String>,
    /// The last sign-in.
    pub seen_at: Option<String>,
    pub created_at: String,
    /// The latest use of any of the user's personal access tokens (null: none used).
    pub pat_seen_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InactiveUsers {
    pub version: u32,
    pub inactive_users: Vec<InactiveUser>,
}

/// `POST /api/admin/user-admin/inactive/delete` (idsSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct UserIds {
    #[schema(min_items = 1)]
    pub ids: Vec<i64>,
}

/// `GET /api/admin/user-admin/admin-count` (adminCountSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminCount {
    /// Users with the Admin root role who have a password.
    pub password: usize,
    /// Users with the Admin root role without one.
    pub no_password: usize,
    /// Service accounts with the Admin root role (they are not users: the last-Admin rule leaves them out).
    pub service: usize,
}

/// `POST /api/admin/user-admin/validate-password` and `…/:id/change-password` (passwordSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewPassword {
    #[schema(min_length = 8)]
    pub password: String,
    /// When given, must equal `password`.
    pub confirm_password: Option<String>,
}

/// `GET /api/admin/user/roles` (rolesSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Roles {
    pub version: u32,
    pub roles: Vec<Role>,
}

/// Users whose name, username or e-mail contains `query` (case-insensitive), by id, at most 100.
pub async fn search(conn: &mut AnyConnection, query: &str) -> Result<Vec<User>, ApiError> {
    let needle = query.trim().to_lowercase();
    let contains = |field: &Option<String>| {
        field
            .as_deref()
            .is_some_and(|text| text.to_lowercase().contains(&needle))
    };
    Ok(user_store::list(conn)
        .await?
        .into_iter()
        .filter(|row| contains(&row.name) || contains(&row.username) || contains(&row.email))
        .take(SEARCH_LIMIT)
        .map(users::view)
        .collect())
}

pub async fn admin_count(conn: &mut AnyConnection) -> Result<AdminCount, ApiError> {
    let admins: Vec<_> = user_store::list(conn)
        .await?
        .into_iter()
        .filter(|row| row.root_role == RootRole::Admin.id())
        .collect();
    let password = admins
        .iter()
        .filter(|row| row.password_hash.is_some())
        .count();
    let service = user_store::list_of(conn, Account::Service)
        .await?
        .iter()
        .filter(|row| row.root_role == RootRole::Admin.id())
        .count();
    Ok(AdminCount {
        password,
        no_password: admins.len() - password,
        service,
    })
}

/// The rules a new password must meet: at least 8 characters, and the confirmation (if any) matches.
pub fn validate_password(input: &NewPassword) -> Result<(), ApiError> {
    if input
        .confirm_password
        .as_ref()
        .is_some_and(|confirm| *confirm != input.password)
    {
        return Err(ApiError::invalid_field(
            "confirmPassword",
            "confirmPassword does not match password",
        ));
    }
    if input.password.chars().count() < MIN_PASSWORD_LENGTH {
        return Err(ApiError::invalid_field(
            "password",
            format!("password must be at least {MIN_PASSWORD_LENGTH} characters long"),
        ));
    }
    Ok(())
}

/// Sets user `id`'s password (hash computed before the write) and ends their sessions; 404 for no user.
pub async fn set_password(tx: &mut WriteTx, id: i64, password_hash: &str) -> Result<(), ApiError> {
    let row = users::require(tx.conn(), id).await?;
    users::ensure_not_provisioned(
        &row,
        "they sign in through the provider; manage their access",
    )?;
    own_account::set_password(tx, id, password_hash).await
}

/// The caller's root role (effective: their own or a group's); none within a project, as Vexil has no
/// project roles.
pub async fn roles(
    conn: &mut AnyConnection,
    actor: &Actor,
    project: Option<&str>,
) -> Result<Roles, ApiError> {
    if project.is_some() {
        return Ok(Roles {
            version: 1,
            roles: Vec::new(),
        });
    }
    let row = users::require(conn, actor.user_id).await?;
    let Credential::User(role) = access::caller(conn, row).await?.credential else {
        return Err(ApiError::internal());
    };
    Ok(Roles {
        version: 1,
        roles: root_roles()
            .into_iter()
            .filter(|candidate| candidate.id == role.id())
            .collect(),
    })
}

/// Whether the user of `row`, whose personal access tokens were last used at `pat_seen` (if ever), has been
/// inactive for [`INACTIVE_MS`] at `now_ms`.
fn is_inactive(row: &UserRow, pat_seen: Option<Timestamp>, now_ms: i64) -> bool {
    let last_active = row
        .seen_at
        .unwrap_or(row.created_at)
        .max(pat_seen.unwrap_or(Timestamp::EPOCH));
    last_active.millis() < now_ms - INACTIVE_MS
}

/// Users neither signed in nor using a personal access token for 180 days (never: created 180 days ago or
/// more), by id.
pub async fn inactive(conn: &mut AnyConnection, now_ms: i64) -> Result<InactiveUsers, ApiError> {
    let pats_seen = user_store::pats_last_seen(conn).await?;
    let inactive_users = user_store::list(conn)
        .await?
        .into_iter()
        .filter(|row| is_inactive(row, pats_seen.get(&row.id).copied(), now_ms))
        .map(|row| InactiveUser {
            id: row.id,
            name: row.name,
            email: row.email,
            username: row.username,
            seen_at: row.seen_at.map(|at| at.to_string()),
            created_at: row.created_at.to_string(),
            pat_seen_at: pats_seen.get(&row.id).map(|at| at.to_string()),
        })
        .collect();
    Ok(InactiveUsers {
        version: 1,
        inactive_users,
    })
}

/// Deletes the listed users, all or none: each must exist (404) and be inactive (400).
pub async fn delete_inactive(
    tx: &mut WriteTx,
    input: UserIds,
    now_ms: i64,
) -> Result<(), ApiError> {
    if input.ids.is_empty() {
        return Err(ApiError::invalid_field(
            "ids",
            "ids must list at least one user",
        ));
    }
    let pats_seen = user_store::pats_last_seen(tx.conn()).await?;
    for id in input.ids {
        let row = users::require(tx.conn(), id).await?;
        if !is_inactive(&row, pats_seen.get(&id).copied(), now_ms) {
            return Err(ApiError::invalid_field(
                "ids",
                format!("ids: user {id} is not inactive"),
            ));
        }
        users::delete(tx, id).await?;
    }
    Ok(())
}

pub async fn access_overview(conn: &mut AnyConnection) -> Result<UsersAndGroups, ApiError> {
    Ok(UsersAndGroups {
        groups: groups::list(conn).await?.groups,
        users: users::list(conn).await?.users,
    })
}
