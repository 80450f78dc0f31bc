//! SQL of users, their login sessions and their personal access tokens. Sessions and PATs are stored as
//! SHA-256 hashes of their secrets; passwords as argon2 PHC strings.

use super::encoding::{flag, json_text, optional_json};
use super::StoreError;
use crate::time::Timestamp;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, FromRow, Row};

#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: i64,
    pub name: Option<String>,
    pub email: Option<String>,
    pub username: Option<String>,
    pub password_hash: Option<String>,
    pub root_role: i64,
    pub created_at: Timestamp,
    pub seen_at: Option<Timestamp>,
    /// The SCIM resource id of a user an identity provider provisioned (`/scim/v2/Users`); `None`: not managed
    /// by SCIM.
    pub scim_id: Option<String>,
    /// False once the provider deactivated the user (SCIM `active: false`): no session or token of theirs
    /// authenticates, and they cannot sign in.
    pub active: bool,
}

impl FromRow<'_, AnyRow> for UserRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(UserRow {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            email: row.try_get("email")?,
            username: row.try_get("username")?,
            password_hash: row.try_get("password_hash")?,
            root_role: row.try_get("root_role")?,
            created_at: row.try_get("created_at")?,
            seen_at: row.try_get("seen_at")?,
            scim_id: row.try_get("scim_id")?,
            active: flag(row, "active")?,
        })
    }
}

const USER_COLUMNS: &str =
    "id, name, email, username, password_hash, root_role, created_at, seen_at, scim_id, active";

/// Which rows of `users` a read takes: people, or service accounts (never both: a service account is not a
/// person, and no read of people lists, finds or counts one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Account {
    Person,
    Service,
}

impl Account {
    fn stored(self) -> i64 {
        match self {
            Account::Person => 0,
            Account::Service => 1,
        }
    }
}

/// The people (not service accounts), by id.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<UserRow>, StoreError> {
    list_of(conn, Account::Person).await
}

/// The people or the service accounts, by id.
pub async fn list_of(
    conn: &mut AnyConnection,
    account: Account,
) -> Result<Vec<UserRow>, StoreError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE is_service = $1 ORDER BY id");
    Ok(sqlx::query_as(&sql)
        .bind(account.stored())
        .fetch_all(conn)
        .await?)
}

/// The people in group `group_id`, by id: one statement for all its members.
pub async fn in_group(conn: &mut AnyConnection, group_id: i64) -> Result<Vec<UserRow>, StoreError> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM users WHERE is_service = $1 AND id IN \
         (SELECT user_id FROM user_group_members WHERE group_id = $2) ORDER BY id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(Account::Person.stored())
        .bind(group_id)
        .fetch_all(conn)
        .await?)
}

/// The person `id` (none for a service account).
pub async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<UserRow>, StoreError> {
    get_of(conn, id, Account::Person).await
}

/// The person or the service account `id`.
pub async fn get_of(
    conn: &mut AnyConnection,
    id: i64,
    account: Account,
) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1 AND is_service = $2");
    Ok(sqlx::query_as(&sql)
        .bind(id)
        .bind(account.stored())
        .fetch_optional(conn)
        .await?)
}

/// The active person (never a service account, nor a user SCIM deactivated) whose username is `login`, or
/// whose e-mail is `login` in any case.
pub async fn find_by_login(
    conn: &mut AnyConnection,
    login: &str,
) -> Result<Option<UserRow>, StoreError> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM users WHERE is_service = 0 AND active = 1 \
         AND (username = $1 OR LOWER(email) = LOWER($1)) ORDER BY id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(login)
        .fetch_optional(conn)
        .await?)
}

/// The person (not a service account) whose e-mail is `email`, in any case (the lowest id if several).
pub async fn find_by_email(
    conn: &mut AnyConnection,
    email: &str,
) -> Result<Option<UserRow>, StoreError> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM users WHERE LOWER(email) = LOWER($1) AND is_service = 0 ORDER BY id"
    );
    Ok(sqlx::query_as(&sql)
        .bind(email)
        .fetch_optional(conn)
        .await?)
}

