//! Users with root roles (1 Admin, 2 Editor, 3 Viewer), password sign-in with sessions, and personal access
//! tokens (`user:<random>`) that act as their user. Passwords are argon2id PHC strings; session ids and PAT
//! secrets are stored as SHA-256 hashes and shown once. A user's effective role is the highest of their own
//! root role and their groups' root roles.

use super::access::{self, Credential};
use super::events::{payload, EventType};
use super::last_admin;
use super::passwords::PasswordWork;
use super::roles::RoleReference;
use super::sign_in_throttle::SignInThrottle;
use super::single_sign_out::ProviderSession;
use super::tokens::{parse_timestamp, random_hex, PAT_PREFIX, SECRET_RANDOM_BYTES};
use crate::store::users::{self as user_store, PatRow, UserRow};
use crate::store::{Actor, Counter, NewEvent, Store, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::net::IpAddr;
use std::time::Instant;
use utoipa::ToSchema;
use vexil_shared::token;
use vexil_shared::{ApiError, ErrorKind};

/// How long a sign-in lasts.
pub const SESSION_HOURS: i64 = 48;
/// The shortest accepted password.
pub const MIN_PASSWORD_LENGTH: usize = 8;

/// A user (userSchema). Never carries the password.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: i64,
    pub name: Option<String>,
    pub email: Option<String>,
    pub username: Option<String>,
    /// The user's own root role (groups may give a higher one).
    pub root_role: i64,
    pub created_at: String,
    /// Last sign-in.
    pub seen_at: Option<String>,
    #[serde(rename = "isAPI")]
    pub is_api: bool,
    pub account_type: String,
    /// The SCIM id of a user an identity provider provisioned (`/scim/v2`); absent otherwise. Such a user is
    /// changed at the provider: here only their root role can be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scim_id: Option<String>,
    /// False (and only then present) once the identity provider deactivated the user: they cannot sign in.
    #[serde(default = "active_default", skip_serializing_if = "is_active")]
    pub active: bool,
}

fn active_default() -> bool {
    true
}

fn is_active(active: &bool) -> bool {
    *active
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserList {
    pub users: Vec<User>,
    pub root_roles: Vec<super::roles::Role>,
}

/// `GET /api/admin/user`: the caller.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentUser {
    /// With `rootRole` the effective one (groups included).
    pub user: User,
}

/// `POST /api/admin/user-admin`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateUser {
    /// `username` or `email` is required.
    #[schema(max_length = 100, pattern = r"^\S*$")]
    pub username: Option<String>,
    pub email: Option<String>,
    pub name: Option<String>,
    /// Without one, the user cannot sign in with a password.
    #[schema(min_length = 8)]
    pub password: Option<String>,
    pub root_role: RoleReference,
    /// Whether to e-mail a user created without a password their welcome link (default true; sent only
    /// when the instance can send e-mail).
    pub send_email: Option<bool>,
}

/// What `POST /api/admin/user-admin` answers (createUserResponseSchema): the user and, for one created
/// without a password, the link where they set it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedUser {
    #[serde(flatten)]
    pub user: User,
    /// The welcome link (set a password, valid 7 days) of a user created without a password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invite_link: Option<String>,
    /// Whether the welcome link was e-mailed to the user.
    pub email_sent: bool,
}

/// `PUT /api/admin/user-admin/:id`: absent fields keep their value.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateUser {
    pub name: Option<String>,
    pub email: Option<String>,
    pub root_role: Option<RoleReference>,
}

/// `POST /auth/simple/login`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct Login {
    /// The username or the e-mail.
    pub username: String,
    pub password: String,
}

/// A personal access token (patSchema). `secret` is only set in the answer that creates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pat {
    pub id: i64,
    pub secret: Option<String>,
    pub description: String,
    pub expires_at: String,
    pub created_at: String,
    /// The latest use noted: written within `--token-seen-interval` of it; null when never used.
    pub seen_at: Option<String>,
    pub user_id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PatList {
    pub pats: Vec<Pat>,
}

/// `POST /api/admin/user/tokens`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatePat {
    pub description: String,
    /// In the future.
    pub expires_at: String,
}

pub fn view(row: UserRow) -> User {
    User {
        id: row.id,
        name: row.name,
        email: row.email,
        username: row.username,
        root_role: row.root_role,
        created_at: row.created_at.to_string(),
        seen_at: row.seen_at.map(|at| at.to_string()),
        is_api: false,
        account_type: "User".to_owned(),
        scim_id: row.scim_id,
        active: row.active,
    }
}

