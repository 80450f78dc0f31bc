//! Invite links (`/api/admin/invite-link/tokens`, Unleash's public sign-up tokens; `/invite/:token/…`): an Admin
//! makes a link with a name, a root role and an expiry; whoever opens it before it expires signs up once,
//! as a user with that role. A link's secret is a split token (`link_tokens`), shown only in the answer that
//! creates it; after that a link is named by its secret (the API) or its id (the UI). A link works once
//! (Unleash's may be used by many: Vexil gives each person their own link), until it expires or an Admin
//! disables it. Events: `public-signup-token-created`, `-updated`, `-user-added` (without the secret).

use super::events::{payload, EventType};
use super::link_tokens::{self, NewSecret};
use super::roles::{root_roles, Role, RoleReference, RootRole};
use super::tokens::parse_timestamp;
use super::users::{self, CreateUser, User};
use crate::store::account_links::{self as link_store, InviteLinkRow};
use crate::store::{NewEvent, WriteTx};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;
use vexil_shared::ApiError;

/// The longest name of a link.
const MAX_NAME: usize = 100;

/// An invite link (publicSignupTokenSchema). `secret` and `url` are only set in the answer that creates it:
/// the secret is stored as a hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteLink {
    /// `<selector>.<verifier>`; null except when the link is created.
    pub secret: Option<String>,
    /// The sign-up page (`<base>/new-user?invite=<secret>`); null except when the link is created.
    pub url: Option<String>,
    pub name: String,
    /// False once the link has expired, been used or been disabled.
    pub enabled: bool,
    pub expires_at: String,
    pub created_at: String,
    /// The creator's name.
    pub created_by: Option<String>,
    /// The user who signed up with the link (one at most), or null.
    pub users: Option<Vec<User>>,
    /// The root role of whoever signs up.
    pub role: Role,
}

/// `GET /api/admin/invite-link/tokens` (publicSignupTokensSchema): newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct InviteLinks {
    pub tokens: Vec<InviteLink>,
}

/// `POST /api/admin/invite-link/tokens` (publicSignupTokenCreateSchema, and Vexil's `rootRole`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateInviteLink {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// In the future.
    pub expires_at: String,
    /// The role of whoever signs up (an id or a name); default Viewer, as in Unleash.
    pub root_role: Option<RoleReference>,
}

/// `PUT /api/admin/invite-link/tokens/:token` (publicSignupTokenUpdateSchema): absent fields keep their value.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateInviteLink {
    /// In the future.
    pub expires_at: Option<String>,
    pub enabled: Option<bool>,
}

/// `POST /invite/:token/signup` (createInvitedUserSchema).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignUp {
    #[schema(max_length = 100, pattern = r"^\S*$")]
    pub username: Option<String>,
    pub email: String,
    pub name: String,
    #[schema(min_length = 8)]
    pub password: String,
}

/// Where a link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Usable,
    Used,
    Expired,
    Disabled,
}

/// A link as the admin UI lists it: its id (which names it in the UI's forms), its state and the API's view.
#[derive(Debug, Clone)]
pub struct InviteLinkEntry {
    pub id: i64,
    pub state: LinkState,
    pub link: InviteLink,
}

pub fn state(row: &InviteLinkRow, now: Timestamp) -> LinkState {
    if row.used_at.is_some() {
        LinkState::Used
    } else if !row.enabled {
        LinkState::Disabled
    } else if row.expires_at <= now {
        LinkState::Expired
    } else {
        LinkState::Usable
    }
}

fn role_view(id: i64) -> Role {
    root_roles()
        .into_iter()
        .find(|role| role.id == id)
        .unwrap_or_else(|| Role {
            id,
            name: format!("role {id}"),
            description: String::new(),
            role_type: "root".to_owned(),
        })
}

/// The sign-up page of a link: `site` is the instance's origin and base path.
pub fn url(site: &str, secret: &str) -> String {
    format!("{site}/new-user?invite={secret}")
}