/// Whether another user or service account than `except` has this username or (case-insensitively) this
/// e-mail: people and service accounts share one namespace of usernames.
pub async fn login_taken(
    conn: &mut AnyConnection,
    username: Option<&str>,
    email: Option<&str>,
    except: i64,
) -> Result<bool, StoreError> {
    let count: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM users WHERE id <> $1 AND (username = $2 OR LOWER(email) = LOWER($3))",
    )
    .bind(except)
    .bind(username)
    .bind(email)
    .fetch_one(conn)
    .await?;
    Ok(count > 0)
}

pub async fn insert(conn: &mut AnyConnection, row: &UserRow) -> Result<(), StoreError> {
    insert_of(conn, row, Account::Person).await
}

/// Inserts a person or a service account.
pub async fn insert_of(
    conn: &mut AnyConnection,
    row: &UserRow,
    account: Account,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO users (id, name, email, username, password_hash, root_role, created_at, seen_at, \
         is_service, scim_id, active) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.email)
    .bind(&row.username)
    .bind(&row.password_hash)
    .bind(row.root_role)
    .bind(row.created_at)
    .bind(row.seen_at)
    .bind(account.stored())
    .bind(&row.scim_id)
    .bind(i64::from(row.active))
    .execute(conn)
    .await?;
    Ok(())
}