/// Refuses (403) a change through the admin API or UI to a user SCIM manages: their identity provider owns
/// them. `what` says what was tried.
pub fn ensure_not_provisioned(row: &UserRow, what: &str) -> Result<(), ApiError> {
    if row.scim_id.is_none() {
        return Ok(());
    }
    let name = row
        .username
        .clone()
        .or_else(|| row.email.clone())
        .unwrap_or_else(|| format!("{}", row.id));
    Err(ApiError::new(
        ErrorKind::NoAccess,
        format!(
            "User {name} is managed by SCIM: your identity provider provisions it, so {what} there \
             (only their root role can be changed in Vexil)"
        ),
    ))
}

/// The user row or 404.
pub async fn require(conn: &mut AnyConnection, id: i64) -> Result<UserRow, ApiError> {
    user_store::get(conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("User {id} does not exist")))
}

pub async fn list(conn: &mut AnyConnection) -> Result<UserList, ApiError> {
    let users = user_store::list(conn)
        .await?
        .into_iter()
        .map(view)
        .collect();
    Ok(UserList {
        users,
        root_roles: super::roles::root_roles(),
    })
}

pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<User, ApiError> {
    Ok(view(require(conn, id).await?))
}

/// The caller's own user, with their effective root role.
pub async fn current(conn: &mut AnyConnection, actor: &Actor) -> Result<CurrentUser, ApiError> {
    let row = require(conn, actor.user_id).await?;
    let Credential::User(role) = access::caller(conn, row.clone()).await?.credential else {
        return Err(ApiError::internal());
    };
    let mut user = view(row);
    user.root_role = role.id();
    Ok(CurrentUser { user })
}

fn clean(value: Option<String>) -> Option<String> {
    value
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

/// Checks an e-mail address (400 naming `email`).
pub fn validate_email(email: &str) -> Result<(), ApiError> {
    let valid = email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty() && !domain.is_empty() && !email.contains(char::is_whitespace)
    });
    if !valid || email.chars().count() > 254 {
        return Err(ApiError::invalid_field(
            "email",
            "email is not a valid e-mail address",
        ));
    }
    Ok(())
}

fn validate_username(username: &str) -> Result<(), ApiError> {
    if username.chars().count() > 100 || username.contains(char::is_whitespace) {
        return Err(ApiError::invalid_field(
            "username",
            "username must be at most 100 characters, without spaces",
        ));
    }
    Ok(())
}

/// Hashes a password with argon2id (random salt) in a turn of `work`, off the async threads.
pub async fn hash_password(work: &PasswordWork, password: String) -> Result<String, ApiError> {
    if password.chars().count() < MIN_PASSWORD_LENGTH {
        return Err(ApiError::invalid_field(
            "password",
            format!("password must be at least {MIN_PASSWORD_LENGTH} characters long"),
        ));
    }
    work.hash(password).await
}

/// Creates a user; `password_hash` comes from [`hash_password`] (computed before the write starts).
pub async fn create(
    tx: &mut WriteTx,
    input: CreateUser,
    password_hash: Option<String>,
) -> Result<User, ApiError> {
    let username = clean(input.username);
    let email = clean(input.email);
    if username.is_none() && email.is_none() {
        return Err(ApiError::invalid_field(
            "username",
            "username or email is required",
        ));
    }
    if let Some(username) = &username {
        validate_username(username)?;
    }
    if let Some(email) = &email {
        validate_email(email)?;
    }
    let root_role =
        super::role_admin::root_role_id(tx.conn(), "rootRole", &input.root_role).await?;
    if user_store::login_taken(tx.conn(), username.as_deref(), email.as_deref(), 0).await? {
        return Err(ApiError::name_exists(
            "A user with this username or email already exists",
        ));
    }
    let row = UserRow {
        id: tx.next_id(Counter::User).await?,
        name: clean(input.name),
        email,
        username,
        password_hash,
        root_role,
        created_at: tx.now(),
        seen_at: None,
        scim_id: None,
        active: true,
    };
    user_store::insert(tx.conn(), &row).await?;
    let user = view(row);
    tx.record(NewEvent {
        event_type: EventType::UserCreated.as_str(),
        data: Some(payload(&user)),
        ..NewEvent::default()
    })
    .await?;
    Ok(user)
}

pub async fn update(tx: &mut WriteTx, id: i64, input: UpdateUser) -> Result<User, ApiError> {
    let before = require(tx.conn(), id).await?;
    let email = match input.email {
        Some(email) => clean(Some(email)),
        None => before.email.clone(),
    };
    if let Some(email) = &email {
        validate_email(email)?;
        if user_store::login_taken(tx.conn(), None, Some(email), id).await? {
            return Err(ApiError::name_exists("Another user has this email address"));
        }
    }
    let root_role = match &input.root_role {
        Some(reference) => {
            super::role_admin::root_role_id(tx.conn(), "rootRole", reference).await?
        }
        None => before.root_role,
    };
    let row = UserRow {
        name: match input.name {
            Some(name) => clean(Some(name)),
            None => before.name.clone(),
        },
        email,
        root_role,
        ..before.clone()
    };
    if row.name != before.name || row.email != before.email {
        ensure_not_provisioned(&before, "change their name and e-mail")?;
    }
    let user = view(row.clone());
    let previous = view(before);
    if user == previous {
        return Ok(user);
    }
    let admins = last_admin::before(tx.conn()).await?;
    user_store::update(tx.conn(), &row).await?;
    let refusal = "rootRole: the last Admin user must keep the Admin root role";
    last_admin::keep_an_admin(tx.conn(), admins, refusal).await?;
    tx.record(NewEvent {
        event_type: EventType::UserUpdated.as_str(),
        data: Some(payload(&user)),
        pre_data: Some(payload(&previous)),
        ..NewEvent::default()
    })
    .await?;
    Ok(user)
}

