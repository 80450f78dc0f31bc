//! Service accounts (`/api/admin/service-account…`, Unleash's Enterprise routes): accounts that belong to no
//! person, for automation. Each has a username, a name and a root role (1 Admin, 2 Editor, 3 Viewer); its
//! tokens are personal access tokens (`user:<random>`, 224 random bits, stored as SHA-256 hashes and shown
//! once, expiring, revocable, their last use noted) with which it acts on the admin API with its root role
//! (`access::Credential::ServiceAccount`). A service account is a row of `users` marked as a service: it has
//! no password, e-mail, session or group, is in no list of people, cannot sign in to the UI and is not an
//! Admin for the last-Admin rule. Deleting one deletes its tokens in the same transaction, so they stop
//! working at once (every admin request looks its token up).

use super::events::{payload, EventType};
use super::roles::{root_roles, Role, RootRole};
use super::users::{self, CreatePat, Pat, PatList};
use crate::store::users::{self as user_store, Account, PatRow, UserRow};
use crate::store::{Counter, NewEvent, WriteTx};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The longest username and name.
const MAX_LENGTH: usize = 100;

/// A service account (serviceAccountSchema). `seenAt` is always null, as in Unleash: each token's `seenAt`
/// says when it was last used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccount {
    pub id: i64,
    pub name: String,
    pub username: String,
    /// The id of the account's root role.
    pub root_role: i64,
    pub created_at: String,
    /// Always null: see the tokens' `seenAt`.
    pub seen_at: Option<String>,
    /// Its tokens, without secrets.
    pub tokens: Vec<Pat>,
}

/// `GET /api/admin/service-account` (serviceAccountsSchema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountList {
    pub service_accounts: Vec<ServiceAccount>,
    /// The root roles the accounts name.
    pub root_roles: Vec<Role>,
}

/// `POST /api/admin/service-account` (createServiceAccountSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateServiceAccount {
    /// Unique among users and service accounts.
    #[schema(min_length = 1, max_length = 100, pattern = r"^\S+$")]
    pub username: String,
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// 1 (Admin), 2 (Editor) or 3 (Viewer).
    #[schema(minimum = 1, maximum = 3)]
    pub root_role: i64,
}

/// `PUT /api/admin/service-account/:id` (updateServiceAccountSchema): absent fields keep their value; other
/// fields (a `username`, say) are ignored, as in Unleash.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateServiceAccount {
    #[schema(min_length = 1, max_length = 100)]
    pub name: Option<String>,
    #[schema(minimum = 1, maximum = 3)]
    pub root_role: Option<i64>,
}

/// One permission of `GET /api/admin/service-account/:id/permissions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Permission {
    /// `ADMIN`, or an Unleash permission name.
    pub permission: String,
}

/// `GET /api/admin/service-account/:id/permissions`: the account's root role and what it grants. Vexil has
/// root roles only, so a `project` or `environment` changes nothing.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountPermissions {
    pub root_role: Role,
    pub permissions: Vec<Permission>,
}

fn view(row: UserRow, tokens: Vec<Pat>) -> ServiceAccount {
    ServiceAccount {
        id: row.id,
        name: row.name.unwrap_or_default(),
        username: row.username.unwrap_or_default(),
        root_role: row.root_role,
        created_at: row.created_at.to_string(),
        seen_at: None,
        tokens,
    }
}

fn token_views(rows: Vec<PatRow>) -> Vec<Pat> {
    rows.into_iter()
        .map(|row| users::pat_view(row, None))
        .collect()
}

/// The service account row or 404.
pub async fn require(conn: &mut AnyConnection, id: i64) -> Result<UserRow, ApiError> {
    user_store::get_of(conn, id, Account::Service)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Service account {id} does not exist")))
}

/// Every service account with its tokens, by id.
pub async fn list(conn: &mut AnyConnection) -> Result<ServiceAccountList, ApiError> {
    let rows = user_store::list_of(conn, Account::Service).await?;
    let mut service_accounts = Vec::with_capacity(rows.len());
    for row in rows {
        let tokens = token_views(user_store::pats_of(conn, row.id).await?);
        service_accounts.push(view(row, tokens));
    }
    Ok(ServiceAccountList {
        service_accounts,
        root_roles: root_roles(),
    })
}

/// One service account with its tokens, or 404.
pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<ServiceAccount, ApiError> {
    let row = require(conn, id).await?;
    let tokens = token_views(user_store::pats_of(conn, id).await?);
    Ok(view(row, tokens))
}

fn check_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_LENGTH {
        return Err(ApiError::invalid_field(
            "name",
            format!("name must be 1 to {MAX_LENGTH} characters long"),
        ));
    }
    Ok(name.to_owned())
}

fn check_role(id: i64) -> Result<RootRole, ApiError> {
    RootRole::from_id(id).ok_or_else(|| {
        ApiError::invalid_field(
            "rootRole",
            "rootRole must be 1 (Admin), 2 (Editor) or 3 (Viewer)",
        )
    })
}

