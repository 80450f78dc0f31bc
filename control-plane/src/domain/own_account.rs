//! The caller's own account beyond `GET /api/admin/user`: the profile (`GET /api/admin/user/profile`) and a
//! password change (`POST /api/admin/user/change-password`). Users only (the `OwnAccount` area refuses API
//! tokens). A new password ends every session of the user, as a password reset should.

use super::access::{self, Credential};
use super::events::{payload, EventType};
use super::roles::{root_roles, Role};
use super::users::{self, SignInBounds};
use crate::store::groups as group_store;
use crate::store::users as user_store;
use crate::store::{Actor, NewEvent, Store, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::net::IpAddr;
use std::time::Instant;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// A group the user belongs to (groupItemSchema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileGroup {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    #[serde(rename = "mappingsSSO")]
    pub mappings_sso: Vec<String>,
    pub root_role: Option<i64>,
}

/// `GET /api/admin/user/profile` (profileSchema). Vexil has root roles only: no project roles (`projects`
/// is empty), no e-mail subscriptions and no favourite flags.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// The effective root role (the user's own or a group's, the highest).
    pub root_role: Role,
    pub projects: Vec<String>,
    pub groups: Vec<ProfileGroup>,
    pub subscriptions: Vec<String>,
    #[schema(value_type = Vec<Object>)]
    pub features: Vec<serde_json::Value>,
    /// Whether the user has a password to change (and password sign-in is on).
    pub can_change_password: bool,
}

/// `POST /api/admin/user/change-password` (passwordSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangePassword {
    pub password: String,
    /// Required when the user has a password.
    pub old_password: Option<String>,
    /// When given, must equal `password`.
    pub confirm_password: Option<String>,
}

pub async fn profile(
    conn: &mut AnyConnection,
    actor: &Actor,
    password_auth: bool,
) -> Result<Profile, ApiError> {
    let row = users::require(conn, actor.user_id).await?;
    let Credential::User(role) = access::caller(conn, row.clone()).await?.credential else {
        return Err(ApiError::internal());
    };
    let root_role = root_roles()
        .into_iter()
        .find(|candidate| candidate.id == role.id())
        .ok_or_else(ApiError::internal)?;
    let groups = group_store::groups_of(conn, row.id)
        .await?
        .into_iter()
        .map(|group| ProfileGroup {
            id: group.id,
            name: group.name,
            description: group.description,
            mappings_sso: group.mappings_sso,
            root_role: group.root_role,
        })
        .collect();
    Ok(Profile {
        root_role,
        projects: Vec::new(),
        groups,
        subscriptions: Vec::new(),
        features: Vec::new(),
        can_change_password: password_auth && row.password_hash.is_some(),
    })
}

/// Checks a password change before the write and returns the new password's hash: the confirmation
/// matches (400), the old password is right (401, counted as a failed sign-in of the user's login, so it
/// cannot be guessed faster than a sign-in), the new one is long enough (400).
pub async fn new_password_hash(
    store: &Store,
    bounds: SignInBounds<'_>,
    client: Option<IpAddr>,
    actor: &Actor,
    input: ChangePassword,
) -> Result<String, ApiError> {
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
    let row = {
        let mut conn = store.read().await?;
        users::require(&mut conn, actor.user_id).await?
    };
    if let Some(stored) = row.password_hash.clone() {
        let old = input
            .old_password
            .ok_or_else(|| ApiError::invalid_field("oldPassword", "oldPassword is required"))?;
        let login = row
            .username
            .clone()
            .or(row.email.clone())
            .unwrap_or_default();
        bounds.throttle.check(&login, client, Instant::now())?;
        if !bounds.work.verify(old, Some(stored)).await? {
            bounds
                .throttle
                .record_failure(&login, client, Instant::now());
            return Err(ApiError::new(
                ErrorKind::AuthenticationRequired,
                "Old password is incorrect",
            )
            .at_field("oldPassword"));
        }
        bounds.throttle.record_success(&login, client);
    }
    users::hash_password(bounds.work, input.password).await
}

/// Stores the new password hash, ends the user's sessions, records `user-updated` (without any secret).
pub async fn set_password(
    tx: &mut WriteTx,
    user_id: i64,
    password_hash: &str,
) -> Result<(), ApiError> {
    let user = users::view(users::require(tx.conn(), user_id).await?);
    user_store::set_password(tx.conn(), user_id, password_hash).await?;
    tx.record(NewEvent {
        event_type: EventType::UserUpdated.as_str(),
        data: Some(payload(&user)),
        pre_data: Some(payload(&user)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}