async fn view(
    conn: &mut AnyConnection,
    row: &InviteLinkRow,
    now: Timestamp,
) -> Result<InviteLink, ApiError> {
    let users = match row.used_by {
        Some(id) => match users::get(conn, id).await {
            Ok(user) => Some(vec![user]),
            Err(_) => None,
        },
        None => None,
    };
    Ok(InviteLink {
        secret: None,
        url: None,
        name: row.name.clone(),
        enabled: state(row, now) == LinkState::Usable,
        expires_at: row.expires_at.to_string(),
        created_at: row.created_at.to_string(),
        created_by: row.created_by.clone(),
        users,
        role: role_view(row.root_role),
    })
}

/// A link as its events carry it: without the user who signed up (their personal fields are the users'
/// events' to show).
fn without_users(link: &InviteLink) -> InviteLink {
    InviteLink {
        users: None,
        ..link.clone()
    }
}

pub async fn list(conn: &mut AnyConnection, now: Timestamp) -> Result<InviteLinks, ApiError> {
    let rows = link_store::invites(conn).await?;
    let mut tokens = Vec::with_capacity(rows.len());
    for row in &rows {
        tokens.push(view(conn, row, now).await?);
    }
    Ok(InviteLinks { tokens })
}

/// Every link with its id and state, newest first (the admin UI).
pub async fn entries(
    conn: &mut AnyConnection,
    now: Timestamp,
) -> Result<Vec<InviteLinkEntry>, ApiError> {
    let rows = link_store::invites(conn).await?;
    let mut entries = Vec::with_capacity(rows.len());
    for row in &rows {
        entries.push(InviteLinkEntry {
            id: row.id,
            state: state(row, now),
            link: view(conn, row, now).await?,
        });
    }
    Ok(entries)
}

/// The link whose secret is `secret` (its verifier checked in constant time), whatever its state; `None`
/// for no such link.
async fn find(conn: &mut AnyConnection, secret: &str) -> Result<Option<InviteLinkRow>, ApiError> {
    let Some((selector, verifier)) = link_tokens::split(secret) else {
        return Ok(None);
    };
    Ok(link_store::invite_by_selector(conn, selector)
        .await?
        .filter(|row| link_tokens::verifies(verifier, &row.verifier_hash)))
}

async fn require(conn: &mut AnyConnection, secret: &str) -> Result<InviteLinkRow, ApiError> {
    find(conn, secret)
        .await?
        .ok_or_else(|| ApiError::not_found("There is no invite link with this secret"))
}

/// `GET /api/admin/invite-link/tokens/:token`.
pub async fn get(
    conn: &mut AnyConnection,
    secret: &str,
    now: Timestamp,
) -> Result<InviteLink, ApiError> {
    let row = require(conn, secret).await?;
    view(conn, &row, now).await
}

fn check_expiry(text: &str, now: Timestamp) -> Result<Timestamp, ApiError> {
    let expires_at = parse_timestamp("expiresAt", text)?;
    if expires_at <= now {
        return Err(ApiError::invalid_field(
            "expiresAt",
            "expiresAt must be in the future",
        ));
    }
    Ok(expires_at)
}

/// Creates a link; the answer carries its secret and its URL under `site` (origin and base path), the
/// only time they are shown.
pub async fn create(
    tx: &mut WriteTx,
    input: CreateInviteLink,
    site: &str,
) -> Result<InviteLink, ApiError> {
    let name = input.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(ApiError::invalid_field(
            "name",
            format!("name must be 1 to {MAX_NAME} characters long"),
        ));
    }
    let expires_at = check_expiry(&input.expires_at, tx.now())?;
    let role = match &input.root_role {
        Some(reference) => RootRole::from_reference("rootRole", reference)?,
        None => RootRole::Viewer,
    };
    let NewSecret {
        secret,
        selector,
        verifier_hash,
    } = link_tokens::new_secret()?;
    let row = InviteLinkRow {
        id: link_store::next_invite_id(tx.conn()).await?,
        selector,
        verifier_hash,
        name,
        root_role: role.id(),
        enabled: true,
        expires_at,
        created_at: tx.now(),
        created_by: Some(tx.actor().name.clone()),
        used_by: None,
        used_at: None,
    };
    link_store::insert_invite(tx.conn(), &row).await?;
    let now = tx.now();
    let link = view(tx.conn(), &row, now).await?;
    tx.record(NewEvent {
        event_type: EventType::PublicSignupTokenCreated.as_str(),
        data: Some(payload(&without_users(&link))),
        ..NewEvent::default()
    })
    .await?;
    Ok(InviteLink {
        url: Some(url(site, &secret)),
        secret: Some(secret),
        ..link
    })
}