/// Updates name, e-mail and root role.
pub async fn update(conn: &mut AnyConnection, row: &UserRow) -> Result<(), StoreError> {
    sqlx::query("UPDATE users SET name = $1, email = $2, root_role = $3 WHERE id = $4")
        .bind(&row.name)
        .bind(&row.email)
        .bind(row.root_role)
        .bind(row.id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Sets a user's password hash and ends every session of theirs.
pub async fn set_password(
    conn: &mut AnyConnection,
    id: i64,
    password_hash: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
        .bind(password_hash)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM user_sessions WHERE user_id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes a user or service account with their sessions, personal access tokens and group memberships
/// (explicitly, not only through the foreign keys' cascade).
pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    for table in [
        "personal_access_tokens",
        "user_sessions",
        "user_group_members",
        "password_reset_tokens",
    ] {
        let sql = format!("DELETE FROM {table} WHERE user_id = $1");
        sqlx::query(&sql).bind(id).execute(&mut *conn).await?;
    }
    sqlx::query("UPDATE invite_links SET used_by = NULL WHERE used_by = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM users WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The lowest (most powerful) root role among the groups `user_id` belongs to, if any gives one.
pub async fn group_root_role(
    conn: &mut AnyConnection,
    user_id: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(g.root_role) FROM user_groups g JOIN user_group_members m ON m.group_id = g.id \
         WHERE m.user_id = $1 AND g.root_role IS NOT NULL",
    )
    .bind(user_id)
    .fetch_one(conn)
    .await?)
}

/// `u` (a person, a row of `users`) has the root role `$1`, their own or through a group they belong to (a
/// group's root role holds for every member).
const HAS_ROOT_ROLE: &str = "(u.root_role = $1 OR EXISTS (SELECT 1 FROM user_group_members m \
     JOIN user_groups g ON g.id = m.group_id WHERE m.user_id = u.id AND g.root_role = $1))";

/// How many active people (not service accounts, not deactivated) have the root role `role`, their own or
/// through a group they belong to: the last-Admin rule's count (`domain::last_admin`).
pub async fn count_active_with_root_role(
    conn: &mut AnyConnection,
    role: i64,
) -> Result<i64, StoreError> {
    let sql = format!(
        "SELECT COUNT(*) FROM users u WHERE u.is_service = 0 AND u.active = 1 AND {HAS_ROOT_ROLE}"
    );
    Ok(sqlx::query_scalar(&sql).bind(role).fetch_one(conn).await?)
}

/// The people (not service accounts) with the root role `role`, their own or through a group.
pub async fn ids_with_root_role(
    conn: &mut AnyConnection,
    role: i64,
) -> Result<Vec<i64>, StoreError> {
    let sql = format!("SELECT u.id FROM users u WHERE u.is_service = 0 AND {HAS_ROOT_ROLE}");
    Ok(sqlx::query_scalar(&sql).bind(role).fetch_all(conn).await?)
}

/// Ends a session (sign-out): the row with this hash goes, and its single sign-out data (`sign_out`) is
/// returned, in one statement (a second sign-out of the same session gets nothing). No row: `None`.
pub async fn delete_session(
    conn: &mut AnyConnection,
    session_hash: &str,
) -> Result<Option<Option<String>>, StoreError> {
    let row: Option<AnyRow> =
        sqlx::query("DELETE FROM user_sessions WHERE session_hash = $1 RETURNING sign_out")
            .bind(session_hash)
            .fetch_optional(conn)
            .await?;
    Ok(row
        .map(|row| row.try_get::<Option<String>, _>("sign_out"))
        .transpose()?)
}

/// A new session, as a sign-in records it.
pub struct NewSession<'a> {
    pub session_hash: &'a str,
    pub user_id: i64,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    /// What signing out at the identity provider needs (JSON), for a single sign-on.
    pub sign_out: Option<String>,
}

/// Records a login: a new session and the user's `seen_at`, in one transaction. Sessions already expired
/// (anyone's) go at the same time, with the single sign-out data they held.
pub async fn insert_session(
    conn: &mut AnyConnection,
    session: NewSession<'_>,
) -> Result<(), StoreError> {
    use sqlx::Connection;
    let NewSession {
        session_hash,
        user_id,
        created_at,
        expires_at,
        sign_out,
    } = session;
    let mut tx = conn.begin().await?;
    sqlx::query("DELETE FROM user_sessions WHERE expires_at <= $1")
        .bind(created_at)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO user_sessions (session_hash, user_id, created_at, expires_at, sign_out) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(session_hash)
    .bind(user_id)
    .bind(created_at)
    .bind(expires_at)
    .bind(sign_out)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE users SET seen_at = $1 WHERE id = $2")
        .bind(created_at)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The active person of an unexpired session (a service account never has one).
pub async fn session_user(
    conn: &mut AnyConnection,
    session_hash: &str,
    now: Timestamp,
) -> Result<Option<UserRow>, StoreError> {
    let sql = format!(
        "SELECT {} FROM users u JOIN user_sessions s ON s.user_id = u.id \
         WHERE s.session_hash = $1 AND s.expires_at > $2 AND u.is_service = 0 AND u.active = 1",
        qualified("u")
    );
    Ok(sqlx::query_as(&sql)
        .bind(session_hash)
        .bind(now)
        .fetch_optional(conn)
        .await?)
}

fn qualified(alias: &str) -> String {
    USER_COLUMNS
        .split(", ")
        .map(|column| format!("{alias}.{column}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PatRow {
    pub id: i64,
    pub secret_hash: String,
    pub user_id: i64,
    pub description: String,
    pub expires_at: Timestamp,
    pub created_at: Timestamp,
    /// The latest use noted (`store::tokens::note_seen`); `None`: never.
    pub seen_at: Option<Timestamp>,
}

const PAT_COLUMNS: &str = "id, secret_hash, user_id, description, expires_at, created_at, seen_at";

pub async fn insert_pat(conn: &mut AnyConnection, row: &PatRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO personal_access_tokens (id, secret_hash, user_id, description, expires_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(row.id)
    .bind(&row.secret_hash)
    .bind(row.user_id)
    .bind(&row.description)
    .bind(row.expires_at)
    .bind(row.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn pats_of(conn: &mut AnyConnection, user_id: i64) -> Result<Vec<PatRow>, StoreError> {
    let sql =
        format!("SELECT {PAT_COLUMNS} FROM personal_access_tokens WHERE user_id = $1 ORDER BY id");
    Ok(sqlx::query_as(&sql).bind(user_id).fetch_all(conn).await?)
}

pub async fn get_pat(conn: &mut AnyConnection, id: i64) -> Result<Option<PatRow>, StoreError> {
    let sql = format!("SELECT {PAT_COLUMNS} FROM personal_access_tokens WHERE id = $1");
    Ok(sqlx::query_as(&sql).bind(id).fetch_optional(conn).await?)
}

pub async fn delete_pat(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM personal_access_tokens WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct PatUserRow {
    #[sqlx(flatten)]
    user: UserRow,
    is_service: i64,
}

/// The active user or service account of an unexpired personal access token, with which of the two it is.
pub async fn pat_user(
    conn: &mut AnyConnection,
    secret_hash: &str,
    now: Timestamp,
) -> Result<Option<(UserRow, Account)>, StoreError> {
    let sql = format!(
        "SELECT {}, u.is_service FROM users u JOIN personal_access_tokens p ON p.user_id = u.id \
         WHERE p.secret_hash = $1 AND p.expires_at > $2 AND u.active = 1",
        qualified("u")
    );
    let row: Option<PatUserRow> = sqlx::query_as(&sql)
        .bind(secret_hash)
        .bind(now)
        .fetch_optional(conn)
        .await?;
    Ok(row.map(|row| {
        let account = if row.is_service != 0 {
            Account::Service
        } else {
            Account::Person
        };
        (row.user, account)
    }))
}

/// Each user's latest use of any of their personal access tokens (users whose tokens were never used are
/// absent).
pub async fn pats_last_seen(
    conn: &mut AnyConnection,
) -> Result<std::collections::HashMap<i64, Timestamp>, StoreError> {
    let rows: Vec<(i64, Timestamp)> = sqlx::query_as(
        "SELECT user_id, MAX(seen_at) FROM personal_access_tokens WHERE seen_at IS NOT NULL \
         GROUP BY user_id",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().collect())
}

/// A user provisioned through SCIM, with the SCIM attributes it was last given.
#[derive(Debug, Clone)]
pub struct ScimUserRow {
    pub user: UserRow,
    /// The SCIM attributes as given (userName, name, displayName, emails, externalId), without id and meta.
    pub data: serde_json::Value,
}

impl FromRow<'_, AnyRow> for ScimUserRow {
    fn from_row(row: &AnyRow) -> sqlx::Result<Self> {
        Ok(ScimUserRow {
            user: UserRow::from_row(row)?,
            data: optional_json(row, "scim_data")?.unwrap_or(serde_json::Value::Null),
        })
    }
}

/// The people provisioned through SCIM, by id.
pub async fn list_scim(conn: &mut AnyConnection) -> Result<Vec<ScimUserRow>, StoreError> {
    let sql = format!(
        "SELECT {USER_COLUMNS}, scim_data FROM users WHERE scim_id IS NOT NULL AND is_service = 0 ORDER BY id"
    );
    Ok(sqlx::query_as(&sql).fetch_all(conn).await?)
}

/// The provisioned person with SCIM id `scim_id`.
pub async fn get_by_scim_id(
    conn: &mut AnyConnection,
    scim_id: &str,
) -> Result<Option<ScimUserRow>, StoreError> {
    let sql = format!(
        "SELECT {USER_COLUMNS}, scim_data FROM users WHERE scim_id = $1 AND is_service = 0"
    );
    Ok(sqlx::query_as(&sql)
        .bind(scim_id)
        .fetch_optional(conn)
        .await?)
}

/// Writes what SCIM says of user `row.id`: name, e-mail, username, active, and the SCIM attributes.
pub async fn set_scim(
    conn: &mut AnyConnection,
    row: &UserRow,
    data: &serde_json::Value,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE users SET name = $1, email = $2, username = $3, active = $4, scim_data = $5 WHERE id = $6",
    )
    .bind(&row.name)
    .bind(&row.email)
    .bind(&row.username)
    .bind(i64::from(row.active))
    .bind(json_text(data)?)
    .bind(row.id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Ends every session of user `id` and deletes their personal access tokens: they stop working at once.
/// Returns how many tokens went.
pub async fn end_sessions_and_tokens(conn: &mut AnyConnection, id: i64) -> Result<u64, StoreError> {
    sqlx::query("DELETE FROM user_sessions WHERE user_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    let tokens = sqlx::query("DELETE FROM personal_access_tokens WHERE user_id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(tokens.rows_affected())
}
