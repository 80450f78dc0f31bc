//! Password reset links (`POST /api/admin/user-admin/reset-password`, `/auth/reset/*`) and the welcome link of
//! a user created without a password: a split-token secret (`link_tokens`) of one user, stored hashed, that
//! sets that user's password once, within [`RESET_HOURS`] ([`WELCOME_HOURS`] for a welcome link). A new link
//! of a user replaces their earlier one. Issuing a link is not a configuration write (no revision, no event,
//! as a session); using one is: the password changes (`user-updated`), the user's sessions end and the link is
//! marked used, in one write. A link that is unknown, expired or used is refused with 401, as Unleash does;
//! a password that breaks the rules with 400, the link still usable.

use super::link_tokens::{self, NewSecret};
use super::own_account;
use super::roles::{root_roles, Role};
use super::user_admin::{self, NewPassword};
use crate::store::account_links::{self as link_store, ResetTokenRow};
use crate::store::users::{self as user_store, UserRow};
use crate::store::WriteTx;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::{ApiError, ErrorKind};

/// How long a reset link works.
pub const RESET_HOURS: i64 = 2;
/// How long the welcome link of a user created without a password works.
pub const WELCOME_HOURS: i64 = 7 * 24;

/// `POST /api/admin/user-admin/reset-password` (idSchema): the user's e-mail (or username).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ResetFor {
    pub id: String,
}

/// resetPasswordSchema.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResetLink {
    pub reset_password_url: String,
}

/// `POST /auth/reset/password-email` (emailSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct EmailAddress {
    pub email: String,
}

/// `POST /auth/reset/password` (changePasswordSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ChangePassword {
    pub token: String,
    #[schema(min_length = 8)]
    pub password: String,
}

/// `POST /auth/reset/validate-password` (validatePasswordSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct PasswordToCheck {
    pub password: String,
}

/// `GET /auth/reset/validate` (tokenUserSchema): the user the link is for.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUser {
    pub id: i64,
    pub name: Option<String>,
    /// The e-mail, else the username.
    pub email: String,
    /// The link's secret, as given.
    pub token: String,
    /// Always null: Vexil does not keep who asked for a link.
    pub created_by: Option<String>,
    pub role: Role,
}

/// Which link: a reset, or the welcome of a new user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    Reset,
    Welcome,
}

/// A link issued: its user and its address (the only time the secret is seen).
#[derive(Debug, Clone)]
pub struct Issued {
    pub user: UserRow,
    pub url: String,
}

/// The page of a link: `site` is the instance's origin and base path.
pub fn url(site: &str, kind: LinkKind, secret: &str) -> String {
    match kind {
        LinkKind::Reset => format!("{site}/reset-password?token={secret}"),
        LinkKind::Welcome => format!("{site}/new-user?token={secret}"),
    }
}

/// A new link of `user` (their earlier one stops working), on a bookkeeping connection.
pub async fn issue(
    conn: &mut AnyConnection,
    user: UserRow,
    kind: LinkKind,
    site: &str,
) -> Result<Issued, ApiError> {
    let NewSecret {
        secret,
        selector,
        verifier_hash,
    } = link_tokens::new_secret()?;
    let created_at = Timestamp::now();
    let hours = match kind {
        LinkKind::Reset => RESET_HOURS,
        LinkKind::Welcome => WELCOME_HOURS,
    };
    link_store::replace_reset(
        conn,
        &ResetTokenRow {
            selector,
            verifier_hash,
            user_id: user.id,
            created_at,
            expires_at: created_at.plus_hours(hours),
            used_at: None,
        },
    )
    .await?;
    Ok(Issued {
        user,
        url: url(site, kind, &secret),
    })
}

/// The person whose e-mail (or username) is `login`, or 404.
pub async fn person(conn: &mut AnyConnection, login: &str) -> Result<UserRow, ApiError> {
    let login = login.trim();
    if login.is_empty() {
        return Err(ApiError::invalid_field("id", "id must be a user's e-mail"));
    }
    user_store::find_by_login(conn, login)
        .await?
        .ok_or_else(|| ApiError::not_found("There is no user with this e-mail"))
}

/// The person whose e-mail is `email` (never a service account), if any: for the anonymous request, which
/// answers the same either way.
pub async fn person_by_email(
    conn: &mut AnyConnection,
    email: &str,
) -> Result<Option<UserRow>, ApiError> {
    let email = email.trim();
    if email.is_empty() || !email.contains('@') {
        return Ok(None);
    }
    Ok(user_store::find_by_email(conn, email).await?)
}

fn refused() -> ApiError {
    ApiError::new(
        ErrorKind::AuthenticationRequired,
        "This reset link is not valid: it may have expired or been used. Ask for a new one.",
    )
}

/// The link of `secret` and its user, if it can be used now; else 401.
async fn usable(
    conn: &mut AnyConnection,
    secret: &str,
    now: Timestamp,
) -> Result<(ResetTokenRow, UserRow), ApiError> {
    let (selector, verifier) = link_tokens::split(secret).ok_or_else(refused)?;
    let row = link_store::reset(conn, selector)
        .await?
        .filter(|row| link_tokens::verifies(verifier, &row.verifier_hash))
        .filter(|row| row.used_at.is_none() && row.expires_at > now)
        .ok_or_else(refused)?;
    let user = user_store::get(conn, row.user_id)
        .await?
        .ok_or_else(refused)?;
    Ok((row, user))
}

/// `GET /auth/reset/validate`: the user of a usable link, else 401.
pub async fn validate(
    conn: &mut AnyConnection,
    secret: &str,
    now: Timestamp,
) -> Result<TokenUser, ApiError> {
    let (_, user) = usable(conn, secret, now).await?;
    let role = root_roles()
        .into_iter()
        .find(|role| role.id == user.root_role)
        .ok_or_else(ApiError::internal)?;
    Ok(TokenUser {
        id: user.id,
        email: user
            .email
            .clone()
            .or_else(|| user.username.clone())
            .unwrap_or_default(),
        name: user.name,
        token: secret.trim().to_owned(),
        created_by: None,
        role,
    })
}

/// The rules a new password must meet (as everywhere: `user_admin::validate_password`).
pub fn check_password(password: &str) -> Result<(), ApiError> {
    user_admin::validate_password(&NewPassword {
        password: password.to_owned(),
        confirm_password: None,
    })
}

/// The user a usable link is for (checked before the password is hashed; checked again in the write).
pub async fn user_of(
    conn: &mut AnyConnection,
    secret: &str,
    now: Timestamp,
) -> Result<UserRow, ApiError> {
    Ok(usable(conn, secret, now).await?.1)
}

/// `POST /auth/reset/password`: sets the link's user's password (`password_hash` from
/// `users::hash_password`), ends their sessions and uses the link up, in `tx`; 401 if the link cannot be used
/// (any more).
pub async fn use_link(
    tx: &mut WriteTx,
    secret: &str,
    password_hash: &str,
) -> Result<UserRow, ApiError> {
    let now = tx.now();
    let (row, user) = usable(tx.conn(), secret, now).await?;
    if !link_store::use_reset(tx.conn(), &row.selector, now).await? {
        return Err(refused());
    }
    own_account::set_password(tx, user.id, password_hash).await?;
    Ok(user)
}