/// Creates a service account: 400 for a bad username, name or root role, 409 when a user or service account
/// has the username.
pub async fn create(
    tx: &mut WriteTx,
    input: CreateServiceAccount,
) -> Result<ServiceAccount, ApiError> {
    let username = input.username.trim().to_owned();
    if username.is_empty()
        || username.chars().count() > MAX_LENGTH
        || username.contains(char::is_whitespace)
    {
        return Err(ApiError::invalid_field(
            "username",
            format!("username must be 1 to {MAX_LENGTH} characters long, without spaces"),
        ));
    }
    let name = check_name(&input.name)?;
    let role = check_role(input.root_role)?;
    if user_store::login_taken(tx.conn(), Some(&username), None, 0).await? {
        return Err(ApiError::name_exists(format!(
            "A user or service account with the username {username} already exists"
        ))
        .at_field("username"));
    }
    let row = UserRow {
        id: tx.next_id(Counter::User).await?,
        name: Some(name),
        email: None,
        username: Some(username),
        password_hash: None,
        root_role: role.id(),
        created_at: tx.now(),
        seen_at: None,
        scim_id: None,
        active: true,
    };
    user_store::insert_of(tx.conn(), &row, Account::Service).await?;
    let account = view(row, Vec::new());
    tx.record(NewEvent {
        event_type: EventType::ServiceAccountCreated.as_str(),
        data: Some(payload(&account)),
        ..NewEvent::default()
    })
    .await?;
    Ok(account)
}

/// Changes a service account's name or root role (404 if there is none). No change, no event.
pub async fn update(
    tx: &mut WriteTx,
    id: i64,
    input: UpdateServiceAccount,
) -> Result<ServiceAccount, ApiError> {
    let name = input.name.as_deref().map(check_name).transpose()?;
    let role = input.root_role.map(check_role).transpose()?;
    let before = require(tx.conn(), id).await?;
    let row = UserRow {
        name: name.or(before.name.clone()),
        root_role: role.map_or(before.root_role, RootRole::id),
        ..before.clone()
    };
    let tokens = token_views(user_store::pats_of(tx.conn(), id).await?);
    let account = view(row.clone(), tokens.clone());
    let previous = view(before, tokens);
    if account == previous {
        return Ok(account);
    }
    user_store::update(tx.conn(), &row).await?;
    tx.record(NewEvent {
        event_type: EventType::ServiceAccountUpdated.as_str(),
        data: Some(payload(&ServiceAccount {
            tokens: Vec::new(),
            ..account.clone()
        })),
        pre_data: Some(payload(&ServiceAccount {
            tokens: Vec::new(),
            ..previous
        })),
        ..NewEvent::default()
    })
    .await?;
    Ok(account)
}

/// Deletes a service account and its tokens (404 if there is none).
pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let before = view(require(tx.conn(), id).await?, Vec::new());
    user_store::delete(tx.conn(), id).await?;
    tx.record(NewEvent {
        event_type: EventType::ServiceAccountDeleted.as_str(),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// The tokens of a service account (404 if there is none), without secrets.
pub async fn tokens(conn: &mut AnyConnection, id: i64) -> Result<PatList, ApiError> {
    require(conn, id).await?;
    Ok(PatList {
        pats: token_views(user_store::pats_of(conn, id).await?),
    })
}

/// Creates a token of service account `id` (404 if there is none; 400 for a bad description or an expiry
/// not in the future), returned with its secret: the only time it is shown. Records `pat-created`.
pub async fn create_token(tx: &mut WriteTx, id: i64, input: CreatePat) -> Result<Pat, ApiError> {
    require(tx.conn(), id).await?;
    let (description, expires_at) = users::check_pat(input)?;
    users::insert_pat(tx, id, description, expires_at).await
}

/// Deletes token `token_id` of service account `id` (404 if either is unknown or the token is another's):
/// it stops working at once. Records `pat-deleted`.
pub async fn delete_token(tx: &mut WriteTx, id: i64, token_id: i64) -> Result<(), ApiError> {
    require(tx.conn(), id).await?;
    let row = user_store::get_pat(tx.conn(), token_id)
        .await?
        .filter(|row| row.user_id == id)
        .ok_or_else(|| {
            ApiError::not_found(format!("Service account {id} has no token {token_id}"))
        })?;
    user_store::delete_pat(tx.conn(), token_id).await?;
    tx.record(NewEvent {
        event_type: EventType::PatDeleted.as_str(),
        pre_data: Some(payload(&users::pat_view(row, None))),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// What the account's root role grants: Admin everything (`ADMIN`), Editor the configuration, Viewer reads.
pub async fn permissions(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<ServiceAccountPermissions, ApiError> {
    let row = require(conn, id).await?;
    let role = RootRole::from_id(row.root_role).unwrap_or(RootRole::Viewer);
    let names: &[&str] = match role {
        RootRole::Admin => &["ADMIN"],
        RootRole::Editor => &[
            "CREATE_FEATURE",
            "UPDATE_FEATURE",
            "DELETE_FEATURE",
            "CREATE_FEATURE_STRATEGY",
            "UPDATE_FEATURE_STRATEGY",
            "DELETE_FEATURE_STRATEGY",
            "UPDATE_FEATURE_ENVIRONMENT",
            "UPDATE_FEATURE_VARIANTS",
            "CREATE_STRATEGY",
            "UPDATE_STRATEGY",
            "DELETE_STRATEGY",
            "CREATE_CONTEXT_FIELD",
            "UPDATE_CONTEXT_FIELD",
            "DELETE_CONTEXT_FIELD",
            "CREATE_SEGMENT",
            "UPDATE_SEGMENT",
            "DELETE_SEGMENT",
            "CREATE_PROJECT",
            "UPDATE_PROJECT",
            "DELETE_PROJECT",
            "CREATE_TAG_TYPE",
            "UPDATE_TAG_TYPE",
            "DELETE_TAG_TYPE",
        ],
        RootRole::Viewer => &[],
    };
    let root_role = root_roles()
        .into_iter()
        .find(|candidate| candidate.id == role.id())
        .ok_or_else(ApiError::internal)?;
    Ok(ServiceAccountPermissions {
        root_role,
        permissions: names
            .iter()
            .map(|name| Permission {
                permission: (*name).to_owned(),
            })
            .collect(),
    })
}