/// Deletes a user with their sessions, personal access tokens and group memberships (not one SCIM manages:
/// 403).
pub async fn delete(tx: &mut WriteTx, id: i64) -> Result<(), ApiError> {
    let row = require(tx.conn(), id).await?;
    ensure_not_provisioned(
        &row,
        "remove them at the provider (or delete every provisioned user with DELETE \
         /api/admin/user-admin/scim-users)",
    )?;
    remove(tx, row).await
}

/// Deletes a user SCIM provisioned (the SCIM route, and the admin API's delete of every provisioned user).
pub async fn delete_provisioned(tx: &mut WriteTx, row: UserRow) -> Result<(), ApiError> {
    remove(tx, row).await
}

async fn remove(tx: &mut WriteTx, row: UserRow) -> Result<(), ApiError> {
    let id = row.id;
    let admins = last_admin::before(tx.conn()).await?;
    let before = view(row);
    user_store::delete(tx.conn(), id).await?;
    let refusal = "The last Admin user cannot be deleted";
    last_admin::keep_an_admin(tx.conn(), admins, refusal).await?;
    tx.record(NewEvent {
        event_type: EventType::UserDeleted.as_str(),
        pre_data: Some(payload(&before)),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

/// How a sign-in is bounded: its failures ([`SignInThrottle`]) and its password work ([`PasswordWork`]).
pub struct SignInBounds<'a> {
    pub throttle: &'a SignInThrottle,
    pub work: &'a PasswordWork,
}

/// Signs in with a username (or e-mail) and password from `client`: returns the user and a new session id (to
/// be set as a cookie; only its hash is stored). Wrong credentials → 401; a login or client past its failed
/// attempts, or too many sign-ins at once → 429 (checked before any password work). An unknown user's
/// password is checked against a decoy, so a wrong username takes as long as a wrong password.
pub async fn login(
    store: &Store,
    bounds: SignInBounds<'_>,
    client: Option<IpAddr>,
    input: Login,
) -> Result<(User, String), ApiError> {
    let SignInBounds { throttle, work } = bounds;
    let login = input.username.trim();
    throttle.check(login, client, Instant::now())?;
    let mut turn = work.sign_in_turn().await?;
    // Failures recorded while this one waited count too.
    throttle.check(login, client, Instant::now())?;
    let row = {
        let mut conn = store.read().await?;
        user_store::find_by_login(&mut conn, login).await?
    };
    let stored = row.as_ref().and_then(|row| row.password_hash.clone());
    let password = input.password;
    // The turn moves into the task: held until the check is done, even if the request is dropped meanwhile.
    let matches =
        tokio::task::spawn_blocking(move || turn.verify(password.as_bytes(), stored.as_deref()))
            .await
            .map_err(|error| {
                tracing::error!(%error, "password verification task failed");
                ApiError::internal()
            })?;
    let Some(row) = row.filter(|row| matches && row.password_hash.is_some()) else {
        throttle.record_failure(login, client, Instant::now());
        return Err(ApiError::new(
            ErrorKind::AuthenticationRequired,
            "Wrong username or password",
        ));
    };
    throttle.record_success(login, client);
    open_session(store, row).await
}

/// A new session of `row`'s user (password or single sign-on): its id, to be set as the session cookie
/// (only its hash is stored), and the user with their `seenAt` now.
pub async fn open_session(store: &Store, row: UserRow) -> Result<(User, String), ApiError> {
    open_provider_session(store, row, None).await
}

/// A new session of a single sign-on, keeping what signing out at the identity provider needs
/// (`provider`, server side: `domain::single_sign_out`).
pub async fn open_provider_session(
    store: &Store,
    row: UserRow,
    provider: Option<&ProviderSession>,
) -> Result<(User, String), ApiError> {
    let session = random_hex(32)?;
    let created_at = Timestamp::now();
    let expires_at = created_at.plus_hours(SESSION_HOURS);
    let mut conn = store.bookkeeping().await?;
    let session_hash = token::sha256_hex(&session);
    user_store::insert_session(
        &mut conn,
        user_store::NewSession {
            session_hash: &session_hash,
            user_id: row.id,
            created_at,
            expires_at,
            sign_out: provider.map(ProviderSession::to_text),
        },
    )
    .await?;
    let mut user = view(row);
    user.seen_at = Some(created_at.to_string());
    Ok((user, session))
}

/// Signs out: the session `session` (the cookie's value) ends, whoever holds it, and what signing out at
/// its identity provider needs comes back (a single sign-on's; `None` for a password sign-in or a session
/// already ended). Not a configuration write: no revision, no event (as a sign-in).
pub async fn sign_out(store: &Store, session: &str) -> Result<Option<ProviderSession>, ApiError> {
    let mut conn = store.bookkeeping().await?;
    let ended = user_store::delete_session(&mut conn, &token::sha256_hex(session)).await?;
    Ok(ended
        .flatten()
        .and_then(|text| ProviderSession::from_text(&text)))
}

/// Whether any user exists (while none does, the UI takes an admin token to sign in).
pub async fn any_user(conn: &mut AnyConnection) -> Result<bool, ApiError> {
    Ok(!user_store::list(conn).await?.is_empty())
}

pub(super) fn pat_view(row: PatRow, secret: Option<String>) -> Pat {
    Pat {
        id: row.id,
        secret,
        description: row.description,
        expires_at: row.expires_at.to_string(),
        created_at: row.created_at.to_string(),
        seen_at: row.seen_at.map(|at| at.to_string()),
        user_id: row.user_id,
    }
}

/// The personal access tokens of a user, without secrets.
pub async fn pats(conn: &mut AnyConnection, user_id: i64) -> Result<PatList, ApiError> {
    let pats = user_store::pats_of(conn, user_id)
        .await?
        .into_iter()
        .map(|row| pat_view(row, None))
        .collect();
    Ok(PatList { pats })
}

/// Creates a personal access token of `user_id`, returned with its secret (the only time it is shown).
pub async fn create_pat(tx: &mut WriteTx, user_id: i64, input: CreatePat) -> Result<Pat, ApiError> {
    let (description, expires_at) = check_pat(input)?;
    require(tx.conn(), user_id).await?;
    insert_pat(tx, user_id, description, expires_at).await
}

/// A new token's description (1 to 100 characters, trimmed) and expiry (in the future), or 400.
pub(super) fn check_pat(input: CreatePat) -> Result<(String, Timestamp), ApiError> {
    let description = input.description.trim().to_owned();
    if description.is_empty() || description.chars().count() > 100 {
        return Err(ApiError::invalid_field(
            "description",
            "description must be 1 to 100 characters long",
        ));
    }
    let expires_at = parse_timestamp("expiresAt", &input.expires_at)?;
    if expires_at <= Timestamp::now() {
        return Err(ApiError::invalid_field(
            "expiresAt",
            "expiresAt must be in the future",
        ));
    }
    Ok((description, expires_at))
}

/// Inserts a token (its secret `user:<random>`, stored as its SHA-256 only) of the user or service account
/// `user_id` (which the caller has checked) and records `pat-created`; returns it with its secret.
pub(super) async fn insert_pat(
    tx: &mut WriteTx,
    user_id: i64,
    description: String,
    expires_at: Timestamp,
) -> Result<Pat, ApiError> {
    let secret = format!("{PAT_PREFIX}{}", random_hex(SECRET_RANDOM_BYTES)?);
    let row = PatRow {
        id: tx.next_id(Counter::Pat).await?,
        secret_hash: token::sha256_hex(&secret),
        user_id,
        description,
        expires_at,
        created_at: tx.now(),
        seen_at: None,
    };
    user_store::insert_pat(tx.conn(), &row).await?;
    let pat = pat_view(row, None);
    tx.record(NewEvent {
        event_type: EventType::PatCreated.as_str(),
        data: Some(payload(&pat)),
        ..NewEvent::default()
    })
    .await?;
    Ok(Pat {
        secret: Some(secret),
        ..pat
    })
}

/// Deletes a personal access token of `user_id` (404 if it is not theirs).
pub async fn delete_pat(tx: &mut WriteTx, user_id: i64, id: i64) -> Result<(), ApiError> {
    let row = user_store::get_pat(tx.conn(), id)
        .await?
        .filter(|row| row.user_id == user_id)
        .ok_or_else(|| ApiError::not_found(format!("You have no personal access token {id}")))?;
    user_store::delete_pat(tx.conn(), id).await?;
    tx.record(NewEvent {
        event_type: EventType::PatDeleted.as_str(),
        pre_data: Some(payload(&pat_view(row, None))),
        ..NewEvent::default()
    })
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert!(validate_email("a@b.c").is_ok());
        assert!(validate_email("ab.c").is_err());
        assert!(validate_email("a @b.c").is_err());
    }
}