async fn apply_update(
    tx: &mut WriteTx,
    before: InviteLinkRow,
    input: UpdateInviteLink,
) -> Result<InviteLink, ApiError> {
    let now = tx.now();
    let expires_at = match &input.expires_at {
        Some(text) => check_expiry(text, now)?,
        None => before.expires_at,
    };
    let row = InviteLinkRow {
        expires_at,
        enabled: input.enabled.unwrap_or(before.enabled),
        ..before.clone()
    };
    let previous = view(tx.conn(), &before, now).await?;
    let link = view(tx.conn(), &row, now).await?;
    if row == before {
        return Ok(link);
    }
    link_store::update_invite(tx.conn(), &row).await?;
    tx.record(NewEvent {
        event_type: EventType::PublicSignupTokenUpdated.as_str(),
        data: Some(payload(&without_users(&link))),
        pre_data: Some(payload(&without_users(&previous))),
        ..NewEvent::default()
    })
    .await?;
    Ok(link)
}

/// `PUT /api/admin/invite-link/tokens/:token`: a new expiry (in the future) and/or enabled; 404 for no link.
pub async fn update(
    tx: &mut WriteTx,
    secret: &str,
    input: UpdateInviteLink,
) -> Result<InviteLink, ApiError> {
    let before = require(tx.conn(), secret).await?;
    apply_update(tx, before, input).await
}

/// The UI's update of link `id` (404 for none).
pub async fn update_by_id(
    tx: &mut WriteTx,
    id: i64,
    input: UpdateInviteLink,
) -> Result<InviteLink, ApiError> {
    let before = link_store::invite(tx.conn(), id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Invite link {id} does not exist")))?;
    apply_update(tx, before, input).await
}

/// The link of `secret` if it can be used now; else 400, saying why when the secret is right.
pub async fn usable(
    conn: &mut AnyConnection,
    secret: &str,
    now: Timestamp,
) -> Result<InviteLinkRow, ApiError> {
    let row = find(conn, secret)
        .await?
        .ok_or_else(|| ApiError::validation("This invite link is not valid"))?;
    let refusal = match state(&row, now) {
        LinkState::Usable => return Ok(row),
        LinkState::Used => "This invite link has already been used",
        LinkState::Expired => "This invite link has expired",
        LinkState::Disabled => "This invite link has been disabled",
    };
    Err(ApiError::validation(refusal))
}

/// The checks of a sign-up that need no store, made before the password is hashed.
pub fn check_sign_up(input: &SignUp) -> Result<(), ApiError> {
    if input.email.trim().is_empty() {
        return Err(ApiError::invalid_field("email", "email is required"));
    }
    if input.name.trim().is_empty() {
        return Err(ApiError::invalid_field("name", "name is required"));
    }
    Ok(())
}

/// `POST /invite/:token/signup`: a user with the link's root role and this password (`password_hash` from
/// `users::hash_password`), and the link used up, in one write. 400 when the link cannot be used.
pub async fn sign_up(
    tx: &mut WriteTx,
    secret: &str,
    input: SignUp,
    password_hash: String,
) -> Result<User, ApiError> {
    check_sign_up(&input)?;
    let now = tx.now();
    let link = usable(tx.conn(), secret, now).await?;
    let user = users::create(
        tx,
        CreateUser {
            username: input.username,
            email: Some(input.email),
            name: Some(input.name),
            password: None,
            root_role: RoleReference::Id(link.root_role),
            send_email: None,
        },
        Some(password_hash),
    )
    .await?;
    if !link_store::use_invite(tx.conn(), link.id, user.id, now).await? {
        return Err(ApiError::validation(
            "This invite link has already been used",
        ));
    }
    tx.record(NewEvent {
        event_type: EventType::PublicSignupTokenUserAdded.as_str(),
        data: Some(serde_json::json!({
            "name": link.name,
            "userId": user.id,
        })),
        ..NewEvent::default()
    })
    .await?;
    Ok(user)
}
